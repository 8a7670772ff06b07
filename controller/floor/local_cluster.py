"""A throwaway PostgreSQL cluster on a Unix socket in a temporary directory.

Debian's server binaries (``apt-get install postgresql``, or ``sudo make deps``) live in
``/usr/lib/postgresql/<version>/bin``; the newest is used. ``initdb`` refuses to run as root,
so under root the cluster belongs to the ``postgres`` system user the package creates (or
``nobody`` without it): the temporary directory is handed to that user and ``initdb``,
``pg_ctl`` and the server run as it (``subprocess``'s ``user``/``group``), while this process
connects over the socket as the cluster's superuser. The server listens on no TCP port.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from controller.errors import LowballError

SUPERUSER = "lowball"
#: The socket's name is .s.PGSQL.<port>; only the directory keeps clusters apart.
PORT = 5432
HOW_TO_INSTALL = ("PostgreSQL's server is not installed: sudo apt-get install "
                  "--no-install-recommends postgresql (or sudo make deps)")


class ClusterUnavailable(LowballError, RuntimeError):
    """No PostgreSQL server binaries here; the message says how to install them."""


def server_bin() -> Path:
    """The newest ``/usr/lib/postgresql/*/bin`` holding ``initdb`` and ``pg_ctl``."""
    found = [Path(path).parent for path in glob.glob("/usr/lib/postgresql/*/bin/pg_ctl")
             if Path(path).with_name("initdb").exists()]
    if not found:
        raise ClusterUnavailable(HOW_TO_INSTALL)
    return max(found, key=lambda path: int(path.parent.name) if path.parent.name.isdigit()
               else 0)


def _owner() -> pwd.struct_passwd | None:
    """The system user the cluster runs as when we are root; None: ourselves."""
    if os.geteuid() != 0:
        return None
    for name in ("postgres", "nobody"):
        try:
            return pwd.getpwnam(name)
        except KeyError:
            continue
    raise ClusterUnavailable("initdb refuses root and there is no postgres or nobody user")


class LocalCluster:
    """``start()``, ``restart()``, ``stop()``; :attr:`dsn` connects to database ``postgres``
    (:meth:`dsn_for` to another). ``fsync=False`` for tests: the cluster is thrown away."""

    def __init__(self, *, fsync: bool = True):
        self.bin = server_bin()
        self.owner = _owner()
        self.fsync = fsync
        self.root = Path(tempfile.mkdtemp(prefix="lowball-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        if self.owner is not None:
            os.chown(self.root, self.owner.pw_uid, self.owner.pw_gid)
        self._run("initdb", "-D", str(self.data), "-U", SUPERUSER, "--auth=trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")

    def dsn_for(self, dbname: str) -> str:
        return f"host={self.root} port={PORT} user={SUPERUSER} dbname={dbname}"

    @property
    def dsn(self) -> str:
        return self.dsn_for("postgres")

    def _run(self, program: str, *args: str) -> None:
        user: dict[str, Any] = {} if self.owner is None else {"user": self.owner.pw_uid,
                                               "group": self.owner.pw_gid, "extra_groups": []}
        result = subprocess.run([str(self.bin / program), *args], capture_output=True,
                                text=True, cwd=self.root, **user)
        if result.returncode != 0:
            tail = self.log.read_text(errors="replace")[-2000:] if self.log.exists() else ""
            raise RuntimeError(f"{program} {' '.join(args)} failed ({result.returncode}): "
                               f"{result.stderr.strip()}\n{tail}")

    def _options(self) -> str:
        options = f"-k {self.root} -p {PORT} -c listen_addresses=''"
        if not self.fsync:
            options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        return options

    def start(self) -> LocalCluster:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", self._options(),
                  "-w", "-t", "60", "start")
        return self

    def restart(self) -> None:
        """A fast shutdown (clients are disconnected) and a start."""
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", self._options(),
                  "-m", "fast", "-w", "-t", "60", "restart")

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def close(self) -> None:
        try:
            self.stop()
        finally:
            shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
