"""A supervisor's acknowledgement of an alarm is a command: the daemon, which owns the journal,
refuses a seq that is no alarm or one already acknowledged, decides who acknowledged it from
the credential, and journals ``alarm_acknowledged {seq, by}``; a restart keeps it."""

from __future__ import annotations

from controller.daemon.alarm_book import AlarmBook

from tests.support.rig import RigFactory
from tests.support.waits import wait_for

SUPERVISORS = {"Alice": "alice-credential-0123456789"}


def test_the_book_knows_alarms_and_who_acknowledged_them() -> None:
    book = AlarmBook()
    book.note(7, "fault", {"code": "shoe_jam", "detail": "", "device": "shoe",
                           "recoverable": True})
    book.note(8, "device_status", {"device": "shoe", "status": "connected", "detail": ""})
    assert book.waiting() == [7]
    assert "not an alarm" in (book.refusal(8) or "")
    assert book.refusal(7) is None
    book.note(9, "alarm_acknowledged", {"seq": 7, "by": "Alice"})
    assert book.refusal(7) == "the alarm at seq 7 was already acknowledged by Alice"
    assert book.waiting() == []


def test_an_acknowledgement_is_journaled_once_by_the_supervisor_the_credential_names(
        rig_factory: RigFactory) -> None:  # noqa: F811
    rig = rig_factory("cali_lowball", supervisors=SUPERVISORS)
    for _ in range(5):
        rig.ask({"command": "void", "reason": "x", "credential": "a-guess"})
    wait_for(lambda: rig.events("alarm"), "the alarm")
    seq = rig.events("alarm")[0].seq
    ack = {"command": "acknowledge_alarm", "seq": seq}

    dealer = rig.ask(ack)
    assert not dealer["ok"] and "needs the supervisor credential" in dealer["error"]
    not_an_alarm = rig.ask({**ack, "seq": seq - 1, "credential": SUPERVISORS["Alice"]})
    assert not not_an_alarm["ok"] and "is not an alarm" in not_an_alarm["error"]
    # who acknowledged is the credential's supervisor, whatever "by" says
    assert rig.ask({**ack, "by": "Mallory", "credential": SUPERVISORS["Alice"]})["ok"]
    wait_for(lambda: rig.events("alarm_acknowledged"), "the acknowledgement")
    (record,) = rig.events("alarm_acknowledged")
    assert (record.data.seq, record.data.by) == (seq, "Alice")

    rig.stop_daemon()
    rig.start_daemon()   # the book is rebuilt from the journal
    again = rig.ask({**ack, "credential": SUPERVISORS["Alice"]})
    assert not again["ok"] and again["error"] == \
        f"the alarm at seq {seq} was already acknowledged by Alice"
