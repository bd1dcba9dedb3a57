"""The public Python API: `Simulator` for control, `run()` for the one-call case."""
from __future__ import annotations

import dataclasses
import json
import math
import signal
from dataclasses import dataclass, field
from pathlib import Path

from . import __version__
from .config import BoardSpec, load_board
from .elf import ElfImage
from .analysis.profile import write_csv as write_profile_csv
from .analysis.regions import write_csv
from .analysis.sampling import function_names
from .analysis.sampling import shares as sample_shares
from .analysis.sampling import write_csv as write_samples_csv
from .analysis.vcd import write as write_vcd
from .analysis import swo as swo_stream
from .analysis import roofline
from .analysis.branch_trace import TraceWindow
from .analysis.branch_trace import write as write_branch_trace
from .analysis.flamegraph import write_folded, write_speedscope
from .analysis.lines import write_csv as write_lines_csv
from .analysis.memory import memory_use
from .power.accounting import DEFAULT_BIN_US
from .power.energy import RunEnergy, annotate_functions, annotate_regions
from .power.energy import summary as energy_summary
from .power.energy import MAX_COUNTER_BINS, MAX_TRACE_BINS, trace_bin_us, with_power_counters
from .power.energy import write_trace as write_power_trace
from .machine.flash_timing import parse_flash_latency
from .machine import results
from .machine.machine import DEFAULT_MAX_CYCLES, NO_SP, Machine, output_text, port_record
from .run_control import RunControl, Stop  # noqa: F401  (Stop: what run_until and step return)
from .schemas import SCHEMA_VERSION
from .units import mhz


# Every file a bundle may hold besides run.json: the run's artifacts (RunResult._write_artifacts),
# and report.html and power.png that `mcusim report --html` and `mcusim power-plot` add to it.
BUNDLE_FILES = ("regions.csv", "functions.csv", "lines.csv", "timeline.json", "timeline.pftrace", "pc_samples.csv",
                "trace.swo",
                "signals.vcd", "branches.bin", "power.csv", "stacks.folded", "speedscope.json", "report.html",
                "power.png")


@dataclass
class RunResult:
    """What a run produced; `to_dict()` is the run.json document."""

    board: str
    board_title: str
    core: str
    clock_hz: int
    reset_clock_hz: int
    nominal_clock_hz: int
    clock_pinned: bool
    firmware_path: str
    firmware_sha256: str
    exit_reason: str
    exit_code: int
    exit_detail: str
    instructions: int
    cycles: int
    simulated_seconds: float
    host_seconds: float
    dwt: dict
    stdout: str
    boot_note: str | None = None
    fault_report: str | None = None
    clock_changes: list = field(default_factory=list)
    warnings: list = field(default_factory=list)
    unmodelled_registers: list = field(default_factory=list)
    uart: dict = field(default_factory=dict)
    itm: dict = field(default_factory=dict)  # per ITM port: its bytes, losslessly (machine.port_record)
    output_dropped_bytes: dict = field(default_factory=dict)  # per stream, the bytes stdout/uart/itm left out
    exceptions_taken: int = 0
    stalls: dict = field(default_factory=dict)
    dual_issued: int = 0           # instructions issued alongside an older one (dual-issue cores)
    branches_predicted: int = 0    # branches the predictor resolved (cores with one) ...
    branch_mispredicts: int = 0    # ... and the ones it got wrong
    icache: dict = field(default_factory=dict)  # {"hits", "misses"} where a cache model runs
    dcache: dict = field(default_factory=dict)  # and "writebacks" (dirty lines written back)
    sampled_data: dict = field(default_factory=dict)  # sampled data timing: what was estimated (machine/data_sampling.py)
    resident_pages: dict = field(default_factory=dict)  # always empty now (run.json keeps the 1.3 key: docs/bundle.md)
    regions: list = field(default_factory=list)  # per region name (ITM markers): analysis/regions.py
    functions: list = field(default_factory=list)  # the exact profile (profile=True): analysis/profile.py
    lines: list = field(default_factory=list)      # ... per source line, with DWARF: analysis/lines.py
    pc_sample_cycles: int | None = None            # PC sampling period, when asked for ...
    pc_sample_cycles_at: object = None             # ... the samples' cycles and PCs (numpy arrays) ...
    pc_sample_pcs: object = None
    pc_sample_functions: list = field(default_factory=list)  # ... and the function of each
    timeline: dict | None = None  # the regions as a Chrome/Perfetto trace (timeline=True)
    swo: bytes | None = None  # the ITM/DWT packet stream a SWO probe would capture (swo=True): analysis/swo.py
    signals: dict | None = None  # GPIO pin changes and region markers in seconds (vcd=True): analysis/vcd.py
    branch_trace: object = None   # the branch trace's records (branch_trace=...): analysis/branch_trace.py ...
    branch_trace_dropped: int = 0  # ... and how many did not fit
    stacks: list | None = None    # call paths and their cycles (flamegraph=True): analysis/flamegraph.py ...
    calls: list | None = None     # ... the calls in time order (FunctionProfile.call_events) ...
    call_locations: dict = field(default_factory=dict)  # ... and each function's (file, line)
    capture: dict = field(default_factory=dict)  # what was asked for (run.json settings)
    energy: dict | None = None   # energy_j, energy_by_rail_j, average/peak power (power/energy.py summary)
    power_trace: tuple | None = None  # (bin start times, {rail: watts}) when asked for
    max_cycles: int = DEFAULT_MAX_CYCLES
    semihosting_root: str | None = None
    semihosting_system: bool = False
    model: dict | None = None  # `mcusim model run`: the model, its footprint and its validation
    memory: dict | None = None  # footprint per bank and stack/heap peaks: analysis/memory.py
    roofline: dict | None = None  # bytes per bank, ceilings and regions placed (memory_traffic=True): analysis/roofline.py

    @property
    def cpi(self) -> float:
        """Cycles per instruction."""
        return self.cycles / self.instructions if self.instructions else 0.0

    @property
    def ipc(self) -> float:
        """Instructions per cycle."""
        return self.instructions / self.cycles if self.cycles else 0.0

    @property
    def dual_issue_fraction(self) -> float:
        """Share of the instructions that issued in the same cycle as the one before."""
        return self.dual_issued / self.instructions if self.instructions else 0.0

    @property
    def issue_cycles(self) -> int:
        """Cycles not lost to a stall: cycles = issue_cycles + sum(stalls)."""
        return self.cycles - sum(self.stalls.values())

    @property
    def mips(self) -> float:
        return self.instructions / self.host_seconds / 1e6 if self.host_seconds > 0 else 0.0

    def to_dict(self) -> dict:
        return {
            "schema_version": SCHEMA_VERSION,
            "mcusim_version": __version__,
            "board": self.board,
            "board_title": self.board_title,
            "core": self.core,
            "clock_hz": self.clock_hz,
            "reset_clock_hz": self.reset_clock_hz,
            "nominal_clock_hz": self.nominal_clock_hz,
            "clock_pinned": self.clock_pinned,
            "clock_changes": self.clock_changes,
            "firmware": {"path": self.firmware_path, "sha256": self.firmware_sha256},
            "settings": {"max_cycles": self.max_cycles, "clock_hz": self.clock_hz if self.clock_pinned else None,
                         "semihosting_root": self.semihosting_root,
                         "semihosting_system": self.semihosting_system, **self.capture},
            "exit": {"reason": self.exit_reason, "code": self.exit_code, "detail": self.exit_detail},
            "boot_note": self.boot_note,
            "instructions": self.instructions,
            "cycles": self.cycles,
            "simulated_seconds": self.simulated_seconds,
            "host_seconds": self.host_seconds,
            "mips": self.mips,
            "cpi": self.cpi,
            "ipc": self.ipc,
            "dual_issue_fraction": self.dual_issue_fraction,
            "branch_mispredicts": self.branch_mispredicts,
            "branches_predicted": self.branches_predicted,
            "icache": self.icache,
            "dcache": self.dcache,
            "sampled_data": self.sampled_data,
            "resident_pages": self.resident_pages,
            "issue_cycles": self.issue_cycles,
            "stalls": self.stalls,
            "regions": self.regions,
            "functions": self.functions,
            "lines": self.lines[:50],
            "pc_samples": None if self.pc_sample_cycles is None else {
                "period_cycles": self.pc_sample_cycles, "count": len(self.pc_sample_functions),
                "shares": dict(list(sample_shares(self.pc_sample_functions).items())[:20])},
            "energy_j": self.energy["energy_j"] if self.energy else None,
            "energy_by_rail_j": self.energy["energy_by_rail_j"] if self.energy else None,
            "average_power_w": self.energy["average_power_w"] if self.energy else None,
            "peak_power_w": self.energy["peak_power_w"] if self.energy else None,
            "power": self.energy["power"] if self.energy else None,
            "exceptions_taken": self.exceptions_taken,
            "dwt": self.dwt,
            "stdout": self.stdout,
            "uart": self.uart,
            "itm": self.itm,
            "output_dropped_bytes": self.output_dropped_bytes,
            "fault": self.fault_report,
            "warnings": self.warnings,
            "unmodelled_registers": self.unmodelled_registers,
            "memory": self.memory,
            "roofline": self.roofline,
            "model": self.model,
        }

    def write_bundle(self, directory: str | Path, on_removed=None) -> Path:
        """Write the bundle into DIR (created): each artifact the run captured, then DIR/run.json
        listing them under `artifacts`; returns the run.json path. The artifacts an earlier run
        left in DIR that this run did not write are removed (other files stay), so DIR holds one
        run; `on_removed(names)` hears which."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        artifacts = self._write_artifacts(directory)
        stale = [name for name in BUNDLE_FILES if name not in artifacts and (directory / name).is_file()]
        for name in stale:
            (directory / name).unlink()
        if stale and on_removed:
            on_removed(stale)
        document = self.to_dict()
        document["artifacts"] = artifacts
        path = directory / "run.json"
        path.write_text(json.dumps(_finite(document), indent=2, allow_nan=False) + "\n")
        return path

    def _write_artifacts(self, directory: Path) -> list[str]:
        """One writer per artifact, each only when its capture ran; returns the file names."""
        written = []

        def emit(name: str, write) -> None:
            assert name in BUNDLE_FILES, name  # (a new artifact goes into BUNDLE_FILES too)
            write(directory / name)
            written.append(name)

        if self.regions:
            emit("regions.csv", lambda path: write_csv(self.regions, path))
        if self.functions:
            emit("functions.csv", lambda path: write_profile_csv(self.functions, path))
        if self.lines:
            emit("lines.csv", lambda path: write_lines_csv(self.lines, path))
        if self.timeline is not None:
            emit("timeline.json", lambda path: path.write_text(json.dumps(_finite(self.timeline), allow_nan=False)))
            if self.capture.get("timeline") == "proto":
                from .analysis import perfetto_proto

                emit("timeline.pftrace", lambda path: perfetto_proto.write(_finite(self.timeline), path))
        if self.pc_sample_cycles is not None:
            emit("pc_samples.csv", lambda path: write_samples_csv(
                self.pc_sample_cycles_at, self.pc_sample_pcs, self.pc_sample_functions, path))
        if self.swo is not None:
            framed = self.capture.get("swo_format") == "tpiu"
            emit("trace.swo", lambda path: path.write_bytes(swo_stream.tpiu_frames(self.swo) if framed else self.swo))
        if self.signals is not None:
            power = [(t, rail, w[i]) for rail, w in self.power_trace[1].items()
                     for i, t in enumerate(self.power_trace[0])] if self.power_trace is not None else ()
            emit("signals.vcd", lambda path: write_vcd(path, self.signals["pins"], self.signals["regions"],
                                                       end_seconds=self.simulated_seconds,
                                                       comment=f"mcusim {self.board}: {self.firmware_path}",
                                                       power=power))
        if self.branch_trace is not None:
            emit("branches.bin", lambda path: write_branch_trace(path, self.branch_trace, self.branch_trace_dropped,
                                                                 self.clock_hz, self.firmware_sha256))
        if self.power_trace is not None and self.capture.get("power_trace"):
            emit("power.csv", lambda path: write_power_trace(*self.power_trace, path))
        if self.stacks is not None:
            emit("stacks.folded", lambda path: write_folded(self.stacks, path))
            emit("speedscope.json", lambda path: write_speedscope(
                self.stacks, Path(self.firmware_path).name, f"mcusim {__version__}", path, self.calls,
                self.call_locations))
        return written


def _finite(value):
    """`value` with every NaN or infinity as None: run.json is strict JSON (no NaN, Infinity),
    and a figure that is undefined for a run (a ratio over nothing) is null there."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(item) for item in value]
    return value


class Simulator(RunControl):
    """One firmware image on one board. Example::

        sim = Simulator("firmware.elf", board="mcu-d", max_cycles=10**8)
        stop = sim.run_until("main")        # paused before main's first instruction
        print(stop.cycles, sim.registers()["sp"])
        sim.step(10)                        # ten instructions
        result = sim.run()                  # on to the end: the usual result
        print(result.cycles, result.stdout)

    Pausing, stepping and inspecting never change the cycles, energy or output (run_control.py).
    """

    def __init__(self, firmware: str | Path, board: str | BoardSpec = "mcu-d", *, clock_hz: int | None = None,
                 max_cycles: int | None = None, semihosting_root: str | Path | None = None,
                 semihosting_system: bool = False, args: list[str] | tuple[str, ...] = (), cmdline: str | None = None,
                 flash_latency: str | int | None = None,
                 on_output=None, on_warning=None, on_progress=None, stdin=None, profile: bool = False,
                 pc_sample_cycles: int | None = None, timeline: bool = False, swo: bool = False,
                 vcd: bool = False, branch_trace: TraceWindow | bool | None = None, flamegraph: bool = False,
                 voltage_range: str | None = None, power_bin_us: float = DEFAULT_BIN_US, power_trace: bool = False,
                 power_model: str | Path | None = None, power: bool = True, timing: bool = True,
                 max_seconds: float | None = None, memory_traffic: bool = False, swo_format: str = "itm",
                 data_timing: str = "sampled"):
        """Captures: `profile` (exact function profile), `pc_sample_cycles`, `timeline`
        (Perfetto: timeline.json; "proto" also timeline.pftrace, Perfetto's protobuf; with the
        profile, a functions track), `swo` (trace.swo: raw ITM/DWT packets, or with `swo_format="tpiu"` in TPIU
        formatter frames), `vcd`, `branch_trace` (True, or a TraceWindow) and `flamegraph`
        (folded stacks and speedscope; implies the profile). `memory_traffic` counts the bytes
        loads and stores move per memory bank, overall and per region, and places the regions
        on a roofline (result.roofline; it adds no cycles, but host time: every data access
        is counted). Energy is always computed where
        the board has a power model; `voltage_range` pins its operating voltage, `power_bin_us`
        sets the power trace's bins and `power_trace` writes them (power.csv); `power_model` is
        a powermodels TOML to use instead of the board's (e.g. from `mcusim calibrate`);
        `power=False` leaves energy out (benchmarks/power_cost.py measures what it costs).
        `timing=False` runs functionally only (one cycle per instruction, no flash, cache or
        memory timing, no energy): the same instructions and results as a timed run, which
        the tests hold as an invariant (docs/testing.md).

        Semihosting SYS_GET_CMDLINE answers the program name (`firmware` as given) and `args`
        joined by spaces, as QEMU joins its `-semihosting-config arg=` values; `cmdline` gives
        the whole line instead. Semihosting host files are off unless `semihosting_root` names
        a folder; SYS_SYSTEM runs programs in it only with `semihosting_system=True` (docs/machine.md).
        `flash_latency` ("auto" or a number of wait states) overrides
        the flash latency the firmware programs: FlashTiming. `data_timing` says how the accesses
        that cost a slow path to time are timed (flash data pages on the vendor boards, RAM behind
        a data cache on mcu-d): "sampled" (every access in windows, each block charged its
        average from them in between: machine/data_sampling.py; result.sampled_data says how
        much) or "exact".

        `max_seconds` ends the run after that much host time (exit reason "time-limit", exit
        code 124, like the cycle limit `max_cycles`); `interrupt()` ends it early from a signal
        handler or another thread (exit reason "interrupted"). Either way the result holds
        everything measured up to there, also while the run waits on the host: console input
        from `stdin` (a stream with a file descriptor is waited on and read with os.read; one
        without is read as it is) or a SYS_SYSTEM program. Firmware output passes whole to
        `on_output(data, stream)`; the result keeps each stream's first 1 MiB and last 64 KiB
        (`output_dropped_bytes` counts the rest)."""
        self.board = board if isinstance(board, BoardSpec) else load_board(board)
        self.image = ElfImage.load(firmware, memory_bytes=self.board.memory_bytes)
        args = list(args)
        if cmdline is not None and args:
            raise ValueError("give either args or cmdline, not both")
        if not all(isinstance(arg, str) for arg in args):
            raise TypeError("args must be strings")
        if cmdline is None:
            cmdline = " ".join([str(firmware), *args])
        flash_latency = parse_flash_latency(flash_latency)
        self.timeline = timeline
        self.vcd = vcd
        self.flamegraph = flamegraph
        self.power_bin_us = power_bin_us
        self.power_trace = power_trace
        profile = profile or flamegraph
        window = TraceWindow() if branch_trace is True else (branch_trace or None)
        if swo_format not in ("itm", "tpiu"):
            raise ValueError(f"swo_format {swo_format!r}: use 'itm' or 'tpiu'")
        self.capture = {"profile": profile, "pc_sample_cycles": pc_sample_cycles, "timeline": timeline, "swo": swo,
                        "swo_format": swo_format,
                        "vcd": vcd, "flamegraph": flamegraph, "voltage_range": voltage_range,
                        "power_bin_us": power_bin_us, "power_trace": power_trace,
                        "power_model": str(power_model) if power_model else None,
                        "branch_trace": None if window is None else dataclasses.asdict(window),
                        "args": args, "cmdline": cmdline, "flash_latency": flash_latency, "timing": timing,
                        "max_seconds": max_seconds, "memory_traffic": memory_traffic, "data_timing": data_timing,
                        "data_cache": data_timing}  # (data_timing's name in run.json 1.1)
        if max_seconds is not None and not max_seconds > 0:
            raise ValueError("max_seconds must be positive")
        if clock_hz is not None and clock_hz <= 0:
            raise ValueError("clock_hz must be positive")
        self._machine_args = dict(clock_hz=clock_hz, max_cycles=max_cycles, semihosting_root=semihosting_root,
                                  semihosting_system=semihosting_system, cmdline=cmdline, flash_latency=flash_latency,
                                  on_output=on_output, on_warning=on_warning, on_progress=on_progress, stdin=stdin,
                                  profile=profile, pc_sample_cycles=pc_sample_cycles, swo=swo, vcd=vcd,
                                  branch_trace=window, voltage_range=voltage_range, power_bin_us=power_bin_us,
                                  power_model=str(power_model) if power_model else None, power=power and timing,
                                  timing=timing, max_seconds=max_seconds, memory_traffic=memory_traffic,
                                  data_timing=data_timing)
        self.machine = self._new_machine()
        self._result: RunResult | None = None
        if clock_hz and self.board.max_clock_hz and clock_hz > self.board.max_clock_hz:
            self.machine.warn(f"--clock-hz {mhz(clock_hz)} is above the {self.board.soc}'s maximum core clock, "
                              f"{mhz(self.board.max_clock_hz)} (datasheet): simulated as asked")
        split = [arg for arg in args if not arg or " " in arg]
        if split:
            self.machine.warn(f"program arguments {', '.join(repr(a) for a in split)}: the command line joins the "
                              f"arguments with spaces, as QEMU does, and newlib's crt0 splits it at spaces (an empty "
                              f"argument vanishes); quote inside the argument ('\"two words\"') to keep one")

    def _new_machine(self) -> Machine:
        machine = Machine(self.board, self.image, **self._machine_args,
                          call_log=self.timeline or self.flamegraph)  # (with the profile: the calls in time order)
        machine.record_events = self.timeline  # (exception and ITM events for timeline.json)
        return machine

    def reset(self) -> None:
        """Start the run again from reset, as a new run: the board powered up afresh, every
        counter at zero, the firmware's files closed. Breakpoints, watchpoints, catch_faults and
        on() callbacks carry over; the warnings about the settings themselves are not repeated."""
        old = self.machine
        old.semihosting.close()
        self.machine = self._new_machine()
        self.machine.set_breakpoints(old.breakpoints)
        for key in old.watchpoints.hooks:
            self.machine.watchpoints.add(*key)
        self.machine.catch_faults = old.catch_faults
        self.machine.listeners = old.listeners
        self._result = None

    def interrupt(self, signum: int = signal.SIGINT) -> None:
        """Make a running run() end at the next block boundary, exit reason "interrupted" and
        exit code 128 + signum; safe from a signal handler or another thread."""
        self.machine.interrupt(signum)

    def run(self) -> RunResult:
        """Run to the end (from where run_until or step paused, if they did; breakpoints,
        watchpoints and catch_faults do not stop it) and collect the result. Once the run has
        ended, run() gives that same result again; reset() starts a new run."""
        if self._result is None:
            m = self.machine
            kept, watched, catching = set(m.breakpoints), list(m.watchpoints.hooks), m.catch_faults
            m.set_breakpoints(())
            m.watchpoints.clear()
            m.catch_faults = False
            m.cancel_pause()  # (one asked for too late, by a debugger: the run goes to its end)
            try:
                status = m.run()
            finally:
                m.set_breakpoints(kept)
                for key in watched:
                    m.watchpoints.add(*key)
                m.catch_faults = catching
            self._result = self._collect(status)
        return self._result

    def _collect(self, status) -> RunResult:
        """The result of the ended run (results.py turns the machine's captures into rows)."""
        m = self.machine
        results.finish_trace(m)
        regions = results.region_statistics(m)  # (may warn: before the warnings are collected)
        functions = results.function_profile(m)
        lines = results.line_profile(m, functions)
        samples = results.pc_samples(m)
        swo = results.swo_bytes(m)  # (may warn, too)
        if swo is not None and self.capture["swo_format"] == "itm" and m.sampler is not None \
                and m.sampler.period >= swo_stream.PYOCD_TIMESTAMP_LIMIT:
            m.warn_once("swo-pyocd", f"trace.swo: PC samples every {m.sampler.period:,} cycles put local timestamps "
                                     f"of {swo_stream.PYOCD_TIMESTAMP_LIMIT} cycles or more in the stream, which "
                                     f"pyOCD 0.46's SWO parser misreads (it takes their bytes in the wrong order: "
                                     f"docs/profiling.md); orbuculum and the Arm manual's order read them right")
        signals = results.signal_events(m) if self.vcd else None  # (may warn, too)
        trace = results.branch_trace_records(m)  # (may warn, too)
        energy = power_trace = None
        if m.power is not None:
            run_energy = RunEnergy(m.power, m.cycles, m.simulated_seconds())
            annotate_regions(regions, results.region_runs(m), run_energy)
            annotate_functions(functions, run_energy)
            energy = energy_summary(run_energy, self.power_bin_us, m.power.counts())
            if self.power_trace or self.timeline:
                energy["power"]["trace_bin_us"], power_trace = self._power_trace(run_energy)
        calls = results.call_events(m)  # (may warn, too)
        timeline = with_power_counters(results.region_timeline(m, calls), power_trace) if self.timeline else None
        sampled = {}
        if samples is not None:
            sampled = {"pc_sample_cycles": m.sampler.period, "pc_sample_cycles_at": samples[0],
                       "pc_sample_pcs": samples[1],
                       "pc_sample_functions": function_names(self.image.functions, samples[1])}
        return RunResult(
            board=self.board.name,
            board_title=self.board.title,
            core=self.board.core.name,
            clock_hz=m.clock_hz,
            reset_clock_hz=self.board.reset_clock_hz,
            nominal_clock_hz=self.board.clock_hz,
            clock_pinned=m.pinned_clock_hz is not None,
            firmware_path=str(self.image.path),
            firmware_sha256=self.image.sha256,
            exit_reason=status.reason,
            exit_code=status.code,
            exit_detail=status.detail,
            instructions=m.instructions,
            cycles=m.cycles,
            simulated_seconds=m.simulated_seconds(),
            host_seconds=m.host_seconds,
            dwt=results.dwt_totals(m),
            stdout=output_text(m.outputs.stdout),
            boot_note=m.boot_note,
            fault_report=m.fault_report,
            clock_changes=[{"cycle": c.cycle, "clock_hz": c.clock_hz, "source": c.source} for c in m.clock_changes],
            warnings=list(m.warnings),
            unmodelled_registers=list(m.unmodelled.values()),
            uart={k: output_text(v) for k, v in m.outputs.uart.items()},
            itm={str(k): port_record(v) for k, v in m.outputs.itm.items()},
            output_dropped_bytes=m.outputs.dropped(),
            exceptions_taken=m.exceptions_taken,
            stalls=results.stalls(m),
            **results.pipeline_statistics(m),
            regions=regions,
            functions=functions,
            lines=lines,
            **sampled,
            timeline=timeline,
            swo=swo,
            signals=signals,
            branch_trace=trace,
            branch_trace_dropped=m.trace.dropped if m.trace is not None else 0,
            stacks=m.profile.stacks() if self.flamegraph else None,
            calls=calls if self.flamegraph else None,
            call_locations=results.function_locations(self.image) if self.flamegraph else {},
            capture=self.capture,
            energy=energy,
            power_trace=power_trace,
            max_cycles=m.max_cycles,
            semihosting_root=str(m.semihosting.root) if m.semihosting.root else None,
            semihosting_system=bool(m.semihosting.host and m.semihosting.host.allow_system),
            memory=memory_use(self.image, self.board, m.read_memory, m.memory.buffers, m.initial_sp,
                              *self._tracked_sp(), process_stack=m.process_stack(),
                              sbrk_peak=m.heap_peak if m.sbrk_hooked else None),
            roofline=self._roofline(regions),
        )

    def _roofline(self, regions: list[dict]) -> dict | None:
        """run.json's `roofline`: the bytes moved per bank, the ceilings, the regions placed."""
        m = self.machine
        traffic, limits = results.memory_traffic(m), results.roofline_ceilings(m)
        if traffic is None:
            return None
        return {"traffic": traffic, "ceilings": limits,
                "regions": roofline.analyse(regions, limits) if limits else [],
                "method": "bytes each memory bank served to the core's loads and stores (docs/profiling.md)"}

    def _tracked_sp(self) -> tuple[int | None, int]:
        """The lowest main-stack SP the run reached at a block start, and that block's address."""
        m = self.machine
        m.take_lowest_sp()
        return (m.lowest_sp if m.lowest_sp < NO_SP else None), m.lowest_sp_at

    def _power_trace(self, run_energy: RunEnergy) -> tuple[float, tuple]:
        """The bin width and the power trace: bins of power_bin_us, widened (with a warning)
        when there would be more than power.csv, the timeline or the VCD can hold."""
        most = MAX_COUNTER_BINS if self.timeline or self.vcd else MAX_TRACE_BINS
        bin_us = trace_bin_us(run_energy, self.power_bin_us, most)
        if bin_us != self.power_bin_us:
            self.machine.warn(f"the power trace would have {run_energy.bin_count(self.power_bin_us):,} bins of "
                              f"{self.power_bin_us:g} us: written with {bin_us:g} us bins instead (at most "
                              f"{most:,} bins; --power-bin-us sets the width)")
        return bin_us, run_energy.trace(bin_us)


def run(firmware: str | Path, board: str | BoardSpec = "mcu-d", **options) -> RunResult:
    """Run `firmware` on `board` to its end; options as for `Simulator`."""
    return Simulator(firmware, board, **options).run()
