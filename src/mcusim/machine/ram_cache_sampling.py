"""Sampled timing of RAM behind a data cache (mcu-d's SRAM1 and SRAM2 behind the Cortex-M7 L1
data cache): the cached-RAM hook is held in windows, and between windows each block that runs
is charged the wait the last window measured per core cycle.

Why: while any memory hook exists, Unicorn sends every load and store of the program to its
slow path, and a hooked access also pays the call and the PC's re-derivation. On mcu-d the
stack sits in cached SRAM, so that hook cost up to 44 % of a run's host time (docs/performance.md,
"Fifth pass"). Switching it only needs the translated code flushed (Machine._apply_hook_changes).

The schedule, in core cycles (deterministic: the same firmware gives the same cycles):
the first EXACT_CYCLES are timed access by access (start-up, and every short program, whole);
from then on, the last WINDOW_CYCLES of every PERIOD_CYCLES are. A window's rate is its RAM
wait over its other cycles. The cache keeps the state it had when a window closed, so the next
window starts with what the cache held then (the error this leaves is measured in
docs/timing.md, "Sampled data cache"). `--data-cache exact` times every access instead.
"""
from __future__ import annotations

from . import native as N

EXACT_CYCLES = 2_000_000    # timed whole: start-up and short programs are exact
PERIOD_CYCLES = 16_000_000  # then one window per period ...
WINDOW_CYCLES = 1_000_000   # ... of this many cycles (1/16 of the time), at the period's end

MODES = ("sampled", "exact")


class RamCacheSampling:
    """Switches the cached-RAM hook of the flash ports with RAM behind their data cache at the
    cycles `next_switch` names (Machine._service_events calls on_time between blocks; it is no
    wake-up source, so it is not in Machine.timed), and sets the rate the block hook charges
    while the hook is off."""

    def __init__(self, machine, ports):
        self.machine, self.ports = machine, ports
        self.state = machine.state
        self.timed = True                    # the hook is held now
        self.next_switch = max(EXACT_CYCLES - WINDOW_CYCLES, 0)  # (the exact start's last window: the first rate)
        self.measuring = False
        self.window_cycle = self.window_wait = 0
        self.untimed_cycles = 0              # cycles run with the hook off
        self.off_since = 0

    def on_time(self, now: int) -> None:
        st = self.state
        if not self.measuring:  # a window opens
            if not self.timed:
                self.untimed_cycles += now - self.off_since
                st[N.RAM_WAIT_RATE] = 0
                self._switch(True)
            self.measuring = True
            self.window_cycle, self.window_wait = now, int(st[N.RAM_WAIT_TIMED])
            self.next_switch = now + WINDOW_CYCLES
            return
        wait = int(st[N.RAM_WAIT_TIMED]) - self.window_wait  # the window closes: its rate, then the hook off
        other = max(now - self.window_cycle - wait, 1)
        st[N.RAM_WAIT_RATE] = (wait << N.RATE_SHIFT) // other
        self.measuring = False
        self.off_since = now
        self._switch(False)
        self.next_switch = now + PERIOD_CYCLES - WINDOW_CYCLES

    def _switch(self, timed: bool) -> None:
        self.timed = timed
        for port in self.ports:
            port.ram_hook_off = not timed
        self.machine._memory_hooks_changed()

    def finish(self, now: int) -> dict[str, int]:
        """run.json's dcache entries for the sampling (none while every access was timed)."""
        untimed = self.untimed_cycles + (0 if self.timed else now - self.off_since)
        if not untimed:
            return {}
        return {"untimed_cycles": untimed, "estimated_wait_cycles": int(self.state[N.RAM_WAIT_ESTIMATED])}
