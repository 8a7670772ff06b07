"""The table daemon: devices in, table in the middle, journal and event stream out.

One thread owns the table, the journal and every ZeroMQ socket (ZeroMQ sockets are not
thread-safe, and one owner makes the order of events the order of the journal). It sleeps in
a ZeroMQ poller on the command and replay sockets and on a wake-up socket the device threads
write to, so it uses no CPU while the table is idle and reacts at once when a card is read.

Every input goes through :meth:`TableDaemon.apply`: the table computes the events; the journal
commits them (synced) in one transaction; only then are they published and turned into
lamps and meter updates. A power cut therefore loses nothing that was acted on, and on start
the table is rebuilt from the journal's inputs (:meth:`controller.core.table.Table.replay`).
"""

from __future__ import annotations

import json
import operator
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import structlog
import zmq

from controller.stream import cms_view, wire
from controller.daemon.metrics import TableMetrics
from controller.daemon.device_hub import DeviceHub, Report
from controller.core.events import KINDS as CORE_KINDS
from controller.stream.journal import (
    GENESIS_HASH,
    READ_ERRORS,
    ChainCheck,
    Durability,
    Journal,
    JournalBroken,
    JournalError,
    journal_path,
)
from controller.stream.metrics_server import MetricsServer
from controller.stream.publisher import EventPublisher
from controller.errors import StartupError
from controller.daemon.state_lock import StateDirLocked, StateLock
from controller.stream.security import StreamSecurity
from controller.daemon.systemd_notify import Notifier, Watchdog
from controller.stream.transport_identity import LOCAL_CLIENT
from controller.stream.write_ahead_log import frames_lost
from controller.daemon.refusal_ledger import RefusalLedger
from controller.daemon.alarm_book import NOTED, AlarmBook
from controller.daemon.chain_watch import ChainWatch, TableHeld, check_interval, sweep_size
from controller.daemon import checkpoints, held_mark
from controller.daemon.file_check import START_CHECK_BYTES, FileCheck
from controller.core.commands import SUPERVISOR_ROLE, AcknowledgeAlarm
from controller.core.vocabulary import Device, DeviceCondition, LinkStatus, PoolState
from controller.daemon.pool_link import PoolLink, settings_problems
from controller.stream.pool_channel import ClaimedMessage, MeterMessage
from controller.daemon.command_channel import (  # the channel's limits, as the tests cite them
    MAX_COMMAND_FRAME_BYTES as MAX_COMMAND_FRAME_BYTES,
    MAX_COMMANDS_PER_TURN as MAX_COMMANDS_PER_TURN,
    TURN_BUDGET_S,
    CommandChannel,
)
from controller.core.table_settings import settings_changed
from controller.settings.table_config import LoadedConfig, build_table, game_settings, load_config
from controller.core.table_events import (
    CommandRefused,
    HandStarted,
    HandVoided,
    JackpotClaimed,
    JackpotPending,
    JackpotVerified,
    LampSet,
    MeterChanged,
    PoolHit,
    PoolMeter,
    RequestRefused,
)
from controller.settings.validation import InputError
from drivers.base import debug_enabled

log = structlog.get_logger("lowball.daemon")

#: Events that belong to a hand even when the table has just finished with it.
HAND_EVENTS = frozenset(CORE_KINDS) | {HandStarted, HandVoided, JackpotPending}
_TYPE = operator.attrgetter("type")  # a record's event type
#: Events worth a log line of their own (the rest are in the journal and on the stream).
NOTABLE = frozenset({"hand_started", "hand_settled", "fault", "hand_continued", "hand_voided",
                     "jackpot_pending", "jackpot_verified", "command_refused", "lock_refused",
                     "table_opened", "table_closed", "device_status", "device_fault",
                     "refusals_counted", "pool_link", "jackpot_claimed",
                     "alarm", "request_refused"})
#: Notable events logged as warnings.
WARNED = frozenset({"fault", "command_refused", "lock_refused", "refusals_counted", "alarm",
                    "request_refused"})
#: Seconds of the window in which the pool's bad claims of a hand after the first are only
#: counted (the floor sends its claims every second: a bad one repeated costs no record).
#: The events the table's signs show (beside the lamps): the meter, the pool, a jackpot.
_SHOWN = frozenset({PoolMeter, JackpotClaimed, JackpotVerified, MeterChanged, JackpotPending})
POOL_REFUSAL_WINDOW_S = 60.0
#: A start checks the whole chain when at most this many records precede the checkpoint it
#: restores (a few hundred hands: well under a second); past that, the running check's first
#: pass checks them (docs/journal.md).
START_CHECKS_ALL = 20_000
#: While the journal is checked at start, systemd's start timeout is extended this often.
START_PROGRESS_S = 10.0
#: One loop turn handles at most this many device reports, for at most TURN_BUDGET_S; then it
#: serves a command, and checks the stop, the heartbeat and the watchdog, whatever waits.
MAX_REPORTS_PER_TURN = 64


def _damaged(problems: list[str]) -> str:
    """The reason a journal whose file SQLite finds damaged is broken: the chain of what
    SQLite reaches is sound, but the file holds more than it reaches (or is damaged), so
    records past the last one read may be lost."""
    return f"SQLite's check of the file finds it damaged: {'; '.join(problems)}"


class ConfigMismatch(StartupError):
    """The journal holds a hand in play under other game settings than the config file."""


class TableDaemon:
    def __init__(self, loaded: LoadedConfig, *, state_dir: Path | None = None,
                 context: zmq.Context[Any] | None = None, usb_backend: Any = None,
                 notifier: Notifier | None = None, durability: Durability = "full",
                 clock: Callable[[], float] = time.monotonic):
        self.loaded = loaded
        config = loaded.config
        self.table_id = config.table.id
        self.state_dir = state_dir or Path(loaded.path).parent / config.state_dir
        self.context = context or zmq.Context.instance()
        self.clock = clock
        self.notifier = notifier or Notifier.from_environment()
        self.log = log.bind(table=self.table_id)
        #: whether the per-input debug line is written (structlog's filtering loggers know)
        self._log_debug = debug_enabled(self.log)
        self.table = build_table(loaded)
        # One daemon per state directory: the lock before anything else is touched.
        self.lock = StateLock(self.state_dir)
        try:
            self.lock.acquire()
        except StateDirLocked as error:
            raise StartupError(str(error)) from None
        except OSError as error:
            raise StartupError(f"cannot use the state directory {self.state_dir}: "
                               f"{error.strerror or error}; the daemon's user needs to create "
                               f"and write files there") from None
        self.durability = durability
        #: the first bad record of a journal that failed its check at start: the daemon then
        #: runs held (:meth:`start`)
        self.journal_broken: JournalBroken | None = None
        #: the chain as the start-up check left it, checked again at every heartbeat
        self.chain: ChainWatch | None = None
        #: a break found while the table ran whose mark could not be written yet
        self._unmarked: JournalBroken | None = None
        try:
            # An existing journal is opened read-only until its chain has been checked; its
            # log is read as bytes first (SQLite drops committed frames past a damaged one).
            path = journal_path(self.state_dir)
            self._log_lost = frames_lost(path) if path.is_file() else None
            self.journal = Journal.open_readonly(path) if path.is_file() \
                else Journal(path, durability=durability)
        except JournalError as error:
            self.lock.release()
            raise StartupError(str(error)) from None
        try:
            self.devices = DeviceHub(config.devices, usb_backend=usb_backend)
        except BaseException:
            self.journal.close()
            self.lock.release()
            raise
        self.publisher: EventPublisher | None = None
        self.security: StreamSecurity | None = None
        self.watchdog = Watchdog(self.notifier, self.healthy, clock=clock)
        self._stopping = False
        self._stopped_threads: list[str] = []
        self._next_heartbeat = 0.0
        #: the chain is checked at every heartbeat and at least every CHECK_EVERY_S
        self._next_chain_check = 0.0
        #: refused commands and replay requests, journaled in full or counted
        self.refusals = RefusalLedger()
        #: the pool's claims that do not add up, journaled in full or counted
        self.pool_refusals = RefusalLedger(window_s=POOL_REFUSAL_WINDOW_S, in_full=1)
        #: the journal's alarms and their acknowledgements
        self.alarm_book = AlarmBook()
        #: the hand id and seq of the last checkpoint written or restored
        #: (:mod:`controller.daemon.checkpoints`)
        self._checkpointed_hand: str | None = None
        self._checkpointed_seq = 0
        #: the seq the start verified through, when SQLite's check of the file (too long to
        #: check before READY) runs in the background, and that check
        self._file_checked_from: int | None = None
        self.file_check: FileCheck | None = None
        self.channel = CommandChannel(self)
        #: the floor's pool channel, on a linked table (``[progressive.link]``)
        self.pool_link: PoolLink | None = None
        #: called with (records, events) after each input is journaled and published, from
        #: the daemon's thread (the demo's live view uses it)
        self.observers: list[Callable[[list[Any], list[Any]], None]] = []
        #: the metrics page ([metrics] in the config), once started
        self.metrics_server: MetricsServer | None = None

    # -- life cycle -----------------------------------------------------------------------

    def start(self) -> None:
        """Check the journal's chain and rebuild the table from it, start devices and sockets,
        then READY. A failure raises :class:`StartupError` naming the cause and what to do
        (a configuration or environment problem: the daemon exits 2).

        A broken chain (an altered, missing or reordered record) holds the table: the journal
        is evidence, kept read-only and untouched; nothing is rebuilt, no device is started,
        every command but ``status`` is refused naming the first bad seq, and the heartbeat and
        the status say where it broke until a supervisor quarantines it
        (``lowball-table journal quarantine``) and restarts the daemon."""
        if (kept := self.journal.table_id) is not None and kept != self.table_id \
                and self.journal.first_table_id() == kept:
            # A config pointed at another table's state (its first and last records that
            # table's): no check of the chain can mend it, and a quarantine would find the
            # chain sound. (Only some records of another table: the check breaks there.)
            raise StartupError(f"the journal in {self.state_dir} is table {kept!r}'s, but the "
                               f"config names table {self.table_id!r}: give the config that "
                               f"table's id, or this table a state directory of its own")
        self._rebuild()
        self._start_metrics()
        if self.journal_broken is not None:
            self._start_sockets()
            self._start_held()
            return
        file_settings = game_settings(self.loaded)
        changed = settings_changed(self.table.settings, file_settings)
        if changed and not self.table.between_hands():
            what = f"hand {self.table.hand_id}" if self.table.jackpot is None else \
                f"the jackpot of hand {self.table.jackpot.hand_id}"
            raise ConfigMismatch(
                f"{what} is in play under the journaled config (fingerprint "
                f"{self.table.fingerprint[:12]}), but {self.loaded.path} changed "
                f"{', '.join(changed)}: refusing to rebuild it under a different config; "
                f"restore the file to finish the hand, then change it between hands")
        self._start_sockets()
        stream = self.loaded.config.stream
        if changed:  # between hands: the file's settings apply from now on, journaled
            self.apply([self.table.apply_settings(
                file_settings, "the daemon started with a changed config file")])
        if self.table.hand is not None:
            self.apply(self.table.device_status(Device.CONTROLLER, DeviceCondition.RESTARTED,
                                                f"journal seq {self.journal.last_seq}"))
        link = self.pool_link
        if link is not None and self.table.pool == link.pool_id \
                and self.table.pool_link == LinkStatus.CONNECTED:
            # The journal says connected as of before the restart; the pool may have paid,
            # locked or gone since. No progressive until its meter is heard again.
            self.apply(self.table.pool_link_status(
                link.pool_id, LinkStatus.LOST, "the daemon restarted: waiting for the pool's "
                                               "meter"))
        self.devices.start()
        self._show_outputs()
        if self.journal.durability != "full":
            self.log.warning("journal commits are not synced (durability batched): a power cut "
                             "may lose the last inputs; for simulations and benchmarks only, "
                             "never at a live table", durability=self.journal.durability)
        self.notifier.ready(f"table {self.table_id} {self.table.state}")
        if self._file_checked_from is not None:
            self.file_check = FileCheck(self.journal.path)
            self.log.info("the journal's file is long: SQLite's check of it runs in the "
                          "background (a damaged file holds the table when it is found)",
                          bytes=self.journal.path.stat().st_size)
        self.log.info("table daemon ready", state=self.table.state, seq=self.journal.last_seq,
                      events=stream.events, commands=stream.commands, replay=stream.replay)

    def _start_metrics(self) -> None:
        settings = self.loaded.config.metrics
        if settings is None:
            return
        metrics = TableMetrics(self)
        try:
            self.metrics_server = MetricsServer(settings, metrics)
        except OSError as error:
            raise StartupError(f"metrics: cannot serve on {settings.address} port "
                               f"{settings.port}: {error.strerror or error}: free the port or "
                               f"set [metrics] port to another") from None
        self.observers.append(metrics.observe)

    def _start_sockets(self) -> None:
        stream = self.loaded.config.stream
        try:
            self.security = StreamSecurity(self.context, self.loaded)
        except InputError as error:
            raise StartupError(str(error)) from None
        if not self.security.enabled:
            self.log.warning("the event stream and command channel are unauthenticated "
                             "(no CURVE keys): bound to loopback only",
                             endpoints=sorted(stream.endpoints().values()))
        elif self.loaded.config.security.surveillance_authorized_keys_dir is None:
            self.log.warning("no client may open the surveillance stream: "
                             "security.surveillance_authorized_keys_dir is not set")
        self.publisher = EventPublisher(
            self.context, table_id=self.table_id, pub_endpoint=stream.events,
            replay_endpoint=stream.replay, journal=self.journal, snapshot=self.table.snapshot,
            table_pub_endpoint=stream.table_events, table_replay_endpoint=stream.table_replay,
            table_snapshot=lambda: self.table.snapshot(table_side=True),
            cms_pub_endpoint=stream.cms_events, cms_replay_endpoint=stream.cms_replay,
            secure=self.security.server)
        if self.journal_broken is not None:
            self.publisher.hold(self.journal_broken.seq)
        if self.journal.first_seq > 1:  # held or not: a subscriber behind still gets them
            started = time.monotonic()
            found = self.publisher.find_archives()
            self.log.info("archived journals found and checked", archives=found,
                          seconds=round(time.monotonic() - started, 3))
        self.channel.bind(self.context, self.security, stream.commands)
        self.security.start_watch()
        if self.loaded.config.progressive.link is not None and self.journal_broken is None:
            self.pool_link = PoolLink(self.context, self.loaded, self.clock)

    def _rebuild(self) -> None:
        """Restore the newest sound checkpoint (:mod:`controller.daemon.checkpoints`), then
        check the hash chain record by record as the journal is read from it and replay each
        record's input as it is checked; a broken chain leaves the table unbuilt
        (:attr:`journal_broken`). A journal short enough before its checkpoint
        (:data:`START_CHECKS_ALL`) is checked from its first record, as with no checkpoint;
        past that, the records up to the checkpoint are the running check's first pass."""
        journal = self.journal
        try:
            restored = checkpoints.newest_sound(journal, self.table_id,
                                                self._checkpoint_refused)
        except READ_ERRORS as error:  # the chain's check below says what is wrong with the file
            self._checkpoint_refused(0, f"the checkpoints cannot be read: {error}")
            restored = None
        # a record of another table's journal (copied in) is no record of this one
        check = ChainCheck(self.table_id)
        table, replayed = build_table(self.loaded), 0
        first_replayed = journal.first_seq
        if restored is not None:
            point = restored.checkpoint
            table, self.alarm_book = restored.table, restored.alarm_book
            first_replayed = point.seq + 1
            if point.seq - journal.first_seq + 1 > START_CHECKS_ALL:
                check = ChainCheck(self.table_id, after=(point.seq, point.prev_hash))
        started = progress_due = time.monotonic()
        replay_error: RuntimeError | None = None

        def inputs() -> Iterator[Any]:
            """Each record checked, then (from the checkpoint on) its event, one at a time."""
            nonlocal progress_due, replayed
            book = self.alarm_book
            for record in journal.records(after_seq=check.last_seq):
                envelope = check(record)
                if record.seq < first_replayed:  # checked, and in the checkpoint already
                    continue
                event = wire.to_event(envelope)
                if record.type in NOTED:
                    book.note(record.seq, record.type, event._asdict())
                replayed += 1
                yield event
                if (now := time.monotonic()) >= progress_due:
                    # A long journal takes minutes: systemd must not take that for a hang.
                    self.notifier.extend_timeout(
                        START_PROGRESS_S * 3, f"checking the journal: seq {record.seq} of "
                                              f"{journal.last_seq}")
                    progress_due = now + START_PROGRESS_S

        try:
            events = inputs()
            try:
                table.replay(events)
            except JournalBroken:
                raise
            except RuntimeError as error:
                # the rest of the chain is checked still: a break past it holds the table
                replay_error = error
                for _ in events:
                    pass
            if (problem := journal.schema_problem()) is not None:
                raise JournalBroken(check.last_seq + 1, problem)
            if (before := journal.rows_before_first()) is not None:
                raise JournalBroken(check.last_seq + 1, before)
            if self._log_lost is not None:
                raise JournalBroken(check.last_seq + 1, f"{self._log_lost}: the records "
                                                        f"past seq {check.last_seq} are lost")
            if journal.path.stat().st_size > START_CHECK_BYTES:
                self._file_checked_from = check.last_seq  # after READY: file_check.py
            elif problems := journal.file_problems():
                # the chain of what SQLite reaches is sound, but the file holds more than it
                # reaches (or is damaged): records past the last one read may be lost
                raise JournalBroken(check.last_seq + 1, _damaged(problems))
        except JournalBroken as broken:
            self.journal_broken = broken
        # A break the daemon found while it ran is not in the chain: its mark holds the table.
        if (marked := held_mark.read(self.state_dir)) is not None and (
                self.journal_broken is None or marked.seq < self.journal_broken.seq):
            self.journal_broken = marked
        if self.journal_broken is not None:
            seq = min(check.last_seq, self.journal_broken.seq - 1)
            self.chain = ChainWatch(journal, seq, check.last_hash if seq == check.last_seq
                                    else journal.hash_at(seq) or GENESIS_HASH)
            return
        self.log.info("journal verified", records=check.checked, seq=check.last_seq,
                      hash=check.last_hash, seconds=round(time.monotonic() - started, 3),
                      from_checkpoint=None if restored is None else restored.checkpoint.seq)
        if replay_error is not None:
            raise StartupError(f"cannot rebuild the table from the journal: {replay_error}; "
                               f"the journal is left as it is: keep it and report it")
        if self.journal.readonly:  # sound: from now on it is written
            self.journal.close()
            try:
                self.journal = Journal(journal_path(self.state_dir), durability=self.durability)
            except JournalError as error:
                raise StartupError(str(error)) from None
        self.chain = ChainWatch(self.journal, check.last_seq, check.last_hash)
        self.table = table
        # a hand in play is checkpointed once it ends
        self._checkpointed_hand = table.hand_id if table.hand is None else None
        self._checkpointed_seq = first_replayed - 1
        if replayed:
            self.log.info("table rebuilt from the journal", records=replayed,
                          state=self.table.state, hand=self.table.hand_id,
                          from_checkpoint=None if restored is None
                          else restored.checkpoint.seq)
        if self.table.hand is None and self.journal.last_seq - self._checkpointed_seq \
                >= checkpoints.EVERY_RECORDS:
            self._write_checkpoint()  # a long replay is not made again at the next start

    def _checkpoint_refused(self, seq: int, why: str) -> None:
        self.log.warning("checkpoint refused: an older one, or the journal from its first "
                         "record, is replayed instead", checkpoint_seq=seq, reason=why)

    def _write_checkpoint(self) -> None:
        """Write the checkpoint of the table as it is now (between hands); a checkpoint not
        written is logged and tried again at the next boundary (the journal is the record)."""
        try:
            self.journal.write_checkpoint(checkpoints.capture(self.table, self.alarm_book))
        except (JournalError, wire.WireError, ValueError) as error:
            self.log.error("checkpoint not written: the next start replays more of the "
                           "journal", seq=self.journal.last_seq, error=str(error))
        self._checkpointed_hand = self.table.hand_id
        self._checkpointed_seq = self.journal.last_seq

    def _start_held(self) -> None:
        broken = self.journal_broken
        assert broken is not None
        self.log.critical(
            "journal broken: the table is held (no hand can start, every command but status "
            "is refused); the journal is kept as evidence, read-only and untouched. "
            "A supervisor: stop the daemon, run `lowball-table journal quarantine "
            f"--state-dir {self.state_dir} --reason TEXT`, then start it again",
            first_bad_seq=broken.seq, reason=broken.reason, journal=str(self.journal.path))
        self.notifier.ready(f"table {self.table_id} held: journal broken at seq {broken.seq}")

    def held_reason(self) -> str | None:
        """Why every command but ``status`` is refused, while the journal is broken."""
        broken = self.journal_broken
        if broken is None:
            return None
        return (f"the table is held: the journal is broken at seq {broken.seq} "
                f"({broken.reason}); a supervisor must quarantine it "
                f"(lowball-table journal quarantine) and restart the daemon")

    def journal_status(self, *, table_side: bool = False) -> dict[str, Any]:
        """The journal's head (seq and hash of its last record), how far its chain is
        verified (at start, and since), and, if it is broken, the first bad seq and why.
        ``table_side``: the hash the table's side may be told (``hash_seq`` names its seq:
        while a hand is in play its first record's, see EventPublisher.pinned_head)."""
        broken, chain = self.journal_broken, self.chain
        hash_seq, hash_ = self.journal.last_seq, self.journal.last_hash
        if table_side and self.publisher is not None:
            hash_seq, hash_ = self.publisher.pinned_head()
        return {"seq": self.journal.last_seq, "hash": hash_, "hash_seq": hash_seq,
                "verified_at_start": None if chain is None else chain.verified_at_start,
                "verified_through": None if chain is None else chain.verified_through,
                "broken_at": None if broken is None else broken.seq,
                "broken": None if broken is None else broken.reason}

    def check_chain(self) -> None:
        """Check the records journaled since the last check (:class:`ChainWatch`); a broken
        chain holds the table from now on, as at start."""
        if self._unmarked is not None:
            self._mark(self._unmarked)
        if self.journal_broken is not None or self.chain is None:
            return
        journal = self.journal
        interval = check_interval(self.loaded.config.stream.heartbeat_s)
        broken = self.chain.check(sweep=sweep_size(journal.last_seq - journal.first_seq + 1,
                                                   interval))
        if broken is None and self.file_check is not None \
                and (problems := self.file_check.found()) is not None:
            self.file_check = None
            if problems:
                assert self._file_checked_from is not None
                broken = JournalBroken(self._file_checked_from + 1, _damaged(problems))
        if broken is None:
            return
        self.journal_broken = broken
        if self.publisher is not None:
            self.publisher.hold(broken.seq)
        self._mark(broken)
        self.log.critical(
            "journal broken while the table ran: the table is held (no hand can go on, every "
            "command but status is refused, no device input is journaled); the journal is "
            "kept as evidence, untouched from now on. A supervisor: stop the daemon, run "
            f"`lowball-table journal quarantine --state-dir {self.state_dir} --reason TEXT`, "
            "then start it again", first_bad_seq=broken.seq, reason=broken.reason,
            journal=str(self.journal.path))

    def _mark(self, broken: JournalBroken) -> None:
        """Write the break down, so that a restart holds the table too (the journal may verify
        again); then a file replaced under the daemon is copied out, as the daemon wrote it.
        A mark that could not be written is tried again at every heartbeat (said once): the
        table is held meanwhile, whatever happens to the write."""
        try:
            held_mark.hold(self.state_dir, self.journal, broken)
        except held_mark.EvidenceNotKept as error:
            self.log.error("the break is written down (a restart holds the table), but the "
                           "evidence was not kept; keep this log", error=str(error))
        except (OSError, sqlite3.Error) as error:
            if self._unmarked is None:
                self.log.error("the break is not written down: a restart may not hold the "
                               "table; tried again at every heartbeat; keep this log",
                               error=str(error), mark=str(held_mark.mark_path(self.state_dir)))
            self._unmarked = broken
            return
        if self._unmarked is not None:
            self.log.warning("the break is written down now: a restart holds the table",
                             mark=str(held_mark.mark_path(self.state_dir)))
        self._unmarked = None

    def request_stop(self) -> None:
        """Ask the main loop to stop (safe from a signal handler): it wakes at once."""
        self._stopping = True
        self.devices.wake_loop()

    def run(self) -> None:
        """The main loop, until :meth:`request_stop`."""
        poller = zmq.Poller()
        assert self.publisher is not None and self.commands is not None
        poller.register(self.commands, zmq.POLLIN)
        replay_sockets = self.publisher.sockets
        for socket in replay_sockets:
            poller.register(socket, zmq.POLLIN)
        poller.register(self.devices.wake, zmq.POLLIN)
        link = self.pool_link
        if link is not None:
            poller.register(link.socket, zmq.POLLIN)
        while not self._stopping:
            timeout = self._poll_timeout()
            ready = dict(poller.poll(timeout))
            if self.devices.wake.fileno() in ready or self.devices.wake in ready:
                self.devices.drain_wake()
            try:
                self.handle_device_reports()  # a turn's worth: the rest next turn, at once
                if self.commands in ready or self.channel.pending:
                    self.handle_commands()
                if any(socket in ready for socket in replay_sockets):
                    # (asking an idle ROUTER raises zmq.Again)
                    self.publisher.handle_replay(deadline=time.monotonic() + TURN_BUDGET_S)
                    self._journal_request_refusals()
                if link is not None and link.socket in ready:
                    self.handle_pool_messages()
                self._tick()
            except TableHeld:
                continue  # logged by check_chain; what is left of the turn finds the table held

    def _poll_timeout(self) -> int:
        if not self.devices.reports.empty():
            return 0  # reports left over from the last turn: no sleep
        if self.channel.pending:  # requests already read wait for their turn
            return 0
        now = self.clock()
        waits = [max(0.0, min(self._next_heartbeat, self._next_chain_check) - now)]
        if self.pool_link is not None and self.table.pool == self.pool_link.pool_id \
                and self.table.pool_link != LinkStatus.LOST:
            waits.append(self.pool_link.stale_in())
        for due in (self.watchdog.next_due(), self.refusals.next_due(now),
                    self.pool_refusals.next_due(now), self.devices.next_due()):
            if due is not None:
                waits.append(due)
        return int(min(waits) * 1000) + 1

    def _tick(self) -> None:
        now = self.clock()
        if now >= self._next_heartbeat:
            assert self.publisher is not None
            self.check_chain()
            broken, chain = self.journal_broken, self.chain
            self.publisher.heartbeat(
                self.table.state, broken_at=None if broken is None else broken.seq,
                verified_at_start=None if chain is None else chain.verified_at_start,
                verified_through=None if chain is None else chain.verified_through)
            self.publisher.check_archives()  # a slice of a search made again, if one is due
            heartbeat_s = self.loaded.config.stream.heartbeat_s
            self._next_heartbeat = now + heartbeat_s
            self._next_chain_check = now + check_interval(heartbeat_s)
        elif now >= self._next_chain_check:  # heartbeats set further apart than that
            self.check_chain()
            self._next_chain_check = now + check_interval(self.loaded.config.stream.heartbeat_s)
        for count in (*self.refusals.due(now), *self.pool_refusals.due(now)):
            if self.journal_broken is None:
                self.apply([count])
        link = self.pool_link
        if link is not None and self.journal_broken is None and self.table.pool == link.pool_id \
                and self.table.pool_link != LinkStatus.LOST and link.stale():
            self.apply(self.table.pool_link_status(
                link.pool_id, LinkStatus.LOST,
                f"no message from the pool channel for {round(link.stale_s * 1000)} ms"))
        self.watchdog.tick()

    def healthy(self) -> bool:
        """For the systemd watchdog, asked from the main loop (so the loop is turning): every
        device thread is still running. A lost device is not unhealthy (its driver keeps
        trying, and a restart would not bring it back); a thread that has ended is."""
        if self._stopping:
            return False
        stopped = self.devices.stopped_threads()
        if stopped and stopped != self._stopped_threads:
            self.log.error("device thread ended: withholding the watchdog ping so that "
                           "systemd restarts the daemon", threads=stopped)
        self._stopped_threads = stopped
        return not stopped

    def close(self) -> None:
        """Stop cleanly: nothing in flight is lost (every applied input is journaled)."""
        self.notifier.stopping()
        if self.metrics_server is not None:
            self.metrics_server.close()
        self.devices.stop()
        if self.file_check is not None:
            self.file_check.stop()
        self.channel.close()
        if self.pool_link is not None:
            self.pool_link.close()
        if self.publisher is not None:
            self.publisher.close()
        if self.security is not None:
            self.security.stop()
        self.journal.close()
        self.lock.release()
        self.log.info("table daemon stopped", seq=self.journal.last_seq)

    # -- inputs ---------------------------------------------------------------------------

    def apply(self, events: list[Any]) -> list[Any]:
        """Journal ``events`` (one input and its effects), then publish and act on them."""
        in_hand = self.table.hand is not None or not HAND_EVENTS.isdisjoint(map(type, events))
        hand_id = self.table.hand_id if in_hand else None
        try:
            records = self.journal.append_all(events, table_id=self.table_id, hand_id=hand_id)
        except JournalError:
            # Refused by a record the daemon did not write? Then the table is held, not ended.
            self.check_chain()
            if self.journal_broken is not None:
                raise TableHeld(self.held_reason()) from None
            raise
        assert self.publisher is not None
        try:
            for record, event in zip(records, events):
                self.publisher.publish(record)
                self._act(event)
                if record.type in NOTED:
                    self.alarm_book.note(record.seq, record.type, event._asdict())
        finally:
            self._log(records, events, hand_id)  # after the stream: the journal is the record
        if records and self.table.hand is None and checkpoints.due(
                self.table, self._checkpointed_hand, records[-1].seq - self._checkpointed_seq):
            self._write_checkpoint()
        for observer in self.observers:
            observer(records, events)
        return records

    def _log(self, records: list[Any], events: list[Any], hand_id: str | None) -> None:
        """One log line per journaled input (debug), and the ones an operator wants to see."""
        # Most inputs log nothing at the default level (info): then no bound logger is built.
        debug = self._log_debug
        if not debug and NOTABLE.isdisjoint(map(_TYPE, records)):
            return
        log = self.log.bind(hand=hand_id, seq=records[-1].seq)
        if debug:
            log.debug("input journaled", input=records[0].type, events=len(events))
        for record in records:
            if record.type in NOTABLE:
                level = log.warning if record.type in WARNED else log.info
                # the log names no card (journalctl's readers are not surveillance): the
                # record as the CMS family sends it, every card redacted
                # (a device's own text, raw frames and tags, left out as on that family)
                message = cms_view.without_device_text(record.message) \
                    if record.type in cms_view.SURVEILLANCE_ONLY_TEXT else record.message
                data = json.loads(cms_view.redacted(message))["data"]
                level(record.type.replace("_", " "), seq=record.seq, **data)

    def _act(self, event: Any) -> None:
        kind = type(event)
        if kind is LampSet:
            self.devices.set_lamp(event.spot, event.lamp)
        elif kind not in _SHOWN:  # most events show nothing (asked first: it is the cheapest)
            return
        elif self.table.pool is not None:
            if kind in (PoolMeter, JackpotClaimed, JackpotVerified):
                self._show_pool()
        elif kind is MeterChanged:
            self.devices.show_meter(event.amount)
        elif kind is JackpotPending:
            self.devices.show_jackpot(self.table_id, event.amount)
        elif kind is JackpotVerified:
            self.devices.reset_jackpot()

    def _show_outputs(self) -> None:
        """After a (re)start, put the lamps and the meter where the table says they are."""
        for spot, lamp in self.table.lamps.items():
            self.devices.set_lamp(spot, lamp)
        if self.table.pool is not None:
            self._show_pool()
        elif self.table.engine.HAS_PROGRESSIVE:
            if self.table.jackpot is not None:
                self.devices.show_jackpot(self.table_id, self.table.jackpot.amount)
            else:
                self.devices.show_meter(self.table.meter)

    def _show_pool(self) -> None:
        """A linked table's sign: this table's claimed jackpot; else, while the pool is
        locked, JACKPOT and the first hit's table and amount; else the pool's meter."""
        table, shown = self.table, self.table.pool_shown
        claimed = None if table.jackpot is None else table.jackpot.claimed
        if claimed is not None:
            self.devices.show_jackpot(self.table_id, claimed.paid)
        elif shown is not None and shown.state == PoolState.LOCKED and shown.hits:
            self.devices.show_jackpot(shown.hits[0].table_id, shown.hits[0].paid)
        else:
            self.devices.reset_jackpot()
            self.devices.show_meter(table.meter if shown is None else shown.meter)

    def handle_pool_messages(self) -> None:
        """The pool channel's messages, each journaled as the table input it is: the link
        heard from again, the pool's meter when what the sign shows changes, this table's
        jackpot claimed. A pool whose progressive is not the table's is a link refused."""
        link, table = self.pool_link, self.table
        assert link is not None
        messages = link.receive()
        if self.journal_broken is not None:
            return  # held: the journal is evidence, nothing more is written to it
        if table.pool != link.pool_id:
            return  # a reload changed the link: the subscription is the start's (a restart)
        for message in messages:
            if isinstance(message, MeterMessage):
                problems = settings_problems(message, table.setup.progressive)
                if problems:
                    if table.pool_link != LinkStatus.LOST:
                        self.apply(table.pool_link_status(
                            link.pool_id, LinkStatus.LOST,
                            "the pool's progressive is not the table's: " + "; ".join(problems)))
                    continue
                # Only the pool's meter, with the table's own progressive, is the floor heard
                # from: a claim carries no settings, and the floor sends one for every hit
                # awaiting verification, another table's included.
                link.heard = self.clock()
                if table.pool_link != LinkStatus.CONNECTED:
                    self.apply(table.pool_link_status(link.pool_id, LinkStatus.CONNECTED, ""))
                hits = tuple(PoolHit(hit.table_id, hit.hand_id, hit.lock_order, hit.paid)
                             for hit in message.hits)
                shown = table.pool_shown
                if shown is None or (shown.meter, shown.state, shown.hits) != \
                        (message.meter, message.state, hits):
                    self.apply(table.pool_meter(link.pool_id, message.meter, message.state,
                                                hits))
            elif message.table_id == self.table_id and table.awaits_claim(message.hand_id) \
                    and message != link.bad_claim:
                self._pool_claim(link, message)

    def _pool_claim(self, link: PoolLink, message: ClaimedMessage) -> None:
        """The pool's claim of the jackpot this table waits for. One that adds up is taken.
        One that does not is refused: the first of a window (:data:`POOL_REFUSAL_WINDOW_S`) for
        the hand is journaled as received (and not taken), the rest only counted, their count
        journaled once the window has passed or the hand's claim is taken, so a floor sending
        ever different bad claims grows the journal by two records a window at most."""
        table, now = self.table, self.clock()
        claimed = table.jackpot_claimed(link.pool_id, message.hand_id, message.lock_order,
                                        message.paid, message.share)
        refuser = f"pool {link.pool_id} claim of {message.hand_id}"
        if table.claim_adds_up(message.paid, message.share):
            self.apply(claimed)
            for count in self.pool_refusals.close(refuser, now):
                self.apply([count])
            return
        link.bad_claim = message  # the floor repeats a claim every second: counted once
        journaled, counts = self.pool_refusals.admit(
            refuser, "jackpot_claimed", f"paid {message.paid} is not the share "
                                        f"{message.share} times the jackpot's seats", now)
        for count in counts:
            self.apply([count])
        if journaled:
            self.apply(claimed)
            self.log.error("the pool's claim does not add up (paid is not the share times the "
                           "jackpot's seats): not taken; verification waits (more bad claims "
                           "of this window are counted)", pool=link.pool_id,
                           hand=message.hand_id, paid=message.paid, share=message.share)

    def handle_device_reports(self) -> None:
        """Handle the device reports waiting, within one turn's budget (at most
        :data:`MAX_REPORTS_PER_TURN`, at most :data:`TURN_BUDGET_S`): a backlog, however long,
        never keeps a stop request, a command, the heartbeat or the watchdog's ping waiting
        longer than one turn."""
        self.devices.release_held()
        reports, deadline = self.devices.reports, self.clock() + TURN_BUDGET_S
        for _ in range(MAX_REPORTS_PER_TURN):
            if reports.empty():
                return
            report = reports.get_nowait()
            if self.journal_broken is None:
                self.handle_report(report)
            # else held: nothing is journaled, and a card is never acknowledged (the shoe
            # keeps it, and sends it again to the daemon that starts after the quarantine)
            if self.clock() >= deadline:
                return

    def handle_report(self, report: Report) -> None:
        table = self.table
        if report.kind == "card":
            self.apply(table.shoe_card(*report.args))
            self.devices.card_committed(report.args[1])
        elif report.kind == "shoe_fault":
            self.apply(table.shoe_fault(*report.args))
        elif report.kind == "sensor":
            self.apply(table.sensor(*report.args))
        else:
            self.apply(table.device_status(*report.args))
            device, status = report.args[0], report.args[1]
            if device == "spots" and status == "connected":
                # Lamp commands sent while the controller was away were dropped: put every
                # spot back to what the table says.
                self._show_outputs()

    # -- the command channel (controller.daemon.command_channel) ------------------------

    @property
    def commands(self) -> zmq.Socket[bytes] | None:
        """The command socket (bound by :meth:`start`)."""
        return self.channel.socket

    def handle_commands(self) -> None:
        """Serve the commands waiting, within one loop turn's budget."""
        self.channel.serve_turn()

    def command(self, payload: bytes, client: str = LOCAL_CLIENT) -> dict[str, Any]:
        """The reply to one request, as the command socket sends it."""
        return self.channel.answer(payload, client).wire()

    def _journal_request_refusals(self) -> None:
        """The replay sockets' refused requests, journaled like refused commands: in full,
        or counted when their client was refused often in this window."""
        assert self.publisher is not None
        refusals = self.publisher.take_refusals()
        if self.journal_broken is not None:
            return  # nothing is journaled on a broken journal: it is evidence
        for family, client, reason in refusals:
            journaled, counts = self.refusals.admit(client, f"{family} request", reason,
                                                    self.clock())
            for event in counts:
                self.apply([event])
            if journaled:
                self.apply([RequestRefused(family, client, reason)])

    def acknowledge_alarm(self, command: AcknowledgeAlarm, by: str, role: str) -> list[Any]:
        """A supervisor's acknowledgement of the alarm at ``command.seq``: refused, naming
        why, unless that seq is an alarm of the journal that waits for one."""
        if role == SUPERVISOR_ROLE and (why := self.alarm_book.refusal(command.seq)):
            return [CommandRefused(command.command, command.arguments(), by, role, why)]
        return self.table.command(command, by, role)

    def reload(self, by: str, role: str) -> list[Any]:
        """Re-read the config file; the table decides whether its game settings may change
        now. Only the game settings are reloaded: endpoints, keys, devices and the credential
        need a restart."""
        try:
            loaded = load_config(self.loaded.path)
        except InputError as error:
            return [CommandRefused("reload", "{}", by, role,
                                   f"the config file is not valid: {error}")]
        return self.table.reload(game_settings(loaded), by, role)
