"""Which journaled records are alarms a supervisor must acknowledge, and how they read.

One rule for the daemon, which journals an acknowledgement only for the seq of an alarm that
waits for one (:class:`controller.daemon.alarm_book.AlarmBook`), and for every console, which rebuilds the alarms and
their acknowledgements (``alarm_acknowledged {seq, by}``, who and when) from the stream, so
a restarted or a second console shows the same. An alarm: a fault, an ``alarm`` (failed
credentials), a device that is not connected, a device's fault, a pending jackpot, counted
refusals.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: The record that acknowledges an alarm.
ACKNOWLEDGED = "alarm_acknowledged"
#: The record types that may be alarms (:func:`alarm_text` decides), and the acknowledgement:
#: a quick test before a record's fields are looked at.
ALARM_KINDS = frozenset({"fault", "alarm", "device_status", "device_fault", "jackpot_pending",
                         "refusals_counted"})


def alarm_text(kind: str, data: Mapping[str, Any]) -> str | None:
    """What the alarm says, or None when the record is no alarm."""
    if kind == "fault":
        return f"fault {data['code']}: {data['detail']}"
    if kind == "alarm":
        return f"alarm {data['code']}: {data['detail']}"
    if kind == "device_status" and data["status"] != "connected":
        return f"{data['device']} {data['status']} {data['detail']}".strip()
    if kind == "device_fault":
        return f"{data['device']} fault {data['code']} {data['detail']}".strip()
    if kind == "jackpot_pending":
        return f"jackpot pending on hand {data['hand_id']}: {data['amount']} cents"
    if kind == "refusals_counted":
        return f"{data['count']} refused commands from one client: {data['last_reason']}"
    return None
