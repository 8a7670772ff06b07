"""floor.toml: the database, the tables to follow, the linked pools, shifts, and each
paytable's house edge.

Validated like the table config (:mod:`controller.settings.table_config`): pydantic models that forbid
unknown keys, each error naming its key path. A house edge is an exact decimal written as
text (``"0.0337"`` or ``"3.37%"``), never a float: theoretical win is money.
"""

from __future__ import annotations

import re
import zoneinfo
from datetime import time
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, PlainValidator, field_validator, \
    model_validator

from controller.settings.metrics import MetricsSettings
from controller.settings.paytables import read_toml
from controller.settings.table_config import Progressive, is_local
from controller.settings.validation import InputError, validate

#: Table ids as the table config allows them (``table.id``).
TableId = Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_-]+$")]
Endpoint = Annotated[str, Field(min_length=1, max_length=256,
                                pattern=r"^(tcp://[^\s]+:\d{1,5}|ipc://[^\s]+)$")]
_DECIMAL = re.compile(r"^(0|[1-9][0-9]*)?(\.[0-9]{1,12})?%?$")


def _house_edge(value: Any) -> Decimal:
    """``"0.0337"`` or ``"3.37%"`` -> Decimal("0.0337"); at least 0, below 1."""
    if not isinstance(value, str):
        raise ValueError(f"write the house edge as text, e.g. \"0.0337\" or \"3.37%\" (got "
                         f"{value!r}: a float is not exact)")
    text = value.strip()
    if not text or text == "%" or not _DECIMAL.match(text):
        raise ValueError(f"{value!r} is not a decimal (\"0.0337\") or a percentage (\"3.37%\")")
    try:
        edge = Decimal(text.removesuffix("%"))
    except InvalidOperation:
        raise ValueError(f"{value!r} is not a decimal") from None
    if text.endswith("%"):
        edge /= 100
    if not Decimal(0) <= edge < Decimal(1):
        raise ValueError(f"{value!r}: a house edge is at least 0 and below 100%")
    return edge


HouseEdge = Annotated[Decimal, PlainValidator(_house_edge)]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Database(_Section):
    #: libpq connection string (``host=/var/run/postgresql dbname=floor user=floor``) or URI.
    #: Keep the password out of this file: PGPASSFILE / ~/.pgpass.
    dsn: Annotated[str, Field(min_length=1, max_length=1024)]


class Service(_Section):
    #: The most events one transaction stores.
    batch_max: Annotated[int, Field(strict=True, ge=1, le=100_000)] = 2000
    #: How long the service waits for events before storing what it has, in milliseconds.
    batch_wait_ms: Annotated[int, Field(strict=True, ge=1, le=10_000)] = 50
    #: How long a table may take to answer a snapshot or replay request, in seconds.
    replay_timeout_s: Annotated[float, Field(gt=0, le=60)] = 2.0
    #: How long to wait before trying the database again after it failed, in seconds.
    retry_s: Annotated[float, Field(gt=0, le=60)] = 1.0


class FloorTable(_Section):
    id: TableId
    #: The table's CMS family: ``stream.cms_events`` and ``stream.cms_replay`` of its config.
    cms_events: Endpoint
    cms_replay: Endpoint
    #: The table's CURVE public key (``TABLE.key``), relative to this file; set it when the
    #: table uses CURVE (then ``[curve] key_file`` is the floor's own key pair).
    server_key_file: str | None = None


class Curve(_Section):
    #: The floor service's key pair (``lowball-table keys new floor`` writes
    #: ``floor.key_secret``); its public half goes in each table's cms_authorized_keys_dir.
    key_file: str


class PoolChannel(_Section):
    """``[pool_link]``: where the floor publishes its linked pools to the tables
    (:mod:`controller.stream.pool_channel`)."""

    #: The PUB socket the linked tables subscribe to (their ``[progressive.link] endpoint``).
    endpoint: Endpoint
    #: The linked tables' CURVE public keys (``TABLE.key``), relative to this file: with it the
    #: channel is a CURVE server with ``[curve] key_file`` (the floor's key pair), and a table
    #: whose key is not there receives nothing.
    authorized_keys_dir: Annotated[str, Field(min_length=1, max_length=1024)] | None = None


class DashboardSection(_Section):
    """``[dashboard]``: the floor's read-only page in a browser (docs/floor.md)."""

    #: Loopback only: the dashboard has no sign-in yet.
    host: Annotated[str, Field(min_length=1, max_length=64)] = "127.0.0.1"
    port: Annotated[int, Field(strict=True, ge=0, le=65535)] = 8090

    @field_validator("host")
    @classmethod
    def _loopback(cls, value: str) -> str:
        if not (value in ("localhost", "::1") or value.startswith("127.")):
            raise ValueError(f"{value!r}: the dashboard has no sign-in yet, so it listens on "
                             "loopback only (127.0.0.1, ::1 or localhost)")
        return value


class Shift(_Section):
    name: Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_ -]+$")]
    #: Local wall-clock time the shift starts ("06:00"); it ends where the next one starts.
    starts: time


def _default_shifts() -> tuple[Shift, ...]:
    return (Shift(name="grave", starts=time(0)), Shift(name="day", starts=time(8)),
            Shift(name="swing", starts=time(16)))


class Ratings(_Section):
    #: The casino's time zone (IANA name): shifts are local wall-clock times.
    timezone: str = "UTC"
    #: A player away from a table longer than this starts a new stretch of play: the time
    #: between is not time played.
    idle_minutes: Annotated[int, Field(strict=True, ge=1, le=24 * 60)] = 10
    shifts: Annotated[tuple[Shift, ...], Field(min_length=1, max_length=24)] = \
        Field(default_factory=_default_shifts)

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        try:
            zoneinfo.ZoneInfo(value)
        except (zoneinfo.ZoneInfoNotFoundError, ValueError):
            raise ValueError(f"{value!r} is not a known time zone (e.g. America/Los_Angeles)") \
                from None
        return value

    @model_validator(mode="after")
    def _distinct_shifts(self) -> Self:
        names = [shift.name for shift in self.shifts]
        starts = [shift.starts for shift in self.shifts]
        if len(set(names)) != len(names):
            raise ValueError(f"shifts: a name appears twice ({', '.join(names)})")
        if len(set(starts)) != len(starts):
            raise ValueError("shifts: two shifts start at the same time")
        return self


class Paytable(_Section):
    #: The house edge of every wager on this paytable ...
    house_edge: HouseEdge
    #: ... or of one wager (``bonus = "0.05"``), where it differs.
    wagers: dict[Annotated[str, Field(pattern=r"^[a-z_]{1,32}$")], HouseEdge] = {}


#: The most tables one pool links (AGS links about 40; a whole floor is a few hundred).
MAX_POOL_TABLES = 500


class Pool(Progressive):
    """A linked progressive: one meter, seed, contribution rate and set of fixed awards shared
    by Three Card Lowball tables (``wager``, ``seed``, ``contribution_rate`` and ``awards`` as
    a table config's ``[progressive]``)."""

    id: TableId
    #: The linked tables (their ``tables[].id``); a table is in one pool at most.
    tables: Annotated[tuple[TableId, ...], Field(min_length=1, max_length=MAX_POOL_TABLES)]
    #: What a hit is paid while the pool is locked by an earlier hit awaiting verification:
    #: ``seed`` (the house puts up the seed and pays it) or ``meter`` (the meter as it then
    #: stands: what the tables contributed since the earlier hit emptied it, plus the seed if
    #: that hit was verified meanwhile).
    simultaneous_hit: Literal["seed", "meter"] = "seed"


class FloorConfig(_Section):
    database: Database
    service: Service = Service()
    curve: Curve | None = None
    tables: Annotated[tuple[FloorTable, ...], Field(min_length=1, max_length=2000)]
    ratings: Ratings = Ratings()
    #: Paytable name (``table.paytable`` of a table config) -> its house edge: what
    #: theoretical win is computed with (``lowball-table math`` prints a paytable's exact
    #: figures to write here).
    paytables: dict[Annotated[str, Field(min_length=1, max_length=64)], Paytable] = {}
    pools: Annotated[tuple[Pool, ...], Field(max_length=100)] = ()
    #: The pool channel; unset: the floor keeps the pools' ledgers and publishes nothing.
    pool_link: PoolChannel | None = None
    #: Prometheus metrics on a loopback port (docs/install.md, "Watching a table"); unset: none.
    metrics: MetricsSettings | None = None
    dashboard: DashboardSection | None = None

    @model_validator(mode="after")
    def _tables(self) -> Self:
        seen: set[str] = set()
        problems = self._pool_problems()
        for index, table in enumerate(self.tables):
            if table.id in seen:
                problems.append(f"tables[{index}].id: {table.id!r} is listed twice")
            seen.add(table.id)
            if table.server_key_file is not None and self.curve is None:
                problems.append(f"tables[{index}].server_key_file needs [curve] key_file "
                                "(the floor's own key pair)")
            if table.server_key_file is None:
                exposed = [key for key in ("cms_events", "cms_replay")
                           if not is_local(getattr(table, key))]
                if exposed:
                    problems.append(f"tables[{index}].{exposed[0]}: without CURVE keys "
                                    "(server_key_file) a table streams on loopback or ipc:// "
                                    "only")
        link = self.pool_link
        if link is not None and link.authorized_keys_dir is not None and self.curve is None:
            problems.append("pool_link.authorized_keys_dir needs [curve] key_file (the floor's "
                            "own key pair)")
        if link is not None and link.authorized_keys_dir is None and not is_local(link.endpoint):
            problems.append(f"pool_link.endpoint: {link.endpoint!r}: without CURVE "
                            "(authorized_keys_dir) the pool channel binds to loopback or ipc:// "
                            "only")
        if problems:
            raise ValueError("; ".join(problems))
        return self

    def _pool_problems(self) -> list[str]:
        followed = {table.id for table in self.tables}
        pool_of: dict[str, str] = {}
        ids: set[str] = set()
        problems = []
        for index, pool in enumerate(self.pools):
            if pool.id in ids:
                problems.append(f"pools[{index}].id: {pool.id!r} is listed twice")
            ids.add(pool.id)
            for place, table in enumerate(pool.tables):
                key = f"pools[{index}].tables[{place}]"
                if table not in followed:
                    problems.append(f"{key}: {table!r} is not one of the [[tables]] the floor "
                                    "follows")
                elif table in pool_of:
                    problems.append(f"{key}: {table!r} is already linked to pool "
                                    f"{pool_of[table]!r} (a table is in one pool at most)")
                else:
                    pool_of[table] = pool.id
        return problems

    def pool_of(self, table_id: str) -> Pool | None:
        return next((pool for pool in self.pools if table_id in pool.tables), None)


class LoadedFloorConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    config: FloorConfig

    def resolve(self, relative: str) -> Path:
        """A path from the config, relative to the config file."""
        return Path(self.path).parent / relative


def load_floor_config(path: Path | str) -> LoadedFloorConfig:
    config: FloorConfig = validate(FloorConfig, read_toml(Path(path)), str(path))
    loaded = LoadedFloorConfig(path=str(path), config=config)
    if config.curve is not None and not loaded.resolve(config.curve.key_file).is_file():
        raise InputError(str(path), [f"curve.key_file: {loaded.resolve(config.curve.key_file)} "
                                     "does not exist"])
    return loaded
