"""Signing in at the console over HTTP, and what a screen is sent after."""

from __future__ import annotations

import hashlib
import http.cookiejar
import json
import urllib.error
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from websockets.sync.client import ClientConnection

from tests.support.console import SUPERVISORS, Console, write_configs
from tests.support.rig import Rig, RigFactory


DEALER, PIT = "dana-credential-0123", "pat-credential-4567"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.fixture
def locked_console(tmp_path: Path) -> Iterator[tuple[Rig, Console]]:
    rig = Rig(tmp_path, "cali_lowball", supervisors=SUPERVISORS)
    config = write_configs(tmp_path, rig)
    with open(config, "a") as handle:
        handle.write(f'sign_in_required = true\n\n[accounts.Dana]\nrole = "dealer"\n'
                     f'credential_sha256 = "{_sha(DEALER)}"\n\n[accounts.Pat]\nrole = "pit"\n'
                     f'credential_sha256 = "{_sha(PIT)}"\n')
    console = Console(config)
    yield rig, console
    console.close()
    rig.close()


def sign_in(url: str, name: str, credential: str) -> tuple[int, str | None]:
    """(status, the session cookie's header value)."""
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar))
    request = urllib.request.Request(url + "api/sign-in", headers={"content-type":
                                                                   "application/json"},
                                     data=json.dumps({"name": name,
                                                      "credential": credential}).encode())
    try:
        with opener.open(request, timeout=10) as reply:
            status = reply.status
    except urllib.error.HTTPError as error:
        return error.code, None
    return status, "; ".join(f"{cookie.name}={cookie.value}" for cookie in jar)


def next_of(ws: ClientConnection, kind: str) -> dict[str, Any]:
    while (message := json.loads(ws.recv(timeout=10)))["type"] != kind:
        pass
    found: dict[str, Any] = message
    return found


def assert_shared_credential_cannot_sign_as(rig_factory: RigFactory, supervisor: str,
                                            lookalike: str) -> None:
    """The table's shared credential, signing as ``lookalike``, is refused on a table where
    ``supervisor`` has her own credential."""
    from tests.support.rig import CREDENTIAL

    rig = rig_factory("three-card-lowball",
                      supervisors={supervisor: f"{supervisor}-own-credential"})
    forged = rig.ask({"command": "sign_in", "by": lookalike, "credential": CREDENTIAL})
    assert not forged["ok"], f"the shared credential signed as {lookalike!r} ({supervisor})"
