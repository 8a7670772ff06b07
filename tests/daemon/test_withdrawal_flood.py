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

import pytest

from controller.daemon.withdrawals import PER_CLIENT

from tests.support.rig import Rig
from tests.support.waits import DEADLINE_S

#: withdraw requests of 64 ids each, 20,032 ids: the flooder's share is withdrawn, the rest of
#: its requests refused (nothing withdrawn), none forgotten
FLOOD = textwrap.dedent("""
    import json, sys, uuid, zmq
    socket = zmq.Context().socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.connect(sys.argv[1])
    withdrawn = refused = 0
    for _ in range(313):
        ids = [uuid.uuid4().hex for _ in range(64)]
        socket.send_multipart([b"", json.dumps({"command": "withdraw", "requests": ids}).encode()])
        assert socket.poll(int(float(sys.argv[2]) * 1000)), "no answer"
        reply = json.loads(socket.recv_multipart()[-1])
        if reply["ok"]:
            assert reply["withdrawn"] == ids, reply
            withdrawn += len(ids)
        else:
            assert "too many withdrawals" in reply["error"], reply
            refused += len(ids)
    print("withdrew", withdrawn, "refused", refused)
""")


def test_one_clients_withdrawals_do_not_push_out_anothers(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "cali_lowball")
    try:
        assert rig.ask({"command": "withdraw", "requests": ["victim-0001"]}) == {
            "ok": True, "carried_out": {}, "withdrawn": ["victim-0001"]}
        flood = subprocess.run([sys.executable, "-c", FLOOD, rig.stream.commands,
                                str(DEADLINE_S)], capture_output=True, text=True, timeout=120)
        assert flood.returncode == 0, flood.stderr
        kept = PER_CLIENT // 64 * 64
        assert flood.stdout.split() == ["withdrew", str(kept), "refused", str(20032 - kept)]
        # the withdrawn command arrives now: still refused, never carried out
        late = rig.ask({"command": "open", "request_id": "victim-0001"})
        assert not late["ok"] and "withdrawn by its client" in late["error"], late
        assert [e.data.command for e in rig.events("command_accepted")] == []
        # the flooder's share is full; nobody's withdrawal was forgotten
        held = sorted(rig.daemon.channel.withdrawals.held().values())
        assert held == [(0, 1), (0, kept)], held
    finally:
        rig.close()


def test_the_memory_is_bounded_and_forgets_no_withdrawal_younger_than_its_keep() -> None:
    from controller.daemon.withdrawals import (
        KEEP_S,
        MAX_CLIENTS,
        TOTAL,
        TooManyWithdrawals,
        Withdrawals,
    )

    withdrawals = Withdrawals()
    withdrawals.withdraw(["quiet-0001"], "console", now=0.0)
    withdrawals.carried_out("done-0001", 7, "console")
    with pytest.raises(TooManyWithdrawals):            # more than a client's share at once
        withdrawals.withdraw([f"x-{n:08d}" for n in range(PER_CLIENT + 1)], "c0", now=1.0)
    assert withdrawals.refusal("x-00000000") is None   # nothing of it withdrawn
    for client in range(TOTAL // PER_CLIENT):           # the total fills, a client at a time
        try:
            withdrawals.withdraw([f"{client}-{n:08d}" for n in range(PER_CLIENT)],
                                 f"c{client}", now=2.0)
        except TooManyWithdrawals:
            assert client == TOTAL // PER_CLIENT - 1    # the last share no longer fits
    room = TOTAL - sum(withdrawn for _, withdrawn in withdrawals.held().values())
    withdrawals.withdraw([f"last-{n:08d}" for n in range(room)], "c-last", now=2.0)
    held = withdrawals.held()
    assert held["console"] == (1, 1) and withdrawals.refusal("quiet-0001") is not None
    assert sum(withdrawn for _, withdrawn in held.values()) == TOTAL
    with pytest.raises(TooManyWithdrawals):            # full: refused, nothing forgotten
        withdrawals.withdraw(["late-0001"], "elsewhere", now=KEEP_S - 1)
    # an id is looked up whoever withdrew it: a command is refused from any client
    assert "withdrawn" in (withdrawals.refusal(f"3-{PER_CLIENT - 1:08d}") or "")
    assert withdrawals.withdraw(["done-0001"], "elsewhere", now=3.0) == ({"done-0001": 7}, [])
    # once KEEP_S has passed, the old ones go and new withdrawals fit again
    assert withdrawals.withdraw(["late-0001"], "elsewhere", now=KEEP_S + 3.0) == (
        {}, ["late-0001"])
    assert withdrawals.refusal("quiet-0001") is None
    for client in range(MAX_CLIENTS - 1):               # as many clients as are kept
        withdrawals.withdraw([f"one-{client:08d}"], f"d{client}", now=KEEP_S + 4.0)
    with pytest.raises(TooManyWithdrawals):            # one more, while they are young
        withdrawals.withdraw(["one-more"], "newcomer", now=KEEP_S + 5.0)
