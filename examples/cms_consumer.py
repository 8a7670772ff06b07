#!/usr/bin/env python3
"""A complete consumer of one lowball-table event stream, for a CMS developer to copy.

It needs only pyzmq (``pip install pyzmq``) and the Python standard library: no code from
the table controller. Run it against ``make run`` (the demo table) in another terminal::

    python examples/cms_consumer.py --connect tcp://127.0.0.1:5558 --replay tcp://127.0.0.1:5559

Those are the table's CMS endpoints (``stream.cms_events``, ``stream.cms_replay``): the ``cms``
topic family, which never carries a card before its hand settles (WAC 230-16-152). A record
that holds a card (``card_dealt``, ``hand_shown``, ...) is *withheld* while its hand is in play:
its seq is skipped live and covered but not sent by a replay, and it arrives after the hand's
``hand_settled`` with its own seq. The consumer remembers each withheld seq and applies it
when it comes (and asks for any still missing once the table is between hands). Records that
mention a card are sent redacted, so the hash chain is checked only with ``--family
surveillance`` (on the surveillance endpoints, where every record is sent as journaled).

What it does, in the order a real consumer must (docs/integration.md explains each step):

1. subscribes to ``<family>.<table_id>.`` on the events (PUB) socket *first*, keeping what arrives;
2. asks the replay socket for a snapshot: the table state as of seq S;
3. replays the journaled events after ``--after`` (0: the whole history) up to S, in batches;
4. applies live events with seq > S in seq order; an event whose seq is more than one above
   the last applied, or a heartbeat announcing a higher seq, means messages were lost: the
   missing ones are replayed before going on (never skipped);
5. warns when the table sends no heartbeat for 3 s (the table or the network is down).

Along the way it tracks each spot's net result and the progressive meter, prints every
settlement, and recomputes the journal's hash chain over the messages it received, so its
last hash can be compared with ``lowball-table journal verify``. ``--count N`` stops after N
events, ``--timeout S`` after S seconds; Ctrl-C (or SIGTERM) stops it. Each stop prints a
summary. Exit status: 0, 1 when ``--count`` was not reached in time, 2 when the table cannot
be reached.

A real CMS would store the last seq it processed (and its chain hash) with its own data, in
one transaction, and start the next run with ``--after`` that seq (and ``--prev-hash``).

After a supervisor quarantined the table's broken journal, the new journal goes on from the
archived one's last seq with a ``journal_continued`` record (``archived_seq`` is the seq
before it, ``archived_hash`` that record's chain hash); the chain starts again from it. A
replay asking for the archived journal's seqs gets them from the archived journal, read-only,
announced by ``replay_archived`` (the seqs and the file), as far as its chain was verified;
the seqs it cannot vouch for (from the first bad record on) come as one ``replay_gap``
naming them and why. The consumer prints both, and never skips a seq without saying so.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import signal
import sys
import time

import zmq

SILENCE_S = 3.0          # no heartbeat for this long: the table or the network is down
REQUEST_TIMEOUT_S = 5.0  # an answer from the replay socket
GENESIS_HASH = "0" * 64  # the journal's prev_hash of its first record
UNKNOWN = "unknown"      # the chain hash after seqs the table did not serve


def continues(message, last):
    """Whether ``message`` is the ``journal_continued`` a quarantined journal's successor opens
    with, following a seq at or after ``last`` (the seqs between are the archived journal's)."""
    if message.get("type") != "journal_continued":
        return False
    archived_seq = message["data"].get("archived_seq")
    return archived_seq == message.get("seq", 0) - 1 and archived_seq >= last


def dollars(cents):
    """Money on the stream is integer cents: 123456 -> "$1,234.56", -150 -> "-$1.50"."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}${whole:,}.{rest:02d}"


def signed(cents):
    return ("+" if cents > 0 else "") + dollars(cents)


class TableUnreachable(Exception):
    pass


class TableStream:
    """The events (SUB) and replay (DEALER) sockets of one table."""

    def __init__(self, context, events, replay, table_id, timeout=REQUEST_TIMEOUT_S,
                 family="cms"):
        self.table_id, self.timeout, self.family = table_id, timeout, family
        self.withheld = set()  # cms: seqs the table withheld (cards of the hand in play)
        self.context, self.replay_endpoint = context, replay
        self.sub = context.socket(zmq.SUB)
        self.sub.setsockopt(zmq.LINGER, 0)
        # The dot matters: "cms.CALI-01" alone would also match table "CALI-010".
        self.sub.setsockopt(zmq.SUBSCRIBE, f"{family}.{table_id}.".encode())
        self.sub.connect(events)
        self.dealer = self._dealer()
        self.live = []  # (raw bytes, message) read from SUB, not yet applied

    def _dealer(self):
        dealer = self.context.socket(zmq.DEALER)
        dealer.setsockopt(zmq.LINGER, 0)
        dealer.connect(self.replay_endpoint)
        return dealer

    def read_live(self, wait_ms):
        """Move what the SUB socket has into ``self.live``, waiting up to ``wait_ms``."""
        while self.sub.poll(wait_ms, zmq.POLLIN):
            wait_ms = 0
            frames = self.sub.recv_multipart()
            try:
                self.live.append((frames[-1], json.loads(frames[-1])))
            except ValueError:
                print(f"warning: a message that is not JSON on {frames[0]!r}", file=sys.stderr)

    def request(self, request):
        """Send one request; yield (raw, reply) pairs. Keeps reading SUB meanwhile, so no live
        message is lost while we wait (step 1 of the Clone pattern)."""
        self.dealer.send(json.dumps(request).encode())
        deadline = time.monotonic() + self.timeout
        poller = zmq.Poller()
        poller.register(self.dealer, zmq.POLLIN)
        poller.register(self.sub, zmq.POLLIN)
        while True:
            ready = dict(poller.poll(max(0, int((deadline - time.monotonic()) * 1000))))
            if self.sub in ready:
                self.read_live(0)
            if self.dealer in ready:
                raw = self.dealer.recv()
                reply = json.loads(raw)
                if reply.get("type") == "error":
                    raise RuntimeError(f"the table refused {request}: {reply['reason']}")
                yield raw, reply
            elif not ready and time.monotonic() >= deadline:
                # A late answer must not be read as the answer to the next request.
                self.dealer.close(0)
                self.dealer = self._dealer()
                raise TableUnreachable(f"no answer from {self.replay_endpoint} within "
                                       f"{self.timeout:g} s")

    def snapshot(self):
        return next(self.request({"request": "snapshot"}))[1]

    def replay(self, after, until):
        """Yield the journaled events after seq ``after`` through ``until`` as (raw, message),
        one request per batch (the table sends at most 1000 per request)."""
        last, lost = after, None
        while last < until:
            start, beyond = last, False
            for raw, reply in self.request({"request": "replay", "after": last,
                                            "limit": until - last}):
                if reply.get("type") == "replay_archived":
                    print(f"seq {reply['first']}-{reply['last']} from the archived journal "
                          f"{reply['archived']} (read-only, its chain verified)", flush=True)
                    continue  # the records it announces follow
                if reply.get("type") == "replay_gap":
                    # seqs the table does not serve (told why): one message for a long run
                    if reply["first"] <= last or (self.family != "cms"
                                                  and reply["first"] != last + 1):
                        raise RuntimeError(f"replay after {start}: expected seq {last + 1}, "
                                           f"got a gap from {reply['first']}")
                    if self.family == "cms":
                        self.withheld.update(range(last + 1, reply["first"]))
                    if lost is not None and lost["reason"] == reply["reason"] \
                            and lost["last"] + 1 == reply["first"]:
                        reply = {**reply, "first": lost["first"]}
                    elif lost is not None:
                        yield None, lost
                    lost, last = reply, reply["last"]
                    continue
                if lost is not None and reply.get("type") != "replay_end":
                    yield None, lost
                    lost = None
                if reply.get("type") == "replay_end":
                    if self.family == "cms" and reply["last"] > last and not beyond:
                        self.withheld.update(range(last + 1, reply["last"] + 1))
                        last = reply["last"]
                    break
                if continues(reply, last):
                    # the seqs before it are the quarantined journal's: none to fetch
                    if reply["seq"] > until:
                        beyond = True  # past what was asked: it comes in its turn
                        continue
                elif self.family == "cms" and reply.get("seq", 0) > last:
                    self.withheld.update(range(last + 1, reply["seq"]))  # covered, not sent
                elif reply.get("seq") != last + 1:
                    raise RuntimeError(f"replay after {start}: expected seq {last + 1}, got "
                                       f"{reply.get('seq')}")
                last = reply["seq"]
                yield raw, reply
            if beyond:
                break
            if last == start:
                raise RuntimeError(f"the journal ends at seq {last}, before {until}")
        if lost is not None:
            yield None, lost

    def close(self):
        self.sub.close(0)
        self.dealer.close(0)


class Consumer:
    """What a CMS keeps: per-spot results, the meter, hands, the chain hash."""

    def __init__(self, after, prev_hash):
        self.last_seq = after
        self.chain = prev_hash           # None: not computed (started mid-journal)
        self.spot_net = {}               # spot -> net cents (wagers and progressive awards)
        self.meter = None                # progressive meter, cents (Three Card Lowball)
        self.hands = 0
        self.events = 0
        self.gaps = 0
        self.lost = 0                    # seqs the table did not serve (told why)

    def apply(self, raw, message, released=False):
        """One event exactly once: in seq order, or (``released``) a withheld one after its
        hand settled; or seqs the table does not serve (``replay_gap``)."""
        if message["type"] == "replay_gap":
            first, last = message["first"], message["last"]
            print(f"LOST: seq {first}-{last} are not served by the table: "
                  f"{message['reason']}", flush=True)
            self.lost += last - first + 1
            self.last_seq = last
            if self.chain is not None:
                self.chain = UNKNOWN  # until the journal_continued after them
            return
        kind, data, hand = message["type"], message["data"], message["hand_id"]
        continued = not released and continues(message, self.last_seq)
        if not released:
            assert message["seq"] > self.last_seq, (message["seq"], self.last_seq)
            if self.chain is not None and not continued:
                assert message["seq"] == self.last_seq + 1, (message["seq"], self.last_seq)
        if continued:
            print(f"#{message['seq']} journal continued after a quarantine (archived journal "
                  f"{data['archived']}, its last seq {data['archived_seq']})")
            if self.chain not in (None, UNKNOWN) and self.last_seq == data["archived_seq"] \
                    and data["archived_hash"] != self.chain:
                print(f"ALARM: the archived journal's last record (seq {self.last_seq}) is not "
                      f"the one received: hash {data['archived_hash']}, we hold {self.chain}",
                      flush=True)
            if self.chain is not None:
                self.chain = GENESIS_HASH  # the new journal's chain starts here
        if not released:
            self.last_seq = message["seq"]
        self.events += 1
        if self.chain is not None and not released:
            self.chain = hashlib.sha256(self.chain.encode() + raw).hexdigest()
        if kind == "wager_settled":
            self.spot_net[data["seat"]] = self.spot_net.get(data["seat"], 0) + data["net"]
            print(f"#{message['seq']} settled {hand} spot {data['seat']} {data['wager']} "
                  f"{dollars(data['amount'])}: {data['result']}, net {signed(data['net'])}")
        elif kind == "progressive_awarded":
            self.spot_net[data["seat"]] = self.spot_net.get(data["seat"], 0) + data["amount"]
            print(f"#{message['seq']} progressive {hand} spot {data['seat']} {data['award']}: "
                  f"{dollars(data['amount'])}")
        elif kind == "hand_settled":
            self.hands += 1
            print(f"#{message['seq']} hand {hand} settled: players {signed(data['players_net'])},"
                  f" house {signed(data['house_result'])}; {self.totals()}", flush=True)
        elif kind == "hand_voided":
            print(f"#{message['seq']} hand {data['hand_id']} VOIDED by {data['by']}: "
                  f"{data['reason']}")
        elif kind == "meter_changed":
            self.meter = data["amount"]
        elif kind == "fault":
            print(f"#{message['seq']} FAULT {data['code']} ({data['device']}): {data['detail']}")
        sys.stdout.flush()

    def totals(self):
        spots = ", ".join(f"spot {spot} {signed(net)}"
                          for spot, net in sorted(self.spot_net.items()))
        meter = f"; meter {dollars(self.meter)}" if self.meter is not None else ""
        return f"totals: {spots or 'none'}{meter}"

    def summary(self):
        chain = (f", chain hash {self.chain}" if self.chain is not None
                 else " (chain not checked: the cms family, or started after seq 0 "
                      "without --prev-hash)")
        return (f"summary: {self.events} events, {self.hands} hands settled, last seq "
                f"{self.last_seq}{chain}, {self.gaps} gaps filled"
                f"{f', {self.lost} seqs not served' if self.lost else ''}; {self.totals()}")


def request_timeout(args):
    return min(REQUEST_TIMEOUT_S, args.timeout or REQUEST_TIMEOUT_S)


def discover_table_id(context, args):
    """The table id from a snapshot (the daemon's state names it), else from a heartbeat."""
    # table_id "": subscribed to "." only, which no topic starts with: this stream only asks.
    stream = TableStream(context, args.connect, args.replay, "", request_timeout(args))
    try:
        state = stream.snapshot().get("state", {})
        if state.get("table_id"):
            return state["table_id"]
    finally:
        stream.close()
    sub = context.socket(zmq.SUB)
    sub.setsockopt(zmq.LINGER, 0)
    sub.setsockopt(zmq.SUBSCRIBE, b"")
    sub.connect(args.connect)
    try:
        if sub.poll(int(request_timeout(args) * 1000), zmq.POLLIN):
            return json.loads(sub.recv_multipart()[-1])["table_id"]
    finally:
        sub.close(0)
    raise TableUnreachable(f"nothing heard on {args.connect}: pass --table")


def run(args):
    context = zmq.Context()
    stream = None
    chained = args.family == "surveillance"
    consumer = Consumer(args.after, (GENESIS_HASH if args.after == 0 else args.prev_hash)
                        if chained else None)
    start, synced = time.monotonic(), False
    try:
        table_id = args.table or discover_table_id(context, args)
        stream = TableStream(context, args.connect, args.replay, table_id,
                             request_timeout(args), args.family)
        # Steps 2 and 3: snapshot, then history up to it.
        snapshot = stream.snapshot()
        state, snap_seq = snapshot.get("state", {}), snapshot["seq"]
        if args.after > snap_seq:
            print(f"--after {args.after} is beyond the journal's last seq {snap_seq}",
                  file=sys.stderr)
            return 2
        for raw, message in stream.replay(args.after, snap_seq):
            consumer.apply(raw, message)
        consumer.last_seq = max(consumer.last_seq, snap_seq)  # cms: the rest is withheld
        if state.get("meter") is not None:
            consumer.meter = state["meter"]
        synced = True
        print(f"synced: table {table_id} is {state.get('state', '?')} at seq {snap_seq} "
              f"({snap_seq - args.after} events replayed)", flush=True)
        return follow(stream, consumer, args, start)
    except TableUnreachable as error:
        print(f"cms_consumer: {error}: is the table running (make run), and are --connect and "
              "--replay its event and replay endpoints?", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    finally:
        if synced:
            print(consumer.summary(), flush=True)
        if stream is not None:
            stream.close()
        context.destroy(0)


def follow(stream, consumer, args, start):
    """Step 4: live events in seq order, gaps filled by replay; the heartbeat watch."""
    heard, silent, live = time.monotonic(), False, False
    alarms: set[str] = set()  # each alarm printed once
    while args.count is None or consumer.events < args.count:
        now = time.monotonic()
        if args.timeout is not None and now - start >= args.timeout:
            if args.count is not None:
                print(f"only {consumer.events} of {args.count} events within "
                      f"{args.timeout:g} s", file=sys.stderr)
                return 1
            return 0
        wait_ms = 500 if args.timeout is None else \
            max(0, min(500, int((start + args.timeout - now) * 1000)))
        stream.read_live(wait_ms)
        pending, stream.live = stream.live, []
        for raw, message in pending:
            heard = time.monotonic()
            if silent:
                silent = False
                print(f"table {stream.table_id} heard again", flush=True)
            if message.get("type") == "heartbeat":
                if not live:
                    live = True
                    print(f"live: table {message['table_id']} is {message['state']}, "
                          f"last seq {message['seq']}", flush=True)
                # The heartbeat carries the last seq published: more than we have = missed.
                if message["seq"] > consumer.last_seq:
                    fill(stream, consumer, message["seq"])
                # ... and that record's chain hash: a different one for the seq we hold (or a
                # seq below ours) means the table's history was rewritten or replaced.
                seq, head = message["seq"], message["hash"]
                if consumer.chain is not None and (seq < consumer.last_seq or (
                        seq == consumer.last_seq and head != consumer.chain)):
                    alarm(alarms, f"table {stream.table_id}'s journal head is seq {seq} hash "
                                  f"{head}, but we hold seq {consumer.last_seq} hash "
                                  f"{consumer.chain}: its history was rewritten")
                if message["journal_broken_at"] is not None:
                    alarm(alarms, f"table {stream.table_id}'s journal is broken at seq "
                                  f"{message['journal_broken_at']}: the table is held")
                if stream.withheld and message["state"] in ("OPEN", "SETTLED", "CLOSED"):
                    fetch_released(stream, consumer)
                continue
            if message["seq"] <= consumer.last_seq:
                if message["seq"] in stream.withheld:  # cms: released after its hand
                    stream.withheld.discard(message["seq"])
                    consumer.apply(raw, message, released=True)
                continue  # already applied (from the snapshot's history or a replay)
            if message["seq"] > consumer.last_seq + 1:
                fill(stream, consumer, message["seq"] - 1)
            consumer.apply(raw, message)
        if not silent and time.monotonic() - heard >= args.silence:
            silent = True
            print(f"WARNING: no heartbeat from table {stream.table_id} for {args.silence:g} s: "
                  "the table or the network is down", flush=True)
    return 0


def alarm(alarms, text):
    """Print an alarm for surveillance, once."""
    if text not in alarms:
        alarms.add(text)
        print(f"ALARM: {text}", flush=True)


def fill(stream, consumer, through):
    """Replay the events after the last one applied through ``through``: never skip one."""
    first, got = consumer.last_seq + 1, 0
    for raw, message in stream.replay(consumer.last_seq, through):
        consumer.apply(raw, message)
        got += 1
    consumer.last_seq = max(consumer.last_seq, through)
    if got:  # cms: a gap of withheld records only is not a loss
        consumer.gaps += 1
        print(f"gap: seq {first}-{through} did not arrive; filled from replay", flush=True)


def fetch_released(stream, consumer):
    """Between hands every withheld record should have been released: ask for the missing
    ones once (a card read with no hand in play is never released: forget it)."""
    wanted, stream.withheld = stream.withheld, set()
    for raw, message in stream.replay(min(wanted) - 1, max(wanted)):
        if message.get("seq") in wanted:
            consumer.apply(raw, message, released=True)
    stream.withheld = set()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--connect", default="tcp://127.0.0.1:5558",
                        help="the table's events (PUB) endpoint (default: the CMS one)")
    parser.add_argument("--replay", default="tcp://127.0.0.1:5559",
                        help="the table's snapshot/replay endpoint (default: the CMS one)")
    parser.add_argument("--family", choices=("cms", "surveillance"), default="cms",
                        help="the topic family those endpoints serve (default cms; "
                             "surveillance also checks the journal's hash chain)")
    parser.add_argument("--table", help="the table id (default: asked from the table)")
    parser.add_argument("--after", type=int, default=0,
                        help="start after this seq (the last one you processed; default 0)")
    parser.add_argument("--prev-hash", help="the chain hash of seq --after, to keep checking "
                                            "the hash chain")
    parser.add_argument("--count", type=int, help="stop after N events")
    parser.add_argument("--timeout", type=float, help="stop after S seconds")
    parser.add_argument("--silence", type=float, default=SILENCE_S,
                        help=f"warn after S seconds without a heartbeat (default {SILENCE_S:g})")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM stops like Ctrl-C
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
