"""floor.toml: validated with every error naming its key; house edges exact, never floats."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pytest

from controller.floor.config import LoadedFloorConfig, load_floor_config
from controller.settings.validation import InputError

BASE = """
[database]
dsn = "host=/var/run/postgresql dbname=floor"

[[tables]]
id = "CALI-01"
cms_events = "ipc:///run/lowball/cms-events"
cms_replay = "ipc:///run/lowball/cms-replay"
"""


def load(tmp_path: Path, text: str) -> LoadedFloorConfig:
    path = tmp_path / "floor.toml"
    path.write_text(BASE + text, encoding="utf-8")
    return load_floor_config(path)


def problems(tmp_path: Path, text: str) -> str:
    with pytest.raises(InputError) as raised:
        load(tmp_path, text)
    return str(raised.value)


def test_a_minimal_config_has_defaults(tmp_path: Path) -> None:
    config = load(tmp_path, "").config
    assert config.tables[0].id == "CALI-01" and config.service.batch_max == 2000
    assert [shift.name for shift in config.ratings.shifts] == ["grave", "day", "swing"]


def test_house_edges_are_exact_decimals(tmp_path: Path) -> None:
    config = load(tmp_path, '[paytables."paytable-1"]\nhouse_edge = "3.37%"\n'
                            'wagers = { bonus = "0.0512" }\n').config
    assert config.paytables["paytable-1"].house_edge == Decimal("0.0337")
    assert config.paytables["paytable-1"].wagers == {"bonus": Decimal("0.0512")}


@pytest.mark.parametrize("edge, says", [
    ("0.0337", "a float is not exact"),
    ('"1.5"', "below 100%"),
    ('"-0.01"', "not a decimal"),
    ('"3,37%"', "not a decimal"),
    ('"1e-2"', "not a decimal"),
])
def test_a_bad_house_edge_names_its_key(tmp_path: Path, edge: str, says: str) -> None:
    message = problems(tmp_path, f'[paytables."p"]\nhouse_edge = {edge}\n')
    assert "paytables.p.house_edge" in message and says in message


@pytest.mark.parametrize("text, key", [
    ("[service]\nbatch_max = 0\n", "service.batch_max"),
    ("[service]\nbatch_size = 5\n", "service.batch_size: unknown key"),
    ('[ratings]\ntimezone = "Mars/Olympus"\n', "ratings.timezone"),
    ('[ratings]\nshifts = [{name = "a", starts = 06:00:00}, {name = "a", starts = 07:00:00}]\n',
     "a name appears twice"),
    ('[[tables]]\nid = "CALI-01"\ncms_events = "ipc:///a"\ncms_replay = "ipc:///b"\n',
     "tables[1].id: 'CALI-01' is listed twice"),
    ('[[tables]]\nid = "T2"\ncms_events = "tcp://10.1.2.3:5560"\ncms_replay = "ipc:///b"\n',
     "tables[1].cms_events: without CURVE keys"),
    ('[[tables]]\nid = "T2"\ncms_events = "ipc:///a"\ncms_replay = "ipc:///b"\n'
     'server_key_file = "T2.key"\n', "tables[1].server_key_file needs [curve] key_file"),
    ('[[tables]]\nid = "T 2"\ncms_events = "ipc:///a"\ncms_replay = "ipc:///b"\n',
     "tables[1].id: String should match"),
    ('[pool_link]\nendpoint = "tcp://10.1.2.3:7000"\n',
     "pool_link.endpoint: 'tcp://10.1.2.3:7000': without CURVE"),
    ('[pool_link]\nendpoint = "ipc:///p"\nauthorized_keys_dir = "tables"\n',
     "pool_link.authorized_keys_dir needs [curve] key_file"),
    ('[pool_link]\nendpoint = "udp://x:1"\n', "pool_link.endpoint: String should match"),
])
def test_a_bad_key_is_named(tmp_path: Path, text: str, key: str) -> None:
    assert key in problems(tmp_path, text)


def test_a_missing_curve_key_file_is_named(tmp_path: Path) -> None:
    assert "curve.key_file" in problems(tmp_path, '[curve]\nkey_file = "floor.key_secret"\n')


def test_the_shipped_example_is_valid_and_names_the_example_tables() -> None:
    from controller.settings.table_config import load_config, shipped_config_dir

    floor = load_floor_config(shipped_config_dir() / "floor.toml").config
    tables = [load_config(shipped_config_dir() / name).config.table
              for name in ("cali-lowball.toml", "three-card-lowball.toml")]
    assert [table.id for table in floor.tables] == [table.id for table in tables]
    # theo comes from the game math: the example configures no edge of its own
    assert floor.paytables == {}
    assert floor.dashboard is not None and floor.dashboard.host == "127.0.0.1"


POOL = '[[pools]]\nid = "LINK-1"\ntables = ["CALI-01"]\n'


def test_a_pool_has_the_progressive_defaults(tmp_path: Path) -> None:
    (linked,) = load(tmp_path, POOL).config.pools
    assert (linked.seed, linked.wager, linked.contribution, linked.simultaneous_hit) == \
        (500_000, 100, 20, "seed")
    assert linked.awards.pat_one_color == 20000


@pytest.mark.parametrize("text, says", [
    ('[[pools]]\nid = "L"\ntables = ["T9"]\n', "pools[0].tables[0]: 'T9' is not one of the "
                                               "[[tables]]"),
    (POOL + POOL, "pools[1].id: 'LINK-1' is listed twice"),
    (POOL + '[[pools]]\nid = "L2"\ntables = ["CALI-01"]\n',
     "pools[1].tables[0]: 'CALI-01' is already linked to pool 'LINK-1'"),
    ('[[pools]]\nid = "L"\ntables = []\n', "pools[0].tables"),
    (POOL + 'seed = -1\n', "pools[0].seed"),
    (POOL + 'seed = 5000.5\n', "pools[0].seed"),
    (POOL + 'contribution_rate = 0.2\n', "pools[0].contribution_rate"),
    (POOL + 'contribution_rate = "12.345%"\n', "whole cents"),
    (POOL + 'simultaneous_hit = "split"\n', "pools[0].simultaneous_hit"),
    (POOL + 'jackpot = 5\n', "pools[0].jackpot: unknown key"),
    (POOL + '[pools.awards]\n"4-high" = -5\n', "pools[0].awards.4-high"),
])
def test_a_bad_pool_is_named(tmp_path: Path, text: str, says: str) -> None:
    assert says in problems(tmp_path, text)
