"""The pure table linked to a pool, driven without a daemon."""

from __future__ import annotations

from typing import Any

from controller.core.table_events import CommandAccepted
from controller.settings.table_config import (
    PoolLinkSettings,
    TableProgressive,
    default_config_path,
    load_config,
    build_table,
)
from controller.stream.pool_channel import PoolSettings

from tests.support.pool import journal
from tests.support.processes import TableProcess
from tests.support.table import Driver


POOL = "LINK-1"


def linked_driver() -> Driver:
    loaded = load_config(default_config_path("three_card_lowball"))
    link = PoolLinkSettings(pool=POOL, endpoint="ipc:///tmp/lowball-pool")
    config = loaded.config.model_copy(update={"progressive": TableProgressive(link=link)})
    driver = Driver(loaded=loaded.model_copy(update={"config": config}))
    driver.do(command="open")
    return driver


def place(driver: Driver, spot: int, progressive: bool = True) -> None:
    wagers = [("ante", 1000), ("bonus", 1000)] + ([("progressive", 100)] if progressive else [])
    for wager, amount in wagers:
        assert type(driver.do(command="place", spot=spot, wager=wager, amount=amount)[0]) \
            is CommandAccepted


def jackpot(d: Driver) -> None:
    d.record(d.table.pool_link_status(POOL, "connected", ""))
    d.record(d.table.pool_meter(POOL, 800_000, "open", ()))
    place(d, 1)
    d.do(command="lock")
    d.cards("4h 4c 2d 2h As Ac")
    d.do(command="decide", spot=1, decision="stand")
    assert d.table.jackpot is not None


LINK = '[progressive.awards]'


def settings_of(table: TableProcess, **changed: int) -> PoolSettings:
    progressive = build_table(load_config(table.config)).setup.progressive
    awards = progressive.awards
    values: dict[str, Any] = {"wager": progressive.wager, "seed": progressive.seed,
              "contribution": progressive.contribution,
              "awards": {"pat-4-2-A-one-color": awards.pat_one_color,
                         "pat-4-2-A-two-color": awards.pat_two_color,
                         "4-high": awards.four_high, "5-high": awards.five_high}}
    return PoolSettings(**{**values, **changed})


def links(table: TableProcess) -> list[tuple[int, str, str]]:
    return [(seq, data["status"], data["detail"]) for seq, kind, data in journal(table)
            if kind == "pool_link"]
