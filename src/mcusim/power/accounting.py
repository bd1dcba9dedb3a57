"""Energy accounting for a run: the native hook sums each rail's dynamic energy per event
(instruction classes, data words, flash line reads) and snapshots it now and then; Python
keeps the operating points (clock, voltage range) and the power states (run, sleep, stop),
and integrates each rail's static power over them. Totals are exact sums; the power trace
interpolates the dynamic energy between snapshots."""
from __future__ import annotations

import bisect
from dataclasses import dataclass

import numpy as np

from ..machine import native as N
from .model import CLASS_EVENTS, PowerModel

FEMTO = 1e-15
SNAPSHOTS = 1 << 16          # snapshot table (2 MB); when full it is thinned out, never lost
DEFAULT_BIN_US = 100.0       # power trace resolution: small enough to show the layers of a model
MIN_BIN_US, MAX_BIN_US = 1e-3, 1e12  # a nanosecond (shorter than any clock cycle here) to 11 days


@dataclass
class Segment:
    """A stretch of simulated time with one operating point and one power state."""
    start_cycle: int
    end_cycle: int
    start_s: float
    end_s: float
    clock_hz: int
    voltage_range: str
    state: str


class VoltageRangeError(ValueError):
    """A voltage range the board's power model does not have."""


class PowerMeter:
    def __init__(self, state, model: PowerModel, clock_hz: int, voltage_range: str | None = None,
                 bin_us: float = DEFAULT_BIN_US, pinned_range: bool = False):
        if not MIN_BIN_US <= bin_us <= MAX_BIN_US:
            raise ValueError(f"the power bin width ({bin_us!r} us) must be from {MIN_BIN_US:g} to {MAX_BIN_US:g} us")
        if voltage_range is not None and voltage_range not in model.voltage_ranges:
            raise VoltageRangeError(f"voltage range {voltage_range!r} is not one of {model.board}'s: "
                             f"{', '.join(model.voltage_ranges)}")
        self.state = state
        self.model = model
        self.bin_us = bin_us
        self.pinned_range = pinned_range and voltage_range is not None
        self.voltage_range = voltage_range or model.default_voltage_range
        self.clock_hz = clock_hz
        self.table = state.reserve(N.SNAPSHOT * SNAPSHOTS)
        state[N.P_SNAPSHOT_TABLE] = self.table
        state[N.P_SNAPSHOT_CAPACITY] = SNAPSHOTS
        state[N.P_ENABLED] = 1
        self.points: list[tuple[int, float, int, str]] = []  # (cycle, seconds, clock, range) from then on
        self.sleeps: list[tuple[int, int, float, float, str]] = []  # (start, end cycle, start, end s, state)
        self._set_coefficients()
        # (None: the model's default, or the range the clock needs where the voltage follows it)
        self.operating_point(0, 0.0, clock_hz, voltage_range)

    def _set_coefficients(self) -> None:
        """Per-event energies at the present core voltage, in femtojoules, for the hook."""
        scale = self.model.scale(self.voltage_range) ** 2
        st = self.state
        for k, event in enumerate(CLASS_EVENTS):
            st[N.P_COEFFICIENTS + k] = round(self.model.event_energy(event) * scale / FEMTO)
        st[N.P_COEF_WORD] = round(self.model.event_energy("sram_access") * scale / FEMTO)
        st[N.P_COEF_FLASH] = round(self.model.event_energy("flash_read") * scale / FEMTO)
        st.clear_block_cache()  # block energies were summed with the old coefficients

    def operating_point(self, cycle: int, seconds: float, clock_hz: int, voltage_range: str | None = None) -> None:
        """The clock or the voltage range changes at `cycle` (DVFS)."""
        if voltage_range is None and self.model.voltage_follows_clock and not self.pinned_range:
            voltage_range = self.model.range_for_clock(clock_hz)  # (e.g. Apollo3 burst mode's higher supply)
        if voltage_range is not None and not self.pinned_range and voltage_range != self.voltage_range:
            self.voltage_range = voltage_range
            self._set_coefficients()
        self.clock_hz = clock_hz
        thinned = int(self.state[N.P_SNAPSHOT_DROPPED])  # (each thinning doubled the period)
        self.state[N.P_SNAPSHOT_PERIOD] = max(1, round(self.bin_us * 1e-6 * clock_hz / 4)) << thinned
        self.points.append((cycle, seconds, clock_hz, self.voltage_range))

    def asleep(self, start_cycle: int, end_cycle: int, start_s: float, end_s: float, deep: bool) -> None:
        if end_cycle > start_cycle:
            self.sleeps.append((start_cycle, end_cycle, start_s, end_s, "stop" if deep else "sleep"))

    def snapshot(self) -> None:
        """A snapshot now (Python moved time on, or the run ended)."""
        N.power_snapshot(self.state.buffer)

    # results -------------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """The run's event counts (the calibration's features)."""
        st = self.state
        N.power_unpack(st.buffer)
        counts = {event: int(st[N.P_COUNTS + k]) for k, event in enumerate(CLASS_EVENTS)}
        counts["sram_access"] = int(st[N.P_WORDS])
        counts["flash_read"] = int(st[N.P_FLASH_READS])
        return counts

    def segments(self, end_cycle: int, end_s: float) -> list[Segment]:
        """The run cut at every operating point change and every sleep."""
        cuts = sorted({0, end_cycle, *[p[0] for p in self.points if p[0] <= end_cycle],
                       *[c for s in self.sleeps for c in s[:2] if c <= end_cycle]})
        seconds = self.seconds_of(np.array(cuts), end_cycle, end_s)
        point_cycles = [p[0] for p in self.points]
        sleep_starts = [s[0] for s in self.sleeps]
        out = []
        for (a, b), (sa, sb) in zip(zip(cuts, cuts[1:]), zip(seconds, seconds[1:])):
            point = self.points[bisect.bisect_right(point_cycles, a) - 1]  # the latest one in force
            i = bisect.bisect_right(sleep_starts, a) - 1
            state = self.sleeps[i][4] if i >= 0 and a < self.sleeps[i][1] else "run"
            out.append(Segment(a, b, float(sa), float(sb), point[2], point[3], state))
        return out

    def seconds_of(self, cycles: np.ndarray, end_cycle: int, end_s: float) -> np.ndarray:
        """Simulated seconds at each cycle, through the clock changes."""
        marks = [(p[0], p[1]) for p in self.points] + [(end_cycle, end_s)]
        xs, ys = zip(*sorted(set(marks)))
        return np.interp(cycles, xs, ys)

    def dynamic_snapshots(self, end_cycle: int) -> np.ndarray:
        """(cycle, core, sram, flash femtojoules so far) rows, from cycle 0 to the end."""
        self.snapshot()
        count = int(self.state[N.P_SNAPSHOT_COUNT])
        rows = self.state.buffer[self.table: self.table + N.SNAPSHOT * count].reshape(count, N.SNAPSHOT)
        start = np.zeros((1, N.SNAPSHOT), np.int64)
        return np.vstack([start, rows[rows[:, 0] <= end_cycle]])
