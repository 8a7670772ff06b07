"""CURVE on the table's sockets: the ZeroMQ Guide's "ironhouse" pattern.

With ``[security] server_secret_key_file`` set, every server socket (events, replay,
commands, and the CMS pair) is a CURVE server with the table's key pair, and pyzmq's
:class:`zmq.auth.thread.ThreadAuthenticator` checks each client's public key against an
allow-list directory (``configure_curve(location=...)``): an unknown key is refused during the
handshake, so that client receives nothing and gets no answer. Without an authenticator a
CURVE server would accept *any* client key; this module always starts one.

Each family has its own ZAP domain and allow-list: ``surveillance`` and ``commands`` use
``authorized_keys_dir`` (on-site clients), ``cms`` uses ``cms_authorized_keys_dir``. A CMS
key therefore cannot open the surveillance stream, whatever it asks for.

Without keys :class:`StreamSecurity` configures nothing; the config then only accepts
loopback endpoints (:meth:`controller.table_config.TableConfig._loopback_without_keys`).
"""

from __future__ import annotations

import os
from pathlib import Path

import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator

from controller.startup import StartupError
from controller.table_config import LoadedConfig
from controller.validation import InputError

COMMANDS_DOMAIN = "commands"


class StreamSecurity:
    """The table's CURVE keys and authenticator (one per ZeroMQ context)."""

    def __init__(self, context: zmq.Context, loaded: LoadedConfig):
        security = loaded.config.security
        self.enabled = security.server_secret_key_file is not None
        self._authenticator: ThreadAuthenticator | None = None
        if not self.enabled:
            return
        base = Path(loaded.path).parent
        key_file = base / str(security.server_secret_key_file)
        try:
            self.public_key, self.secret_key = zmq.auth.load_certificate(key_file)
        except (OSError, ValueError) as error:
            raise InputError(loaded.path, [f"security.server_secret_key_file: cannot read "
                                           f"{key_file}: {error}"]) from None
        if self.secret_key is None:
            raise InputError(loaded.path, [f"security.server_secret_key_file: {key_file} has "
                                           "no secret key (use the .key_secret file)"])
        self.allowed: dict[str, Path] = {}
        for domains, directory in (
                (("surveillance", COMMANDS_DOMAIN), security.authorized_keys_dir),
                (("cms",), security.cms_authorized_keys_dir)):
            if directory is None:
                continue
            path = base / directory
            if not path.is_dir():
                raise InputError(loaded.path, [f"security: {path} is not a directory of "
                                               "client public keys"])
            for domain in domains:
                self.allowed[domain] = path
        self._authenticator = ThreadAuthenticator(context)
        self._authenticator.start()
        for domain, path in self.allowed.items():
            self._authenticator.configure_curve(domain=domain, location=str(path))

    def server(self, socket: zmq.Socket, domain: str) -> None:
        """Make ``socket`` (before it binds) a CURVE server checked against ``domain``'s
        allow-list; nothing without keys."""
        if not self.enabled:
            return
        socket.curve_secretkey = self.secret_key
        socket.curve_publickey = self.public_key
        socket.curve_server = True
        socket.zap_domain = domain.encode()

    def stop(self) -> None:
        if self._authenticator is not None:
            self._authenticator.stop()
            self._authenticator = None


def bind(socket: zmq.Socket, endpoint: str) -> None:
    """Bind a server socket; :class:`StartupError` names the endpoint and what to do."""
    try:
        socket.bind(endpoint)
    except zmq.ZMQError as error:
        hint = ("another program (or another table) uses it: stop that one or change the "
                "endpoint in [stream]" if error.errno == zmq.EADDRINUSE else
                "check the endpoint in [stream] (an address of this machine, a free port)")
        cause = os.strerror(error.errno) if error.errno else str(error)
        raise StartupError(f"cannot bind {endpoint}: {cause}; {hint}") from None


def client(socket: zmq.Socket, *, server_public_key: bytes, public_key: bytes,
           secret_key: bytes) -> None:
    """Make ``socket`` (before it connects) a CURVE client of a table."""
    socket.curve_serverkey = server_public_key
    socket.curve_publickey = public_key
    socket.curve_secretkey = secret_key


def client_keys(key_file: str | None, server_key_file: str | None) -> dict[str, bytes] | None:
    """The CURVE client keys from a client's ``NAME.key_secret`` and the table's public
    ``TABLE.key`` (the ``--key`` and ``--server-key`` options of ``watch`` and ``dealer``);
    None when neither is given. ValueError names a missing or unreadable file."""
    if key_file is None and server_key_file is None:
        return None
    if key_file is None or server_key_file is None:
        raise ValueError("CURVE needs both --key (your NAME.key_secret) and --server-key "
                         "(the table's public .key)")
    try:
        public, secret = zmq.auth.load_certificate(key_file)
        server_public, _ = zmq.auth.load_certificate(server_key_file)
    except (OSError, ValueError) as error:
        raise ValueError(f"cannot read the CURVE keys: {error}") from None
    if secret is None:
        raise ValueError(f"{key_file} holds no secret key (use NAME.key_secret)")
    return {"server_public_key": server_public, "public_key": public, "secret_key": secret}


def add_client_options(parser) -> None:
    """``--key`` and ``--server-key`` for a command-line client of a table using CURVE."""
    parser.add_argument("--key", metavar="KEY_SECRET_FILE",
                        help="your CURVE key pair (NAME.key_secret), when the table uses CURVE")
    parser.add_argument("--server-key", metavar="KEY_FILE",
                        help="the table's CURVE public key (TABLE.key)")
