"""A client withdrawing ids by the thousand must not make another client's withdrawn request
carried out (the memory of withdrawn ids was one for all clients: 10,000 withdrawals from
anyone pushed out everyone's, and a command its giver had withdrawn was then carried out
when it arrived).

The hostile client is another process (the daemon tells clients apart by what the transport
says of them, here the process behind the IPC socket, never by a field a client sends)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from controller.daemon.withdrawals import PER_CLIENT
from tests.test_daemon import DEADLINE_S, Rig

#: withdraw requests of 64 ids each: 20,032 ids
FLOOD = textwrap.dedent("""
    import json, sys, uuid, zmq
    socket = zmq.Context().socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(sys.argv[1])
    for _ in range(313):
        ids = [uuid.uuid4().hex for _ in range(64)]
        socket.send_multipart([b"", json.dumps({"command": "withdraw", "requests": ids}).encode()])
        assert socket.poll(int(float(sys.argv[2]) * 1000)), "no answer"
        reply = json.loads(socket.recv_multipart()[-1])
        assert reply["withdrawn"] == ids, reply
    print("withdrew", 313 * 64)
""")


def test_one_clients_withdrawals_do_not_push_out_anothers(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "cali_lowball")
    try:
        assert rig.ask({"command": "withdraw", "requests": ["victim-0001"]}) == {
            "ok": True, "carried_out": {}, "withdrawn": ["victim-0001"]}
        flood = subprocess.run([sys.executable, "-c", FLOOD, rig.stream.commands,
                                str(DEADLINE_S)], capture_output=True, text=True, timeout=120)
        assert flood.returncode == 0, flood.stderr
        assert flood.stdout.split() == ["withdrew", "20032"]
        # the withdrawn command arrives now: still refused, never carried out
        late = rig.ask({"command": "open", "request_id": "victim-0001"})
        assert not late["ok"] and "withdrawn by its client" in late["error"], late
        assert [e.data.command for e in rig.events("command_accepted")] == []
        # the flooder kept only its own last ids
        held = sorted(rig.daemon.channel.withdrawals.held().values())
        assert held == [(0, 1), (0, PER_CLIENT)], held
    finally:
        rig.close()


def test_the_memory_is_bounded_per_client_in_total_and_in_clients() -> None:
    from controller.daemon.withdrawals import MAX_CLIENTS, TOTAL, Withdrawals

    withdrawals = Withdrawals()
    withdrawals.withdraw(["quiet-0001"], "console")
    withdrawals.carried_out("done-0001", 7, "console")
    for client in range(TOTAL // PER_CLIENT + 2):      # more than the total, a client at a time
        withdrawals.withdraw([f"{client}-{n:08d}" for n in range(PER_CLIENT + 5)], f"c{client}")
    held = withdrawals.held()
    assert held["console"] == (1, 1)                    # the busiest forgot theirs, not it
    assert sum(withdrawn for _, withdrawn in held.values()) == TOTAL
    assert max(withdrawn for _, withdrawn in held.values()) <= PER_CLIENT
    assert withdrawals.refusal("quiet-0001") is not None
    # an id is looked up whoever withdrew it: a command is refused from any client
    assert "withdrawn" in (withdrawals.refusal(f"3-{PER_CLIENT + 4:08d}") or "")
    assert withdrawals.withdraw(["done-0001"], "elsewhere") == ({"done-0001": 7}, [])
    for client in range(MAX_CLIENTS):                   # as many clients again: the least lately
        withdrawals.withdraw([f"one-{client:08d}"], f"d{client}")   # heard from go first
    held = withdrawals.held()
    assert sum(1 for _, withdrawn in held.values() if withdrawn) == MAX_CLIENTS
    assert held["console"] == (1, 0) and withdrawals.refusal("quiet-0001") is None
