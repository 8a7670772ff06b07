"""The shared credential cannot sign as a lookalike of a named supervisor.

Red team 9: what landed in the last two sessions (the console's sign-in turns and /64
grouping, the player key, the command channel's frames and withdrawals) attacked from
outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so.

Red team 10: what landed in the last two sessions (the console's sign-in line and lock-outs,
the supervisor-name lookalike check, the command channel's deferred turns) attacked from
outside.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so.

Red team 11: what landed in the last two sessions (the quarantine's salvage of a damaged
journal, the archives' kept hashes, the supervisor-name lookalikes) attacked as a faulty disk,
a power cut and a guesser at the console.

Each test states the behaviour the project promises and is marked xfail (strict) while the
hole is open: a fix turns it into a pass, and strict makes the suite say so."""

from __future__ import annotations

import pytest

from tests.support.rig import RigFactory
from tests.support.sign_in import assert_shared_credential_cannot_sign_as


@pytest.mark.parametrize("lookalike", ["aIice", "rnary"])
def test_the_shared_credential_cannot_sign_as_a_lookalike_of_a_named_supervisor(
        rig_factory: RigFactory, lookalike: str) -> None:  # noqa: F811
    from tests.support.rig import CREDENTIAL

    rig = rig_factory("three-card-lowball", supervisors={"alice": "alice-own-credential",
                                                           "mary": "mary-own-credential"})
    forged = rig.ask({"command": "sign_in", "by": lookalike, "credential": CREDENTIAL})
    assert not forged["ok"], f"the shared credential signed as {lookalike!r}"


@pytest.mark.parametrize(("supervisor", "lookalike"), [("wendy", "vvendy"), ("dave", "clave")])
def test_the_shared_credential_cannot_sign_as_an_ascii_lookalike_of_a_named_supervisor(
        rig_factory: RigFactory, supervisor: str, lookalike: str) -> None:  # noqa: F811
    assert_shared_credential_cannot_sign_as(rig_factory, supervisor, lookalike)


@pytest.mark.parametrize(("supervisor", "lookalike"), [("kim", "KlM"), ("alice", "ALlCE")])
def test_the_shared_credential_cannot_sign_as_a_supervisors_name_in_lookalike_capitals(
        rig_factory: RigFactory, supervisor: str, lookalike: str) -> None:  # noqa: F811
    assert_shared_credential_cannot_sign_as(rig_factory, supervisor, lookalike)


@pytest.mark.parametrize(("supervisor", "lookalike"), [("alice", "a|ice"), ("will", "wi||")])
def test_the_shared_credential_cannot_sign_as_a_supervisors_name_with_a_bar_for_l(
        rig_factory: RigFactory, supervisor: str, lookalike: str) -> None:  # noqa: F811
    assert_shared_credential_cannot_sign_as(rig_factory, supervisor, lookalike)
