"""The table daemon's Prometheus metrics ([metrics] on a loopback port): the journal, the free
disk, the devices, the table's state and what was journaled by kind, read as Prometheus reads
them (HTTP, the text format), from a real daemon on the simulators."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from controller.daemon.loop import TableDaemon
from controller.errors import StartupError
from controller.settings.metrics import MetricsSettings
from controller.settings.table_config import LoadedConfig, TableConfig
from controller.settings.validation import InputError, validate

from tests.support.metrics import free_port, scrape
from tests.support.rig import Rig
from tests.support.waits import wait_for


class MetricsRig(Rig):
    """The daemon rig with ``[metrics] port = PORT``."""

    port = 0

    def start_daemon(self) -> None:
        import tests.support.rig as rig_module

        original = rig_module.demo_config

        def with_metrics(*args: Any, **kwargs: Any) -> LoadedConfig:
            loaded: LoadedConfig = original(*args, **kwargs)
            return loaded.model_copy(update={"config": loaded.config.model_copy(
                update={"metrics": MetricsSettings(port=self.port)})})

        rig_module.demo_config = with_metrics
        try:
            super().start_daemon()
        finally:
            rig_module.demo_config = original


def test_a_scrape_reads_the_journal_the_disk_the_devices_and_what_was_journaled(
        tmp_path: Path) -> None:
    MetricsRig.port = free_port()
    rig = MetricsRig(tmp_path, "cali_lowball")
    try:
        assert rig.ask({"command": "open"})["ok"]
        assert not rig.ask({"command": "place", "spot": 1, "wager": "ante",
                             "amount": 10**8})["ok"]          # over the limit
        wait_for(lambda: rig.events("command_refused"), "the refusal")
        table = (("table", "CALI-01"),)
        seen = scrape(rig.port)
        assert seen[("lowball_journal_last_seq", table)] == rig.daemon.journal.last_seq
        assert seen[("lowball_journal_bytes", table)] > 0
        assert seen[("lowball_state_dir_free_bytes", table)] > 0
        assert seen[("lowball_journal_broken", table)] == 0
        for device in ("shoe", "spots", "meter"):
            assert seen[("lowball_device_connected", (("device", device), *table))] == 1
        assert seen[("lowball_table_state", (("state", "OPEN"), *table))] == 1
        assert seen[("lowball_table_state", (("state", "CLOSED"), *table))] == 0
        refused = ("lowball_records_journaled_total",
                   (("table", "CALI-01"), ("type", "command_refused")))
        assert seen[refused] == 1
        rig.meter.stop()                                  # the sign's cable pulled
        wait_for(lambda: scrape(rig.port)[("lowball_device_connected",
                                           (("device", "meter"), *table))] == 0,
                 "the meter lost on the metrics page")
    finally:
        rig.close()
    with pytest.raises(OSError):                          # the page stops with the daemon
        scrape(rig.port)


def test_a_port_in_use_stops_the_start_naming_the_port(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        MetricsRig.port = taken.getsockname()[1]
        with pytest.raises(StartupError, match=f"port {MetricsRig.port}"):
            MetricsRig(tmp_path, "cali_lowball")


@pytest.mark.parametrize("section, says", [
    ({"port": 9464, "address": "0.0.0.0"}, "metrics.address"),
    ({"port": 80}, "metrics.port"),
    ({"port": "9464"}, "metrics.port"),
    ({"port": 9464, "bind": "x"}, "metrics.bind"),
])
def test_a_metrics_section_off_loopback_or_out_of_range_is_refused_naming_the_key(
        section: dict[str, Any], says: str) -> None:
    config = {"table": {"id": "T1", "game": "cali_lowball", "paytable": "example"},
              "metrics": section}
    with pytest.raises(InputError, match=says):
        validate(TableConfig, config, "table.toml")


def test_a_table_without_metrics_serves_none(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "cali_lowball")
    try:
        daemon: TableDaemon = rig.daemon
        assert daemon.metrics_server is None
    finally:
        rig.close()
