"""A board's power model (powermodels/<board>.toml): rails, their static power per power state
and their energy per event, and the core voltage of each voltage range."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ConfigError
from ..config.loader import data_dir, parse_toml
from ..files import NotRegular, open_regular

STATES = ("run", "sleep", "stop", "off")
CLASS_EVENTS = ("alu", "multiply", "simd", "fp", "branch", "load", "store")  # native.CLASS_NAMES
EVENTS = ("cycle",) + CLASS_EVENTS + ("sram_access", "flash_read")
# the rail each counted event's energy is summed on (native P_ENERGY_CORE, _SRAM, _FLASH); "cycle" goes anywhere
EVENT_RAILS = {**dict.fromkeys(CLASS_EVENTS, "core"), "sram_access": "sram", "flash_read": "flash"}
# The largest value a model may give, far above any MCU's: energy per event in J (the native
# counters sum femtojoules in 64 bits: 9,200 J in all, 10^11 events at this limit), W, W/MHz.
LIMITS = {"energy_j": 1e-7, "static_w": 1e3, "static_w_per_mhz": 1e3}
MAX_VOLTS = 100.0
MAX_WAKEUP_US = 1e9
MAX_CLOCK_HZ = 10**12


@dataclass(frozen=True)
class Rail:
    name: str
    static_w: dict[str, float]          # per state, at the reference core voltage
    static_w_per_mhz: dict[str, float]  # per state, per MHz of core clock
    energy_j: dict[str, float]          # per event, at the reference core voltage
    source: str = ""
    core_domain: bool = True            # powered from the core regulator (scales with its voltage)

    def static_power(self, state: str, clock_hz: float, scale: float) -> float:
        """Watts in `state` at `clock_hz`, `scale` = core voltage / reference: the constant
        part (leakage) scales with the voltage, the clocked part with its square; rails outside
        the core domain (the board's regulators, LEDs, debugger) do not scale."""
        if not self.core_domain:
            scale = 1.0
        return (self.static_w.get(state, 0.0) * scale
                + self.static_w_per_mhz.get(state, 0.0) * clock_hz / 1e6 * scale * scale)


@dataclass(frozen=True)
class PowerModel:
    board: str
    rails: tuple[Rail, ...]
    reference_core_v: float
    voltage_ranges: dict[str, float]    # name -> core voltage
    range_registers: dict[int, str]     # the firmware's voltage-scaling field value -> range name
    default_voltage_range: str
    wakeup_us: dict[str, float] = field(default_factory=dict)
    supply_v: float = 3.3
    source_file: str = ""
    max_clock_hz: dict[str, int] = field(default_factory=dict)  # range -> highest clock it allows (optional)
    dvfs_clocks_hz: tuple[int, ...] = ()  # the clocks `mcusim dvfs` tries by default (optional)
    voltage_follows_clock: bool = False  # the hardware raises the voltage with the clock (Apollo3 burst)

    def range_for_clock(self, clock_hz: float) -> str | None:
        """The lowest-voltage range whose max_clock_hz allows `clock_hz`; the default range when
        the model gives no max_clock_hz; None when every range's limit is below the clock."""
        if not self.max_clock_hz:
            return self.default_voltage_range
        allowed = [name for name, limit in self.max_clock_hz.items() if clock_hz <= limit]
        return min(allowed, key=lambda name: (self.voltage_ranges[name], name)) if allowed else None

    def event_energy(self, event: str) -> float:
        """Joules per event, summed over the rails, at the reference voltage."""
        return sum(rail.energy_j.get(event, 0.0) for rail in self.rails)

    def rail_of(self, event: str) -> str | None:
        return next((rail.name for rail in self.rails if rail.energy_j.get(event)), None)

    def scale(self, voltage_range: str) -> float:
        return self.voltage_ranges[voltage_range] / self.reference_core_v

    def static_power(self, state: str, clock_hz: float, voltage_range: str) -> dict[str, float]:
        scale = self.scale(voltage_range)
        return {rail.name: rail.static_power(state, clock_hz, scale) for rail in self.rails}


def load_power_model(board: str, path: str | Path | None = None) -> PowerModel:
    """The model for `board` from powermodels/ (or `path`); ConfigError when missing, malformed
    or another board's."""
    path = Path(path) if path else data_dir("powermodels") / f"{board}.toml"
    try:
        with open_regular(path) as f:
            data = parse_toml(f.read().decode("utf-8"), path)
    except FileNotFoundError:
        raise ConfigError(f"no power model for {board} ({path} does not exist)") from None
    except NotRegular as exc:
        raise ConfigError(f"{path} is not a power model: it is {exc.kind}, not a regular file") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read it: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{path} is not a power model (TOML): not UTF-8 text ({exc.reason} at byte {exc.start})")
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path} is not a power model (TOML): {exc}") from exc
    model = power_model_from(data, str(path))
    if model.board and model.board != board:
        raise ConfigError(f"{path} is the power model of {model.board}, not {board}")
    return model


def _number(value, where: str, low: float, high: float, above: bool = False) -> float:
    """`value` as a float when it is a finite number in [low, high] (above `low` when `above`)."""
    if (isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high
            or above and value == low):
        span = f"{'above' if above else 'from'} {low:g} {'up ' if above else ''}to {high:g}"
        raise ConfigError(f"{where} = {value!r}: expected a number {span}")
    return float(value)


def _integer(value, where: str) -> int:
    """A positive whole number (a clock in Hz); a float with no fraction is taken too."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_CLOCK_HZ \
            or value != int(value):
        raise ConfigError(f"{where} = {value!r}: expected a whole number from 1 to {MAX_CLOCK_HZ:g}")
    return int(value)


def _table(value, where: str) -> dict:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a table, got {value!r}")
    return value


def _rail(raw, where: str) -> Rail:
    raw = _table(raw, where)
    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ConfigError(f"{where}: a rail needs a name")
    where = f"{where} {name}"
    tables = {}
    for table, keys in (("static_w", STATES), ("static_w_per_mhz", STATES), ("energy_j", EVENTS)):
        values = _table(raw.get(table, {}), f"{where}: {table}")
        unknown = set(values) - set(keys)
        if unknown:
            raise ConfigError(f"{where}: {table}: unknown keys {sorted(unknown)} (known: {', '.join(keys)})")
        tables[table] = {key: _number(value, f"{where}: {table}.{key}", 0.0, LIMITS[table])
                         for key, value in values.items()}
    for event in tables["energy_j"]:
        home = EVENT_RAILS.get(event)
        if home is not None and name != home:
            raise ConfigError(f"{where}: {event} energy belongs on the {home} rail (the hook sums it there)")
    core_domain = raw.get("core_domain", name != "board")
    if not isinstance(core_domain, bool) or not isinstance(raw.get("source", ""), str):
        raise ConfigError(f"{where}: core_domain must be true or false, source a string")
    return Rail(name, tables["static_w"], tables["static_w_per_mhz"], tables["energy_j"], raw.get("source", ""),
                core_domain)


def power_model_from(data: dict, source_file: str = "") -> PowerModel:
    """The model from parsed TOML; ConfigError naming the file and the key for anything missing,
    of the wrong type, not finite, negative or implausibly large (docs: powermodels/README.md)."""
    where = source_file or "power model"
    try:
        if not isinstance(data["rail"], list) or not data["rail"]:
            raise ConfigError(f"{where}: rail: expected one or more [[rail]] tables")
        rails = [_rail(raw, f"{where}: rail") for raw in data["rail"]]
        names = [rail.name for rail in rails]
        if len(set(names)) != len(names):
            raise ConfigError(f"{where}: rail names repeat: {', '.join(names)}")
        table = _table(data["voltage_ranges"], f"{where}: voltage_ranges")
        if not table:
            raise ConfigError(f"{where}: voltage_ranges: expected one or more ranges")
        ranges, registers, limits = {}, {}, {}
        for name, raw in table.items():
            raw = _table(raw, f"{where}: voltage_ranges.{name}")
            ranges[name] = _number(raw["core_v"], f"{where}: voltage_ranges.{name}.core_v", 0.0, MAX_VOLTS, above=True)
            if "register_value" in raw:
                value = raw["register_value"]
                if isinstance(value, bool) or not isinstance(value, int):
                    raise ConfigError(f"{where}: voltage_ranges.{name}.register_value = {value!r}: expected an integer")
                registers[value] = name
            if "max_clock_hz" in raw:
                limits[name] = _integer(raw["max_clock_hz"], f"{where}: voltage_ranges.{name}.max_clock_hz")
        default = data.get("default_voltage_range", next(iter(ranges)))
        if not isinstance(default, str) or default not in ranges:
            raise ConfigError(f"{where}: default_voltage_range {default!r} is not among {sorted(ranges)}")
        dvfs = data.get("dvfs_clocks_hz", [])
        if not isinstance(dvfs, list):
            raise ConfigError(f"{where}: dvfs_clocks_hz: expected a list of clocks")
        dvfs = tuple(_integer(hz, f"{where}: dvfs_clocks_hz") for hz in dvfs)
        wakeup = {state: _number(us, f"{where}: wakeup_us.{state}", 0.0, MAX_WAKEUP_US)
                  for state, us in _table(data.get("wakeup_us", {}), f"{where}: wakeup_us").items()}
        if set(wakeup) - set(STATES):
            raise ConfigError(f"{where}: wakeup_us: states must be among {', '.join(STATES)}")
        reference = _number(data["reference_core_v"], f"{where}: reference_core_v", 0.0, MAX_VOLTS, above=True)
        supply = _number(data.get("supply_v", 3.3), f"{where}: supply_v", 0.0, MAX_VOLTS, above=True)
        _number(data.get("board_supply_v", 5.0), f"{where}: board_supply_v", 0.0, MAX_VOLTS, above=True)  # (a note)
        board, follows = data.get("board", ""), data.get("voltage_follows_clock", False)
        if not isinstance(board, str) or not isinstance(follows, bool):
            raise ConfigError(f"{where}: board must be a string, voltage_follows_clock true or false")
        return PowerModel(board, tuple(rails), reference, ranges, registers, default, wakeup, supply, source_file,
                          limits, dvfs, follows)
    except KeyError as exc:
        raise ConfigError(f"{where}: missing {exc}") from exc
