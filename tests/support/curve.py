"""CURVE keys and a table serving them."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import zmq

from controller.cli.main import main as cli
from controller.daemon.loop import TableDaemon
from controller.settings.table_config import Security, Stream, default_config_path, load_config


def make_keys(directory: Path, name: str) -> dict[str, bytes]:
    assert cli(["keys", "new", name, "--dir", str(directory)]) == 0
    public, secret = zmq.auth.load_certificate(directory / f"{name}.key_secret")
    assert secret is not None
    return {"public_key": public, "secret_key": secret}


class SecureTable:
    """A daemon (no devices) whose sockets use CURVE, in a thread."""

    def __init__(self, tmp_path: Path, context: zmq.Context[Any],
                 security: Security | None) -> None:
        shipped = load_config(default_config_path("cali_lowball"))
        self.stream = Stream(events=f"ipc://{tmp_path}/e", replay=f"ipc://{tmp_path}/r",
                             commands=f"ipc://{tmp_path}/c", cms_events=f"ipc://{tmp_path}/ce",
                             cms_replay=f"ipc://{tmp_path}/cr", table_events=f"ipc://{tmp_path}/te",
                             table_replay=f"ipc://{tmp_path}/tr", heartbeat_s=0.05)
        config = shipped.config.model_copy(update={"stream": self.stream,
                                                   "security": security or Security()})
        loaded = shipped.model_copy(update={"config": config})
        self.daemon = TableDaemon(loaded, state_dir=tmp_path / "state", context=context)
        self.daemon.start()
        self.thread = threading.Thread(target=self.daemon.run, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.daemon.request_stop()
        self.thread.join(10)
        self.daemon.close()
