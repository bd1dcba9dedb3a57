"""Load boards/ and cores/ TOML files, resolving `extends` (a board file on top of its SoC file)."""
from __future__ import annotations

import functools
import hashlib
import json
import tomllib
from dataclasses import replace
from pathlib import Path

from ..files import open_regular, user_cache_dir, write_whole
from .specs import BoardSpec, CacheSpec, CoreSpec, FlashTimingSpec, MemoryRegion, PeripheralSpec

KIND_FOLDERS = ("boards", "cores", "powermodels")
PARSED = "parsed-toml"  # the folder of the user's cache where the bundled files' parses are kept


class ConfigError(ValueError):
    """A hardware description is missing, malformed or inconsistent."""


def data_dir(kind: str) -> Path:
    """Where `kind` (boards, cores, powermodels) lives: inside the wheel, else the source tree."""
    packaged = Path(__file__).resolve().parent.parent / "data" / kind
    if packaged.is_dir():
        return packaged
    source_tree = Path(__file__).resolve().parents[3] / kind
    if source_tree.is_dir():
        return source_tree
    raise ConfigError(f"cannot find the {kind}/ data folder (looked in {packaged} and {source_tree})")


def parse_toml(text: str, path: Path | None = None) -> dict:
    """tomllib.loads(text) (raising what it raises). For a bundled data file `path` (boards/,
    cores/, powermodels/) the parse is kept as JSON in the user's cache under the text's digest
    and read from there by the next process: tomllib, pure Python, parsing the board, its SoC,
    the core and the power model was a visible share of every start (docs/performance.md,
    "Twenty-eighth pass"), and JSON reads the same dictionaries many times faster."""
    folder = user_cache_dir() if path is not None and _bundled(path) else None
    if folder is None:
        return tomllib.loads(text)
    kept = folder / PARSED / f"{hashlib.sha256(text.encode()).hexdigest()[:32]}.json"
    try:
        with open_regular(kept) as file:
            data = json.loads(file.read())
        if isinstance(data, dict):
            return data
    except (OSError, ValueError):  # (none yet, or damaged: parsed again and kept again)
        pass
    data = tomllib.loads(text)
    try:
        encoded = json.dumps(data).encode()
    except (TypeError, ValueError):  # (a date or a time: not JSON; parsed every time)
        return data
    write_whole(kept, lambda out: out.write(encoded))
    return data


def _bundled(path: Path) -> bool:
    """Whether `path` is one of mcusim's own data files (boards/soc/ included): only theirs are
    kept, so the kept parses grow with mcusim's versions, not with a user's edits."""
    folder = path.resolve().parent
    return bool({folder, folder.parent} & _data_folders())


@functools.cache
def _data_folders() -> frozenset[Path]:
    folders = set()
    for kind in KIND_FOLDERS:
        try:
            folders.add(data_dir(kind).resolve())
        except ConfigError:
            pass
    return frozenset(folders)


def _merge(base: dict, top: dict) -> dict:
    """Deep-merge `top` over `base`; arrays of tables merge by their `name` key."""
    merged = dict(base)
    for key, value in top.items():
        old = merged.get(key)
        if isinstance(old, dict) and isinstance(value, dict):
            merged[key] = _merge(old, value)
        elif isinstance(old, list) and isinstance(value, list) and all(isinstance(v, dict) for v in old + value):
            by_name = {item.get("name", id(item)): dict(item) for item in old}
            for item in value:
                name = item.get("name", id(item))
                by_name[name] = _merge(by_name[name], item) if name in by_name else dict(item)
            merged[key] = list(by_name.values())
        else:
            merged[key] = value
    return merged


def _read(path: Path, seen: tuple[Path, ...] = ()) -> dict:
    if path in seen:
        raise ConfigError(f"{path}: `extends` cycle")
    try:
        data = parse_toml(path.read_text(), path)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: {exc}") from exc
    parent = (data.get("board") or data.get("soc") or {}).get("extends")
    if parent:
        parent_path = path.parent / f"{parent}.toml"
        if not parent_path.is_file():
            parent_path = data_dir("boards") / f"{parent}.toml"
        if not parent_path.is_file():
            raise ConfigError(f"{path}: extends '{parent}', which does not exist")
        data = _merge(_read(parent_path, seen + (path,)), data)
    return data


def board_names() -> list[str]:
    """Names of the boards (files with a [board] table) in boards/."""
    names = []
    for path in sorted(data_dir("boards").glob("*.toml")):
        if "board" in parse_toml(path.read_text(), path):
            names.append(path.stem)
    return names


def core_timing_table(core: CoreSpec) -> dict[str, int]:
    """The core's timing table ([timing.<model>] of its TOML), e.g. cycles per instruction class."""
    path = data_dir("cores") / f"{core.name}.toml"
    data = parse_toml(path.read_text(), path)
    model = data["timing"].get("model", "")
    return {k: int(v) for k, v in data["timing"].get(model.replace("-", "_"), {}).items()}


def load_core(name: str) -> CoreSpec:
    path = data_dir("cores") / f"{name}.toml"
    if not path.is_file():
        raise ConfigError(f"unknown core '{name}' (no {path})")
    data = parse_toml(path.read_text(), path)
    try:
        core, timing, exc = data["core"], data["timing"], data["exceptions"]
        return CoreSpec(
            name=core["name"],
            architecture=core["architecture"],
            unicorn_cpu_model=core["unicorn_cpu_model"],
            capstone_mcpu=core["capstone_mcpu"],
            cpuid=int(core["cpuid"]),
            fpu=core["fpu"],
            fpu_double_precision=bool(core["fpu_double_precision"]),
            default_instruction_cycles=int(timing["default_instruction_cycles"]),
            timing_model=str(timing.get("model", "one_cycle_per_instruction")),
            exception_entry_cycles=int(exc["entry_cycles"]),
            exception_return_cycles=int(exc["return_cycles"]),
            exception_tail_chain_cycles=int(exc["tail_chain_cycles"]),
            exception_fp_context_cycles=int(exc.get("fp_context_cycles", 0)),
            roofline={key: float(value) for key, value in data.get("roofline", {}).items()},
        )
    except KeyError as exc:
        raise ConfigError(f"{path}: missing key {exc}") from exc


def load_board(name: str) -> BoardSpec:
    """Load a board by name (e.g. 'mcu-d') or by path to a board TOML file."""
    path = Path(name)
    if not (path.suffix == ".toml" and path.is_file()):
        path = data_dir("boards") / f"{name}.toml"
    if not path.is_file():
        raise ConfigError(f"unknown board '{name}'; known boards: {', '.join(board_names())}")
    data = _read(path)
    if "board" not in data:
        raise ConfigError(f"{path} is an SoC description, not a board (it has no [board] table)")
    board, soc = data["board"], data.get("soc", {})
    try:
        memory = tuple(
            MemoryRegion(
                name=m["name"], base=int(m["base"]), size_bytes=int(m["size_bytes"]),
                kind=m.get("kind", "ram"), alias_of=m.get("alias_of"),
            )
            for m in data.get("memory", [])
        )
        peripherals = tuple(
            PeripheralSpec(
                name=p["name"], base=int(p["base"]), size_bytes=int(p["size_bytes"]),
                model=p.get("model"), irq=p.get("irq"), registers=dict(p.get("registers", {})),
                reset=dict(p.get("reset", {})),
            )
            for p in data.get("peripheral", [])
        )
        spec = BoardSpec(
            name=board["name"],
            title=board.get("title", board["name"]),
            soc=soc["name"],
            vendor=soc["vendor"],
            core=load_core(soc["core"]),
            clock_hz=int(board.get("clock_hz", soc["reset_clock_hz"])),
            reset_clock_hz=int(soc["reset_clock_hz"]),
            boot_address=int(soc["boot_address"]),
            irq_count=int(soc["irq_count"]),
            nvic_priority_bits=int(soc["nvic_priority_bits"]),
            systick_external_clock_divider=int(soc.get("systick_external_clock_divider", 1)),
            console_uart=board.get("console_uart"),
            memory=memory,
            peripherals=peripherals,
            peripheral_space=tuple((int(s["base"]), int(s["size_bytes"])) for s in data.get("peripheral_space", [])),
            clocks={k: int(v) for k, v in data.get("clocks", {}).items()},
            pins={str(k): str(v) for k, v in data.get("pins", {}).items()},
            cpuid=int(soc.get("cpuid", 0)),
            max_clock_hz=int(soc.get("max_clock_hz", 0)),
            flash_ports=_flash_ports(data.get("flash_timing")),
            source_file=str(path),
        )
    except KeyError as exc:
        raise ConfigError(f"{path}: missing key {exc}") from exc
    if not spec.cpuid:
        spec = replace(spec, cpuid=spec.core.cpuid)
    _check(spec)
    return spec


def _cache(data: dict | None) -> CacheSpec | None:
    if data is None:
        return None
    return CacheSpec(sets=int(data["sets"]), ways=int(data["ways"]), enabled=bool(data.get("enabled", False)),
                     shared_with_icache=bool(data.get("shared_with_icache", False)))


def _flash_ports(data) -> tuple[FlashTimingSpec, ...]:
    """[flash_timing] (one port) or [[flash_timing]] (several, each with a name)."""
    if data is None:
        return ()
    return tuple(_flash_timing(port) for port in (data if isinstance(data, list) else [data]))


def _flash_timing(data: dict) -> FlashTimingSpec:
    limits = {str(rng): tuple((int(hz), int(ws)) for hz, ws in rows)
              for rng, rows in data.get("wait_state_limits", {}).items()}
    return FlashTimingSpec(
        region=data["region"], line_bytes=int(data["line_bytes"]), name=str(data.get("name", "flash")),
        fetch_wait_cycles=int(data.get("fetch_wait_cycles", 0)), data_wait_cycles=int(data.get("data_wait_cycles", 0)),
        prefetch=bool(data.get("prefetch", False)), icache=_cache(data.get("icache")), dcache=_cache(data.get("dcache")),
        flash_clock_hz=int(data.get("flash_clock_hz", 0)), wait_state_limits=limits,
        voltage_range=str(data.get("voltage_range", "")),
        max_wait_states=int(data["max_wait_states"]) if "max_wait_states" in data else None,
        ranges=tuple(data.get("ranges", ())), core_caches=bool(data.get("core_caches", False)),
        line_buffer=bool(data.get("line_buffer", True)), ram_ranges=tuple(data.get("ram_ranges", ())),
        ram_read_wait_cycles=int(data.get("ram_read_wait_cycles", 0)),
        writeback_wait_cycles=int(data.get("writeback_wait_cycles", 0)))


def _check(spec: BoardSpec) -> None:
    names = {r.name for r in spec.memory}
    for region in spec.memory:
        if region.alias_of and region.alias_of not in names:
            raise ConfigError(f"board {spec.name}: region {region.name} aliases unknown region {region.alias_of}")
        if region.kind not in ("flash", "ram"):
            raise ConfigError(f"board {spec.name}: region {region.name} has unknown kind {region.kind!r}")
    ordered = sorted(spec.memory, key=lambda r: r.base)
    for a, b in zip(ordered, ordered[1:]):
        if a.end > b.base:
            raise ConfigError(f"board {spec.name}: regions {a.name} and {b.name} overlap")
    if len({port.name for port in spec.flash_ports}) != len(spec.flash_ports):
        raise ConfigError(f"board {spec.name}: flash_timing ports need distinct names")
    ram = {r.name for r in spec.memory if r.kind == "ram" and not r.alias_of}
    for flash in spec.flash_ports:
        unknown = [name for name in flash.ram_ranges if name not in ram]
        if unknown:
            raise ConfigError(f"board {spec.name}: flash_timing {flash.name}: ram_ranges {unknown} are not RAM "
                              f"regions (RAM: {sorted(ram)})")
        if flash.ram_ranges and (flash.dcache is None or flash.dcache.shared_with_icache):
            raise ConfigError(f"board {spec.name}: flash_timing {flash.name}: ram_ranges need a data cache of "
                              f"their own (dcache, not shared with the instruction cache)")
        if flash.region not in names:
            raise ConfigError(f"board {spec.name}: flash_timing names unknown region {flash.region}")
        for name in flash.ranges:
            region = next((r for r in spec.memory if r.name == name), None)
            if region is None or spec.storage_region(region).name != flash.region:
                raise ConfigError(f"board {spec.name}: flash_timing range {name} is not {flash.region} or an alias of it")
        if flash.line_bytes < 2 or flash.line_bytes & (flash.line_bytes - 1):
            raise ConfigError(f"board {spec.name}: flash_timing line_bytes must be a power of two >= 2")
        for cache in (flash.icache, flash.dcache):
            if cache is not None and (cache.sets < 1 or cache.ways < 1):
                raise ConfigError(f"board {spec.name}: a flash cache needs sets >= 1 and ways >= 1")
        for voltage_range, rows in flash.wait_state_limits.items():
            clocks = [hz for hz, _ in rows]
            if not rows or clocks != sorted(set(clocks)) or any(ws < 0 for _, ws in rows):
                raise ConfigError(f"board {spec.name}: flash_timing {flash.name}: wait_state_limits {voltage_range} "
                                  f"must list [highest clock, wait states] rows by rising clock")
            if flash.max_wait_states is None or max(ws for _, ws in rows) > flash.max_wait_states:
                raise ConfigError(f"board {spec.name}: flash_timing {flash.name}: wait_state_limits need "
                                  f"max_wait_states (the latency field) at least as large as their wait states")
        if flash.wait_state_limits and flash.voltage_range not in flash.wait_state_limits:
            raise ConfigError(f"board {spec.name}: flash_timing {flash.name}: voltage_range "
                              f"{flash.voltage_range!r} is not a wait_state_limits key "
                              f"({', '.join(flash.wait_state_limits)})")
    if spec.console_uart and spec.peripheral(spec.console_uart) is None:
        raise ConfigError(f"board {spec.name}: console UART {spec.console_uart} is not among its peripherals")
