"""What a finished run measured, collected from its Machine: the totals, the profiles, the
regions, the captures (PC samples, SWO, branch trace, signals). Each function reads the machine
after Machine.run(); some warn (on the machine) about what a capture had to leave out, so
api.Simulator.run calls them before it collects the warnings."""
from __future__ import annotations

import numpy as np
from unicorn import arm_const as A

from ..analysis import swo as swo_stream
from ..analysis.lines import line_rows
from ..analysis.profile import EXTRA_ROWS, call_spans
from ..analysis import roofline
from ..analysis.regions import (heap_peak_by_region, lowest_sp_by_region, matched, read_info, summarize, timeline,
                                traffic_by_region)
from . import native as N


def finish_trace(machine) -> None:
    """Close the branch trace window where the run ended."""
    if machine.trace is not None and machine.trace.recording:
        pc = machine.uc.reg_read(A.UC_ARM_REG_PC)
        if machine.exit is not None and machine.exit.reason == "semihosting-exit":
            pc += 2  # the exit call's BKPT ran (and counts)
        machine.trace.record(N.TRACE_END, pc, pc)


def counter_value(machine, counter: N.Counter) -> int:
    """A counter's unwrapped total at the end of the run (the two Python keeps: exception, sleep)."""
    if counter.slot is None:
        return {"exception": machine.exception_cycles, "sleep": machine.sleep_cycles}[counter.name]
    return int(machine.state[counter.slot])


def stalls(machine) -> dict[str, int]:
    """Cycles lost to each kind of stall, from the counters run.json reports under "stalls"
    (native/counters.py); the rest of `cycles` is issue time (see docs/timing.md)."""
    found: dict[str, int] = {}
    for counter in N.COUNTERS:
        if counter.result and counter.result.startswith("stalls."):
            key = counter.result[len("stalls."):]
            found[key] = found.get(key, 0) + counter_value(machine, counter)
    return found


def pipeline_statistics(machine) -> dict:
    """Dual issue, branch prediction and cache counts, where the models have them."""
    dual_issue = machine.board.core.timing_model == "cortex-m7"
    found = {"dual_issued": machine.state[N.FOLD_TOTAL] if dual_issue else 0,
             **{name: counter_value(machine, N.BY_NAME[name]) for name in ("branches_predicted", "branch_mispredicts")},
             "icache": {}, "dcache": {}}
    for port in machine.flash_ports:  # every port's caches, summed
        totals = port.totals()
        for side, spec in (("icache", port.spec.icache), ("dcache", port.spec.dcache)):
            if spec is not None:
                for key, value in totals.items():
                    if key.startswith(side + "_"):
                        name = key[len(side) + 1:]
                        found[side][name] = found[side].get(name, 0) + value
    sampling = machine.data_sampling
    found["sampled_data"] = sampling.finish(machine.cycles) if sampling is not None else {}
    return found


DWT_ORDER = ("CYCCNT", "CPICNT", "EXCCNT", "SLEEPCNT", "LSUCNT", "FOLDCNT")  # run.json's order


def dwt_totals(machine) -> dict[str, int]:
    """The DWT counters' unwrapped totals at the end of the run (native/counters.py)."""
    return {name.lower(): counter_value(machine, N.BY_DWT[name]) for name in DWT_ORDER}


def function_profile(machine) -> list[dict]:
    """The exact profile's rows (analysis/profile.py), or [] when it was not asked for."""
    return machine.profile.rows(machine.cycles) if machine.profile is not None else []


def line_profile(machine, function_rows: list[dict]) -> list[dict]:
    """The line profile's rows (analysis/lines.py), or [] without profile or DWARF lines;
    `function_rows`: function_profile()'s, for the rows of time not spent in code."""
    if machine.profile is None or not machine.profile.line_ranges:
        return []
    function_of = lambda address: machine.profile.name(  # noqa: E731
        int(N._function_of(machine.state.buffer, np.int64(address))))
    extra = [row for row in function_rows if row["function"] in EXTRA_ROWS.values()
             and row["function"] != EXTRA_ROWS[N.PROFILE_UNKNOWN]]
    rows = line_rows(machine.profile.instruction_counts(), machine.image.line_table(), function_of, extra,
                     machine.cycles)
    missing = machine.cycles - sum(row["cycles"] for row in rows)
    if missing:  # code run outside the ELF's segments (e.g. through an alias such as the F7's ITCM)
        rows.append({"file": "", "line": 0, "function": "(code outside the image's line ranges)", "cycles": missing,
                     "instructions": machine.instructions - sum(row["instructions"] for row in rows),
                     "share": round(missing / machine.cycles, 6) if machine.cycles else 0.0})
        rows.sort(key=lambda r: -r["cycles"])
    return rows


def pc_samples(machine):
    """(cycles, pcs) of the PC samples, or None when sampling was not asked for."""
    if machine.sampler is None:
        return None
    machine.sampler.finish()
    if machine.sampler.dropped:
        machine.warn_once("samples-dropped", f"{machine.sampler.dropped:,} PC samples beyond the first "
                                             f"{machine.state[N.SAMPLE_CAPACITY]:,} were not kept")
    return machine.sampler.samples()


def swo_bytes(machine) -> bytes | None:
    """The SWO packet stream (analysis/swo.py) of the run, or None when it was not asked for.

    PC samples of sleep become the DWT sleep packet, those of exception entry and return
    0xFFFFFFFF (see swo.sample_events). DWT event counter packets: see peripherals/core/dwt.py."""
    if machine.swo is None:
        return None
    rec = machine.swo
    machine.dwt.finish_events()
    counters, counters_lost = rec.counters.events()
    overflows = [] if counters_lost is None else [counters_lost]
    if counters_lost is not None:
        machine.warn_once("swo-counters-dropped", f"DWT event counter packets from cycle {counters_lost:,} on "
                                                  f"were left out of the SWO stream (beyond the first "
                                                  f"{rec.counters.capacity:,}; an overflow packet marks where)")
    if rec.dropped:
        machine.warn_once("swo-dropped", f"{rec.dropped:,} ITM writes and exception events beyond the first "
                                         f"{rec.capacity:,} were left out of the SWO stream (an overflow packet "
                                         f"marks where)")
        overflows.append(rec.first_dropped_cycle)
    samples = pc_samples(machine)
    if samples is not None and machine.sampler.dropped and len(samples[0]):
        overflows.append(int(samples[0][-1]) + machine.sampler.period)
    return swo_stream.encode(rec.itm_events(), rec.exception_events(),
                             () if samples is None else swo_stream.sample_events(*samples),
                             sorted(overflows), counters=counters)


def branch_trace_records(machine):
    """The branch trace (analysis/branch_trace.RECORD array), or None when not asked for."""
    if machine.trace is None:
        return None
    if machine.trace.dropped:
        machine.warn_once("trace-dropped", f"{machine.trace.dropped:,} branch trace records beyond the first "
                                           f"{machine.trace.limit:,} were not kept (--trace-limit)")
    if machine.state[N.TRACE_STATE] == 0:
        machine.warn_once("trace-empty", "the branch trace window never opened (--trace-from / --trace-cycles)")
    return machine.trace.records()


def region_statistics(machine) -> list[dict]:
    """Per region name (see analysis/regions.py), with the image's MACs and bytes where it says."""
    if not machine.regions.events:
        return []
    read_word = lambda address: int.from_bytes(machine.read_memory(address, 4), "little")  # noqa: E731
    info = read_info(read_word, c_strings(machine), machine.image.symbol("mcusim_region_info"))
    if machine.regions.dropped:
        machine.warn_once("regions-dropped", f"{machine.regions.dropped} region markers beyond the first "
                                             f"{machine.regions.limit} were not kept")
    rows = summarize(machine.regions, c_strings(machine), info, machine.cycles)
    lows = lowest_sp_by_region(machine.regions, c_strings(machine))
    top = machine.stack_top()
    heaps = heap_peak_by_region(machine.regions, c_strings(machine))
    moved = traffic_by_region(machine.regions, c_strings(machine), machine.traffic_banks)
    for row in rows:
        if row["name"] in lows:
            row["stack_peak_bytes"] = top - lows[row["name"]]
        if row["name"] in heaps:
            row["heap_peak_bytes"] = heaps[row["name"]]
        if row["name"] in moved:
            row["bytes_by_bank"] = moved[row["name"]]
            total = sum(moved[row["name"]].values())
            row["intensity"] = round(row["macs"] / total, 4) if row["macs"] and total else None
    if machine.regions.unmatched:
        machine.warn_once("regions-unmatched", f"{machine.regions.unmatched} region markers (ITM ports 30/31) had no "
                                               "matching begin or end and were left out of the regions")
    return rows


def region_runs(machine) -> list[tuple]:
    """Each completed region run: (name, start cycle, end cycle, start s, end s)."""
    return list(matched(machine.regions, c_strings(machine)))


def call_events(machine) -> list[tuple[str, int, int, str]] | None:
    """The calls in time order (analysis/profile.FunctionProfile.call_events), or None without
    the profile's call log; warns when the log filled up."""
    if machine.profile is None or not machine.profile.log:
        return None
    events, dropped = machine.profile.call_events(machine.cycles)
    if dropped:
        machine.warn_once("call-log-dropped", f"the call log keeps the first {machine.profile.log_capacity:,} calls "
                                              f"and returns: the functions in timeline.json and speedscope.json's "
                                              f"call timeline "
                                              f"end at cycle {events[-1][1]:,} ({dropped:,} more were not kept)")
    return events


def function_locations(image) -> dict[str, tuple[str, int]]:
    """Each function's source file and line (its first instruction's DWARF row), where known."""
    import bisect

    table = image.line_table()
    addresses = [row[0] for row in table]
    found = {}
    for address, _, name in image.functions:
        row = bisect.bisect_right(addresses, address & ~1) - 1
        if row >= 0 and table[row][2]:
            found[name] = (table[row][1], table[row][2])
    return found


def region_timeline(machine, calls=None) -> dict:
    """The Chrome/Perfetto trace (analysis/regions.timeline): the regions, the exception handlers,
    the ITM writes and, given call_events(), the function calls."""
    from .exceptions import exception_name

    if machine.timeline_events_dropped:
        machine.warn_once("timeline-dropped", f"{machine.timeline_events_dropped:,} exception and ITM events "
                                              f"beyond the first {machine.regions.limit:,} are not in timeline.json")
    seconds = machine.simulated_seconds_at
    spans = [(name, start, end, seconds(start), seconds(end)) for name, _, start, end in call_spans(calls or [])]
    return timeline(machine.regions, c_strings(machine), machine.board.name, machine.timeline_events,
                    exception_name, spans)


def signal_events(machine) -> dict:
    """The pin changes (named as the board labels them) and region markers, in simulated
    seconds: the plain data analysis/vcd.write takes."""
    from ..analysis.vcd import region_events

    if machine.pin_events_dropped:
        machine.warn_once("pins-dropped", f"{machine.pin_events_dropped:,} GPIO pin changes beyond the first "
                                          f"{machine.pin_event_limit:,} were not kept for signals.vcd")
    labels = {pin: label for label, pin in machine.board.pins.items()}
    return {"pins": [(seconds, labels.get(pin, pin), level) for _, seconds, pin, level in machine.pin_events],
            "regions": region_events(machine.regions, c_strings(machine))}


def c_strings(machine):
    """A reader of the C strings in the machine's memory (region names): read_c_string."""
    return lambda address, limit=128: read_c_string(machine, address, limit)


def read_c_string(machine, address: int, limit: int = 128) -> str | None:
    """The NUL-terminated string at `address` (at most `limit` bytes), or None where unreadable or empty."""
    try:
        raw = machine.read_memory(address, limit)
    except Exception:
        return None
    end = raw.find(b"\0")
    return raw[: end if end >= 0 else limit].decode(errors="replace") or None


def memory_traffic(machine) -> dict | None:
    """The bytes the run's loads and stores moved per memory bank (--memory-traffic), else None."""
    counts = machine.traffic_now()
    if counts is None:
        return None
    return {bank: {"read_bytes": int(read), "written_bytes": int(written)}
            for bank, (read, written) in zip(machine.traffic_banks, counts)}


def roofline_ceilings(machine) -> dict | None:
    """The roofline's ceilings (analysis/roofline.py) for the counted banks, from the core's peaks
    and each bank's flash port as the firmware left it (wait states, data cache); None unless
    the run counts memory traffic or when the core has no [roofline] table."""
    core = machine.board.core.roofline
    if not machine.traffic_banks or not core:
        return None
    regions = {region.name: region for region in machine.board.memory}
    bandwidth = core["load_store_bytes_per_cycle"]
    banks = []
    for name in machine.traffic_banks:
        base = regions[name].base
        line, wait, cached = None, 0, False
        for port in machine.flash_ports:  # (the port a bank's data goes through: its line, waits and cache)
            if any(start == base for start, _end in port.ranges):
                line, wait, cached = port.spec.line_bytes, int(port[N.FL_DATA_WAIT]), bool(port[N.FL_DC_ON])
            elif any(start == base for start, _end in port.ram_ranges):
                line, wait, cached = port.spec.line_bytes, int(port[N.FL_RAM_WAIT]), bool(port[N.FL_DC_ON])
        if not wait and not cached:
            line = None  # a zero-wait bank: the core's own bandwidth
        banks.append(roofline.bank_ceiling(name, regions[name].kind, bandwidth, line, wait, cached))
    return roofline.ceilings(core, banks)
