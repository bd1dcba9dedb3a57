"""What a Machine is built from besides the core: the captures a run was asked for, and the
register blocks (the core's on the PPB, the board's on its peripheral spaces) with the buses
that route MMIO to them."""
from __future__ import annotations

from dataclasses import dataclass

from ..analysis import swo as swo_stream
from ..analysis.branch_trace import BranchTraceCapture, MissingSymbol, TraceWindow
from ..analysis.profile import FunctionProfile
from ..analysis.sampling import PcSampler
from ..config import BoardSpec, ConfigError
from ..elf import ElfImage
from ..peripherals import model_class
from ..peripherals.base import Peripheral
from ..peripherals.bus import Bus
from ..peripherals.core.dwt import Dwt, link_trace
from ..peripherals.core.itm import Itm
from ..peripherals.core.nvic import Nvic
from ..peripherals.core.scb import CoreDebug, Scb, ScbExtension, SystemControlMisc
from ..peripherals.core.systick import SysTick
from ..power.accounting import PowerMeter, VoltageRangeError
from ..power.model import load_power_model


# captures ---------------------------------------------------------------------------------
@dataclass
class Captures:
    """What the run records beyond its totals (None: not asked for)."""
    profile: FunctionProfile | None
    sampler: PcSampler | None
    trace: BranchTraceCapture | None
    power: PowerMeter | None
    swo: swo_stream.SwoRecorder | None  # ITM, exception, counter events


CALL_LOG_MOVES = 1 << 18  # call-tree moves logged for the evented profile and the timeline (4 MB)


def build_captures(state, image: ElfImage, board: BoardSpec, *, profile: bool, pc_sample_cycles: int | None,
                   branch_trace: TraceWindow | None, power: bool, voltage_range: str | None, power_bin_us: float,
                   power_model: str | None, clock_hz: int, swo: bool, call_log: bool = False) -> Captures:
    """The captures on the native `state`, in the order their slots are laid out (the exact
    profile's function table first, before any decode). `clock_hz`: the clock the run starts at;
    `call_log`: the profile also logs its calls in time order (CALL_LOG_MOVES of them)."""
    return Captures(
        profile=FunctionProfile(state, image.functions,
                                line_ranges=function_segments(image) if image.has_dwarf else (),
                                log_capacity=CALL_LOG_MOVES if call_log else 0)
        if profile else None,
        sampler=PcSampler(state, pc_sample_cycles) if pc_sample_cycles else None,
        trace=branch_trace_capture(state, image, branch_trace) if branch_trace is not None else None,
        power=power_meter(state, board, voltage_range, power_bin_us, power_model, clock_hz) if power else None,
        swo=swo_stream.SwoRecorder(state=state) if swo else None)


def function_segments(image: ElfImage) -> list[tuple[int, int]]:
    """The loaded ranges holding functions (flash code and code copied to RAM), for the line profile."""
    ranges = []
    for segment in image.segments:
        start, end = segment.vaddr, segment.vaddr + len(segment.data)
        if segment.data and any(start <= address < end for address, _, _ in image.functions):
            ranges.append((start, end + (end & 1)))
    return ranges


def branch_trace_capture(state, image: ElfImage, window: TraceWindow) -> BranchTraceCapture:
    """The branch trace capture, its window's symbols looked up in the image."""
    def address(name):
        if name is None:
            return None
        found = image.symbol(name)
        if found is None:
            raise MissingSymbol(f"no symbol {name!r} in {image.path.name} for the branch trace window")
        return found
    return BranchTraceCapture(state, window.limit, address(window.from_symbol), address(window.to_symbol),
                              window.from_cycle, window.to_cycle)


def power_meter(state, board: BoardSpec, voltage_range: str | None, bin_us: float, path: str | None,
                clock_hz: int) -> PowerMeter | None:
    """The board's power model (or the one at `path`) at work, or None for a board without
    one (then asking for a voltage range is an error)."""
    try:
        model = load_power_model(board.name, path)
    except ConfigError:
        if path is not None:
            raise
        if voltage_range is not None:
            raise VoltageRangeError(f"{board.name} has no power model, so no voltage ranges")
        return None
    return PowerMeter(state, model, clock_hz, voltage_range, bin_us, pinned_range=voltage_range is not None)


# register blocks ----------------------------------------------------------------------------
@dataclass
class Devices:
    buses: list[Bus]  # the PPB first, then the board's peripheral spaces
    itm: Itm
    dwt: Dwt
    systick: SysTick
    nvic: Nvic
    scb: Scb
    core_debug: CoreDebug
    peripherals: dict[str, Peripheral]  # the board's, by name


def build_devices(chip, board: BoardSpec, counter_events=None) -> Devices:
    """Every register block on its bus, each model holding `chip`; `counter_events`: where the
    DWT's event counter packets go in an SWO capture."""
    ppb = Bus(chip, 0xE0000000, 0x100000, "PPB")
    itm = Itm("ITM", 0xE0000000, 0x1000, chip)
    dwt = Dwt("DWT", 0xE0001000, 0x1000, chip)
    systick = SysTick("SysTick", 0xE000E010, 0x10, chip, external_divider=board.systick_external_clock_divider)
    nvic = Nvic("NVIC", 0xE000E100, 0x400, chip)
    scb = Scb("SCB", 0xE000ED00, 0x90, chip)
    core_debug = CoreDebug("CoreDebug", 0xE000EDF0, 0x10, chip)
    link_trace(itm, dwt, core_debug, counter_events)
    dwt._sync()
    for device in (itm, dwt, SystemControlMisc("SCnSCB", 0xE000E000, 0x10, chip), systick, nvic, scb, core_debug,
                   ScbExtension("SCB", 0xE000EF00, 0x100, chip)):
        ppb.attach(device)
    buses = [ppb]
    for base, size in board.peripheral_space:
        buses.append(Bus(chip, base, size, "peripheral space"))
    peripherals = {}
    for spec in board.peripherals:
        device = model_class(spec.model).from_spec(spec, chip)
        bus = next((b for b in buses if b.base <= spec.base < b.base + b.size_bytes), None)
        if bus is None:
            raise ValueError(f"board {board.name}: peripheral {spec.name} at 0x{spec.base:08x} is outside "
                             f"every peripheral_space")
        bus.attach(device)
        peripherals[spec.name] = device
    return Devices(buses, itm, dwt, systick, nvic, scb, core_debug, peripherals)
