"""Typed views of the TOML hardware descriptions (boards/, cores/)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class MemoryRegion:
    """A range of the address space backed by storage (or aliasing another region's)."""

    name: str
    base: int
    size_bytes: int
    kind: str  # "flash" (read-only to the core) or "ram"
    alias_of: str | None = None

    @property
    def end(self) -> int:
        return self.base + self.size_bytes

    def contains(self, address: int, length: int = 1) -> bool:
        return self.base <= address and address + length <= self.end


@dataclass(frozen=True)
class CacheSpec:
    """A cache between the core and the flash: sets x ways lines of the flash's line size."""

    sets: int
    ways: int
    enabled: bool = False             # at reset
    shared_with_icache: bool = False  # a data cache that is the instruction cache (one unified cache)


@dataclass(frozen=True)
class FlashTimingSpec:
    """The flash interface's timing at reset (docs/timing.md); firmware changes it through its
    controller's registers."""

    region: str
    line_bytes: int                  # one flash read
    name: str = "flash"              # the port's name (a board may read its flash through two)
    fetch_wait_cycles: int = 0       # wait cycles of an instruction fetch that reads the flash
    data_wait_cycles: int = 0        # wait cycles of a data read from the flash
    prefetch: bool = False
    icache: CacheSpec | None = None
    dcache: CacheSpec | None = None
    flash_clock_hz: int = 0          # wait states count cycles of this clock (0: the core clock)
    ranges: tuple[str, ...] = ()     # regions read through this interface (default: the region and its aliases)
    core_caches: bool = False        # the caches are the core's L1 (SCB CCR.IC/DC, cache maintenance)
    line_buffer: bool = True         # the line last read serves a branch back into it
    ram_ranges: tuple[str, ...] = () # RAM regions whose data goes through this port's data cache
    ram_read_wait_cycles: int = 0    # wait cycles of a data read from them that the data cache does not serve
    writeback_wait_cycles: int = 0   # further wait of a data cache miss that replaces a dirty line
    # [(highest core clock, fewest wait states)] the manual allows, per voltage range
    wait_state_limits: dict[str, tuple[tuple[int, int], ...]] = field(default_factory=dict)
    voltage_range: str = ""          # the wait_state_limits key in force until a power model selects another
    max_wait_states: int | None = None  # the latency field's largest value (None: no field, fixed timing)


@dataclass(frozen=True)
class PeripheralSpec:
    """A memory-mapped peripheral; `model` names its behaviour, None means plain storage."""

    name: str
    base: int
    size_bytes: int
    model: str | None = None
    irq: int | None = None
    registers: dict[str, int] = field(default_factory=dict)
    reset: dict[str, int] = field(default_factory=dict)  # register name -> reset value


@dataclass(frozen=True)
class CoreSpec:
    name: str
    architecture: str
    unicorn_cpu_model: str
    capstone_mcpu: str
    cpuid: int
    fpu: str
    fpu_double_precision: bool
    default_instruction_cycles: int
    timing_model: str
    exception_entry_cycles: int
    exception_return_cycles: int
    exception_tail_chain_cycles: int
    exception_fp_context_cycles: int = 0  # storing or restoring S0-S15 and FPSCR
    roofline: dict = field(default_factory=dict)  # [roofline]: peak MACs and load/store bytes per cycle


@dataclass(frozen=True)
class BoardSpec:
    name: str
    title: str
    soc: str
    vendor: str
    core: CoreSpec
    clock_hz: int
    reset_clock_hz: int
    boot_address: int
    irq_count: int
    nvic_priority_bits: int
    systick_external_clock_divider: int
    console_uart: str | None
    memory: tuple[MemoryRegion, ...]
    peripherals: tuple[PeripheralSpec, ...]
    peripheral_space: tuple[tuple[int, int], ...]
    clocks: dict[str, int] = field(default_factory=dict)  # board oscillators, e.g. hse_hz
    pins: dict[str, str] = field(default_factory=dict)  # board labels of SoC pins ([pins]), e.g. LD2 = "PA5"
    flash_ports: tuple[FlashTimingSpec, ...] = ()  # the flash interfaces ([[flash_timing]])
    cpuid: int = 0  # SCB CPUID as this part reports it
    max_clock_hz: int = 0  # the part's highest core clock (datasheet), 0: none given (MPS2 FPGAs under QEMU)
    source_file: str = ""

    @property
    def flash_timing(self) -> FlashTimingSpec | None:
        """The main flash port (the first), or None."""
        return self.flash_ports[0] if self.flash_ports else None

    @property
    def memory_bytes(self) -> int:
        """All the storage the board has (aliases not counted twice): no firmware loads more."""
        return sum(region.size_bytes for region in self.memory if region.alias_of is None)

    def region_at(self, address: int, length: int = 1) -> MemoryRegion | None:
        for region in self.memory:
            if region.contains(address, length):
                return region
        return None

    def regions_covering(self, address: int, length: int) -> list[tuple[MemoryRegion, int, int]] | None:
        """The regions [address, address + length) lies in, as (region, start, end) pieces in
        address order, or None if any byte of it is unmapped. Adjacent banks are one range to a
        linker script (e.g. DTCM + SRAM1 + SRAM2 as one `RAM`), so a segment may cross them."""
        pieces = []
        at, end = address, address + max(length, 1)
        while at < end:
            region = self.region_at(at)
            if region is None:
                return None
            piece_end = min(end, region.end)
            pieces.append((region, at, piece_end))
            at = piece_end
        return pieces

    def storage_region(self, region: MemoryRegion) -> MemoryRegion:
        """The region that owns the bytes of `region` (itself unless it is an alias)."""
        if region.alias_of is None:
            return region
        return next(r for r in self.memory if r.name == region.alias_of)

    def peripheral(self, name: str) -> PeripheralSpec | None:
        return next((p for p in self.peripherals if p.name == name), None)
