"""Sampled data timing: the memory whose every access costs a Unicorn slow path to time (RAM
behind a data cache, mcu-d's SRAM1 and SRAM2; the flash pages of data, weights and tables, read
as MMIO) is timed access by access in windows; between windows it is plain memory, and each
block that runs is charged the wait and flash reads its runs averaged in the last window it ran
in (native/data_sampling.py). The instruction fetch model, the block hook's largest cost on a
board whose flash waits, runs in windows only too, and each block adds its averaged fetch wait
between them.

Why: while any memory hook exists, Unicorn sends every load and store of the program to its
slow path, and each read of an MMIO page is a call through QEMU's memory dispatch; on a TinyML
model whose weights sit in flash, that is most of the host time (docs/performance.md, "Sixth
pass").

The schedule, in core cycles (deterministic: the same firmware gives the same cycles): the
first EXACT_CYCLES are a window (start-up, and every short program, whole), which goes on while
code runs for the first time, up to EXACT_CYCLES_MAX (a run of short tests stays exact); then the last
WINDOW_CYCLES of every PERIOD_CYCLES; and a window of REQUESTED_CYCLES as a marked region begins
(a TinyML layer: its kernel's blocks learn that layer's access pattern; the first
REGION_WINDOWS times a region of that name begins, a window open then is extended) or as a block
runs that has not run in a window (new code; each such block asks once), otherwise at most one
per REQUEST_GAP_CYCLES after the last window closed; and one as the firmware changes a flash
wait, cache or prefetch setting (what the blocks learned no longer holds). Until it has run in a
window, such a block is charged the last window's wait per cycle. The caches keep the state they
had when a window closed, so a window starts with lines the exact run would have replaced. On a
port whose one cache holds code and data (mcu-b's 16 KB flash cache, mcu-d's ITCM port with its
ART: FlashTiming.unified_cache) a window does not learn a data miss that replaced a line not used
in it (or an empty one: MISS_STALE): such a miss refills what the window found stale, or what a
loop that fits the cache reads once, and charged per run between windows it put bench-table's
cycles on mcu-b 0.59 % high (docs/performance.md, "Forty-first pass"); it is timed when it
happens. The error all this leaves is measured in docs/timing.md ("Sampled data timing");
`--data-timing exact` times every access instead.
"""
from __future__ import annotations

import numpy as np

from . import native as N

EXACT_CYCLES = 500_000           # timed whole: start-up and short programs are exact, ...
SETTLE_CYCLES = 300_000          # ... and on while new code runs (a block first ran this recently), ...
EXACT_CYCLES_MAX = 2_000_000     # ... up to this
PERIOD_CYCLES = 16_000_000       # then one window per period ...
WINDOW_CYCLES = 1_000_000        # ... of this many cycles, at the period's end
REQUESTED_CYCLES = 100_000       # a window as a region begins or a block not run in one runs ...
REQUEST_GAP_CYCLES = 400_000     # ... at least this long after the last window closed, ...
REGION_WINDOWS = 2               # ... but always the first times a region of a name begins
MIN_ACTIVE_CYCLES = 1_000        # a window that slept all but this keeps the last per-cycle rates

MODES = ("sampled", "exact")


class DataSampling:
    """Switches the sampled memory between timed (the cached RAM through its MMIO alias, the
    flash data pages MMIO) and plain at the cycles `next_switch` names or when a block asks
    (Machine._service_events calls on_time between blocks when `due`; the switches are no wake-up
    source, so they are not in Machine.timed)."""

    def __init__(self, machine, ports, pages, aliases):
        pages = machine.flash_data_pages.sample_plain(pages)  # (pages, aliases: FlashDataPages runs)
        self.machine, self.ports, self.pages, self.aliases = machine, ports, pages, aliases
        for run, _ in pages + aliases:
            run[N.RUN_SAMPLED] = 1
        self.state = machine.state
        self.untimed_cycles = 0
        self.windows = 1
        self.off_since = 0
        self.region_begins: dict[int, int] = {}  # per region name (its address): the times it began
        for port in machine.flash_ports:
            port.on_timing_change = self.timing_changed
        table = self._table()
        table[:, N.S_ADDRESS] = -1
        table[:, N.S_WAIT_RATE] = table[:, N.S_READS_RATE] = table[:, N.S_FETCH_RATE] = -1
        self._open(0, EXACT_CYCLES)

    @property
    def learning(self) -> bool:
        return self.state[N.SAMPLING] == N.LEARNING

    def due(self, now: int) -> bool:
        return now >= self.next_switch or self.state[N.WINDOW_REQUESTED] != 0

    def on_time(self, now: int) -> None:
        if self.learning:
            if now >= self.next_switch and not self._extend_start(now):
                self._close(now)
            return
        if now >= self.next_switch:  # a window of the period's end (from now: a sleep may have passed it)
            self._open(now, now + WINDOW_CYCLES)
        else:  # asked for as a region began or by a block not run in a window
            self._open(now, now + REQUESTED_CYCLES)
        self.untimed_cycles += now - self.off_since
        self.windows += 1
        self._switch(True)

    def _extend_start(self, now: int) -> bool:
        """Whether the exact start (the first window) goes on, and to when: while code runs for
        the first time (a block took an empty record in the last SETTLE_CYCLES), up to
        EXACT_CYCLES_MAX. A program of short tests, each new code, stays exact; one that
        settles into its loops is sampled from EXACT_CYCLES."""
        settled = int(self.state[N.NEW_RECORD_AT]) + SETTLE_CYCLES
        start = self.windows == 1  # (windows counts the windows opened, the start first)
        if not start or now >= EXACT_CYCLES_MAX or settled <= now:
            return False
        self.next_switch = min(settled, EXACT_CYCLES_MAX)
        return True

    def region_began(self, name_address: int) -> None:
        """A marked region begins (Machine.region_marker, inside the firmware's ITM write): a
        window opens between blocks (or the one open now lasts REQUESTED_CYCLES more), unless one
        closed too recently and regions of this name began REGION_WINDOWS times before."""
        began = self.region_begins.get(name_address, 0)
        self.region_begins[name_address] = began + 1
        self._ask(began < REGION_WINDOWS)

    def timing_changed(self) -> None:
        """A flash port's wait, cache or prefetch setting changed (FlashTiming.on_timing_change,
        inside the firmware's register write): a window, whenever the last one closed."""
        self._ask(True)

    def _ask(self, always: bool) -> None:
        """A window of REQUESTED_CYCLES from the next block (`always`, or unless one closed less
        than REQUEST_GAP_CYCLES ago); in a window, `always` makes it last that long from now."""
        st = self.state
        now = int(st[N.CYCLES])
        if self.learning:
            if always:
                self.next_switch = max(self.next_switch, now + REQUESTED_CYCLES)
        elif always or now >= st[N.REQUEST_AFTER]:
            st[N.WINDOW_REQUESTED] = 1
            st[N.REQUEST_AFTER] = N.NEVER
            self.machine.request_stop()

    def _open(self, now: int, end: int) -> None:
        st = self.state
        st[N.SAMPLING] = N.LEARNING
        st[N.WINDOW_REQUESTED] = 0
        st[N.LEARN_RECORD] = -1
        N.window_opened(st.buffer)
        table = self._table()
        table[:, N.S_WAIT] = table[:, N.S_READS] = table[:, N.S_FETCH] = table[:, N.S_RUNS] = 0
        self.window = (now, int(st[N.SAMPLED_WAIT]), int(st[N.SAMPLED_READS]), int(st[N.SAMPLED_FETCH]),
                       self.machine.sleep_cycles)
        self.next_switch = end

    def _close(self, now: int) -> None:
        st = self.state
        N.learn_block_end(st.buffer)  # (the block the window ended in: what it did so far)
        start, wait_before, reads_before, fetch_before, slept_before = self.window
        wait, reads = int(st[N.SAMPLED_WAIT]) - wait_before, int(st[N.SAMPLED_READS]) - reads_before
        fetch = int(st[N.SAMPLED_FETCH]) - fetch_before
        active = now - start - (self.machine.sleep_cycles - slept_before)
        if active >= MIN_ACTIVE_CYCLES:  # (a window the firmware slept through measured nothing)
            other = max(active - wait - fetch, 1)  # (per cycle of the blocks' static cost, which the rates multiply)
            st[N.WAIT_PER_CYCLE] = (wait << N.RATE_SHIFT) // other
            st[N.READS_PER_CYCLE] = (reads << N.RATE_SHIFT) // other
            st[N.FETCH_PER_CYCLE] = (fetch << N.RATE_SHIFT) // other
        self._average_blocks()
        st[N.SAMPLING] = N.ESTIMATING
        st[N.REQUEST_AFTER] = now + REQUEST_GAP_CYCLES
        self.off_since = now
        self._switch(False)
        # the next window of a period's end that starts after now
        self.next_switch = (now + WINDOW_CYCLES) // PERIOD_CYCLES * PERIOD_CYCLES + PERIOD_CYCLES - WINDOW_CYCLES

    def _table(self) -> np.ndarray:
        """The blocks' records (SAMPLED_TABLE), one row each: a view on the state's buffer."""
        buffer = self.state.buffer
        return buffer[N.SAMPLED_TABLE: N.SAMPLED_TABLE + N.SAMPLED_BLOCKS * N.SAMPLED_BLOCK].reshape(
            N.SAMPLED_BLOCKS, N.SAMPLED_BLOCK)

    def _average_blocks(self) -> None:
        """The wait and reads per run of each block that ran in the window closing; the others
        keep those of the last window they ran in."""
        table = self._table()
        ran = np.flatnonzero(table[:, N.S_RUNS] > 0)  # (a window runs few of the table's blocks)
        runs = table[ran, N.S_RUNS]
        table[ran, N.S_WAIT_RATE] = (table[ran, N.S_WAIT] << N.RATE_SHIFT) // runs
        table[ran, N.S_READS_RATE] = (table[ran, N.S_READS] << N.RATE_SHIFT) // runs
        table[ran, N.S_FETCH_RATE] = (table[ran, N.S_FETCH] << N.RATE_SHIFT) // runs

    def _switch(self, timed: bool) -> None:
        """Between runs. The data pages' reads and the cached RAM's loads and stores are routed
        by the TLB fill hook (flash_data_pages.py, cached_ram.py), which a TLB flush asks again."""
        if self.pages or self.aliases:
            self.machine.flash_data_pages.map_plain(not timed)
        if self.ports:
            for port in self.ports:
                port.ram_untimed = not timed
            self.machine.cached_ram.update()

    def finish(self, now: int) -> dict[str, int]:
        """run.json's `sampled_data` (empty while every access was timed)."""
        untimed = self.untimed_cycles + (0 if self.learning else now - self.off_since)
        if not untimed:
            return {}
        return {"untimed_cycles": untimed, "windows": self.windows,
                "estimated_wait_cycles": int(self.state[N.ESTIMATED_WAIT]),
                "estimated_fetch_wait_cycles": int(self.state[N.ESTIMATED_FETCH]),
                "estimated_flash_reads": int(self.state[N.ESTIMATED_READS])}
