"""The table configuration: which game, which paytable, limits, variant rules, progressive.

An operator edits a TOML file (see ``config/*.toml``); this module validates it with pydantic
models that forbid unknown keys, so a typo fails with the key path instead of being ignored.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from typing import Annotated, Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from controller.core.table import Table as CoreTable
from controller.settings.pins import PIN_HASH_PATTERN
from controller.core.table_settings import (
    MAX_SPOTS,
    GameSettings,
    GameSetup,
    meter_contribution,
    paytable_from,
    progressive_from,
    rules_from,
)
from controller.settings.metrics import MetricsSettings
from controller.settings.paytables import (
    CaliPaytable,
    Paytables,
    ThreeCardPaytable,
    load_paytables,
    read_toml,
)
from controller.settings.validation import Cents, InputError, PositiveCents, RateText, validate
from controller.core.vocabulary import Game as Game
from drivers.config import MeterConfig, ShoeConfig, SpotsConfig

#: Several jackpot winners on one hand: split the meter equally, or pay each the whole meter.
JackpotSplit = Literal["equal", "full_each"]


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Rules(_Section):
    """The variant switches where the game's rules allow two readings (docs/configuration.md)."""

    #: Cali LowBall: a J-high-or-worse X-Tra Bonus loses when the player loses the hand.
    xtra_bonus_loses_on_loss: bool = False
    #: Cali LowBall: the Lowdown Bonus is settled on a folded hand instead of forfeited.
    lowdown_bonus_survives_fold: bool = False
    #: Cali LowBall: one burn card leaves the shoe before the flop (read, journaled, unused).
    burn_before_flop: bool = False
    #: Three Card Lowball: several jackpot winners on one hand split the meter equally
    #: ("equal", the odd cent stays on the meter) or are each paid the whole meter.
    jackpot_split: JackpotSplit = "equal"


class ProgressiveAwards(_Section):
    """Fixed progressive awards in cents, paid by the house (the jackpot comes from the meter)."""

    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)

    pat_one_color: Cents = Field(20000, alias="pat-4-2-A-one-color")
    pat_two_color: Cents = Field(5000, alias="pat-4-2-A-two-color")
    four_high: Cents = Field(1000, alias="4-high")
    five_high: Cents = Field(300, alias="5-high")


class Progressive(_Section):
    """The Three Card Lowball progressive: wager amount, meter seed and contribution."""

    #: The progressive wager is one fixed amount.
    wager: PositiveCents = 100
    #: What the meter starts at, and is reset to after a verified jackpot.
    seed: Cents = 500_000
    #: The share of each progressive wager added to the meter at lock, e.g. "20%".
    contribution_rate: RateText = Fraction(1, 5)
    # (validated from no keys: mypy reads the constructor by the fields' aliases)
    awards: ProgressiveAwards = ProgressiveAwards.model_validate({})

    @model_validator(mode="after")
    def _whole_cent_contribution(self) -> Self:
        try:
            meter_contribution(self.wager, self.contribution_rate)
        except ValueError as error:
            raise ValueError(f"{error}; choose a rate that gives whole cents for a "
                             f"{self.wager}-cent wager") from None
        return self

    @property
    def contribution(self) -> int:
        """Cents added to the meter by one progressive wager (the core's rule)."""
        return meter_contribution(self.wager, self.contribution_rate)


class PoolLinkSettings(_Section):
    """``[progressive.link]``: the linked pool whose meter this table shows and pays, and the
    floor's pool channel it subscribes to (docs/floor.md)."""

    #: The pool's id in the floor's floor.toml (``[[pools]] id``).
    pool: Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_-]+$")]
    #: The floor's pool channel (its ``[pool_link] endpoint``): ``tcp://HOST:PORT`` or ipc://.
    endpoint: Annotated[str, Field(min_length=1, max_length=256,
                                   pattern=r"^(tcp://[^\s]+:\d{1,5}|ipc://[^\s]+)$")]
    #: The floor's CURVE public key (``floor.key``), relative to this file; the table's own key
    #: pair (``[security] server_secret_key_file``) is its client key.
    server_key_file: Annotated[str, Field(min_length=1, max_length=1024)] | None = None
    #: No message from the pool channel for this long: the link is down (the floor publishes
    #: every pool once a second).
    stale_after_ms: Annotated[int, Field(strict=True, ge=1500, le=60_000)] = 3000


class TableProgressive(Progressive):
    """A table's ``[progressive]``: the progressive, and the pool it is linked to, if any."""

    link: PoolLinkSettings | None = None


class Limits(_Section):
    min_ante: PositiveCents = 500
    max_ante: PositiveCents = 100_000
    max_lowdown_bonus: Cents = 10_000
    #: Seed rule: a player may wager on at most four games (spots) at once.
    max_spots_per_player: Annotated[int, Field(strict=True, ge=1, le=MAX_SPOTS)] = 4

    @model_validator(mode="after")
    def _ordered(self) -> Self:
        if self.min_ante > self.max_ante:
            raise ValueError(f"min_ante {self.min_ante} is above max_ante {self.max_ante}")
        return self


class Table(_Section):
    id: Annotated[str, Field(min_length=1, max_length=32, pattern=r"^[A-Za-z0-9_-]+$")]
    game: Game
    paytable: str
    #: Path of the paytables file, relative to the table config file.
    paytables_file: str = "paytables.toml"
    spots: Annotated[int, Field(strict=True, ge=1, le=MAX_SPOTS)] = MAX_SPOTS


class Devices(_Section):
    """The table's devices; a device left out is not used (the demo config simulates all)."""

    shoe: ShoeConfig | None = None
    spots: SpotsConfig | None = None
    meter: MeterConfig | None = None


class Stream(_Section):
    """ZeroMQ endpoints. Without CURVE keys (``[security] server_secret_key_file``) every one
    must be on loopback (``tcp://127.0.0.1``, ``tcp://[::1]``, ``tcp://localhost``) or local
    (``ipc://``, ``inproc://``)."""

    #: PUB socket, surveillance family: every event and every card live, topic
    #: ``surveillance.<table id>.<event type>``, and heartbeats. For surveillance only: with
    #: CURVE only the keys of ``security.surveillance_authorized_keys_dir`` open it.
    events: str = "tcp://127.0.0.1:5555"
    #: ROUTER socket: snapshot and replay for late joiners (Clone pattern), surveillance.
    replay: str = "tcp://127.0.0.1:5556"
    #: ROUTER socket: dealer and supervisor commands.
    commands: str = "tcp://127.0.0.1:5557"
    #: PUB and ROUTER sockets of the table family (topic ``table.<table id>.<event type>``):
    #: what the table shows, no hidden card; the dealer's console follows it. Unset: the
    #: table has no console.
    table_events: str | None = None
    table_replay: str | None = None
    #: PUB and ROUTER sockets of the CMS family (topic ``cms.<table id>.<event type>``): no
    #: card before its hand settles (WAC 230-16-152). Unset: the table has no CMS stream.
    cms_events: str | None = None
    cms_replay: str | None = None
    heartbeat_s: Annotated[float, Field(gt=0, le=60)] = 1.0

    @model_validator(mode="after")
    def _pairs(self) -> Self:
        if (self.cms_events is None) != (self.cms_replay is None):
            raise ValueError("cms_events and cms_replay go together: set both or neither")
        if (self.table_events is None) != (self.table_replay is None):
            raise ValueError("table_events and table_replay go together: set both or neither")
        return self

    def endpoints(self) -> dict[str, str]:
        """Every endpoint set, by key."""
        keys = ("events", "replay", "commands", "table_events", "table_replay", "cms_events",
                "cms_replay")
        return {key: getattr(self, key) for key in keys if getattr(self, key) is not None}


def is_local(endpoint: str) -> bool:
    """Whether ``endpoint`` is reachable from this machine only."""
    if endpoint.startswith(("ipc://", "inproc://")):
        return True
    if not endpoint.startswith("tcp://"):
        return False
    host = endpoint.removeprefix("tcp://").rsplit(":", 1)[0].strip("[]")
    return host in ("127.0.0.1", "localhost", "::1") or host.startswith("127.")


class Security(_Section):
    #: SHA-256 (hex) of the supervisor credential; supervisor commands need the credential.
    #: ``lowball-table credential`` makes a new credential and prints its hash.
    supervisor_credential_sha256: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None
    #: One credential per supervisor: name -> SHA-256 (hex) of that supervisor's credential.
    #: A command given with one of them is journaled as given by that supervisor (the daemon
    #: decides who acted, whatever name the client gives).
    supervisors: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,31}$")],
                      Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")]] = {}
    #: A supervisor's PIN, to sign in on a touch screen: name (one of ``supervisors``) ->
    #: the PIN's scrypt hash (``lowball-table pin NAME`` makes a PIN and prints its hash).
    #: A command given with it is journaled as given by that supervisor, as with her own
    #: credential; wrong PINs lock her PIN (not her credential) for a while.
    supervisor_pins: dict[Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9 ._-]{0,31}$")],
                          Annotated[str, Field(pattern=PIN_HASH_PATTERN)]] = {}
    #: The table's CURVE secret key file (``lowball-table keys new NAME`` writes
    #: ``NAME.key_secret``); relative to the config file. Set: every socket uses CURVE.
    server_secret_key_file: str | None = None
    #: Public keys (``*.key``) of the table's side allowed on the command socket and the
    #: table family's stream and replay (dealer terminals, the console): what the table shows.
    authorized_keys_dir: str | None = None
    #: Public keys of clients allowed on the surveillance stream and its replay socket (the
    #: surveillance room): every card live. Unset with CURVE: no client may open them. A key
    #: here opens nothing else, and a dealer's key (above) does not open these.
    surveillance_authorized_keys_dir: str | None = None
    #: Public keys of clients allowed on the CMS stream and its replay socket (may be
    #: off-site: they never see a card before the hand settles).
    cms_authorized_keys_dir: str | None = None

    @model_validator(mode="after")
    def _pins_of_supervisors(self) -> Self:
        if strangers := sorted(set(self.supervisor_pins) - set(self.supervisors)):
            raise ValueError(f"supervisor_pins: {', '.join(strangers)} not in "
                             f"[security.supervisors]: a PIN is a supervisor's, who has her "
                             f"own credential too")
        return self

    @model_validator(mode="after")
    def _keys_together(self) -> Self:
        if self.server_secret_key_file is not None and self.authorized_keys_dir is None:
            raise ValueError("server_secret_key_file needs authorized_keys_dir (the client "
                             "public keys allowed to connect)")
        if self.server_secret_key_file is None and (
                self.authorized_keys_dir is not None or self.cms_authorized_keys_dir is not None
                or self.surveillance_authorized_keys_dir is not None):
            raise ValueError("authorized_keys_dir needs server_secret_key_file (the table's "
                             "own CURVE key)")
        return self


class TableConfig(_Section):
    table: Table
    limits: Limits = Limits()
    rules: Rules = Rules()
    progressive: TableProgressive = TableProgressive()
    devices: Devices = Devices()
    stream: Stream = Stream()
    security: Security = Security()
    #: Prometheus metrics on a loopback port (docs/install.md, "Watching a table"); unset: none.
    metrics: MetricsSettings | None = None
    #: Where the journal lives (systemd's StateDirectory); relative to the config file.
    state_dir: str = "state"

    @model_validator(mode="after")
    def _loopback_without_keys(self) -> Self:
        if self.security.server_secret_key_file is None:
            exposed = [f"stream.{key} = {endpoint!r}"
                       for key, endpoint in self.stream.endpoints().items()
                       if not is_local(endpoint)]
            if exposed:
                raise ValueError(
                    f"{', '.join(exposed)}: without CURVE keys the stream is not "
                    "authenticated and must bind to loopback (tcp://127.0.0.1:PORT) or ipc://; "
                    "set [security] server_secret_key_file and authorized_keys_dir "
                    "(lowball-table keys new NAME) to listen on a network")
        if self.stream.cms_events is not None and self.security.server_secret_key_file \
                is not None and self.security.cms_authorized_keys_dir is None:
            raise ValueError("stream.cms_events with CURVE keys needs "
                             "security.cms_authorized_keys_dir (the CMS clients' public keys)")
        link = self.progressive.link
        if link is not None:
            if self.table.game != "three_card_lowball":
                raise ValueError("progressive.link: only a three_card_lowball table has a "
                                 "progressive to link")
            if link.server_key_file is None and not is_local(link.endpoint):
                raise ValueError(f"progressive.link.endpoint = {link.endpoint!r}: without the "
                                 "floor's CURVE key (server_key_file) the pool channel is on "
                                 "loopback or ipc:// only")
            if link.server_key_file is not None and \
                    self.security.server_secret_key_file is None:
                raise ValueError("progressive.link.server_key_file needs [security] "
                                 "server_secret_key_file (the table's own key pair, its "
                                 "client key)")
        return self


class LoadedConfig(BaseModel):
    """A validated table config with its paytables resolved."""

    model_config = ConfigDict(frozen=True)

    path: str
    config: TableConfig
    paytables: Paytables

    def setup(self, game: str | None = None, paytable: str | None = None,
              rules: Rules | None = None) -> GameSetup:
        """The game setup of this table, or of another game/paytable from the same files, as
        the core's frozen objects (read from their document form, as a replay reads them)."""
        game = game or self.config.table.game
        name = paytable or (self.config.table.paytable if game == self.config.table.game
                            else next(iter(self.paytables.for_game(game)), ""))
        tables = self.paytables.for_game(game)
        if name not in tables:
            known = ", ".join(sorted(tables)) or "none"
            raise InputError(self.path, [f"paytable: no {game} paytable named {name!r} "
                                         f"(known: {known})"])
        return GameSetup(game, name, paytable_from(_paytable_document(tables[name])),
                         rules_from(_document(rules or self.config.rules)),
                         progressive_from(_progressive_document(self.config.progressive)))

    def paytable(self) -> CaliPaytable | ThreeCardPaytable:
        """The table's own paytable (its existence is checked by :func:`load_config`)."""
        return self.paytables.for_game(self.config.table.game)[self.config.table.paytable]


def _document(model: BaseModel) -> dict[str, Any]:
    return model.model_dump(mode="json", by_alias=True)


def _progressive_document(progressive: Progressive) -> dict[str, Any]:
    """The progressive as the journaled settings hold it: the linked pool's id, not how the
    table reaches it (an endpoint or a key changes no hand), and nothing when unlinked (so an
    unlinked table's settings and fingerprint are what they were before links)."""
    document = progressive.model_dump(mode="json", by_alias=True, exclude={"link"})
    link = getattr(progressive, "link", None)  # a bare Progressive (tests, scenarios) has none
    if link is not None:
        document["pool"] = link.pool
    return document


def _paytable_document(paytable: BaseModel) -> dict[str, Any]:
    """A paytable as the journaled settings hold it. The approved house edge is the
    operator's record, not a rule of the game: a new figure changes no hand, so it stays out
    of the settings (and their fingerprint)."""
    return paytable.model_dump(mode="json", by_alias=True, exclude={"approved_house_edge"})


def game_settings(loaded: LoadedConfig) -> GameSettings:
    """The game-relevant configuration, what a hand's outcome depends on, as the core's
    :class:`~controller.core.table_settings.GameSettings`. Its document is journaled with
    every :class:`controller.core.table_events.ConfigApplied`, so a replay applies exactly the
    configuration the table ran with."""
    config = loaded.config
    return GameSettings.from_document({
        "game": config.table.game, "paytable": config.table.paytable,
        "spots": config.table.spots,
        "paytable_lines": _paytable_document(loaded.paytable()),
        "rules": _document(config.rules), "limits": _document(config.limits),
        "progressive": _progressive_document(config.progressive)})


def build_table(loaded: LoadedConfig) -> CoreTable:
    """A new (CLOSED) table under ``loaded``'s game settings."""
    return CoreTable(loaded.config.table.id, game_settings(loaded))


def shipped_config_dir() -> Path:
    """The ``config/`` directory shipped with the software (in the wheel or the checkout)."""
    package = Path(__file__).resolve().parent.parent
    packaged = package / "shipped_config"
    return packaged if packaged.is_dir() else package.parent / "config"


def default_config_path(game: str = "cali_lowball") -> Path:
    return shipped_config_dir() / f"{game.replace('_', '-')}.toml"


def load_config(path: Path | str) -> LoadedConfig:
    path = Path(path)
    config: TableConfig = validate(TableConfig, read_toml(path), str(path))
    paytables = load_paytables(path.parent / config.table.paytables_file)
    loaded = LoadedConfig(path=str(path), config=config, paytables=paytables)
    loaded.setup()  # the table's own paytable must exist
    return loaded
