"""A stream subscriber that was behind when the table's journal was quarantined (red team 7).

The new journal goes on from the archived journal's last seq + 1 and holds nothing before
its ``journal_continued``. A subscriber that had read only up to seq N asked for N + 1 on,
and the table answered with ``journal_continued`` alone, which the client took as the next
event: the records N + 1 to the archived last, written and published before the break (the
evidence), were skipped, and the client counted the jump as a gap *filled*.

Now the table serves them from the archived journal, read-only, each announced as from the
archive, as far as its chain was verified; the records from the first bad one on, which no
one can vouch for, are named in one ``replay_gap`` (the seqs, and why), never skipped
silently. A real daemon on the simulators; clients of both families that stop reading, a
quarantine, the clients resume."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

import zmq

from controller.daemon.journal_quarantine import quarantine
from controller.stream import wire
from controller.stream.client import StreamClient
from controller.stream.cms_view import CARD_TYPES, cms_message
from controller.stream.journal import Journal, journal_path

from tests.support.pool import journal
from tests.support.processes import RatedDealer, TableProcess


def damage(state_dir: Path, seq: int) -> None:
    """Alter the message of record ``seq`` (its hash no longer matches)."""
    connection = sqlite3.connect(journal_path(state_dir), isolation_level=None)
    connection.execute("DROP TRIGGER journal_no_update")
    (message,), = connection.execute("SELECT message FROM journal WHERE seq = ?", (seq,))
    connection.execute("UPDATE journal SET message = ? WHERE seq = ?", (message + b" ", seq))
    connection.close()


def read_through(client: StreamClient, seq: int) -> list[wire.EnvelopeBase]:
    """Every event the client hands out until it has handed out ``seq``."""
    events: list[wire.EnvelopeBase] = []
    deadline = time.monotonic() + 60
    while (client.delivered_through() or 0) < seq:
        assert time.monotonic() < deadline, (
            f"the client delivered through {client.delivered_through()}, not {seq}")
        envelope = client.receive(timeout=1.0)
        if envelope is not None:
            events.append(envelope)
    return events


def subscribers(context: zmq.Context[zmq.Socket[bytes]], table: TableProcess
                ) -> dict[str, StreamClient]:
    return {wire.SURVEILLANCE: StreamClient(context, table_id="TCL-01",
                                            pub_endpoint=table.events_endpoint,
                                            replay_endpoint=table.replay_endpoint),
            wire.CMS: StreamClient(context, table_id="TCL-01", pub_endpoint=table.cms_events,
                                   replay_endpoint=table.cms_replay, family=wire.CMS)}


def test_a_subscriber_behind_a_quarantine_gets_the_archived_records_or_is_told_why_not(
        tmp_path: Path) -> None:
    context: zmq.Context[zmq.Socket[bytes]] = zmq.Context()
    table = TableProcess("TCL-01")
    clients: dict[str, StreamClient] = {}
    try:
        dealer = RatedDealer(table, {1: "P-1"})
        dealer.hand()
        seen = journal(table)[-1][0]
        clients = subscribers(context, table)
        for client in clients.values():
            client.sync(replay_from=0)
            read_through(client, seen)
            client.close()              # (the floor's feed reset, a watch stopped)
        # the table deals on, and its journal breaks
        dealer.hand()
        dealer.hand()
        table.kill()
        archived_last = journal(table)[-1][0]
        first_bad = archived_last - 3
        damage(table.state_dir, first_bad)
        done = quarantine(table.state_dir, "disk damage found at start", by="sam")
        assert done.record.first_bad_seq == first_bad
        with Journal.open_readonly(done.archived) as archive:
            evidence: dict[int, dict[str, bytes]] = {}
            for record in archive.records():
                seen_by = {wire.SURVEILLANCE: record.message,
                           wire.CMS: cms_message(record.type, record.hand_id, record.message,
                                                 open_hand=None)}
                evidence[record.seq] = {family: message for family, message in seen_by.items()
                                        if message is not None}
        table.start()
        new_last = journal(table)[-1][0]
        clients = subscribers(context, table)  # each resumes after the last seq it had
        for client in clients.values():
            client.sync(replay_from=seen)
        received = {family: read_through(client, new_last)
                    for family, client in clients.items()}
        continued = {seq: (kind, data) for seq, kind, data in journal(table)}
    finally:
        for client in clients.values():
            client.close()
        table.close()
        context.term()

    archived = str(done.archived.relative_to(table.state_dir))
    for family, client in clients.items():
        events = received[family]
        seqs = [event.seq for event in events]
        # every verified record the table wrote before the break, from the archive
        assert seqs[:first_bad - seen - 1] == list(range(seen + 1, first_bad)), family
        # (each as its family sees it: the CMS's without a tag nor a device's text)
        assert all(event == wire.decode_event(evidence[event.seq][family])
                   for event in events[:first_bad - seen - 1]), family
        assert list(client.archived) == [(seen + 1, first_bad - 1, archived)], family
        # the rest named, with why, never skipped silently
        (gap,) = client.lost
        assert (gap.first, gap.last) == (first_bad, archived_last), family
        assert f"seq {first_bad}" in gap.reason and archived in gap.reason, gap.reason
        # then the new journal, from its journal_continued (on the CMS family, without a
        # card read with no hand in play: the shoe sends again the card it held at the kill)
        sent = [seq for seq in range(archived_last + 1, seqs[-1] + 1)
                if family == wire.SURVEILLANCE or continued[seq][0] not in CARD_TYPES]
        assert seqs[first_bad - seen - 1:] == sent, (family, seqs, continued)
        assert events[first_bad - seen - 1].type == "journal_continued"
        assert seqs[-1] >= new_last
