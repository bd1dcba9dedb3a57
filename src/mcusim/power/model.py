"""A board's power model (powermodels/<board>.toml): rails, their static power per power state
and their energy per event, and the core voltage of each voltage range."""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from ..config import ConfigError
from ..config.loader import data_dir

STATES = ("run", "sleep", "stop", "off")
CLASS_EVENTS = ("alu", "multiply", "simd", "fp", "branch", "load", "store")  # native.CLASS_NAMES
EVENTS = ("cycle",) + CLASS_EVENTS + ("sram_access", "flash_read")
# the rail each counted event's energy is summed on (native P_ENERGY_CORE, _SRAM, _FLASH); "cycle" goes anywhere
EVENT_RAILS = {**dict.fromkeys(CLASS_EVENTS, "core"), "sram_access": "sram", "flash_read": "flash"}


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
    """The model for `board` from powermodels/ (or `path`); ConfigError when missing or malformed."""
    path = Path(path) if path else data_dir("powermodels") / f"{board}.toml"
    if not path.exists():
        raise ConfigError(f"no power model for {board} ({path} does not exist)")
    try:
        data = tomllib.loads(path.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    return power_model_from(data, str(path))


def power_model_from(data: dict, source_file: str = "") -> PowerModel:
    where = source_file or "power model"
    try:
        rails = []
        for raw in data["rail"]:
            unknown = set(raw.get("energy_j", {})) - set(EVENTS)
            if unknown:
                raise ConfigError(f"{where}: rail {raw['name']}: unknown events {sorted(unknown)} (known: {EVENTS})")
            for table in ("static_w", "static_w_per_mhz"):
                if set(raw.get(table, {})) - set(STATES):
                    raise ConfigError(f"{where}: rail {raw['name']}: {table} states must be among {STATES}")
            for event in raw.get("energy_j", {}):
                home = EVENT_RAILS.get(event)
                if home is not None and raw["name"] != home:
                    raise ConfigError(f"{where}: rail {raw['name']}: {event} energy belongs on the {home} rail "
                                      "(the hook sums it there)")
            values = [*raw.get("static_w", {}).values(), *raw.get("static_w_per_mhz", {}).values(),
                      *raw.get("energy_j", {}).values()]
            if any(v < 0 for v in values):
                raise ConfigError(f"{where}: rail {raw['name']}: negative coefficient")
            rails.append(Rail(raw["name"], dict(raw.get("static_w", {})), dict(raw.get("static_w_per_mhz", {})),
                              {k: float(v) for k, v in raw.get("energy_j", {}).items()}, raw.get("source", ""),
                              bool(raw.get("core_domain", raw["name"] != "board"))))
        ranges = {name: float(r["core_v"]) for name, r in data["voltage_ranges"].items()}
        registers = {int(r["register_value"]): name for name, r in data["voltage_ranges"].items()
                     if "register_value" in r}
        default = data.get("default_voltage_range", next(iter(ranges)))
        if default not in ranges:
            raise ConfigError(f"{where}: default_voltage_range {default!r} is not among {sorted(ranges)}")
        limits = {name: int(r["max_clock_hz"]) for name, r in data["voltage_ranges"].items() if "max_clock_hz" in r}
        dvfs = tuple(int(hz) for hz in data.get("dvfs_clocks_hz", ()))
        if any(hz <= 0 for hz in (*limits.values(), *dvfs)):
            raise ConfigError(f"{where}: max_clock_hz and dvfs_clocks_hz must be positive")
        return PowerModel(data.get("board", ""), tuple(rails), float(data["reference_core_v"]), ranges, registers,
                          default, dict(data.get("wakeup_us", {})), float(data.get("supply_v", 3.3)), source_file,
                          limits, dvfs, bool(data.get("voltage_follows_clock", False)))
    except KeyError as exc:
        raise ConfigError(f"{where}: missing {exc}") from exc
