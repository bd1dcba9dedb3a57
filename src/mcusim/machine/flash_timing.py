"""Flash timing: wait states, a prefetch buffer and caches between the core and its flash.

The model (docs/timing.md, "Memory timing"): flash is read one line (`line_bytes`) at a time;
a read the core waits for costs `wait` cycles beyond the zero-wait fetch the core model
assumes. On the instruction side the fetch buffer holds the last line read; a line found in
the instruction cache costs nothing; with prefetch on, the next sequential line is read as
soon as a line arrives, so sequential code waits only for what execution did not cover. On
the data side a read that misses the data cache (or finds none) costs `data wait` cycles, and
while an instruction prefetch is in flight it delays that prefetch (data has priority on the
flash, RM0351 3.3): the delay is counted as contention.

A port with a data cache may also serve RAM (`ram_ranges`, e.g. the STM32F7's SRAM1/SRAM2 behind
AXIM): the data cache holds those lines too, written back and allocated on writes, and a read
it does not serve waits `ram_read_wait_cycles` (plus `writeback_wait_cycles` when the line it
replaces is dirty): `ram_access` in native/memory_model.py, through the ranges' MMIO aliases
(cached_ram.py).

The state lives in the native buffer (native/layout.py, slots FL_*, and two cache tag arrays): the
block hook runs `flash_fetch_line` for each flash line a block touches, a memory hook runs
`flash_data_read` on data reads from flash. This class writes the settings there; peripheral
models (FLASH_ACR, NVMC, CACHECTRL) change them through `configure`.

Wait states against the clock: where the SoC file gives the reference manual's table
(`wait_state_limits`, per voltage range), a latency below the table's minimum for the clock is
warned about once per (clock, voltage range, latency): the part would read wrong data, and the
run keeps the latency it was given. `--flash-latency` (`latency`) replaces the firmware's
latency field: "auto" with the table's minimum for the clock and voltage range in force,
followed through every change of either, for firmware that never sets up its flash; a number
forces that many wait states. Prefetch and caches stay as the firmware sets them.
"""
from __future__ import annotations

from . import native as N

TIMING_SLOTS = (N.FL_FETCH_WAIT, N.FL_DATA_WAIT, N.FL_PREFETCH, N.FL_IC_ON, N.FL_DC_ON)  # (what a wait depends on)


class FlashLatencyError(ValueError):
    """A --flash-latency value that is malformed or that the board cannot take."""


def parse_flash_latency(value: str | int | None) -> str | int | None:
    """None (the firmware's latency), "auto", or a number of wait states (an int or its digits)."""
    if value is None or value == "auto":
        return value
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FlashLatencyError(f"{value!r} is not a flash latency: give auto (the reference manual's minimum for "
                                f"the clock) or a number of wait states (0, 1, 2, ...)")
    return value


class FlashTiming:
    """One flash port as the firmware configured it; writes the port's native slots.

    Settings count wait states as the controller's register does; when the flash runs on its
    own clock (`flash_clock_hz`), a core clock above it makes each flash cycle several core
    cycles. `on_change` is called when data reads start or stop waiting (the machine adds or
    removes its memory hooks), `on_timing_change` when a wait, cache or prefetch setting in
    force changes (sampled data timing then measures again: data_sampling.py).

    With the clock pinned (`clock_pinned`) the firmware's clock setup is ignored, so checking
    its latency at each step would be wrong: at reset, before the firmware has had a chance to
    raise it, any latency looks too low at the pinned clock. The check then runs where the
    firmware means its latency to hold: when it lowers the latency, when it switches its clock
    (`check_wait_states`, called by the machine) and at the end of the run."""

    def __init__(self, spec, board, state, port: int = 0, warn=None, clock_pinned: bool = False,
                 latency: str | int | None = None):
        if port >= N.FL_MAX_PORTS:
            raise ValueError(f"board {board.name}: more than {N.FL_MAX_PORTS} flash ports")
        self.spec = spec
        self.name = spec.name
        self.state = state
        self.g = N.FL_PORTS + port * N.FL_PORT_SLOTS
        self.warn = warn or (lambda key, message: None)
        self.clock_pinned = clock_pinned
        self.latency = self._checked_latency(parse_flash_latency(latency), board)
        self.in_force = 0  # fetch wait states in force, in the latency field's units
        self.on_change = None
        self.on_timing_change = None
        self.ram_untimed = False  # sampled data timing between its windows (data_sampling.py)
        self.clock_hz = board.reset_clock_hz
        storage = board.storage_region(next(r for r in board.memory if r.name == spec.region))
        through = spec.ranges or [r.name for r in board.memory if r is storage or r.alias_of == storage.name]
        self.ranges = [(r.base, r.end) for r in board.memory if r.name in through]
        self.ram_ranges = [(r.base, r.end) for r in board.memory if r.name in spec.ram_ranges]
        if len(self.ranges) > N.FL_MAX_RANGES:  # (its RAM ranges are cached_ram.py's runs, MAX_RAM_ALIASES)
            raise ValueError(f"board {board.name}: flash port {spec.name} has more than {N.FL_MAX_RANGES} "
                             f"flash address ranges")
        for cache in (spec.icache, spec.dcache):
            if cache is not None and cache.sets * cache.ways > N.FL_MAX_CACHE_LINES:
                raise ValueError(f"board {board.name}: a flash cache of more than {N.FL_MAX_CACHE_LINES} lines")
        self.ic_tags = N.FLASH_AREA + port * 2 * N.FL_CACHE_SLOTS
        self.dc_tags = self.ic_tags if self.unified_cache else self.ic_tags + N.FL_CACHE_SLOTS
        state[N.FL_PORT_COUNT] = max(state[N.FL_PORT_COUNT], port + 1)
        self.reset()

    @property
    def unified_cache(self) -> bool:
        """Whether its data cache is its instruction cache (one tag array for both)."""
        return self.spec.dcache is not None and self.spec.dcache.shared_with_icache

    def _checked_latency(self, latency, board):
        spec = self.spec
        if latency is None:
            return None
        if spec.max_wait_states is None:
            raise FlashLatencyError(f"board {board.name} has no flash latency setting (its flash timing is fixed): "
                                    f"--flash-latency does not apply")
        if latency == "auto" and not spec.wait_state_limits:
            raise FlashLatencyError(f"board {board.name} has no reference-manual table of wait states per clock "
                                    f"(its flash timing is managed by ROM or SDK code): --flash-latency auto does not "
                                    f"apply; give a number of wait states")
        if latency != "auto" and latency > spec.max_wait_states:
            raise FlashLatencyError(f"{latency} wait states: the flash latency of board {board.name} takes 0 to "
                                    f"{spec.max_wait_states}")
        return latency

    def __getitem__(self, slot: int) -> int:
        return self.state[self.g + slot]

    def __setitem__(self, slot: int, value: int) -> None:
        self.state[self.g + slot] = value

    def reset(self) -> None:
        """Reset state; the controller's reset value is applied by its peripheral model next."""
        spec = self.spec
        self.voltage_range = spec.voltage_range
        self.settings = {"fetch_wait": spec.fetch_wait_cycles, "data_wait": spec.data_wait_cycles,
                         "prefetch": spec.prefetch, "icache": spec.icache is not None and spec.icache.enabled,
                         "dcache": spec.dcache is not None and spec.dcache.enabled}
        self.write_static(check=False)
        self.reset_cache(False)
        self.reset_cache(True)

    def write_static(self, check: bool = True) -> None:
        """Geometry and address ranges."""
        spec = self.spec
        self[N.FL_RANGE_COUNT] = len(self.ranges)
        for i, (start, end) in enumerate(self.ranges):
            at = self.g + N.FL_RANGE_TABLE + N.FL_RANGE * i
            self.state.buffer[at + N.RANGE_START], self.state.buffer[at + N.RANGE_END] = start, end
            self.state.buffer[at + N.RANGE_LINE_OFFSET] = 0
        self[N.FL_RAM_WAIT] = spec.ram_read_wait_cycles
        self[N.FL_WRITEBACK_WAIT] = spec.writeback_wait_cycles
        self[N.FL_LINE_SHIFT] = spec.line_bytes.bit_length() - 1
        self[N.FL_NO_LINE_BUFFER] = 0 if spec.line_buffer else 1
        self[N.FL_IC_TAGS], self[N.FL_DC_TAGS] = self.ic_tags, self.dc_tags
        if spec.icache is not None:
            self[N.FL_IC_SETS], self[N.FL_IC_WAYS] = spec.icache.sets, spec.icache.ways
        if spec.dcache is not None:
            self[N.FL_DC_SETS], self[N.FL_DC_WAYS] = spec.dcache.sets, spec.dcache.ways
        self._apply(check)

    def configure(self, **settings) -> None:
        """Set fetch_wait, data_wait (wait states), prefetch, icache, dcache (on/off) as firmware did."""
        unknown = set(settings) - set(self.settings)
        if unknown:
            raise TypeError(f"unknown flash settings {sorted(unknown)}")
        if settings.get("icache") and self.spec.icache is None or settings.get("dcache") and self.spec.dcache is None:
            raise ValueError("this flash has no such cache")
        self.settings.update(settings)
        self._apply()

    def set_cache_geometry(self, sets: int, ways: int) -> None:
        """Reshape the instruction (or unified) cache, as a cache controller can; it starts empty."""
        if sets * ways > N.FL_MAX_CACHE_LINES:
            raise ValueError(f"a flash cache of more than {N.FL_MAX_CACHE_LINES} lines")
        if (self[N.FL_IC_SETS], self[N.FL_IC_WAYS]) == (sets, ways):
            return
        self[N.FL_IC_SETS], self[N.FL_IC_WAYS] = sets, ways
        if self.dc_tags == self.ic_tags:
            self[N.FL_DC_SETS], self[N.FL_DC_WAYS] = sets, ways
        self.reset_cache(False)

    def set_voltage_range(self, voltage_range: int) -> None:
        self.voltage_range = str(voltage_range)
        self._apply()

    def clock_changed(self, hz: int) -> None:
        self.clock_hz = hz
        self._apply()

    def core_cycles(self, wait_states: int) -> int:
        """Core cycles a read waits, for `wait_states` of the flash clock."""
        flash_hz = self.spec.flash_clock_hz
        if not flash_hz or self.clock_hz <= flash_hz:
            return wait_states
        return -(-(wait_states + 1) * self.clock_hz // flash_hz) - 1

    def required_wait_states(self) -> int | None:
        """The reference manual's fewest wait states for the clock and voltage range in force;
        None without a table for them or when the clock is above every row."""
        limits = self.spec.wait_state_limits.get(self.voltage_range, ())
        return next((ws for hz, ws in limits if self.clock_hz <= hz), None)

    def wait_states(self, kind: str) -> int:
        """The wait states in force for `kind` (fetch_wait or data_wait): the firmware's, or the
        --flash-latency override."""
        if self.latency is None:
            return self.settings[kind]
        if self.latency != "auto":
            return self.latency
        needed = self.required_wait_states()
        if needed is not None:
            return needed
        limits = self.spec.wait_state_limits.get(self.voltage_range)
        # above the table the part cannot run at all (warned about): its slowest setting is the nearest
        return max(ws for _, ws in limits) if limits else self.settings[kind]

    def _apply(self, check: bool = True) -> None:
        s = self.settings
        hooks_before = self.hooks_needed
        timing_before = [self[slot] for slot in TIMING_SLOTS]
        lowered = self.wait_states("fetch_wait") < self.in_force
        self.in_force = self.wait_states("fetch_wait")
        self[N.FL_FETCH_WAIT] = self.core_cycles(self.in_force)
        self[N.FL_DATA_WAIT] = self.core_cycles(self.wait_states("data_wait"))
        self[N.FL_PREFETCH] = int(bool(s["prefetch"]))
        self[N.FL_IC_ON] = int(bool(s["icache"]))
        self[N.FL_DC_ON] = int(bool(s["dcache"]))
        self[N.FL_ACTIVE] = int(self[N.FL_FETCH_WAIT] > 0)
        if not s["prefetch"]:
            self[N.FL_PREFETCH_LINE] = -1
        if check and (lowered or not self.clock_pinned):
            self.check_wait_states()
        if self.on_change is not None and hooks_before != self.hooks_needed:
            self.on_change()
        if timing_before != [self[slot] for slot in TIMING_SLOTS]:
            if self.on_timing_change is not None:
                self.on_timing_change()

    def check_wait_states(self) -> None:
        """Warn when the core runs faster than the wait states in force allow (the part would
        read wrong data; the simulator keeps going with the wait states it was given)."""
        limits = self.spec.wait_state_limits.get(self.voltage_range)
        if not limits:
            return
        needed = self.required_wait_states()
        have = self.in_force
        clock = f"{self.clock_hz / 1e6:g} MHz{' (--clock-hz)' if self.clock_pinned else ''}"
        if needed is None:
            self.warn(f"flash-clock:{self.clock_hz}:{self.voltage_range}",
                      f"core clock {clock} is above every flash wait-state setting for voltage range "
                      f"{self.voltage_range} (reference manual table)")
        elif have < needed:
            forced = isinstance(self.latency, int)
            self.warn(f"flash-latency:{self.clock_hz}:{self.voltage_range}:{have}",
                      f"flash has {have} wait states{' (--flash-latency)' if forced else ''} at {clock}, voltage "
                      f"range {self.voltage_range}; the reference manual requires at least {needed}: the part "
                      f"would read wrong data (the run keeps {have}"
                      f"{'' if forced else '; --flash-latency auto applies the minimum'})")

    def reset_cache(self, data_side: bool) -> None:
        """Invalidate a cache (e.g. FLASH_ACR ICRST/DCRST); data_side selects the data cache."""
        start = self.dc_tags if data_side else self.ic_tags
        self.state.buffer[start: start + N.FL_CACHE_SLOTS] = 0
        N.instruction_lines_changed(self.state.buffer, True)
        if not data_side:
            self[N.FL_BUFFER_LINE] = -1
            self[N.FL_PREFETCH_LINE] = -1

    def maintain_line(self, set_index: int, way: int, clean: bool, invalidate: bool) -> None:
        """Clean (write back if dirty) and/or invalidate one data cache line by set and way (SCB
        DCCSW, DCISW, DCCISW; an invalidated dirty line's data is dropped, as on the part)."""
        sets, ways = self[N.FL_DC_SETS], self[N.FL_DC_WAYS]
        if set_index >= sets or way >= ways:
            return
        self._maintain_slot(self.dc_tags + N.FL_CACHE_LINE * (ways * set_index + way), clean, invalidate)

    def maintain_address(self, address: int, clean: bool, invalidate: bool) -> None:
        """Clean and/or invalidate the data cache line holding `address`, if any (SCB DCCMVAC,
        DCIMVAC, DCCIMVAC)."""
        if any(start <= address < end for start, end in self.ram_ranges):
            line = address >> self[N.FL_LINE_SHIFT]
        elif (offset := N.flash_offset(self.state.buffer, self.g, address)) >= 0:
            line = offset >> self[N.FL_LINE_SHIFT]
        else:
            return
        if not self[N.FL_DC_SETS]:
            return
        first, ways = N.cache_set(self.state.buffer, self.g, N.FL_DC_ON, line)
        slot = N.cache_find(self.state.buffer, first, ways, line)[0]
        if slot >= 0:
            self._maintain_slot(slot, clean, invalidate)

    def _maintain_slot(self, slot: int, clean: bool, invalidate: bool) -> None:
        """Clean and/or invalidate the data cache line at tag `slot`."""
        buffer = self.state.buffer
        if clean and buffer[slot + N.LINE_TAG] < 0:  # dirty
            buffer[slot + N.LINE_TAG] = -buffer[slot + N.LINE_TAG]
            self[N.FL_DC_WRITEBACKS] += 1
            N.instruction_lines_changed(buffer, True)
        if invalidate:
            buffer[slot: slot + N.FL_CACHE_LINE] = 0
            N.instruction_lines_changed(buffer, True)

    @property
    def data_reads_wait(self) -> bool:
        return self[N.FL_DATA_WAIT] > 0

    @property
    def hooks_needed(self) -> tuple[bool, bool]:
        """What the machine must time for this port: flash data reads (code pages' through
        their alias or a memory hook, data pages as MMIO), RAM accesses (through the RAM's MMIO
        alias, cached_ram.py)."""
        # flash data lines take data cache room from RAM lines even when they cost no wait
        return self.data_reads_wait or self._ram_cached, self.ram_timed

    @property
    def _ram_cached(self) -> bool:
        return bool(self.ram_ranges) and self[N.FL_DC_ON] != 0

    @property
    def ram_timed(self) -> bool:
        """Whether the RAM behind the data cache is timed now: the cache on (writes allocate),
        or its reads wait; not between the windows of sampled data timing."""
        ram_reads = self._ram_cached or bool(self.ram_ranges) and self[N.FL_RAM_WAIT] > 0
        return ram_reads and not self.ram_untimed

    def totals(self) -> dict[str, int]:
        return {"icache_hits": self[N.FL_IC_HITS], "icache_misses": self[N.FL_IC_MISSES],
                "dcache_hits": self[N.FL_DC_HITS], "dcache_misses": self[N.FL_DC_MISSES],
                "dcache_writebacks": self[N.FL_DC_WRITEBACKS]}
