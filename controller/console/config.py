"""The console's own config file (``lowball-table console --config FILE``).

It names the table's config file (for the table id and the stream's endpoints, read only),
where the console listens, and the TLS certificate it needs to listen anywhere but loopback::

    table_config = "three-card-lowball.toml"   # relative to this file
    host = "127.0.0.1"
    port = 8080
"""

from __future__ import annotations

import hashlib
import ipaddress
import json
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from controller.settings.paytables import read_toml
from controller.settings.table_config import LoadedConfig, load_config
from controller.settings.validation import InputError, validate


class Account(BaseModel):
    """A dealer's or the pit's sign-in on the console (supervisors sign in with the table's
    credentials, checked by the daemon)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    role: Literal["dealer", "pit"]
    credential_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]


class ConsoleConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    #: The table's config file: the console reads its table id and stream endpoints.
    table_config: Annotated[str, Field(min_length=1, max_length=4096)]
    host: Annotated[str, Field(min_length=1, max_length=255)] = "127.0.0.1"
    #: 0: any free port (the console prints the one it got)
    port: Annotated[int, Field(strict=True, ge=0, le=65535)] = 8080
    #: Required when ``host`` is not a loopback address.
    tls_cert_file: Annotated[str, Field(max_length=4096)] | None = None
    tls_key_file: Annotated[str, Field(max_length=4096)] | None = None
    #: The console's CURVE key pair and the table's public key, when the table uses CURVE.
    curve_key_file: Annotated[str, Field(max_length=4096)] | None = None
    table_public_key_file: Annotated[str, Field(max_length=4096)] | None = None
    #: Whether every screen needs a sign-in (a dealer's or the pit's account below, or a
    #: supervisor's). Always on when ``host`` is not loopback.
    sign_in_required: bool = False
    #: The console's own accounts: name -> {role = "dealer" | "pit", credential_sha256}.
    accounts: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,31}$")],
                   Account] = {}
    #: The supervisors who sign in with a PIN (``[security.supervisor_pins]`` of the table):
    #: the sign-in page offers their names to touch. The console needs no PIN's hash: the
    #: table checks the PIN. The table config's own ``supervisor_pins`` are offered too.
    supervisors_with_pins: Annotated[list[Annotated[str, Field(
        pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,31}$")]], Field(max_length=64)] = []
    #: How long a sign-in lasts.
    session_minutes: Annotated[int, Field(strict=True, ge=1, le=240)] = 15
    #: How the console names itself in the journal (``by``) for the dealer's commands.
    by: Annotated[str, Field(pattern=r"^[\x20-\x7e]{1,64}$")] = "dealer console"

    @property
    def signs_in(self) -> bool:
        """Whether every screen needs a sign-in."""
        return self.sign_in_required or not is_loopback(self.host)

    @model_validator(mode="after")
    def _tls_off_loopback(self) -> ConsoleConfig:
        if (self.tls_cert_file is None) != (self.tls_key_file is None):
            raise ValueError("tls_cert_file and tls_key_file go together")
        if not is_loopback(self.host) and self.tls_cert_file is None:
            raise ValueError(f"host {self.host!r} is not loopback: the console listens there "
                             f"only with TLS (set tls_cert_file and tls_key_file)")
        if not is_loopback(self.host) and not self.accounts:
            raise ValueError(f"host {self.host!r} is not loopback: every screen needs a "
                             f"sign-in there; give the dealers' and the pit's accounts")
        if (self.curve_key_file is None) != (self.table_public_key_file is None):
            raise ValueError("curve_key_file and table_public_key_file go together")
        return self


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class LoadedConsole(BaseModel):
    path: str
    config: ConsoleConfig
    table: LoadedConfig

    def relative(self, name: str) -> Path:
        return Path(self.path).parent / name


def load_console_config(path: Path | str) -> LoadedConsole:
    """The console's config and the table's; :class:`InputError` names each bad key."""
    path = Path(path)
    config: ConsoleConfig = validate(ConsoleConfig, read_toml(path), str(path))
    table = load_config(path.parent / config.table_config)
    loaded = LoadedConsole(path=str(path), config=config, table=table)
    for name in (config.tls_cert_file, config.tls_key_file):
        if name is not None and not loaded.relative(name).is_file():
            raise InputError(str(path), [f"TLS file {name} does not exist"])
    return loaded


def write_console_config(directory: Path, table: LoadedConfig, *,
                         supervisors: dict[str, str] | None = None, port: int = 8080,
                         accounts: dict[str, tuple[str, str]] | None = None,
                         with_pins: tuple[str, ...] = ()) -> Path:
    """A console config (and the table config it names, with the table's id, game, stream
    endpoints and supervisors' hashes) for a table built in memory: the demo's, a test's.
    ``supervisors``: name -> credential; ``with_pins``: the supervisors who have a PIN (the
    console offers their names on the sign-in page); ``accounts``: the console's own, name -> (role,
    credential). Returns the console config's path."""
    config, names = table.config, json.dumps
    paytables = (Path(table.path).parent / config.table.paytables_file).resolve()
    lines = ["[table]", f"id = {names(config.table.id)}", f"game = {names(config.table.game)}",
             f"paytable = {names(config.table.paytable)}",
             f"paytables_file = {names(str(paytables))}", f"spots = {config.table.spots}",
             "", "[stream]"]
    lines += [f"{key} = {names(value)}" for key, value in config.stream.endpoints().items()]
    lines += ["", "[security.supervisors]"]
    lines += [f"{names(name)} = {names(hashlib.sha256(credential.encode()).hexdigest())}"
              for name, credential in (supervisors or {}).items()]
    (directory / "console-table.toml").write_text("\n".join(lines) + "\n")
    path = directory / "console.toml"
    text = f'table_config = "console-table.toml"\nhost = "127.0.0.1"\nport = {port}\n'
    if with_pins:
        text += f"supervisors_with_pins = {names(list(with_pins))}\n"
    for name, (role, credential) in (accounts or {}).items():
        text += (f'\n[accounts.{names(name)}]\nrole = {names(role)}\ncredential_sha256 = '
                 f'{names(hashlib.sha256(credential.encode()).hexdigest())}\n')
    path.write_text(text)
    return path
