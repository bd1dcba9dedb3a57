"""The simulated board: Unicorn core + memory + peripherals + exceptions, and the run loop.

Emulation runs in Unicorn between stops; the native block hook counts cycles and stops at
deadlines. Everything that happens between blocks (exceptions, semihosting, sleep, clock
changes, timer events) is handled here in Python.
"""
from __future__ import annotations

import base64
import dataclasses
import os
import select
import signal
import sys
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from unicorn import (UC_ARCH_ARM, UC_ERR_EXCEPTION, UC_ERR_FETCH_PROT, UC_ERR_FETCH_UNMAPPED,
                     UC_ERR_INSN_INVALID, UC_ERR_READ_PROT, UC_ERR_READ_UNMAPPED, UC_ERR_WRITE_PROT,
                     UC_ERR_WRITE_UNMAPPED, UC_HOOK_CODE, UC_HOOK_INTR, UC_HOOK_MEM_INVALID, UC_MODE_MCLASS, UC_MODE_THUMB,
                     UC_QUERY_PAGE_SIZE, Uc, UcError)
from unicorn import arm_const as A

from ..analysis import swo as swo_stream
from ..analysis.branch_trace import TraceWindow
from ..power.accounting import DEFAULT_BIN_US
from ..analysis.regions import RegionRecorder
from ..analysis.sampling import EXCEPTION_PC, SLEEP_PC
from ..config import BoardSpec
from ..elf import ElfError, ElfImage
from ..files import descriptor
from ..peripherals.chip import MmioAccess
from ..peripherals.core.dwt import COUNTER_NAMES as DWT_COUNTER_NAMES, CYCCNT, EXCCNT, SLEEPCNT
from ..peripherals.core.scb import SCR_SLEEPDEEP, SCR_SLEEPONEXIT
from ..peripherals.core.itm import REGION_BEGIN_PORT, REGION_END_PORT
from ..timing.decode_store import store_for
from ..timing.decoder import Decoder, code_ranges
from . import native as N
from . import results
from .access_locator import AccessLocator
from .build import build_captures, build_devices
from .chip import MachineChip
from .console_uart import ConsoleUartPage
from .exceptions import (BUSFAULT, DIVBYZERO, HARDFAULT, IBUSERR, INVSTATE, NOCP, PRECISERR, SVCALL, UNDEFINSTR,
                         MEMMANAGE, USAGEFAULT, ExceptionUnit, Lockup, exception_name)
from .cached_ram import CachedRam
from .flash_data_pages import FlashDataPages, data_page_runs, split_code_pages
from .flash_timing import FlashLatencyError, FlashTiming
from .memory import MemoryMap
from .data_sampling import MODES, DataSampling
from .registers import UNICORN_REGISTERS as _REGISTER_IDS
from .semihosting import Semihosting, SemihostingExit, heap_info
from .watchpoints import Watchpoints

DEFAULT_MAX_CYCLES = 10_000_000_000
NO_SP = 1 << 40  # SP_LOWEST before any SP in the main stack's space was seen

UNTIL = 0xFFFFFFFF  # never executed: EXC_RETURN values arrive as interrupts instead
NO_STEP_LIMIT = N.NO_STEP_LIMIT  # STEP_LIMIT while not stepping (held_repeats.py holds only then)
HELD_KEY = N.HELD_KEY  # (read at every MMIO access: a global, not the package's attribute)

VECTOR_TABLE_MAX_BYTES = 4 * (16 + 496)  # ARMv7-M ARM B1.5.2: 16 system vectors, at most 496 external interrupts
EXIT_MAX_CYCLES = 124  # the cycle limit, and the time limit
EXIT_FAULT = 125
FAULTS = (HARDFAULT, MEMMANAGE, BUSFAULT, USAGEFAULT)  # the handlers a vector catch (catch_faults) stops in
TICK_SECONDS = 0.1  # emulation comes back to Python at least this often (time limit, interrupts)

# Hint instructions that end a Unicorn run, 16- and 32-bit encodings (ARMv7-M ARM A7.7).
HINT_ENCODINGS = {b"\x30\xbf": "wfi", b"\xaf\xf3\x03\x80": "wfi", b"\x20\xbf": "wfe", b"\xaf\xf3\x02\x80": "wfe",
                  b"\x10\xbf": "yield", b"\xaf\xf3\x01\x80": "yield"}


@dataclass(frozen=True)
class Event:
    """What run control's callbacks receive (api.Simulator.on): `kind` is "region_begin",
    "region_end" (`name`), "exception_entry", "exception_return" (`number`, `name`) or "itm"
    (`number`: the stimulus port, `data`: the bytes written), at `cycles` and `seconds`."""

    kind: str
    cycles: int
    seconds: float
    name: str | None = None
    number: int | None = None
    data: bytes | None = None


@dataclass
class ExitStatus:
    reason: str
    code: int
    detail: str = ""


@dataclass
class ClockChange:
    cycle: int
    clock_hz: int
    source: str


OUTPUT_HEAD = 1 << 20   # bytes of each output stream kept from its start ...
OUTPUT_TAIL = 64 << 10  # ... and from its end; what lies between is counted, not kept


class Kept(bytearray):
    """One stream of firmware output as run.json keeps it: the first OUTPUT_HEAD and the last
    OUTPUT_TAIL bytes, with `dropped` counting those between, so firmware that floods its
    output runs in bounded memory (everything still passes through to the terminal)."""

    dropped = 0

    def __iadd__(self, data):
        if len(self) + len(data) <= OUTPUT_HEAD:  # (the usual case, a character at a time: kept whole)
            self.extend(data)
            return self
        data = memoryview(data)
        room = max(0, OUTPUT_HEAD - len(self))
        self.extend(data[:room])
        rest = data[room:]
        if len(rest) > OUTPUT_TAIL:
            self.dropped += len(rest) - OUTPUT_TAIL
            rest = rest[-OUTPUT_TAIL:]
        self.extend(rest)
        excess = len(self) - OUTPUT_HEAD - OUTPUT_TAIL
        if excess > 0:
            del self[OUTPUT_HEAD:OUTPUT_HEAD + excess]
            self.dropped += excess
        return self


def output_text(kept: Kept) -> str:
    """Kept output as text, with a line marking where the bytes not kept were."""
    dropped = kept.dropped
    if not dropped:
        return kept.decode(errors="replace")
    return (kept[:OUTPUT_HEAD].decode(errors="replace") + f"\n[mcusim: {dropped:,} bytes of output not kept]\n"
            + kept[OUTPUT_HEAD:].decode(errors="replace"))


def port_record(kept: Kept) -> dict:
    """An ITM port's bytes for run.json, losslessly: as text when they are UTF-8 (a console,
    printf), else as base64 (words: region markers, counters, binary data). Where the middle of a
    flood was not kept, `dropped_bytes` of it were left out at byte `dropped_at` of the data."""
    data = bytes(kept)
    try:
        record = {"encoding": "utf-8", "data": data.decode("utf-8")}
    except UnicodeDecodeError:
        record = {"encoding": "base64", "data": base64.b64encode(data).decode("ascii")}
    if kept.dropped:
        record.update(dropped_bytes=kept.dropped, dropped_at=OUTPUT_HEAD)
    return record


@dataclass
class Outputs:
    stdout: Kept = field(default_factory=Kept)
    uart: dict[str, Kept] = field(default_factory=dict)
    itm: dict[int, Kept] = field(default_factory=dict)

    def dropped(self) -> dict[str, int]:
        """Bytes not kept, per stream that dropped any ("stdout", "uart.NAME", "itm.PORT")."""
        streams = {"stdout": self.stdout, **{f"uart.{k}": v for k, v in self.uart.items()},
                   **{f"itm.{k}": v for k, v in self.itm.items()}}
        return {name: kept.dropped for name, kept in streams.items() if kept.dropped}


PROGRESS_SLICE_CYCLES = 20_000_000  # with a progress callback, emulation stops at least this often
LIMIT_STEP_CYCLES = 256  # this close to the cycle limit, one instruction per run (fetch and data waits
#                          are only known as a block runs: a whole block could pass the limit by them)


def outside_ram(board: BoardSpec) -> list[tuple[int, int]]:
    """The [begin, end] (inclusive) ranges of the 32-bit address space that hold no RAM, where the
    invalid-access hook goes. No access to RAM is invalid, and a hook over RAM kept Unicorn 2.1
    from ever clearing a RAM page's TLB_NOTDIRTY flag (notdirty_write keeps it while a memory hook
    covers the address): every store then missed in the victim TLB after a collision with a code
    page, and each such refill took one too many from QEMU's count of TLB entries in use, which
    wrapped and doubled the TLB at every flush (docs/performance.md, "Twelfth pass")."""
    ram = sorted((r.base, r.end) for r in board.memory if board.storage_region(r).kind == "ram")
    ranges, at = [], 0
    for base, end in ram:
        if base > at:
            ranges.append((at, base - 1))
        at = max(at, end)
    if at <= 0xFFFFFFFF:
        ranges.append((at, 0xFFFFFFFF))
    return ranges


class Machine:
    def __init__(self, board: BoardSpec, image: ElfImage, *, clock_hz: int | None = None,
                 max_cycles: int | None = None, semihosting_root=None, semihosting_system: bool = False,
                 cmdline: str = "", flash_latency: str | int | None = None,
                 on_output=None, on_warning=None, on_progress=None, stdin=None, profile: bool = False,
                 pc_sample_cycles: int | None = None, swo: bool = False,
                 branch_trace: TraceWindow | None = None, voltage_range: str | None = None,
                 power_bin_us: float = DEFAULT_BIN_US, power_model: str | None = None, power: bool = True, vcd: bool = False,
                 timing: bool = True, max_seconds: float | None = None, memory_traffic: bool = False,
                 call_log: bool = False, data_timing: str = "sampled"):
        if data_timing not in MODES:
            raise ValueError(f"data_timing {data_timing!r}: use one of {', '.join(MODES)}")
        if not timing:  # functional only: one cycle per instruction, no flash, cache or memory timing
            board = dataclasses.replace(board, core=dataclasses.replace(
                board.core, timing_model="one_cycle_per_instruction", default_instruction_cycles=1))
        self.timing = timing
        self.board = board
        self.stdin = stdin  # a binary stream for semihosting console reads, or None (end of file)
        self.image = image
        self.on_output = on_output or (lambda data, stream: None)
        self.on_warning = on_warning or (lambda message: None)
        self.on_progress = on_progress
        self.max_cycles = DEFAULT_MAX_CYCLES if max_cycles is None else int(max_cycles)
        self.max_seconds = max_seconds  # host seconds the run may take (None: no limit)
        self._interrupted: int | None = None  # the signal that asked the run to stop
        self._started = time.perf_counter()  # (reset when the run starts)
        self._running = False  # inside run() (paused under run control: not)
        self.pinned_clock_hz = clock_hz
        self.outputs = Outputs()
        self.regions = RegionRecorder()
        # for the Perfetto timeline (api: timeline=True): exception entries and returns and ITM
        # writes as (cycle, seconds, what, detail), bounded as the region markers are
        self.record_events = False
        self.timeline_events: list[tuple[int, float, str, object]] = []
        self.timeline_events_dropped = 0
        self.record_pins = vcd  # GPIO level changes, kept for signals.vcd only when asked for
        self.pin_events: list[tuple[int, float, str, int | None]] = []  # (cycle, seconds, pin, level)
        self.pin_event_limit = 1_000_000  # bounded memory: later changes are counted, not kept
        self.pin_events_dropped = 0
        self.warnings: list[str] = []
        self._warned: set[str] = set()
        self.unmodelled: dict[str, dict] = {}
        self.clock_changes: list[ClockChange] = []
        self.exit: ExitStatus | None = None
        self.fault_report: str | None = None
        self.boot_note: str | None = None
        self._interrupt: int | None = None
        self._divide_by_zero: int | None = None
        self._invalid_access: tuple[int, int, int] | None = None
        self._internal_error: BaseException | None = None
        self.sleep_cycles = 0
        self.exception_cycles = 0
        self.exceptions_taken = 0

        core = board.core
        self.fpu_present = True
        self.uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
        self.uc.ctl_set_cpu_model(getattr(A, core.unicorn_cpu_model))
        timed_flash = bool(board.flash_ports) and core.timing_model != "one_cycle_per_instruction"
        self.page_bytes = self.uc.query(UC_QUERY_PAGE_SIZE)
        data_runs = data_page_runs(image, board, self.page_bytes) if timed_flash else None
        self.memory = MemoryMap(self.uc, board, data_runs)
        self.memory.load(image)

        self.state = N.NativeState()
        captures = build_captures(self.state, image, board, profile=profile, pc_sample_cycles=pc_sample_cycles,
                                  branch_trace=branch_trace, power=power, voltage_range=voltage_range,
                                  power_bin_us=power_bin_us, power_model=power_model,
                                  clock_hz=self.pinned_clock_hz or board.reset_clock_hz, swo=swo,
                                  call_log=call_log and profile)
        self.profile, self.sampler, self.trace = captures.profile, captures.sampler, captures.trace
        self.power, self.swo = captures.power, captures.swo
        self.state.on_reallocate = self._reregister_hook
        timing = self._core_timing(core)
        self.decoder = Decoder(self.state, self.read_memory, core.default_instruction_cycles,
                               is_writable=self._is_writable, timing=timing,
                               store=store_for(image.segments, timing, core.default_instruction_cycles))
        if hasattr(self.decoder.timing, "fresh_schedule"):
            self.state.start_prefix = self.decoder.start_prefix
        self.locator = AccessLocator(self.uc, self.read_memory)
        self._divide_hooks: list[int] = []
        self.decoder.on_new_divides = self._new_divides
        self._divide_timing_hooks: dict[int, int | None] = {}
        self.decoder.on_new_sevs = self._hook_sevs
        self._nocp_at: int | None = None     # run only up to this FP instruction, then NOCP
        self._stepping = False  # near the cycle limit: one instruction per run (see _step_limit)
        # run control (api.Simulator.run_until, step): run() pauses before an instruction at a
        # breakpoint, or when steps_left instructions have run, and says why in `paused`
        self.breakpoints: set[int] = set()
        self.steps_left: int | None = None
        self.paused: tuple[str, int] | None = None  # ("breakpoint" or "step", PC) after a run() that paused
        self._resume_from: int | None = None  # the breakpoint paused at: not hit again until an instruction ran
        self._breakpoint_hooks: dict[int, int] = {}
        self.state[N.PAID_FROM] = -1
        self._hit: int | None = None  # the breakpoint whose code hook stopped the run
        self._pause_request: str | None = None  # a pause asked for between blocks (request_pause)
        self._counted = False  # the last emu_start counted instructions (a step)
        self.catch_faults = False  # vector catch: pause ("fault") as a fault handler is entered
        self.listeners: list = []  # run control's event callbacks (emit): region markers, exceptions, ITM
        self.watchpoints = Watchpoints(self)
        self.host_seconds = 0.0
        self._last_decode: tuple[int, int] = (-1, 0)
        self.mmio = MmioAccess()  # the MMIO access being served, if any (the buses record it)
        self.exceptions = ExceptionUnit(self, board.irq_count, board.nvic_priority_bits)
        self.semihosting = Semihosting(self, semihosting_root, cmdline, system=semihosting_system)
        self.flash_ports = self._flash_ports(core, flash_latency)
        self.flash_timing = self.flash_ports[0] if self.flash_ports else None  # the main port
        self.state[N.LAZY_FP_CYCLES] = core.exception_fp_context_cycles
        self._memory_hooks: list[int] = []
        self.flash_data_pages = FlashDataPages(self.uc, self.memory, self.state)
        cached_ram = [port for port in self.flash_ports if port.ram_ranges]
        self.cached_ram = CachedRam(self.uc, self.memory, self.state, cached_ram, self.flash_data_pages.table,
                                    self.page_bytes)
        self._hooks_stale = False
        self._draining = self._drained = False  # memory hooks deleted: Unicorn drops them as a run ends
        self._divide_trap_stale = False
        self._build_peripherals()
        self.data_sampling = None
        if data_timing == "sampled" and self.flash_ports:  # (the data pages and cached RAM are a port's)
            self.data_sampling = DataSampling(self, cached_ram, self.flash_data_pages.runs,
                                              self.flash_data_pages.aliases)
        self.traffic_banks = self._traffic_table() if memory_traffic else []  # the banks counted, by index
        captures = (self.trace, self.swo, self.profile, self.sampler)
        self.hook_features = N.Features(captures=any(c is not None for c in captures),
                                        power=self.power is not None, fetch=bool(self.flash_ports))
        self._hook_handle = N.register_block_hook(self.uc, self.state, self.hook_features)
        self._register_memory_hooks()
        self._exact_pc_blocks: dict[tuple[int, int], int | None] = {}  # block -> its code hook (None: to add)
        self.uc.hook_add(UC_HOOK_INTR, self._on_interrupt)
        for begin, end in outside_ram(board):  # (see outside_ram: not over RAM)
            self.uc.hook_add(UC_HOOK_MEM_INVALID, self._on_invalid_access, begin=begin, end=end)
        self.heap_handed_out = self.heap_peak = self._heap_peak_since_marker = 0  # bytes, from _sbrk's increments
        sbrk = image.symbol("_sbrk") or image.symbol("sbrk")  # newlib's (malloc calls it), else picolibc's
        self.sbrk_hooked = sbrk is not None
        if sbrk is not None:  # (a Python hook on that one instruction: called only as malloc grows the heap)
            self.uc.hook_add(UC_HOOK_CODE, self._on_sbrk, begin=sbrk & ~1, end=sbrk & ~1)
        self.decoder.set_code_ranges(code_ranges(image.segments, image.mapping_symbols))
        self._reset_core(first=True)

    # construction ---------------------------------------------------------------------
    def _build_peripherals(self) -> None:
        self.chip = MachineChip(self)  # all the models may do to the machine
        devices = build_devices(self.chip, self.board, self.swo.counters if self.swo is not None else None)
        self.buses, self.ppb, self.peripherals = devices.buses, devices.buses[0], devices.peripherals
        self.itm, self.dwt, self.systick = devices.itm, devices.dwt, devices.systick
        self.nvic, self.scb, self.core_debug = devices.nvic, devices.scb, devices.core_debug
        console = self.peripherals.get(self.board.console_uart)
        self.console_page = None  # the console UART's page served natively (console_uart.py), if it can be
        for bus in self.buses:
            page = ConsoleUartPage.page_of(console, bus, self.page_bytes) if console in bus.devices else None
            bus.map(self.uc, None if page is None else (page, self.page_bytes))
            if page is not None:
                self.console_page = ConsoleUartPage(self.uc, self.state, bus, console, self.chip, self.page_bytes)
        self.timed = [self.systick]

    def voltage_scaling_changed(self, register_value: int) -> None:
        """The firmware selected a voltage range (STM32 PWR VOS): the power model's operating point."""
        if self.power is not None:
            name = self.power.model.range_registers.get(register_value)
            if name is None:
                return
            if not hasattr(self, "time_base"):  # (at construction: devices reset before the core)
                self.power.operating_point(0, 0.0, self.power.clock_hz, name)
            else:
                now = self.cycles_now()
                self.power.operating_point(now, self.simulated_seconds_at(now), self.clock_hz, name)

    def simulated_seconds_at(self, cycle: int) -> float:
        return self.time_base + (cycle - self.clock_anchor_cycle) / self.clock_hz

    def _core_timing(self, core):
        """The core's timing model (None: a fixed cost per instruction) and its refill data."""
        if core.timing_model not in ("cortex-m4", "cortex-m7"):
            return None
        from ..config.loader import core_timing_table
        from ..timing.cortex_m4 import CortexM4Timing
        from ..timing.cortex_m7 import CortexM7Timing

        table = core_timing_table(core)
        for slot, key in ((N.DIVIDE_ZERO, "divide_zero"), (N.DIVIDE_SHORT, "divide_short"),
                          (N.DIVIDE_BASE, "divide_base"), (N.DIVIDE_BITS_PER_CYCLE, "divide_bits_per_cycle"),
                          (N.DIVIDE_MIN, "divide_min")):
            self.state[slot] = table[key]
        self.state[N.REFILL_BRANCH] = table["branch_refill"]
        self.state[N.REFILL_WIDE_ODD] = table["branch_refill_unaligned_wide"] - table["branch_refill"]
        if core.timing_model == "cortex-m7":
            entries = table["branch_predictor_entries"]
            if not 0 < entries <= N.MAX_PREDICTOR_ENTRIES:
                raise ValueError(f"core {core.name}: branch_predictor_entries must be 1..{N.MAX_PREDICTOR_ENTRIES}")
            ways = table.get("branch_predictor_ways", 1)
            if not 0 < ways <= entries or entries % ways:
                raise ValueError(f"core {core.name}: branch_predictor_ways must divide branch_predictor_entries")
            self.state[N.PREDICTOR_SETS] = entries // ways
            self.state[N.PREDICTOR_WAYS] = ways
            self.state[N.MISPREDICT_PENALTY] = table["branch_mispredict"]
            return CortexM7Timing(table)
        return CortexM4Timing(table)

    def _flash_ports(self, core, latency: str | int | None) -> list[FlashTiming]:
        """The flash interface models, on boards that describe them and cores with a timing model."""
        if not self.board.flash_ports or core.timing_model == "one_cycle_per_instruction":
            if latency is not None:
                raise FlashLatencyError(f"board {self.board.name} has no flash wait states to set (its memories "
                                        f"are zero-wait): --flash-latency does not apply")
            return []
        ports = []
        for k, spec in enumerate(self.board.flash_ports):
            port = FlashTiming(spec, self.board, self.state, port=k, warn=self.warn_once,
                               clock_pinned=self.pinned_clock_hz is not None, latency=latency)
            port.on_change = self._memory_hooks_changed
            ports.append(port)
        return ports

    def _memory_hooks_changed(self) -> None:
        """The flash or cache settings need other memory hooks: change them between runs
        (adding or removing a hook, or flushing translations, from inside an MMIO callback
        would act on the block being executed)."""
        self._hooks_stale = True
        self.request_stop()

    def _apply_hook_changes(self) -> None:
        """Between runs: the memory hooks and divide hooks the settings now need. Translated
        code is flushed: Unicorn decides at translation whether a load or store reaches the
        memory hooks, so code translated before a change would keep its old timing."""
        if self._drained:  # (the one block translated while deleted hooks were still listed)
            self._drained = False
            self.uc.ctl_flush_tb()
        if self._hooks_stale:
            self._hooks_stale = False
            self._register_memory_hooks()
            self.uc.ctl_flush_tb()
        if self._divide_trap_stale:
            self._divide_trap_stale = False
            for handle in self._divide_hooks:
                self.uc.hook_del(handle)
            self._divide_hooks = []
            self._hook_divides(list(self.decoder.divides))

    def _traffic_table(self) -> list[str]:
        """Fill TRAFFIC_RANGES with every memory region (an alias counted in the bank it shows,
        as are the MMIO alias of flash code pages and the plain alias of data pages,
        flash_data_pages.py, and the cached RAM's MMIO alias, cached_ram.py); returns the
        banks' names in counter order."""
        banks: list[str] = []
        regions = sorted(self.board.memory, key=lambda r: r.base)
        ranges = [(region.base, region.end, region) for region in regions]
        aliases = [(address + N.CODE_ALIAS_OFFSET, address + size + N.CODE_ALIAS_OFFSET)
                   for address, size, _, _ in self.memory.flash_ram_pieces] + self.cached_ram.alias_ranges()
        aliases += [(address + N.PLAIN_ALIAS_OFFSET, address + size + N.PLAIN_ALIAS_OFFSET)
                    for address, size in self.flash_data_pages.plain_aliased]
        ranges += [(start, end, region) for start, end in aliases for region in regions
                   if region.base <= start & N.ALIAS_ADDRESS_MASK < region.end]
        if len(ranges) > N.MAX_TRAFFIC_RANGES:
            raise ValueError(f"board {self.board.name}: more than {N.MAX_TRAFFIC_RANGES} memory ranges to count "
                             f"traffic in")
        for i, (start, end, region) in enumerate(ranges):
            bank = self.board.storage_region(region).name
            if bank not in banks:
                banks.append(bank)
            at = N.TRAFFIC_RANGES + N.TRAFFIC_RANGE * i
            self.state[at + N.TRAFFIC_START], self.state[at + N.TRAFFIC_END] = start, end
            self.state[at + N.TRAFFIC_BANK] = banks.index(bank)
        self.state[N.TRAFFIC_RANGE_COUNT] = len(ranges)
        return banks

    def traffic_now(self) -> np.ndarray | None:
        """Bytes read and written so far per counted bank ([read, written] rows in traffic_banks'
        order); None unless the run counts memory traffic."""
        if not self.traffic_banks:
            return None
        start, size = N.TRAFFIC_BYTES, N.TRAFFIC_COUNTER
        counters = self.state.buffer[start: start + size * len(self.traffic_banks)].reshape(-1, size)
        return counters[:, [N.TRAFFIC_READ, N.TRAFFIC_WRITTEN]].copy()

    def _register_memory_hooks(self) -> None:
        """While flash data reads wait, no memory hook times them: the flash's data pages are
        MMIO, the block hook times the PC-relative reads of its code pages (FL_LITERAL_RANGES:
        literal loads, TBB/TBH tables), and the code pages that also hold other sections' data
        are read through their MMIO alias (split_code_pages; flash_data_pages.route). RAM
        behind a data cache is timed through its MMIO alias while it is on or its reads wait,
        and with a sampled data timing only in its windows (cached_ram.py, data_sampling.py):
        while any memory hook exists, whatever its range, Unicorn translates every load and
        store to its slow path, and an access in a hooked range also pays the call and
        Unicorn's re-derivation of the PC. Code pages beyond the literal table's room are
        hooked whole."""
        for handle in self._memory_hooks:
            N.unregister_hook(self.uc, handle)
        had_hooks = bool(self._memory_hooks)
        self._memory_hooks = []
        code_pages = []
        for port in self.flash_ports:
            flash_reads, _ = port.hooks_needed
            for start, end in port.ranges:
                left = self.flash_data_pages.timed(start, end, flash_reads)
                code_pages += left if flash_reads else []
        self.cached_ram.update()
        tables = self._views_of(self._boot_vector_table())  # (the core reads it, the firmware hardly ever:
        # not worth an alias, which a fetch and a data read of the same page keep taking from each other)
        data = [(a, b) for a, b in self.image.data_ranges if not (a in tables and b - a <= VECTOR_TABLE_MAX_BYTES)]
        literal, aliased = split_code_pages(code_pages, data, self.page_bytes)
        for i, (begin, stop) in enumerate(literal[: N.MAX_LITERAL_RANGES]):
            at = N.FL_LITERAL_RANGES + N.FL_LITERAL_RANGE * i
            self.state[at + N.RANGE_START], self.state[at + N.RANGE_END] = begin, stop
        self.state[N.FL_LITERAL_RANGE_COUNT] = min(len(literal), N.MAX_LITERAL_RANGES)
        for begin, stop in literal[N.MAX_LITERAL_RANGES:]:  # (beyond the table's room: hooked whole)
            self._memory_hooks.append(N.register_flash_read_hook(self.uc, self.state, begin, stop - 1))
        self.flash_data_pages.route(aliased)
        if self.traffic_banks:  # (counting only: it adds no cycles)
            for i in range(int(self.state[N.TRAFFIC_RANGE_COUNT])):
                at = N.TRAFFIC_RANGES + N.TRAFFIC_RANGE * i
                self._memory_hooks.append(N.register_traffic_hook(
                    self.uc, self.state, int(self.state[at + N.TRAFFIC_START]), int(self.state[at + N.TRAFFIC_END]) - 1))
        self._draining = had_hooks and not self._memory_hooks  # (see run: the slow path ends with the last hook)

    def _reregister_hook(self, _buffer) -> None:
        """The shared buffer moved: every native hook gets the new address."""
        N.unregister_hook(self.uc, self._hook_handle)
        self._hook_handle = N.register_block_hook(self.uc, self.state, self.hook_features)
        self.flash_data_pages.moved()
        self.cached_ram.moved()
        if self.console_page is not None:
            self.console_page.moved()
        self._register_memory_hooks()
        for block, handle in self._exact_pc_blocks.items():
            if handle is not None:
                N.unregister_hook(self.uc, handle)
                self._exact_pc_blocks[block] = None
        for address, handle in self._divide_timing_hooks.items():
            N.unregister_hook(self.uc, handle)
            self._divide_timing_hooks[address] = N.register_divide_hook(self.uc, self.state, address)

    def _install_exact_pc_hooks(self) -> None:
        """Blocks that read time-dependent registers get a per-instruction PC hook (between runs)."""
        for (block, size), handle in self._exact_pc_blocks.items():
            if handle is None:
                self._exact_pc_blocks[(block, size)] = N.register_exact_pc_hook(self.uc, self.state, block,
                                                                                block + size - 1)
                self.uc.ctl_remove_cache(block, block + size)

    def _views_of(self, address: int) -> set[int]:
        """`address` and every address that shows the same byte through an alias (an STM32's
        flash at 0x08000000 and at its boot address 0)."""
        region = self.board.region_at(address)
        if region is None:
            return {address}
        storage = self.board.storage_region(region)
        offset = address - region.base
        return {address} | {r.base + offset for r in self.board.memory
                            if self.board.storage_region(r) is storage and offset < r.size_bytes}

    def _boot_vector_table(self) -> int:
        """The vector table the core starts from: at the boot address, or, with nothing loaded
        there, at the start of the lowest code segment."""
        if self.memory.is_loaded(self.board.boot_address, 8):
            return self.board.boot_address
        return min(s.paddr for s in self.image.segments if s.executable and s.data)

    def _reset_core(self, first: bool = False) -> None:
        """Core reset: vector table, SP and PC, exception state, clock."""
        uc = self.uc
        board = self.board
        table = self._boot_vector_table()
        if table != board.boot_address:
            self.boot_note = (f"nothing is loaded at the boot address 0x{board.boot_address:08x}; started from the "
                              f"vector table at 0x{table:08x}, the start of the lowest code segment (an application "
                              f"linked behind a bootloader)")
        try:
            sp = self.memory.read_word(table)
            pc = self.memory.read_word(table + 4)
        except UcError as exc:
            raise ElfError(f"{self.image.path}: cannot read a vector table at 0x{table:08x}") from exc
        if pc in (0, 0xFFFFFFFF) or sp == 0xFFFFFFFF:
            raise ElfError(f"{self.image.path}: no vector table at 0x{table:08x} (initial SP 0x{sp:08x}, "
                           f"reset vector 0x{pc:08x}); is the firmware linked for board {board.name}?")
        if not pc & 1:
            raise ElfError(f"{self.image.path}: the reset vector 0x{pc:08x} at 0x{table + 4:08x} is not a Thumb "
                           f"address (bit 0 clear): a Cortex-M core would lock up")
        if board.region_at(pc & ~1) is None:
            raise ElfError(f"{self.image.path}: the reset vector 0x{pc:08x} points outside the memory of board "
                           f"{board.name} ({self.memory.regions_text()})")
        if sp == 0 and first:  # QEMU runs it too: newlib's rdimon crt0 takes its SP from SYS_HEAPINFO
            self.warn("the vector table's initial SP is 0: the firmware must set up its own stack before "
                      "using it (newlib's rdimon crt0 does, from SYS_HEAPINFO)")
        self.exceptions.reset()
        self.exceptions.vtor = table
        if not first:
            self.divide_trap_changed()  # CCR.DIV_0_TRP is clear again
        uc.reg_write(A.UC_ARM_REG_XPSR, 1 << 24)
        uc.reg_write(A.UC_ARM_REG_CONTROL, 0)
        uc.reg_write(A.UC_ARM_REG_PRIMASK, 0)
        uc.reg_write(A.UC_ARM_REG_BASEPRI, 0)
        uc.reg_write(A.UC_ARM_REG_FAULTMASK, 0)
        self.initial_sp = sp & ~3  # (semihosting SYS_HEAPINFO places the stack by it)
        uc.reg_write(A.UC_ARM_REG_MSP, self.initial_sp)
        self.state[N.SP_FLOOR] = heap_info(board, self.image.segments, self.initial_sp)[3]  # the stack's limit
        if first:
            self.lowest_sp, self.lowest_sp_at = NO_SP, -1
            self.state[N.PSP_LOWEST], self.state[N.PSP_LOWEST_AT], self.state[N.PSP_HIGHEST] = NO_SP, -1, -1
        else:
            self.take_lowest_sp()  # (the run's lowest so far stays)
        self.state[N.SP_LOWEST], self.state[N.SP_LOWEST_AT] = NO_SP, -1
        self.state[N.ON_PROCESS_STACK] = 0  # (CONTROL is 0 after reset)
        uc.reg_write(A.UC_ARM_REG_PSP, 0)
        uc.reg_write(A.UC_ARM_REG_LR, 0xFFFFFFFF)
        uc.reg_write(A.UC_ARM_REG_PC, pc & ~1)
        self.state[N.FPU_ENABLED] = 0
        self.state[N.LAZY_FP_PENDING] = 0
        self.state[N.ENDS_IN_BRANCH] = 0
        self.state[N.PREVIOUS_END] = -1
        if self.trace is not None:
            self.trace.record(N.TRACE_SYNC, pc & ~1, pc & ~1)  # (while recording: a reset moves the PC)
        self.firmware_clock_hz = board.reset_clock_hz  # the clock the firmware has set up (pinned or not)
        if first:
            self.clock_hz = self.pinned_clock_hz or board.reset_clock_hz
            for port in self.flash_ports:
                port.clock_changed(self.clock_hz)
            self.time_base = 0.0
            self.clock_anchor_cycle = 0
        else:
            self.set_clock(board.reset_clock_hz, "reset")  # first: devices check their settings against it
            for port in self.flash_ports:
                port.reset()
            for device in self._all_devices():
                device.storage.clear()
                for reg, value in device.reset_values.items():
                    device.storage[device.registers[reg]] = value
                device.reset()

    def _all_devices(self):
        for bus in self.buses:
            yield from bus.devices

    # services used by peripherals ---------------------------------------------------------
    def cycles_now(self) -> int:
        """Cycle count at the executing instruction (inside an MMIO access) or now (between runs)."""
        if self.mmio.address is None:
            return self.state[N.CYCLES]
        return self.state.count_at(self.current_pc())[0]

    def current_pc(self) -> int:
        """PC of the instruction making the current MMIO access (Unicorn's PC is the block start)."""
        access = self.mmio
        if access.address is None:
            return self.uc.reg_read(A.UC_ARM_REG_PC)
        block, size = self.state[N.BLOCK_ADDRESS], self.state[N.BLOCK_SIZE]
        exact = self.state[N.CODE_PC]
        if block <= exact < block + size:
            return exact
        # first time in this block: infer the instruction, and hook the block for next time. Once
        # per access: the locator moves on past each match, so asking again would find a later one.
        if access.pc is None:
            if (block, size) not in self._exact_pc_blocks:
                self._exact_pc_blocks[(block, size)] = None
                self.request_stop()
            pc = self.locator.locate(block, size, (block, self.state[N.INSTRUCTIONS]), access.address,
                                     access.is_write)
            access.pc = block if pc is None else pc
        return access.pc

    def request_stop(self) -> None:
        """Stop at the next block boundary (from an MMIO callback, or another thread) so Python can act."""
        self.state[N.DEADLINE] = 0

    def interrupt(self, signum: int = signal.SIGINT) -> None:
        """End the run at the next block boundary, as interrupted by signal `signum` (exit code
        128 + signum, as a shell reports it); safe from a signal handler or another thread."""
        self._interrupted = int(signum)
        self.request_stop()

    def emit(self, kind: str, cycle: int | None = None, **fields) -> None:
        """Give an Event of `kind` (at `cycle`, else now; `fields`: name, number, data) to each
        listener; one returning True pauses the run (reason "event") at the next block boundary.
        A listener's exception ends the run and is raised from run()."""
        self.drain_console_uart()
        cycle = self.cycles_now() if cycle is None else cycle
        event = Event(kind, cycle, self.simulated_seconds_at(cycle), **fields)
        for listener in list(self.listeners):
            try:
                if listener(event):
                    self.request_pause("event")
            except Exception as exc:  # (from inside Unicorn's callbacks: raised once emulation returns)
                self.internal_error(exc)

    def request_pause(self, reason: str) -> None:
        """Pause run() at the next block boundary with `reason` (e.g. "interrupt": gdb's Ctrl-C);
        safe from a hook or another thread. Like any stop between blocks, it costs no cycles."""
        self._pause_request = reason
        self.request_stop()

    def request_reset(self, why: str) -> None:
        self._reset_request = why
        self.request_stop()

    def read_memory(self, address: int, size: int) -> bytes:
        return self.memory.read(address, size)

    def peek(self, address: int, size: int) -> bytes:
        """What can be read of [address, address+size), a halfword at a time from `address`
        (b"" where nothing is mapped): for fault reports and checks, which must never raise."""
        data = b""
        while len(data) < size:
            try:
                data += self.read_memory((address + len(data)) & 0xFFFFFFFF, min(2, size - len(data)))
            except (UcError, OverflowError):
                break
        return data

    def set_fpu_enabled(self, enabled: bool) -> None:
        self.state[N.FPU_ENABLED] = int(enabled)

    def set_clock(self, hz: int, source: str) -> None:
        if hz <= 0:
            return
        if self.pinned_clock_hz:
            if hz != self.clock_hz and source != "reset":
                self.warn_once(f"clock-pinned:{hz}", f"firmware switched the clock to {hz / 1e6:g} MHz ({source}); "
                               f"--clock-hz keeps it at {self.clock_hz / 1e6:g} MHz")
            if hz != self.firmware_clock_hz and source != "reset":
                self.firmware_clock_hz = hz  # its flash latency is meant for the clock it switches to now
                for port in self.flash_ports:
                    port.check_wait_states()
            return
        if hz == self.clock_hz:
            return
        now = self.cycles_now()
        self.time_base += (now - self.clock_anchor_cycle) / self.clock_hz
        self.clock_anchor_cycle = now
        self.clock_hz = hz
        self.clock_changes.append(ClockChange(now, hz, source))
        if self.power is not None:
            self.power.operating_point(now, self.time_base, hz)
        for port in self.flash_ports:
            port.clock_changed(hz)

    def simulated_seconds(self) -> float:
        return self.simulated_seconds_at(self.state[N.CYCLES])

    def counter_total(self, register: int) -> int:
        """Unwrapped total of a DWT counter's events so far (at the executing instruction)."""
        if register == CYCCNT:
            return self.cycles_now()
        counter = N.BY_DWT[DWT_COUNTER_NAMES[register]]
        if counter.slot is not None and self.mmio.address is not None:
            return self.state.counters_at(self.current_pc())[counter.name]
        return results.counter_value(self, counter)

    def _new_divides(self, addresses) -> None:
        self._hook_divides(addresses)
        if self.state[N.DIVIDE_BASE]:  # the core model times divides from their operands
            for address in addresses:
                self._divide_timing_hooks[address] = N.register_divide_hook(self.uc, self.state, address)
                self.uc.ctl_remove_cache(address, address + 4)

    def divide_trap_changed(self) -> None:
        """CCR.DIV_0_TRP: watch every divide (a Python hook each) only while the trap is on
        (the hooks change between runs)."""
        self._divide_trap_stale = True
        self.request_stop()

    def _hook_divides(self, addresses) -> None:
        if not self.exceptions.ccr & (1 << 4):
            return
        for address in addresses:
            self._divide_hooks.append(self.uc.hook_add(UC_HOOK_CODE, self._on_divide, begin=address, end=address))
            self.uc.ctl_remove_cache(address, address + 4)  # retranslate with the hook in place
        self.request_stop()

    def _on_divide(self, uc, address, size, _user_data):
        self.refuse_held()
        register = self.decoder.divides.get(address)
        if self.exceptions.ccr & (1 << 4) and register and uc.reg_read(_REGISTER_IDS[register]) == 0:
            self._divide_by_zero = address
            uc.emu_stop()

    def _hook_sevs(self, addresses) -> None:
        """SEV sets the event register a later WFE consumes (a Python hook on each SEV: rare)."""
        for address in addresses:
            self.uc.hook_add(UC_HOOK_CODE, self._on_sev, begin=address, end=address)
            self.uc.ctl_remove_cache(address, address + 2)

    def _on_sev(self, uc, address, size, _user_data):
        self.refuse_held()
        self.exceptions.event_register = True

    def _on_sbrk(self, uc, address, size, _user_data):
        """_sbrk(increment) entered: the heap it hands out moves by the increment (a failed call,
        which returns -1, is counted all the same)."""
        self.refuse_held()
        increment = uc.reg_read(A.UC_ARM_REG_R0)
        self.heap_handed_out += increment - (1 << 32) if increment & 0x80000000 else increment
        self.heap_peak = max(self.heap_peak, self.heap_handed_out)
        self._heap_peak_since_marker = max(self._heap_peak_since_marker, self.heap_handed_out)

    def _is_writable(self, address: int) -> bool:
        region = self.board.region_at(address)
        return region is not None and self.board.storage_region(region).kind == "ram"

    def debug_span(self, address: int, write: bool = False) -> int:
        """How many bytes from `address` on a debugger (semihosting) may read, or write: the
        board's memory regions, not peripherals or unmapped space, and for writes RAM only
        (flash takes no plain stores). 0 where there are none."""
        end = address
        while (region := self.board.region_at(end)) is not None and (not write or self._is_writable(end)):
            end = region.end
        return end - address

    def bus_at(self, address: int):
        """The MMIO bus (PPB or a peripheral space) holding `address`, or None."""
        return next((bus for bus in self.buses if bus.base <= address < bus.base + bus.size_bytes), None)

    def is_watchable(self, address: int, size: int) -> bool:
        """Whether [address, address + size) is all board memory, or within one peripheral space."""
        bus = self.bus_at(address)
        return self.debug_span(address) >= size or (bus is not None and address + size <= bus.base + bus.size_bytes)

    def debug_read(self, address: int, size: int, partial: bool = False) -> bytes:
        """What a debugger reads: memory as it is, and peripheral registers as the firmware
        would read them but without their read side effects (Peripheral.peek: no FIFO popped,
        no flag cleared, nothing reported), so looking never changes the run. ValueError at the
        first address where nothing is, or with `partial` what could be read before it."""
        data = bytearray()
        while len(data) < size:
            at = (address + len(data)) & 0xFFFFFFFF
            span = min(self.debug_span(at), size - len(data))
            if span > 0:
                data += self.read_memory(at, span)
                continue
            bus = self.bus_at(at)
            if bus is None:
                if partial and data:
                    break
                raise ValueError(f"nothing is mapped at 0x{at:08x}")
            data.append((bus.debug_word(at) >> (8 * (at & 3))) & 0xFF)
        return bytes(data)

    def console_write(self, data: bytes, source: str, stderr: bool = False) -> None:
        self.drain_console_uart()  # (what the console UART sent before comes first)
        self._keep(self.outputs.stdout, data, "stdout")
        self.on_output(data, "stderr" if stderr else "stdout")

    def _keep(self, kept: Kept, data: bytes, name: str) -> None:
        kept += data
        if kept.dropped:
            self.warn_once(f"dropped:{name}", f"firmware output on {name} past {OUTPUT_HEAD >> 20} MiB: run.json keeps "
                                              f"its first {OUTPUT_HEAD >> 20} MiB and last {OUTPUT_TAIL >> 10} KiB "
                                              f"(the bytes left out are counted in output_dropped_bytes)")

    def drain_console_uart(self) -> None:
        """Take the bytes the console UART transmitted natively (console_uart.py) as its output."""
        if self.console_page is not None:
            self.console_page.drain()

    def uart_write(self, name: str, data: bytes) -> None:
        kept = self.outputs.uart.get(name)
        if kept is None:
            kept = self.outputs.uart[name] = Kept()
        self._keep(kept, data, f"UART {name}")
        if name == self.board.console_uart:
            self.console_write(data, name)
        else:
            self.warn_once(f"uart:{name}", f"output on {name}, which is not the console UART "
                           f"({self.board.console_uart}), is kept in run.json only")

    def region_marker(self, begin: bool, name_address: int) -> None:
        """An ITM region marker (firmware/include/mcusim.h), at the executing instruction; with
        the lowest main-stack SP since the previous marker and the SP now (the block hook's
        SP_LOWEST then starts again from it, so each region gets the deepest point inside it),
        the most heap _sbrk had handed out since then and now, and the memory traffic so far."""
        cycle = self.cycles_now()
        seconds = self.simulated_seconds_at(cycle)
        lowest, now = self.take_lowest_sp()
        heap = (self._heap_peak_since_marker, self.heap_handed_out) if self.sbrk_hooked else None
        self._heap_peak_since_marker = self.heap_handed_out
        self.regions.mark(begin, name_address, cycle, seconds, None if lowest is None and now is None else (lowest, now),
                          self.traffic_now(), heap)
        if begin and self.data_sampling is not None:
            self.data_sampling.region_began(name_address)
        if self.listeners:
            self.emit("region_begin" if begin else "region_end", cycle,
                      name=results.read_c_string(self, name_address) or f"0x{name_address:08x}")

    def stack_top(self) -> int:
        """Where the main stack starts: the vector table's SP, or SYS_HEAPINFO's stack base when that is 0."""
        return self.initial_sp or heap_info(self.board, self.image.segments, self.initial_sp)[2]

    def take_lowest_sp(self) -> tuple[int | None, int | None]:
        """(The lowest main-stack SP since the last call, None when none was in the main stack's
        space; the main stack's SP now, None while Thread mode runs on the process stack, whose
        SP then counts for it); the run's lowest is kept in `lowest_sp` / `lowest_sp_at`."""
        st = self.state
        sp, pc = self.uc.reg_read(A.UC_ARM_REG_SP), self.uc.reg_read(A.UC_ARM_REG_PC)
        on_process_stack = bool(self.uc.reg_read(A.UC_ARM_REG_CONTROL) & 2)
        if on_process_stack:
            self.note_process_sp(sp, pc)
        elif st[N.SP_FLOOR] <= sp < st[N.SP_LOWEST]:
            st[N.SP_LOWEST], st[N.SP_LOWEST_AT] = sp, pc
        lowest = int(st[N.SP_LOWEST])
        if lowest < self.lowest_sp:
            self.lowest_sp, self.lowest_sp_at = lowest, int(st[N.SP_LOWEST_AT])
        # start again from the SP now, unless it is not in the main stack's space: then from nothing
        main_now = None if on_process_stack else sp
        st[N.SP_LOWEST], st[N.SP_LOWEST_AT] = (sp if main_now is not None and sp >= st[N.SP_FLOOR] else NO_SP), -1
        return (lowest if lowest < NO_SP else None), main_now

    def note_process_sp(self, sp: int, at: int) -> None:
        """The process stack reached `sp` at `at` (the block hook's PSP slots; an exception frame
        stacked there, the SP at a marker)."""
        st = self.state
        if sp < st[N.PSP_LOWEST]:
            st[N.PSP_LOWEST], st[N.PSP_LOWEST_AT] = sp, at
        st[N.PSP_HIGHEST] = max(int(st[N.PSP_HIGHEST]), sp)

    def process_stack(self) -> tuple[int, int, int] | None:
        """(Lowest SP, the block that reached it, highest SP) of the process stack over the run;
        None when Thread mode never ran on it."""
        st = self.state
        if st[N.PSP_HIGHEST] < 0:
            return None
        return int(st[N.PSP_LOWEST]), int(st[N.PSP_LOWEST_AT]), int(st[N.PSP_HIGHEST])

    def pin_changed(self, pin: str, level: int | None) -> None:
        """A GPIO model's pin changed its driven level (None: no longer driven), at the executing
        instruction; recorded only for signals.vcd (vcd=True)."""
        if not self.record_pins:
            return
        if len(self.pin_events) >= self.pin_event_limit:
            self.pin_events_dropped += 1
            return
        cycle = self.cycles_now()
        seconds = self.simulated_seconds_at(cycle)
        self.pin_events.append((cycle, seconds, pin, level))

    def itm_write(self, port: int, data: bytes) -> None:
        self._keep(self.outputs.itm.setdefault(port, Kept()), data, f"ITM port {port}")
        if self.listeners and port not in (REGION_BEGIN_PORT, REGION_END_PORT):  # (markers: region events)
            self.emit("itm", number=port, data=bytes(data))
        if self.record_events and port not in (REGION_BEGIN_PORT, REGION_END_PORT):  # (markers: the regions)
            self._timeline_event("itm", (port, bytes(data)))
        if self.swo is not None:
            self.swo.itm(self.cycles_now(), port, data)
        if port == 0:
            self.console_write(data, "ITM")

    def read_stdin(self, size: int) -> bytes:
        """Up to `size` bytes of console input. A stream with a descriptor (a pipe, a terminal)
        is waited on in slices and read with os.read, so the time limit and an interrupt end a
        run that waits for input: then the firmware sees end of file."""
        if self.stdin is None or size <= 0:
            return b""
        fd = descriptor(self.stdin)
        while fd is not None:
            if self.host_wait_over():
                return b""  # given up: the firmware sees end of file
            try:
                ready = select.select([fd], [], [], TICK_SECONDS)[0]
            except (OSError, ValueError):  # not a descriptor select can wait on (Windows): read below
                break
            if ready:
                try:
                    return os.read(fd, size)
                except BlockingIOError:
                    pass
                except OSError:
                    return b""
        read = getattr(self.stdin, "read1", self.stdin.read)
        return read(size) or b""

    def host_wait_over(self) -> bool:
        """Whether a wait on the host (console input, SYS_SYSTEM) should give up: the run was
        interrupted or is past its time limit (checked every TICK_SECONDS while waiting)."""
        return self._interrupted is not None or self._past_time_limit()

    def _past_time_limit(self) -> bool:
        """The host time of every run() so far (not the time paused under run control) is up."""
        running = time.perf_counter() - self._started if self._running else 0.0
        return self.max_seconds is not None and self.host_seconds + running >= self.max_seconds

    def interrupted(self) -> bool:
        """A signal asked the run to end (interrupt())."""
        return self._interrupted is not None

    def interrupting_signal(self) -> int | None:
        """The signal that asked the run to end, if one did."""
        return self._interrupted

    def cancel_pause(self) -> None:
        """Forget a pause asked for that has not happened (a request that came too late)."""
        self._pause_request = None

    def warn(self, message: str) -> None:
        self.drain_console_uart()  # (what the console UART sent before comes first)
        self.warnings.append(message)
        self.on_warning(message)

    def warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self.warn(message)

    def report_unmodelled(self, register: str, address: int, kind: str) -> None:
        entry = self.unmodelled.get(register)
        if entry is None:
            self.unmodelled[register] = {"register": register, "address": f"0x{address:08x}", "reads": 0,
                                         "writes": 0}
            self.warn(f"firmware {'reads' if kind == 'read' else 'writes'} {register} (0x{address:08x}), which "
                      f"mcusim does not model: it behaves as plain storage")
            entry = self.unmodelled[register]
        entry["reads" if kind == "read" else "writes"] += 1

    def internal_error(self, exc: BaseException) -> None:
        self._internal_error = exc
        self.request_stop()

    def _timeline_event(self, what: str, detail) -> None:
        if len(self.timeline_events) < self.regions.limit:
            cycle = self.cycles_now()
            self.timeline_events.append((cycle, self.simulated_seconds_at(cycle), what, detail))
        else:
            self.timeline_events_dropped += 1

    def on_exception_entry(self, number: int, tail_chain: bool, fp_frame: bool = False, lazy_fp: bool = False) -> None:
        if self.record_events:
            self._timeline_event("enter", number)
        if self.catch_faults and number in FAULTS:  # (entered between blocks: run() pauses before the handler)
            self._pause_request = "fault"
        elif self.steps_left is not None:  # a step that takes an exception ends at the handler's first
            self._pause_request = "step"    # instruction, as a halting debug step does (ARMv7-M C1.5)
        self.state[N.ENDS_IN_BRANCH] = 0  # the handler's first block follows no branch
        self.state[N.PREVIOUS_END] = -1
        if self.trace is not None:
            came_from = self.exceptions.entered_from
            self.trace.record(N.TRACE_EXCEPTION, 0xFFFFFFFF if came_from is None else came_from,
                              self.uc.reg_read(A.UC_ARM_REG_PC), number)
        core = self.board.core
        extra = core.exception_tail_chain_cycles if tail_chain else core.exception_entry_cycles
        if fp_frame and lazy_fp:
            self.state[N.LAZY_FP_PENDING] = 1  # stored by the handler's first FP instruction, if any
        elif fp_frame:
            extra += core.exception_fp_context_cycles
        self._python_time(extra, EXCEPTION_PC, profile_event=N.EVENT_ENTRY)
        self.exception_cycles += extra
        self.exceptions_taken += 1
        if self.swo is not None:  # entered: the handler starts now
            self.swo.exception(self.cycles_now(), number, swo_stream.ENTER)
        if self.listeners:
            self.emit("exception_entry", number=number, name=exception_name(number))

    def on_exception_return(self, number: int, tail_chain: bool, fp_frame: bool = False) -> None:
        if self.record_events:
            self._timeline_event("return", number)
        self.state[N.ENDS_IN_BRANCH] = 0  # the return cost includes the refill
        self.state[N.PREVIOUS_END] = -1
        if self.trace is not None and not tail_chain:  # from the handler's last instruction that ran
            self.trace.record(N.TRACE_RETURN, self.state[N.PREVIOUS_BRANCH_AT], self.uc.reg_read(A.UC_ARM_REG_PC),
                              number)
        if self.swo is not None:  # exited: the handler is done
            self.swo.exception(self.cycles_now(), number, swo_stream.EXIT)
        if tail_chain and self.profile is not None:
            self.profile.switch_to(N.EVENT_RETURN)  # back on the boundary: the next handler follows at once
        if tail_chain and self.trace is not None:  # the next handler's entry record says where it goes
            self.trace.record(N.TRACE_RETURN, self.state[N.PREVIOUS_BRANCH_AT], 0xFFFFFFFF, number)
        if not tail_chain:
            extra = self.board.core.exception_return_cycles
            if fp_frame and self.state[N.LAZY_FP_PENDING]:
                self.state[N.LAZY_FP_PENDING] = 0  # never stored: nothing to load back
            elif fp_frame:
                extra += self.board.core.exception_fp_context_cycles
            self._python_time(extra, EXCEPTION_PC, profile_event=N.EVENT_RETURN)
            self.exception_cycles += extra
            if self.swo is not None:  # returned to: the interrupted handler, or Thread mode (0)
                active = self.exceptions.active
                self.swo.exception(self.cycles_now(), active[-1] if active else 0, swo_stream.RETURN)
            if not self.exceptions.active and self.scb.scr & SCR_SLEEPONEXIT:
                self._sleep("sleep-on-exit")
        if self.listeners:
            self.emit("exception_return", number=number, name=exception_name(number))

    # Unicorn callbacks --------------------------------------------------------------------
    def _on_interrupt(self, uc, intno, _user_data):
        self._interrupt = intno
        uc.emu_stop()

    def _on_invalid_access(self, uc, access, address, size, value, _user_data):
        self._invalid_access = (access, address, size)
        return False

    # run loop ------------------------------------------------------------------------------
    def _advance(self, cycles: int) -> None:
        self.state[N.CYCLES] = self.state[N.CYCLES] + cycles

    def release_held(self) -> None:
        """Add a tight loop's held repeats to the counters (native/held_repeats.py): after each
        emu_start, and before a callback reads or changes the state."""
        buffer = self.state.buffer
        if buffer[HELD_KEY]:
            N.release_held(buffer)

    def refuse_held(self) -> None:
        """release_held in a callback from inside a block: that block is not held again."""
        buffer = self.state.buffer
        if buffer[HELD_KEY]:
            N.refuse_held(buffer)

    def _settle(self) -> None:
        """After a stop that was not the hook's, count only the instructions that ran."""
        self.state.settle_at(self.uc.reg_read(A.UC_ARM_REG_PC))
        if self.sampler is not None:
            self.sampler.take_block()

    def _python_time(self, cycles: int, sample_pc: int, profile_event: int | None = None,
                     profile_address: int | None = None) -> None:
        """Move time on outside the native hook (exception overhead, sleep, skipped loops),
        charging it in the profile and the PC samples to what it was spent on."""
        if self.swo is not None:  # DWT event counter packets: EXCCNT and SLEEPCNT count this time
            self.dwt.python_time(self.state[N.CYCLES], cycles,
                                 {EXCEPTION_PC: EXCCNT, SLEEP_PC: SLEEPCNT}.get(sample_pc))
        if self.sampler is not None:
            self.sampler.take_block()
        if self.profile is not None:
            if profile_event is not None:
                self.profile.switch_to(profile_event)
            elif profile_address is not None:
                self.profile.switch_to_address(profile_address)
        if self.power is not None:
            self.power.snapshot()  # (the trace's dynamic energy stays put while Python moves time on)
            if profile_event == N.EVENT_SLEEP:
                start = self.state[N.CYCLES]
                self.power.asleep(start, start + cycles, self.simulated_seconds_at(start),
                                  self.simulated_seconds_at(start + cycles), bool(self.scb.scr & SCR_SLEEPDEEP))
        self._advance(cycles)
        if self.power is not None:
            self.power.snapshot()
        if self.sampler is not None:
            self.sampler.charge(sample_pc)

    def _next_event(self) -> int | None:
        events = [e for e in (device.next_event_cycle() for device in self.timed) if e is not None]
        return min(events) if events else None

    def _service_events(self) -> None:
        now = self.state[N.CYCLES]
        for device in self.timed:
            event = device.next_event_cycle()
            if event is not None and event <= now:
                device.on_time(now)
        sampling = self.data_sampling
        if sampling is not None and sampling.due(now) and self.state[N.PAID_FROM] == -1:
            sampling.on_time(now)  # (between blocks, as an unpaused run would; not a wake-up source: not in `timed`)
        while self.exceptions.take_pending():
            pass

    def set_breakpoints(self, addresses) -> None:
        """Pause before the instructions at `addresses` (Thumb bit ignored): a Python code hook on
        each stops Unicorn there, inside its translated block, which was charged whole when it
        began; the rest of it then runs paid (PAID_FROM), so a pause costs nothing."""
        wanted = {address & ~1 for address in addresses}
        for address in self.breakpoints - wanted:
            self.uc.hook_del(self._breakpoint_hooks.pop(address))
            self.uc.ctl_remove_cache(address, address + 2)
        for address in wanted - self.breakpoints:
            self._breakpoint_hooks[address] = self.uc.hook_add(UC_HOOK_CODE, self._on_breakpoint, begin=address,
                                                               end=address)
            self.uc.ctl_remove_cache(address, address + 2)  # translated again, with the hook
        self.breakpoints = wanted
        if self._resume_from not in wanted:
            self._resume_from = None

    def _on_breakpoint(self, uc, address, size, _user_data):
        self.refuse_held()
        if address == self._resume_from:  # (resuming there: it runs)
            self._resume_from = None
            return
        self._hit = address
        uc.emu_stop()

    def _pause_inside_block(self, reason: str) -> None:
        """Paused by run control before the instruction at PC: the block it is in was charged
        whole, so what is left of it will run paid. A watchpoint hit on the way is the reason."""
        st = self.state
        pc = self.uc.reg_read(A.UC_ARM_REG_PC)
        block, end = int(st[N.BLOCK_ADDRESS]), int(st[N.BLOCK_ADDRESS] + st[N.BLOCK_SIZE])
        if block <= pc < end:
            st[N.PAID_FROM], st[N.PAID_TO] = pc, end
        self.paused = ("watchpoint" if self.watchpoints.hit is not None else reason, pc)
        if self._hit is not None:
            self._resume_from = pc

    def instructions_now(self) -> int:
        """Instructions completed up to the executing one (paused inside a block: before PC)."""
        return int(self.state.count_at(self.uc.reg_read(A.UC_ARM_REG_PC))[1])

    def run(self) -> ExitStatus | None:
        """Run until the firmware ends (its exit status), or, under run control, until a breakpoint
        or the last step requested (None; `paused` says which): run() again carries on."""
        self.paused = None
        self.watchpoints.hit = None
        started = self._started = time.perf_counter()
        self._running = True
        self._reset_request = None
        self.state[N.CYCLE_LIMIT] = self.max_cycles
        progress_at = started + 1.0
        ticking = threading.Event()
        ticker = threading.Thread(target=self._tick, args=(ticking,), daemon=True, name="mcusim-tick")
        ticker.start()
        try:
            while self.exit is None:
                self._service_events()
                self._apply_hook_changes()
                self._install_exact_pc_hooks()
                if self.state[N.CYCLES] >= self.max_cycles:
                    self._finish("max-cycles", EXIT_MAX_CYCLES, f"reached the cycle limit ({self.max_cycles:,} cycles)")
                    break
                if self._stop_asked():
                    break
                if self._pause_request is not None or self.watchpoints.hit is not None:
                    reason = "watchpoint" if self.watchpoints.hit is not None else self._pause_request
                    self._pause_request, self.steps_left = None, None
                    self.paused = (reason, self.uc.reg_read(A.UC_ARM_REG_PC))
                    break
                if self.steps_left == 0:
                    self.steps_left, self.paused = None, ("step", self.uc.reg_read(A.UC_ARM_REG_PC))
                    break
                event = self._next_event()
                deadline = self.max_cycles if event is None else min(event, self.max_cycles)
                if self.data_sampling is not None:  # (a switch put off by a pause: at the first block after it)
                    now = self.state[N.CYCLES]
                    deadline = now if self.data_sampling.due(now) else min(deadline, self.data_sampling.next_switch)
                if self._draining:  # Unicorn keeps a deleted hook listed until its run ends, and while it is
                    deadline = self.state[N.CYCLES]  # listed translates every load and store to the slow path:
                    self._draining, self._drained = False, True  # a run that stops before its first block
                stepping = self._stepping or self.max_cycles - self.state[N.CYCLES] <= LIMIT_STEP_CYCLES
                if not stepping:  # come back when near the limit, to step there
                    deadline = min(deadline, self.max_cycles - LIMIT_STEP_CYCLES)
                if self.on_progress:  # come back now and then to report progress (a stop costs no cycles)
                    deadline = min(deadline, self.state[N.CYCLES] + PROGRESS_SLICE_CYCLES)
                self.state[N.DEADLINE] = deadline
                self.state[N.STOP_REASON] = N.STOP_NONE
                masked = self.exceptions.best_pending() is not None  # pending, yet not taken above
                self.state[N.PENDING_MASKED] = int(masked)
                self.state[N.WATCH_ISB] = int(bool(self.decoder._snapshots))
                self._interrupt = None
                self._invalid_access = None
                error = None
                step = None
                self.state[N.STEP_LIMIT] = NO_STEP_LIMIT
                if stepping:
                    step = self._step_limit()
                    self.state[N.STEP_LIMIT] = self.state[N.INSTRUCTIONS] + 1  # (one block at most)
                until = min((a for a in (self._nocp_at, step) if a is not None), default=UNTIL)
                if self._nocp_at is not None:
                    self.state[N.FPU_ENABLED] = 1  # let the instructions before the FP one run
                self.state[N.PREVIOUS_SP_WRITE] = N.SP_SELECT  # Python may have moved SP or switched stacks
                #                                                (exception entry, return); and the block
                #                                                hook's first path (a block run right after its
                #                                                own run) is closed to the first block after it
                counting = self.steps_left is not None and not stepping
                if counting and not self._counted:  # Unicorn adds its counting hook without translating again:
                    self.uc.ctl_flush_tb()           # blocks translated before would not be counted
                self._counted = counting
                ran_before = self.instructions_now() if counting else 0
                self._hit = None
                if self.console_page is not None:
                    self.console_page.refresh()  # (a core reset may have changed its registers)
                try:
                    self.uc.emu_start(self.uc.reg_read(A.UC_ARM_REG_PC) | 1, until,
                                      count=self.steps_left if counting else 0)
                except UcError as exc:
                    error = exc
                self.release_held()
                self.drain_console_uart()
                if self._nocp_at is not None:
                    self.state[N.FPU_ENABLED] = int(self.scb.fpu_enabled)
                if self._internal_error is not None:
                    raise self._internal_error
                quiet = error is None and self._interrupt is None and self._divide_by_zero is None \
                    and self.state[N.STOP_REASON] == N.STOP_NONE
                if quiet and self._hit is not None:
                    self._pause_inside_block("breakpoint")
                    break
                if counting and quiet and self.instructions_now() - ran_before >= self.steps_left:
                    self.steps_left = None
                    self._pause_inside_block("step")
                    break
                self._after_stop(error)
                if counting:  # (a semihosting call counts once it is served)
                    self.steps_left = max(0, self.steps_left - max(self.instructions_now() - ran_before, 0))
                if self.trace is not None:
                    self.trace.make_room()
                if self.sampler is not None:
                    self.sampler.take_block()
                self.state[N.BLOCK_SIZE] = 0
                if self._reset_request:
                    self.warn(f"core reset ({self._reset_request})")
                    self._reset_request = None
                    self._reset_core()
                if self.on_progress and time.perf_counter() > progress_at:
                    progress_at = time.perf_counter() + 0.5
                    self.on_progress(self)
        except SemihostingExit as done:
            self._finish("semihosting-exit", done.code, done.reason)
        except Lockup as lock:
            self._fault_exit(str(lock))
        finally:
            self.release_held()
            ticking.set()
            unwinding = sys.exc_info()[0] is not None
            try:
                self.drain_console_uart()
            except Exception:
                if not unwinding:  # (an output error must not hide what ended the run)
                    raise
            self.host_seconds += time.perf_counter() - started  # (over every run() of a paused run)
            self._running = False
            if self.paused is None:  # (paused: the firmware's files stay open for the rest of the run)
                self.semihosting.close()
        if self.exit is not None:
            self.decoder.save_store()
        if self.pinned_clock_hz:  # the latency the firmware ended with, against the pinned clock
            for port in self.flash_ports:
                port.check_wait_states()
        return self.exit

    def _finish(self, reason: str, code: int, detail: str) -> None:
        self.exit = ExitStatus(reason, code, detail)

    def _tick(self, done: threading.Event) -> None:
        """Stop emulation every TICK_SECONDS (a stop costs no cycles): Unicorn runs in C, where
        neither the time limit nor a signal handler gets a look in until it returns."""
        while not done.wait(TICK_SECONDS):
            self.request_stop()

    def _stop_asked(self) -> bool:
        """Between runs: end on an interrupt (SIGINT, SIGTERM) or when the time limit is up."""
        if self._interrupted is not None:
            try:
                name = signal.Signals(self._interrupted).name
            except ValueError:
                name = f"signal {self._interrupted}"
            self._finish("interrupted", 128 + self._interrupted,
                         f"interrupted by {name} at cycle {self.state[N.CYCLES]:,}")
        elif self._past_time_limit():
            self._finish("time-limit", EXIT_MAX_CYCLES, f"reached the time limit ({self.max_seconds:g} s of host "
                         f"time) at cycle {self.state[N.CYCLES]:,}")
        return self.exit is not None

    def _after_stop(self, error: UcError | None) -> None:
        reason = self.state[N.STOP_REASON]
        uc = self.uc
        nocp_at, self._nocp_at = self._nocp_at, None
        if reason != N.STOP_DECODE:
            self._last_decode = (-1, 0)
        if nocp_at is not None and error is None and self._interrupt is None and self._divide_by_zero is None \
                and reason == N.STOP_NONE and uc.reg_read(A.UC_ARM_REG_PC) == nocp_at:
            self._settle()
            self.exceptions.raise_fault(USAGEFAULT, NOCP, nocp_at, None,
                                        "floating-point instruction with the FPU disabled (CPACR)")
            self.exceptions.take_pending(fault_return_address=nocp_at)
        elif self._divide_by_zero is not None:
            pc = self._divide_by_zero
            self._divide_by_zero = None
            self.uc.reg_write(A.UC_ARM_REG_PC, pc)
            self._settle()
            self.exceptions.raise_fault(USAGEFAULT, DIVBYZERO, pc, None, "integer divide by zero (CCR.DIV_0_TRP)")
            self.exceptions.take_pending(fault_return_address=pc)
        elif self._interrupt is not None:
            self._settle()
            self._handle_interrupt(self._interrupt)
        elif error is not None:
            self._settle()
            self._handle_error(error)
        elif reason == N.STOP_DECODE:
            start = self.state[N.STOP_ADDRESS]
            address, repeats = self._last_decode
            self._last_decode = (start, repeats + 1 if address == start else 1)
            if self._last_decode[1] > 3:
                raise RuntimeError(f"mcusim cannot decode the code at 0x{start:08x} (internal error)")
            self.decoder.decode_block(start, max(self.state[N.STOP_SIZE], 2))
        elif reason == N.STOP_ISB:
            self.decoder.forget_changed_code()
        elif reason == N.STOP_LIMIT:
            self._stepping = True
        elif reason == N.STOP_SELF_LOOP:
            self._handle_self_loop(self.state[N.STOP_ADDRESS])
        elif reason == N.STOP_FPU_DISABLED:
            self._handle_fpu_disabled(self.state[N.STOP_ADDRESS], self.state[N.STOP_SIZE])
        elif reason == N.STOP_NONE:
            self._settle()
            hint = self._hint_before(uc.reg_read(A.UC_ARM_REG_PC))
            if hint in ("wfi", "wfe"):
                self._sleep(hint)

    def _step_limit(self) -> int | None:
        """Near the cycle limit, or before a block that would reach it before its last instruction:
        run one instruction (the run ends at the next instruction boundary, or at the next block),
        so the count stops within one instruction, waits included, of the limit. Returns the
        boundary, or None where the code is not decoded yet (the hook stops for that first)."""
        pc = self.uc.reg_read(A.UC_ARM_REG_PC)
        if self.state.value_at(pc, N.KIND) not in (N.KIND_START, N.KIND_SELF_LOOP):
            return None
        end = pc + (4 if self.state.value_at(pc + 2, N.KIND) == N.KIND_CONTINUATION else 2)
        self.uc.ctl_remove_cache(pc, end)  # translated again, the block ends there
        return end

    def _handle_interrupt(self, intno: int) -> None:
        uc = self.uc
        pc = uc.reg_read(A.UC_ARM_REG_PC)
        if intno == 2:  # SVC: PC is already the return address
            exc = self.exceptions
            if exc.group_priority(SVCALL) < exc.execution_priority():
                exc.pending[SVCALL] = True
            else:
                exc.raise_fault(HARDFAULT, 1 << 30, pc, None,
                                            "SVC executed where SVCall cannot preempt (escalated to HardFault)")
            self.exceptions.take_pending()
        elif intno == 7:  # BKPT: PC at the instruction
            immediate = (self.peek(pc, 1) or b"\0")[0]
            if immediate == 0xAB:  # (any other BKPT faults: it does not complete, like an undefined instruction)
                if self.profile is not None:
                    self.profile.flush_lines()
                self._advance(1)
                self.state[N.INSTRUCTIONS] = self.state[N.INSTRUCTIONS] + 1
                if self.profile is not None:
                    self.profile.charge_instruction(pc, 1, 1)
                result = self.semihosting.call(uc.reg_read(A.UC_ARM_REG_R0), uc.reg_read(A.UC_ARM_REG_R1))
                uc.reg_write(A.UC_ARM_REG_R0, result & 0xFFFFFFFF)
                uc.reg_write(A.UC_ARM_REG_PC, pc + 2)
                self.state[N.PREVIOUS_END] = pc + 2  # the code after the call follows on in sequence
            else:
                self.exceptions.raise_fault(HARDFAULT, 1 << 31, pc, None,
                                            f"BKPT #{immediate} with no debugger attached (HardFault DEBUGEVT)")
                self.exceptions.take_pending(fault_return_address=pc)
        elif intno == 8:  # exception return: PC holds EXC_RETURN
            self.exceptions.exception_return(pc)
        else:
            self.exceptions.raise_fault(HARDFAULT, 1 << 30, pc, None, f"unexpected CPU exception {intno}")
            self.exceptions.take_pending(fault_return_address=pc)

    def _handle_error(self, error: UcError) -> None:
        pc = self.uc.reg_read(A.UC_ARM_REG_PC)
        access = self._invalid_access
        if error.errno in (UC_ERR_FETCH_UNMAPPED, UC_ERR_FETCH_PROT):
            target = access[1] if access else pc
            self.exceptions.raise_fault(BUSFAULT, IBUSERR, pc, None,
                                        f"instruction fetch from 0x{target:08x}, where there is no executable memory")
        elif error.errno in (UC_ERR_READ_UNMAPPED, UC_ERR_WRITE_UNMAPPED, UC_ERR_READ_PROT, UC_ERR_WRITE_PROT):
            address = access[1] if access else None
            what = "read from" if error.errno in (UC_ERR_READ_UNMAPPED, UC_ERR_READ_PROT) else "write to"
            where = "read-only memory" if error.errno in (UC_ERR_WRITE_PROT,) else "unmapped memory"
            text = f"{what} {where} at 0x{address:08x}" if address is not None else f"{what} {where}"
            self.exceptions.raise_fault(BUSFAULT, PRECISERR, pc, address, f"precise data bus error: {text}")
        elif error.errno == UC_ERR_INSN_INVALID and self._after_hint(pc):
            return
        elif error.errno == UC_ERR_INSN_INVALID:
            if not self.uc.reg_read(A.UC_ARM_REG_XPSR) & (1 << 24) or self.board.region_at(pc) is None:
                self.exceptions.raise_fault(USAGEFAULT, INVSTATE, pc, None, "invalid state (not Thumb)")
            else:
                encoding = self.peek(pc, 2)[::-1].hex() or "(unreadable)"
                self.exceptions.raise_fault(USAGEFAULT, UNDEFINSTR, pc, None,
                                            f"undefined instruction {encoding} at 0x{pc:08x}")
        elif error.errno == UC_ERR_EXCEPTION:
            self.exceptions.raise_fault(HARDFAULT, 1 << 30, pc, None, f"unhandled CPU exception ({error})")
        else:
            raise error
        self.exceptions.take_pending(fault_return_address=pc)

    def _hint_before(self, pc: int) -> str | None:
        """The hint instruction that ends just before `pc`, if any."""
        for length in (2, 4):
            hint = HINT_ENCODINGS.get(self.peek(pc - length, length)) if pc >= length else None
            if hint:
                return hint
        return None

    def _after_hint(self, pc: int) -> bool:
        """Unicorn ends a run at WFE and YIELD with an invalid-instruction error, PC past them."""
        hint = self._hint_before(pc)
        if hint == "wfe":
            self._sleep("wfe")
        return hint in ("wfe", "yield")

    def _handle_fpu_disabled(self, block: int, size: int) -> None:
        """The block uses the FPU while CPACR denies it: run up to the first FP instruction
        (the next emulation run stops there), then fault on it with NOCP."""
        first_fp = min((a for a in self.decoder.fp_instruction_addresses if block <= a < block + size), default=block)
        if first_fp > block:
            self._nocp_at = first_fp
            return
        self.exceptions.raise_fault(USAGEFAULT, NOCP, first_fp, None,
                                    "floating-point instruction with the FPU disabled (CPACR)")
        self.exceptions.take_pending(fault_return_address=first_fp)

    def _handle_self_loop(self, address: int) -> None:
        """A branch to itself: a fault handler's dead end ends the run; elsewhere skip to the next event."""
        active = self.exceptions.active
        if active and active[-1] in (2, 3, 4, 5, 6):
            fault = self.exceptions.last_fault
            what = fault.description if fault else exception_name(active[-1])
            self._fault_exit(f"{what}; the {exception_name(active[-1])} handler at "
                             f"{self.image.symbolize(address)} loops forever", fault_pc=fault.pc if fault else None)
            return
        event = self._next_event()
        target = self.max_cycles if event is None else min(event, self.max_cycles)
        # each turn costs the branch (decode tables; every turn enters it out of sequence) plus,
        # under a core model, its taken refill
        branch_cycles = max(1, self.state.sums_between(address, address + 2)[N.F_CYCLES]
                            + self.state.value_at(address, N.F_START_ADJUST))
        refill = self.state[N.REFILL_BRANCH]
        if address & 2 and self.state.value_at(address + 2, N.KIND) == N.KIND_CONTINUATION:
            refill += self.state[N.REFILL_WIDE_ODD]  # `b.w .` at an odd halfword: a wide target
        turns = max(1, -(-(target - self.state[N.CYCLES]) // (branch_cycles + refill)))
        if self.trace is not None:
            for first in range(0, turns, 0xFFFFFFFF):  # (a record holds up to 2**32 - 1 turns)
                self.trace.record(N.TRACE_LOOP, address, min(0xFFFFFFFF, turns - first))
        self._python_time(turns * (branch_cycles + refill), address, profile_address=address)
        if self.profile is not None:
            self.profile.charge_instruction(address, turns * (branch_cycles + refill), turns)
        self.state[N.INSTRUCTIONS] = self.state[N.INSTRUCTIONS] + turns
        self.state[N.CPI_TOTAL] = self.state[N.CPI_TOTAL] + turns * (branch_cycles - 1 + refill)
        self.state[N.REFILL_TOTAL] = self.state[N.REFILL_TOTAL] + turns * refill
        if event is None and self.state[N.CYCLES] >= self.max_cycles:
            self._finish("max-cycles", EXIT_MAX_CYCLES,
                         f"reached the cycle limit ({self.max_cycles:,} cycles) while looping forever at "
                         f"{self.image.symbolize(address)} with no interrupt source enabled")

    def _sleep(self, kind: str) -> None:
        exc = self.exceptions
        if kind == "wfe" and exc.event_register:
            exc.event_register = False
            return
        while not exc.any_pending_ignoring_primask():
            event = self._next_event()
            if event is None or event >= self.max_cycles:
                slept = max(0, self.max_cycles - self.state[N.CYCLES])
                self.sleep_cycles += slept
                self._python_time(slept, SLEEP_PC, profile_event=N.EVENT_SLEEP)
                detail = "deep sleep" if self.scb.scr & SCR_SLEEPDEEP else "sleep"
                if event is None:
                    self._finish("max-cycles", EXIT_MAX_CYCLES,
                                 f"the core entered {detail} ({kind.upper()}) with no enabled wake-up source")
                else:
                    self._finish("max-cycles", EXIT_MAX_CYCLES,
                                 f"reached the cycle limit ({self.max_cycles:,} cycles) while asleep")
                return
            if event > self.state[N.CYCLES]:
                slept = event - self.state[N.CYCLES]
                self.sleep_cycles += slept
                self._python_time(slept, SLEEP_PC, profile_event=N.EVENT_SLEEP)
            for device in self.timed:
                device.on_time(self.state[N.CYCLES])
        exc.event_register = False

    # faults -------------------------------------------------------------------------------
    def _fault_exit(self, message: str, fault_pc: int | None = None) -> None:
        self.fault_report = self._fault_report(message, fault_pc)
        self._finish("fault", EXIT_FAULT, message)

    def _fault_report(self, message: str, fault_pc: int | None) -> str:
        uc = self.uc
        fault = self.exceptions.last_fault
        pc = fault_pc if fault_pc is not None else (fault.pc if fault else uc.reg_read(A.UC_ARM_REG_PC))
        lines = [f"fault: {message}"]
        if fault:
            lines.append(f"  kind: {exception_name(fault.exception)}: {fault.description}")
            if fault.address is not None:
                lines.append(f"  faulting address: 0x{fault.address:08x}")
        location = self.image.symbolize(pc)
        source = self.image.source_line(pc)
        lines.append(f"  pc: 0x{pc:08x} {location}" + (f" ({source})" if source else ""))
        regs = [f"r{i}=0x{uc.reg_read(getattr(A, f'UC_ARM_REG_R{i}')):08x}" for i in range(13)]
        regs += [f"sp=0x{uc.reg_read(A.UC_ARM_REG_SP):08x}", f"lr=0x{uc.reg_read(A.UC_ARM_REG_LR):08x}",
                 f"xpsr=0x{uc.reg_read(A.UC_ARM_REG_XPSR):08x}"]
        for i in range(0, len(regs), 4):
            lines.append("  " + " ".join(regs[i:i + 4]))
        exc = self.exceptions
        lines.append(f"  CFSR=0x{exc.cfsr:08x} HFSR=0x{exc.hfsr:08x} MMFAR=0x{exc.mmfar:08x} BFAR=0x{exc.bfar:08x}")
        return "\n".join(lines)

    # totals (the results: machine/results.py) ---------------------------------------------
    @property
    def cycles(self) -> int:
        return self.state[N.CYCLES]

    @property
    def instructions(self) -> int:
        return self.state[N.INSTRUCTIONS]
