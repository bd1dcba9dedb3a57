"""signals.vcd: the GPIO pins the firmware drives and the regions it marks, as waveforms for
GTKWave (or any VCD viewer).

`write` is a pure function of plain data, both in simulated seconds (which already account
for every clock change, see Machine.simulated_seconds):
  pins:    (seconds, pin name, level) with level 0, 1 or None (no longer driven);
  regions: (seconds, region name, True at a begin marker / False at an end marker).
Time is written in whole nanoseconds (timescale 1 ns): finer than a cycle at every clock
mcusim's boards run (216 MHz at most is 4.6 ns a cycle).
"""
from __future__ import annotations

import re
from pathlib import Path

TIMESCALE = "1 ns"
TICKS_PER_SECOND = 1_000_000_000
NO_REGION = "-"  # the `current` string outside every region


def region_events(recorder, read_string) -> list[tuple[float, str, bool]]:
    """The region markers of a RegionRecorder as (seconds, name, begin?), names read once."""
    names: dict[int, str] = {}
    events = []
    for begin, address, _cycle, seconds in recorder.events:
        if address not in names:
            names[address] = read_string(address) or f"0x{address:08x}"
        events.append((seconds, names[address], begin))
    return events


def ticks(seconds: float) -> int:
    """Simulated seconds as VCD time (nanoseconds)."""
    return round(seconds * TICKS_PER_SECOND)


def _identifier(name: str, taken: set[str]) -> str:
    """A VCD reference name: letters, digits and '_' only (VCD splits at whitespace, viewers
    read '.' as a scope separator), unique within its scope."""
    identifier = re.sub(r"[^A-Za-z0-9_]", "_", name) or "_"
    while identifier in taken:
        identifier += "_"
    taken.add(identifier)
    return identifier


def write(path: str | Path, pins, regions, end_seconds: float | None = None, comment: str = "mcusim",
          power=()) -> None:
    """Write the VCD: scope `mcusim.gpio` with one wire per pin ever driven (z while undriven),
    scope `mcusim.regions` with one wire per region name (1 while a run of it is open; nested and
    repeated runs of one name count up and down) and `current`, a string with the innermost
    open region. Changes at the same nanosecond merge into their final value, and a value equal
    to the one before is not written (a constant rail has one value, not one per bin). Unmatched end
    markers are ignored. `power`: (seconds, rail, watts) steps, as real variables in scope
    `mcusim.power` (the power trace's bins)."""
    pins, regions, power = list(pins), list(regions), list(power)
    events = sorted([(seconds, False, name, level) for seconds, name, level in pins]
                    + [(seconds, True, name, begin) for seconds, name, begin in regions]
                    + [(seconds, None, rail, watts) for seconds, rail, watts in power], key=lambda e: e[0])
    from vcd import VCDWriter  # (here: pyvcd is 8 ms of every start, and only --vcd writes)

    with open(path, "w") as stream, VCDWriter(stream, timescale=TIMESCALE, comment=comment) as writer:
        taken: set[str] = set()
        pin_vars = {name: writer.register_var("mcusim.gpio", _identifier(name, taken), "wire", size=1, init="z")
                    for name in sorted({name for _, name, _ in pins})}
        taken = {"current"}
        region_vars = {name: writer.register_var("mcusim.regions", _identifier(name, taken), "wire", size=1, init=0)
                       for name in sorted({name for _, name, begin in regions if begin})}
        current = writer.register_var("mcusim.regions", "current", "string", init=NO_REGION) if regions else None
        power_vars = {rail: writer.register_var("mcusim.power", _identifier(f"{rail}_w", set()), "real", init=0.0)
                      for rail in dict.fromkeys(rail for _, rail, _ in power)}
        depth = dict.fromkeys(region_vars, 0)
        open_stack: list[str] = []
        pending: dict = {}  # var -> value at time `now`, written when time moves on
        written = {var: "z" for var in pin_vars.values()} | dict.fromkeys(region_vars.values(), 0) | \
            dict.fromkeys(power_vars.values(), 0.0) | ({current: NO_REGION} if current is not None else {})

        def flush(at: int) -> None:
            """Write what changed at `at`: a value equal to the one written before is no change."""
            for var, new in pending.items():
                if written.get(var) != new:
                    writer.change(var, at, new)
                    written[var] = new

        now = 0
        for seconds, is_region, name, value in events:
            time = max(ticks(seconds), now)
            if time != now:
                flush(now)
                pending, now = {}, time
            if is_region is None:
                pending[power_vars[name]] = float(value)
                continue
            if not is_region:
                pending[pin_vars[name]] = "z" if value is None else int(value)
                continue
            if name not in region_vars:
                continue  # an end marker of a region that never began
            if value:
                depth[name] += 1
                open_stack.append(name)
            elif depth[name]:
                depth[name] -= 1
                del open_stack[len(open_stack) - 1 - open_stack[::-1].index(name)]
            pending[region_vars[name]] = int(depth[name] > 0)
            pending[current] = _identifier(open_stack[-1], set()) if open_stack else NO_REGION
        flush(now)
        writer.close(max(now, ticks(end_seconds)) if end_seconds is not None else now)
