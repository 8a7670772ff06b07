"""CURVE on the table's sockets: the ZeroMQ Guide's "ironhouse" pattern.

With ``[security] server_secret_key_file`` set, every server socket (events, replay,
commands, and the CMS pair) is a CURVE server with the table's key pair, and pyzmq's
:class:`zmq.auth.thread.ThreadAuthenticator` checks each client's public key against an
allow-list directory (``configure_curve(location=...)``): an unknown key is refused during the
handshake, so that client receives nothing and gets no answer. Without an authenticator a
CURVE server would accept *any* client key; this module always starts one.

Each family has its own ZAP domain and allow-list, one door per role: ``commands`` and
``table`` (the table's side: dealer terminals, the console) use ``authorized_keys_dir``;
``surveillance`` (every card live) uses ``surveillance_authorized_keys_dir``; ``cms`` uses
``cms_authorized_keys_dir``. A dealer's key therefore opens the command channel and the
table family, never the surveillance stream; a CMS key opens only the CMS family. A domain
whose allow-list is not configured admits no client at all.

Without keys :class:`StreamSecurity` configures no CURVE; the config then only accepts
loopback endpoints (:meth:`controller.settings.table_config.TableConfig._loopback_without_keys`).

Connections that never finish their handshake cannot hold the table's descriptors: every
server socket drops a peer that has not completed the ZMTP handshake within
:data:`HANDSHAKE_TIMEOUT_MS` (ZeroMQ's default is 30 s, long enough for a thousand idle TCP
connections to exhaust the descriptors and lock the dealer out). With CURVE, a
:class:`HandshakeWatch` reads each server socket's monitor events in its own thread and logs
the refused handshakes (timed out, protocol or cryptographic error, key not allowed) and
failed accepts (descriptors exhausted): one line per :data:`WATCH_INTERVAL_S` with the counts,
never one per attempt.
"""

from __future__ import annotations

import argparse
import itertools
import os
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import structlog
import zmq
import zmq.auth
from zmq.auth.thread import ThreadAuthenticator
from zmq.utils.monitor import parse_monitor_message

from controller.errors import StartupError
from controller.settings.table_config import LoadedConfig
from controller.settings.validation import InputError

COMMANDS_DOMAIN = "commands"
#: A peer that has not completed its handshake by then is dropped (ZMQ_HANDSHAKE_IVL).
HANDSHAKE_TIMEOUT_MS = 2000
#: Refused handshakes are logged at most once per this many seconds, with their counts.
WATCH_INTERVAL_S = 10.0

log = structlog.get_logger("lowball.stream_security")


class StreamSecurity:
    """The table's CURVE keys and authenticator (one per ZeroMQ context)."""

    def __init__(self, context: zmq.Context[Any], loaded: LoadedConfig):
        security = loaded.config.security
        self.enabled = security.server_secret_key_file is not None
        self._authenticator: ThreadAuthenticator | None = None
        self._watch: HandshakeWatch | None = None
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
                ((COMMANDS_DOMAIN, "table"), security.authorized_keys_dir),
                (("surveillance",), security.surveillance_authorized_keys_dir),
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
        self._watch = HandshakeWatch(context)
        for domain, path in self.allowed.items():
            self._authenticator.configure_curve(domain=domain, location=str(path))

    def server(self, socket: zmq.Socket[bytes], domain: str) -> None:
        """Make ``socket`` (before it binds) a server whose handshakes time out after
        :data:`HANDSHAKE_TIMEOUT_MS`; with keys, a CURVE server checked against ``domain``'s
        allow-list, its refused handshakes watched."""
        socket.setsockopt(zmq.HANDSHAKE_IVL, HANDSHAKE_TIMEOUT_MS)
        if not self.enabled:
            return
        socket.curve_secretkey = self.secret_key
        socket.curve_publickey = self.public_key
        socket.curve_server = True
        socket.zap_domain = domain.encode()
        assert self._watch is not None
        self._watch.add(socket, domain)

    def start_watch(self) -> None:
        """Start watching the handshakes of the server sockets made so far."""
        if self._watch is not None:
            self._watch.start()

    def stop(self) -> None:
        if self._watch is not None:
            self._watch.stop()
            self._watch = None
        if self._authenticator is not None:
            self._authenticator.stop()
            self._authenticator = None


#: Monitor events counted, and the words the log line uses for them.
_REFUSALS: dict[int, str] = {
    zmq.EVENT_HANDSHAKE_FAILED_NO_DETAIL: "timed_out_or_dropped",
    zmq.EVENT_HANDSHAKE_FAILED_PROTOCOL: "protocol_or_crypto_error",
    zmq.EVENT_HANDSHAKE_FAILED_AUTH: "key_not_allowed",
    zmq.EVENT_ACCEPT_FAILED: "accept_failed",
}
_WATCHES = itertools.count()


class HandshakeWatch:
    """Counts refused handshakes on server sockets (monitor events, read in its own thread)
    and logs them once per ``interval_s``: the first refusal after a quiet interval at once,
    then the counts of each interval that had any."""

    def __init__(self, context: zmq.Context[Any], interval_s: float = WATCH_INTERVAL_S):
        self._context = context
        self.interval_s = interval_s
        self._monitors: list[tuple[str, zmq.Socket[bytes]]] = []
        self._thread: threading.Thread | None = None
        self._stop_endpoint = f"inproc://lowball-handshake-watch-{next(_WATCHES)}"
        self._stop: zmq.Socket[bytes] | None = None
        #: refusals counted since the daemon started, by domain and kind (for tests, status)
        self.totals: Counter[tuple[str, str]] = Counter()

    def add(self, socket: zmq.Socket[bytes], domain: str) -> None:
        monitor = socket.get_monitor_socket(events=sum(_REFUSALS))
        self._monitors.append((domain, monitor))

    def start(self) -> None:
        if self._thread is not None or not self._monitors:
            return
        self._stop = self._context.socket(zmq.PAIR)
        self._stop.bind(self._stop_endpoint)
        wake = self._context.socket(zmq.PAIR)
        wake.connect(self._stop_endpoint)
        self._thread = threading.Thread(target=self._run, args=(wake,), name="handshake-watch",
                                        daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._thread is not None and self._stop is not None:
            self._stop.send(b"stop")
            self._thread.join(5)
            self._thread = None
        if self._stop is not None:
            self._stop.close(0)
            self._stop = None
        for _, monitor in self._monitors:
            monitor.close(0)
        self._monitors = []

    def _run(self, wake: zmq.Socket[bytes]) -> None:
        poller = zmq.Poller()
        poller.register(wake, zmq.POLLIN)
        domains = {}
        for domain, monitor in self._monitors:
            poller.register(monitor, zmq.POLLIN)
            domains[monitor] = domain
        pending: Counter[tuple[str, str]] = Counter()
        next_line = 0.0  # a first refusal is logged at once
        try:
            while True:
                wait = None if not pending else max(0.0, next_line - time.monotonic())
                ready = dict(poller.poll(None if wait is None else int(wait * 1000) + 1))
                if wake in ready:
                    return
                for monitor, domain in domains.items():
                    if monitor in ready:
                        self._read(monitor, domain, pending)
                now = time.monotonic()
                if pending and now >= next_line:
                    self._log(pending)
                    self.totals.update(pending)
                    pending.clear()
                    next_line = now + self.interval_s
        finally:
            if pending:
                self._log(pending)
                self.totals.update(pending)
            wake.close(0)

    @staticmethod
    def _read(monitor: zmq.Socket[bytes], domain: str, pending: Counter[tuple[str, str]]) -> None:
        while monitor.poll(0):
            try:
                event = parse_monitor_message(monitor.recv_multipart(zmq.NOBLOCK))["event"]
            except (zmq.Again, ValueError, IndexError):
                return
            kind = _REFUSALS.get(event)
            if kind is not None:
                pending[(domain, kind)] += 1

    def _log(self, counts: Counter[tuple[str, str]]) -> None:
        by_domain: dict[str, dict[str, int]] = {}
        for (domain, kind), count in sorted(counts.items()):
            by_domain.setdefault(domain, {})[kind] = count
        exhausted = any(kind == "accept_failed" for _, kind in counts)
        log.warning("connections refused at the handshake" + (
            ": accepts failed, descriptors may be exhausted (LimitNOFILE)" if exhausted else ""),
            refused=by_domain, total=sum(counts.values()), interval_s=self.interval_s)


def bind(socket: zmq.Socket[bytes], endpoint: str) -> None:
    """Bind a server socket; :class:`StartupError` names the endpoint and what to do."""
    try:
        socket.bind(endpoint)
    except zmq.ZMQError as error:
        hint = ("another program (or another table) uses it: stop that one or change the "
                "endpoint in [stream]" if error.errno == zmq.EADDRINUSE else
                "check the endpoint in [stream] (an address of this machine, a free port)")
        cause = os.strerror(error.errno) if error.errno else str(error)
        raise StartupError(f"cannot bind {endpoint}: {cause}; {hint}") from None


def client(socket: zmq.Socket[bytes], *, server_public_key: bytes, public_key: bytes,
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


def add_client_options(parser: argparse.ArgumentParser) -> None:
    """``--key`` and ``--server-key`` for a command-line client of a table using CURVE."""
    parser.add_argument("--key", metavar="KEY_SECRET_FILE",
                        help="your CURVE key pair (NAME.key_secret), when the table uses CURVE")
    parser.add_argument("--server-key", metavar="KEY_FILE",
                        help="the table's CURVE public key (TABLE.key)")
