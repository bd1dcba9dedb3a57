"""Command line: parse, call the API, print. `mcusim --help` lists the commands."""
from __future__ import annotations

if __name__ == "__main__":  # (python -m mcusim.cli: take the signals before the imports, as the console script does)
    from mcusim.launch import guard
    guard()

import contextlib
import errno
import itertools
import json
import math
import os
import signal
import sys
import tempfile
from pathlib import Path

import click

from . import __version__, examples
from .analysis.compare import differences, setting_differences
from .analysis.compare import report as compare_report
from .analysis.branch_trace import DEFAULT_LIMIT as DEFAULT_TRACE_LIMIT
from .analysis.branch_trace import MissingSymbol, TraceWindow, board_aliases, disassembler
from .analysis.branch_trace import instructions as instruction_trace
from .analysis.branch_trace import read as read_branch_trace
from .analysis.bundle import BundleError
from .analysis.bundle import load as load_bundle
from .api import Simulator
from .power.accounting import DEFAULT_BIN_US, MAX_BIN_US, MIN_BIN_US, VoltageRangeError
from .power.model import MAX_CLOCK_HZ
from .config import ConfigError, board_names, load_board
from .elf import ElfError, ElfImage
from .extras import MissingExtra, require
from .machine.exceptions import exception_name
from .machine.flash_timing import FlashLatencyError, parse_flash_latency
from .machine.machine import DEFAULT_MAX_CYCLES
from .progress import RunProgress
from .launch import before_run
from .streams import Input, Output, say
from .units import joules as _joules
from .units import mhz as _mhz
from .units import seconds as _seconds

EXIT_BAD_INPUT = 3
EXIT_OUTPUT_ERROR = 74  # sysexits.h EX_IOERR: the run's output or bundle could not be written
DEFAULT_SAMPLE_PERIOD = 1000  # cycles between PC samples under --all
INT64_MAX = 2**63 - 1  # the largest count the native state (int64) holds: cycles, periods, limits


class FiniteFloat(click.FloatRange):
    """A FloatRange that refuses nan and inf too (FloatRange lets nan through: it compares
    false with any bound), so no figure computed from the option is nan or inf."""

    def convert(self, value, param, ctx):
        number = click.FLOAT.convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite number.", param, ctx)
        return super().convert(number, param, ctx)


def count(low: int = 1, high: int = INT64_MAX) -> click.IntRange:
    """A whole number from `low` to `high`: every integer option is one, so none overflows the
    native state."""
    return click.IntRange(low, high)


CLOCK_HZ = count(1, MAX_CLOCK_HZ)  # (as a power model's clocks)
MAX_SECONDS = 1e9  # (31 years: a time limit or a duty-cycle period)


def _prepare_out(out: str) -> None:
    """Create DIR and write a file in it before the run: an unwritable DIR is a usage error
    now, not a lost bundle after the run."""
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".mcusim-probe-"):
            pass
    except OSError as exc:
        raise click.BadParameter(f"{out}: cannot write a bundle there ({exc.strerror or exc})",
                                 param_hint="--out") from exc


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mcusim")
def main():
    """mcusim: run Cortex-M4F/M7F firmware on simulated boards and measure it.

    \b
    Start with:  mcusim boards              the boards you can name
                 mcusim run app.elf --board mcu-d
                 mcusim examples            firmware shipped with mcusim
    """


class _RunCommand(click.Command):
    """`run`, remembering whether the command line had `--` (program arguments must follow it:
    a stray word before it is a usage error, not an argument for the firmware)."""

    def parse_args(self, ctx, args):
        ctx.meta["program_args_marked"] = "--" in args
        return super().parse_args(ctx, args)


MEMORY_TRAFFIC_OPTION = click.option(
    "--memory-traffic", is_flag=True,
    help="Count the bytes loads and stores move to and from each memory bank, in all and per region, and place "
         "the regions on a roofline (run.json `roofline`, regions.csv bytes_by_bank and intensity; `mcusim "
         "roofline DIR` plots it). Adds no cycles; the run takes longer on the host (every data access is counted).")


@main.command("run", cls=_RunCommand)
@click.argument("firmware_and_args", nargs=-1, metavar="FIRMWARE [-- ARG...]")
@click.option("--board", "-b", required=True, metavar="NAME", help="Board to run on (see `mcusim boards`).")
@click.option("--example", metavar="PROGRAM", help="Run a bundled example program instead of FIRMWARE.")
@click.option("--max-cycles", type=count(), default=None, metavar="N",
              help=f"Stop after N core cycles, at the instruction that reaches N (exit code 124). "
                   f"Default {DEFAULT_MAX_CYCLES:,}.")
@click.option("--max-seconds", type=FiniteFloat(0, MAX_SECONDS, min_open=True), default=None, metavar="S",
              help="Stop after S seconds of host time (exit code 124), with what was measured so far.")
@click.option("--clock-hz", type=CLOCK_HZ, default=None, metavar="HZ",
              help="Pin the core clock at HZ for the whole run, whatever clock the firmware sets up.")
@click.option("--flash-latency", metavar="auto|N", default=None,
              help="Flash wait states instead of the firmware's LATENCY setting: auto = the reference manual's "
                   "minimum for the clock and voltage range, followed as they change (for firmware that does "
                   "not set up its flash); N = N wait states. Prefetch and caches stay as the firmware sets them.")
@click.option("--out", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Write a result bundle: DIR/run.json, and DIR/regions.csv when the firmware marks regions "
                   "(see `mcusim report`).")
@click.option("--semihosting-root", type=click.Path(file_okay=False, exists=True), default=None, metavar="DIR",
              help="Let semihosting open, remove and rename regular files inside DIR (refused otherwise; "
                   "symlinks are not followed).")
@click.option("--semihosting-system", is_flag=True,
              help="Let semihosting SYS_SYSTEM run a program inside --semihosting-root DIR (refused otherwise; "
                   "never one the firmware wrote or renamed): no shell, DIR as its folder, killed after 60 s, "
                   "its output into the firmware's stdout.")
@click.option("--profile", is_flag=True,
              help="Exact function profile: every cycle charged to the function it was spent in "
                   "(DIR/functions.csv with --out; top functions in the summary).")
@click.option("--pc-sample-cycles", type=count(), default=None, metavar="N",
              help="Sample the PC every N cycles, as DWT PC sampling does (DIR/pc_samples.csv with --out).")
@click.option("--perfetto", is_flag=True,
              help="Write DIR/timeline.json (with --out): the regions as a Chrome/Perfetto trace in simulated time.")
@click.option("--perfetto-proto", is_flag=True,
              help="Also write DIR/timeline.pftrace, the timeline as Perfetto's native protobuf trace (implies "
                   "--perfetto; needs the perfetto extra: pip install 'mcusim[perfetto]').")
@click.option("--swo", is_flag=True,
              help="Write DIR/trace.swo (with --out): the ITM/DWT packet stream a SWO probe would capture "
                   "(ITM writes, exception trace, timestamps; PC samples only with --pc-sample-cycles), for "
                   "pyOCD or other SWO tools.")
@click.option("--swo-format", type=click.Choice(["itm", "tpiu"]), default="itm", show_default=True,
              help="trace.swo as raw ITM/DWT packets (a probe in UART/NRZ mode, pyOCD), or in TPIU formatter "
                   "frames (source ID 1, frame syncs) for tools that expect a formatted capture.")
@click.option("--vcd", is_flag=True,
              help="Write DIR/signals.vcd (with --out): the GPIO pins the firmware drives and its regions as "
                   "waveforms in simulated time, for GTKWave.")
@click.option("--branch-trace", is_flag=True,
              help="Write DIR/branches.bin (with --out): every taken branch, exception entry and return with its "
                   "cycle, ETM-style; `mcusim trace DIR` decodes it, with --instructions the full instruction trace.")
@click.option("--trace-from", metavar="SYMBOL", default=None,
              help="Start the branch trace when SYMBOL (a function) is entered.")
@click.option("--trace-to", metavar="SYMBOL", default=None, help="Stop the branch trace when SYMBOL is entered.")
@click.option("--trace-cycles", metavar="FROM:TO", default=None,
              help="Branch trace only between these cycles (either side may be empty).")
@click.option("--trace-limit", type=count(), default=DEFAULT_TRACE_LIMIT, metavar="N",
              show_default=True, help="Keep at most N branch trace records (16 bytes each); the rest are counted.")
@click.option("--flamegraph", is_flag=True,
              help="Write DIR/stacks.folded and DIR/speedscope.json (with --out): the exact profile's call paths "
                   "for flame graphs (implies --profile).")
@click.option("--all", "capture_all", is_flag=True,
              help=f"Capture everything: --profile --flamegraph --pc-sample-cycles (default {DEFAULT_SAMPLE_PERIOD}) "
                   "--perfetto --swo --vcd --branch-trace --power-trace --memory-traffic (needs --out).")
@click.option("--voltage-range", metavar="NAME", default=None,
              help="Hold the power model at this core voltage range (e.g. range2 on mcu-m), whatever the firmware "
                   "selects: `mcusim boards show` lists them.")
@click.option("--power-bin-us", type=FiniteFloat(MIN_BIN_US, MAX_BIN_US), default=DEFAULT_BIN_US, show_default=True,
              metavar="US", help="Width of the power trace's time bins (peak power is over these bins).")
@click.option("--power-trace", is_flag=True, help="Write DIR/power.csv (with --out): watts per rail per time bin.")
@click.option("--power-model", type=click.Path(dir_okay=False, exists=True), default=None, metavar="FILE",
              help="Use this power model (TOML, e.g. from `mcusim calibrate`) instead of the board's.")
@click.option("--timing", type=click.Choice(["on", "off"]), default="on", show_default=True,
              help="off: functional only, one cycle per instruction with no flash, cache or memory timing and no "
                   "energy. A timed run executes the same instructions with the same results (docs/testing.md).")
@MEMORY_TRAFFIC_OPTION
@click.option("--data-timing", "--data-cache", "data_timing", type=click.Choice(["sampled", "exact"]),
              default="sampled", show_default=True,
              help="How the data reads of flash data pages (weights, tables), the accesses to RAM behind a data "
                   "cache (mcu-d's SRAM1/SRAM2) and the instruction fetches from flash (wait states, prefetch, "
                   "instruction cache) are timed. sampled: every access for the first 500k cycles (up to 2M while "
                   "new code runs), then 1M of every 16M and 100k where a marked region begins, code not timed yet "
                   "runs or a flash setting changes; in between, each block is charged the data wait, fetch wait "
                   "and flash reads its runs averaged in the last window it ran in (up to 2x faster; run.json "
                   "sampled_data says how much was estimated; docs/timing.md gives the error). exact: every "
                   "access.")
@click.option("--gdb", "gdb_address", metavar="[HOST:]PORT",
              help="Wait for gdb (target remote HOST:PORT) before the first instruction, then run as it says: "
                   "breakpoints, steps, watchpoints, `monitor cycles|energy|profile|reset`. Loopback unless HOST is "
                   "given; PORT 0 picks a free one. Debugging changes nothing measured (docs/debugging.md).")
@click.option("--quiet", "-q", is_flag=True, help="No summary or warnings on stderr (fault reports still print).")
def run_command(firmware_and_args, board, example, max_cycles, max_seconds, clock_hz, flash_latency, out, semihosting_root,
                semihosting_system, profile, pc_sample_cycles, perfetto, perfetto_proto, swo, swo_format, vcd, branch_trace,
                trace_from,
                trace_to,
                trace_cycles, trace_limit, flamegraph, capture_all, voltage_range, power_bin_us, power_trace,
                power_model, timing, memory_traffic, data_timing, gdb_address, quiet):
    """Run FIRMWARE (an ELF) on a board; its output goes to stdout, a summary to stderr.

    \b
    Arguments after `--` are the program's: semihosting SYS_GET_CMDLINE gives the firmware
    "FIRMWARE ARG..." (newlib builds argc/argv from it), as QEMU's
    -semihosting-config arg=FIRMWARE,arg=ARG... does.

    \b
    Exit status: the firmware's semihosting exit code (1 for a SYS_EXIT whose reason is
    not ADP_Stopped_ApplicationExit); 124 when the cycle or time limit ends the run (or the
    core sleeps with nothing to wake it); 125 on a lockup or a fault with no handler; 3 for
    firmware mcusim cannot run; 2 for usage errors (an --out DIR that cannot be written
    too, found before the run); 74 when a run that ended with 0 could not write the
    firmware's output to stdout or its bundle (a reader that closes the pipe early is
    not an error: the run finishes and its summary and bundle are written); 130 (Ctrl-C,
    SIGINT) and 143 (SIGTERM) when interrupted: the run stops at once, even while waiting
    for input, and its summary and bundle hold what it measured until then (before the run
    starts nothing is written; a second signal aborts without them).
    """
    if example:
        firmware, program_args = None, list(firmware_and_args)
    elif firmware_and_args:
        firmware = firmware_and_args[0]  # (a directory or missing file: ElfError, exit 3)
        program_args = list(firmware_and_args[1:])
    else:
        firmware, program_args = None, []
    if (firmware is None) == (example is None):
        raise click.UsageError("give either FIRMWARE or --example PROGRAM")
    if program_args and not click.get_current_context().meta.get("program_args_marked"):
        raise click.UsageError(f"unexpected {program_args[0]!r}: arguments for the firmware go after `--` "
                               f"(mcusim run FIRMWARE --board NAME -- ARG...)")
    if semihosting_system and not semihosting_root:
        raise click.UsageError("--semihosting-system runs programs inside --semihosting-root DIR: give DIR")
    try:
        flash_latency = parse_flash_latency(flash_latency)
    except FlashLatencyError as exc:
        raise click.BadParameter(str(exc), param_hint="--flash-latency") from exc
    try:
        spec = load_board(board)
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--board") from exc
    if example:
        try:
            firmware = str(examples.path(example, spec.name))
        except LookupError as exc:
            raise click.BadParameter(str(exc), param_hint="--example") from exc
    listener = _gdb_listener(gdb_address) if gdb_address is not None else None
    profile = profile or listener is not None  # (for `monitor profile`; it adds no cycles)

    if sys.stderr is None:  # (closed: nowhere to report anything)
        sys.stderr = open(os.devnull, "w")
    progress = RunProgress(sys.stderr, max_cycles=max_cycles, quiet=quiet)

    def warn(message):
        if not quiet:
            progress.stop()
            click.echo(f"mcusim: warning: {message}", err=True)

    if capture_all:
        profile = flamegraph = perfetto = swo = vcd = branch_trace = power_trace = memory_traffic = True
        pc_sample_cycles = pc_sample_cycles or DEFAULT_SAMPLE_PERIOD
    branch_trace = branch_trace or bool(trace_from or trace_to or trace_cycles)
    perfetto = perfetto or perfetto_proto
    if perfetto_proto:
        _require("perfetto", "--perfetto-proto")
    for asked, option, writes in ((capture_all, "--all", "the bundle"), (perfetto, "--perfetto", "timeline.json"),
                                  (perfetto_proto, "--perfetto-proto", "timeline.pftrace"),
                                  (swo, "--swo", "trace.swo"), (vcd, "--vcd", "signals.vcd"),
                                  (branch_trace, "--branch-trace", "branches.bin"),
                                  (flamegraph, "--flamegraph", "stacks.folded and speedscope.json"),
                                  (power_trace, "--power-trace", "power.csv")):
        if asked and not out:
            raise click.UsageError(f"{option} writes DIR/{writes}: give --out DIR")
    if out == "":
        raise click.BadParameter("an empty name: give the folder for the bundle", param_hint="--out")
    window = None
    if branch_trace:
        first, last = _cycle_range(trace_cycles)
        window = TraceWindow(trace_limit, trace_from, trace_to, first, last)

    def output_failed(stream, error):
        if stream != "stdout":
            return  # (stderr itself: nowhere to say so)
        progress.stop()
        kept = f"; it is kept in {out}/run.json" if out else ""
        if error.errno == errno.EPIPE:
            if not quiet:
                say(f"mcusim: note: stdout was closed by its reader (broken pipe): the run goes on without "
                    f"printing the firmware's output{kept}")
        else:
            say(f"mcusim: error: cannot write the firmware's output to stdout ({error.strerror or error}): "
                f"the run goes on{kept}")

    stream = Output(progress.before_output, output_failed)
    try:
        sim = Simulator(firmware, spec, clock_hz=clock_hz, max_cycles=max_cycles, semihosting_root=semihosting_root,
                        semihosting_system=semihosting_system, args=program_args, flash_latency=flash_latency,
                        on_output=stream, on_warning=warn, on_progress=progress,
                        stdin=Input(), profile=profile, pc_sample_cycles=pc_sample_cycles,
                        timeline="proto" if perfetto_proto else perfetto,
                        swo=swo, swo_format=swo_format, vcd=vcd, branch_trace=window, flamegraph=flamegraph,
                        voltage_range=voltage_range,
                        power_bin_us=power_bin_us, power_trace=power_trace, power_model=power_model,
                        timing=timing == "on", max_seconds=max_seconds, memory_traffic=memory_traffic,
                        data_timing=data_timing)
        stream.give_up = lambda: sim.machine.host_wait_over()  # (the machine of the moment: gdb may reset it)
        if out:  # (after the firmware loaded: firmware that cannot run leaves no folder behind)
            _prepare_out(out)
        with _interruptible(sim) as signals:
            if listener is not None:
                progress.stop()
                _debug(sim, listener, quiet)
            result = sim.run()
            progress.stop()
            written = _report_run(result, stream, out, quiet)
            stdout_error = stream.failed.get("stdout")
            output_lost = (out and not written) or (stdout_error is not None and stdout_error.errno != errno.EPIPE)
            code = result.exit_code or (EXIT_OUTPUT_ERROR if output_lost else 0)
            if signals and result.exit_reason != "interrupted":  # (after the run ended: its bundle is written)
                code = 128 + signals[0]
    except MissingSymbol as exc:
        raise click.BadParameter(str(exc), param_hint="--trace-from/--trace-to") from exc
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--power-model") from exc
    except VoltageRangeError as exc:
        raise click.BadParameter(str(exc), param_hint="--voltage-range") from exc
    except FlashLatencyError as exc:
        raise click.BadParameter(str(exc), param_hint="--flash-latency") from exc
    except ElfError as exc:
        click.echo(f"mcusim: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    finally:
        progress.stop()
        if listener is not None:
            listener.close()
    sys.exit(code)


def _gdb_listener(address: str):
    """The socket gdb connects to (usage errors, exit 2: a bad address, a port in use)."""
    from .gdb import server as gdb_server  # (here: the gdb server and its sockets are only for --gdb)

    try:
        host, port = gdb_server.parse_address(address)
        return gdb_server.listen(host, port)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--gdb") from exc
    except OSError as exc:
        raise click.BadParameter(f"cannot listen on {address}: {exc.strerror or exc}", param_hint="--gdb") from exc


def _debug(sim, listener, quiet) -> None:
    """Serve one gdb session; afterwards the run goes on to its end (detach, disconnect) or ends
    where it stands (kill), and its results are reported as any run's. Interrupted while
    waiting for gdb, before anything ran: exit 128 + the signal, nothing written."""
    from .gdb import server as gdb_server
    from .gdb.packets import Connection as GdbConnection

    host, port = listener.getsockname()[:2]
    say(f"mcusim: waiting for gdb on {host}:{port} (target remote {host}:{port})")
    interrupted = lambda: sim.machine.interrupted()  # noqa: E731  (the machine of the moment: gdb may reset it)
    sock = gdb_server.accept(listener, interrupted)
    listener.close()  # (one session: a second gdb is refused, not left waiting)
    if sock is None:
        sys.exit(128 + sim.machine.interrupting_signal())
    log = (lambda message: None) if quiet else (lambda message: say(f"mcusim: gdb: {message}"))
    sim.catch_faults = True  # gdb sees a fault as the handler is entered, as with a probe's vector catch
    with sock:
        conn = GdbConnection(sock, log, give_up=interrupted)
        outcome = gdb_server.Session(sim, conn, log).serve()
    if outcome == "kill":
        sim.end("killed", "killed by gdb")
    elif outcome in ("detach", "disconnect") and not quiet:
        say(f"mcusim: gdb {'detached' if outcome == 'detach' else 'disconnected'}: the run goes on to its end")


def _report_run(result, stream, out, quiet) -> bool:
    """After the run: the firmware's last output, the fault report, the bundle, the summary;
    whether the bundle was written (if asked for)."""
    stream.flush()
    if result.fault_report:
        say("mcusim: " + result.fault_report.replace("\n", "\nmcusim: "))

    def removed(names):
        if not quiet:
            say(f"mcusim: note: removed {', '.join(names)} from {out}: an earlier run's, not this run's")

    written = out
    if out:
        try:
            result.write_bundle(out, on_removed=removed)
        except OSError as exc:
            say(f"mcusim: error: cannot write the bundle in {out}: {exc}")
            written = None
    if not quiet:
        _summary(result, written)
    return bool(written)


@contextlib.contextmanager
def _interruptible(sim):
    """From the run's start until the bundle and summary are written: SIGINT and SIGTERM end the
    run at the next block boundary (exit 130, 143) with its results; one arriving after the run
    ended lets the bundle be written, then sets the exit status. The signals are listed in the
    yielded list. A second one aborts at once, as the signal would have."""
    asked = []

    def stop(signum, _frame):
        signal.signal(signum, signal.SIG_DFL)  # (the same signal again ends the process at once)
        if asked:
            os.kill(os.getpid(), signum)
        asked.append(signum)
        sim.interrupt(signum)

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGINT, signal.SIGTERM)
                if signal.getsignal(signum) is not signal.SIG_IGN}
    try:
        yield asked
    finally:
        for signum, handler in previous.items():  # (the console script's "before the run" handler no
            signal.signal(signum, signal.SIG_DFL if handler is before_run else handler)  # longer applies)


def _cycle_range(text: str | None) -> tuple[int, int | None]:
    """--trace-cycles FROM:TO, either side optional."""
    if not text:
        return 0, None
    first, colon, last = text.partition(":")
    try:
        start = int(first.replace("_", "")) if first else 0
        end = int(last.replace("_", "")) if last else None
    except ValueError:
        raise click.BadParameter(f"{text!r}: expected FROM:TO in cycles, e.g. 1000000:2000000", param_hint="--trace-cycles")
    if not colon or not 0 <= start < (INT64_MAX if end is None else end) or end is not None and end > INT64_MAX:
        raise click.BadParameter(f"{text!r}: expected FROM:TO with 0 <= FROM < TO <= {INT64_MAX}",
                                 param_hint="--trace-cycles")
    return start, end


def memory_line(memory: dict) -> str:
    """Footprint and peaks in one summary line."""
    def peak(name):
        return "not measured" if memory[name] is None else f"{memory[name]:,} B"

    where = f" (deepest in {memory['stack_peak_function']})" if memory.get("stack_peak_function") else ""
    process = memory.get("process_stack")
    thread = "" if not process else (f", process stack {process['peak_bytes']:,} B"
                                     + (f" (deepest in {process['peak_function']})" if process['peak_function'] else ""))
    return (f"memory: flash {memory['flash_bytes']:,} B, RAM {memory['ram_bytes']:,} B (data, bss); peaks: "
            f"stack {peak('stack_peak_bytes')}{where}{thread}, heap {peak('heap_peak_bytes')}")


def _summary(result, out) -> None:
    if result.clock_pinned:
        clock = f"{_mhz(result.clock_hz)} (pinned by --clock-hz)"
    elif result.clock_changes:
        clock = f"{_mhz(result.clock_hz)} (set by firmware; reset {_mhz(result.reset_clock_hz)})"
    elif result.clock_hz != result.nominal_clock_hz:
        clock = (f"{_mhz(result.clock_hz)} (reset clock: the firmware did not set up the "
                 f"{_mhz(result.nominal_clock_hz)} board clock)")
    else:
        clock = _mhz(result.clock_hz)
    lines = [
        f"board {result.board} ({result.board_title}), core {result.core}, clock {clock}",
        f"{result.instructions:,} instructions, {result.cycles:,} cycles, {_seconds(result.simulated_seconds)} "
        f"simulated, {result.host_seconds:.2f} s host, {result.mips:.1f} MIPS",
        "CPI {:.2f}; stalls: {}".format(result.cpi, ", ".join(
            f"{name.replace('_', ' ')} {cycles:,}" for name, cycles in result.stalls.items() if cycles) or "none"),
        f"exit: {result.exit_detail or result.exit_reason} -> exit code {result.exit_code}",
    ]
    extras = []
    if result.dual_issued:
        extras.append(f"IPC {result.ipc:.2f}, {100 * result.dual_issue_fraction:.0f}% dual-issued")
    if result.branches_predicted:
        extras.append(f"{result.branch_mispredicts:,} of {result.branches_predicted:,} branches mispredicted")
    for name, counts in (("I-cache", result.icache), ("D-cache", result.dcache)):
        if counts and counts["hits"] + counts["misses"]:
            writebacks = f", {counts['writebacks']:,} write-backs" if counts.get("writebacks") else ""
            extras.append(f"{name} {counts['hits']:,} hits, {counts['misses']:,} misses{writebacks}")
    sampled = result.sampled_data
    if sampled:
        extras.append(f"data timing sampled: {100 * sampled['untimed_cycles'] / max(result.cycles, 1):.0f}% of cycles "
                      f"between windows, {sampled['estimated_wait_cycles']:,} data wait, "
                      f"{sampled.get('estimated_fetch_wait_cycles', 0):,} fetch wait cycles and "
                      f"{sampled['estimated_flash_reads']:,} flash reads estimated (--data-timing exact: none)")
    if extras:
        lines.insert(3, "; ".join(extras))
    if result.functions:
        top = ", ".join(f"{row['function']} {100 * row['share']:.1f}%" for row in result.functions[:5])
        lines.insert(-1, f"top functions: {top}")
    if result.pc_sample_functions:
        from .analysis.sampling import shares
        top = ", ".join(f"{name or '?'} {100 * share:.1f}%" for name, share in list(
            shares(result.pc_sample_functions).items())[:5])
        lines.insert(-1, f"PC samples ({len(result.pc_sample_functions):,}): {top}")
    if result.energy:
        rails = ", ".join(f"{rail} {_joules(j)}" for rail, j in result.energy["energy_by_rail_j"].items())
        lines.insert(-1, f"energy {_joules(result.energy['energy_j'])} ({rails}); average "
                         f"{1e3 * result.energy['average_power_w']:.2f} mW, peak {1e3 * result.energy['peak_power_w']:.2f} mW")
    if result.memory:
        lines.insert(-1, memory_line(result.memory))
    if result.boot_note:
        lines.insert(1, f"boot: {result.boot_note}")
    if out:
        lines.append(f"bundle: {out}/run.json")
    for line in lines:
        say(f"mcusim: {line}")


@main.group("boards", invoke_without_command=True)
@click.pass_context
def boards_command(ctx):
    """List the boards; `mcusim boards show NAME` prints one."""
    if ctx.invoked_subcommand is None:
        for name in board_names():
            spec = load_board(name)
            click.echo(f"{name:12} {spec.core.name:10} {_mhz(spec.clock_hz):>9}  {spec.title}")


@boards_command.command("show")
@click.argument("name")
def boards_show(name):
    """Print one board: SoC, core, clocks, memory map, peripherals."""
    try:
        spec = load_board(name)
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="NAME") from exc
    click.echo(f"{spec.name}: {spec.title}")
    click.echo(f"  SoC {spec.soc}, core {spec.core.name} ({spec.core.fpu})")
    click.echo(f"  clock {_mhz(spec.clock_hz)} (reset {_mhz(spec.reset_clock_hz)}), boot address "
               f"0x{spec.boot_address:08x}, {spec.irq_count} IRQs, {spec.nvic_priority_bits} priority bits")
    click.echo("  memory:")
    for region in sorted(spec.memory, key=lambda r: r.base):
        alias = f" (alias of {region.alias_of})" if region.alias_of else f" {region.kind}"
        click.echo(f"    0x{region.base:08x}-0x{region.end - 1:08x} {region.size_bytes // 1024:6} KB  "
                   f"{region.name}{alias}")
    click.echo("  peripherals:")
    for p in sorted(spec.peripherals, key=lambda p: p.base):
        console = "  <- console" if p.name == spec.console_uart else ""
        click.echo(f"    0x{p.base:08x} {p.name:10} {p.model or 'storage (unmodelled)'}{console}")
    if spec.pins:
        click.echo("  pins: " + ", ".join(f"{label} = {pin}" for label, pin in spec.pins.items()))
    click.echo(f"  defined in {spec.source_file}")


@main.command("examples")
def examples_command():
    """List the example programs shipped with mcusim (run one with `mcusim run --example NAME`)."""
    found = examples.available()
    if not found:
        click.echo("no examples are installed with this copy of mcusim")
        return
    for program, boards in sorted(found.items()):
        click.echo(f"{program:22} {', '.join(boards)}")
    stamp = examples.toolchain()
    if stamp:
        click.echo(f"(built with {stamp})")


def _require(module: str, purpose: str) -> None:
    """An optional dependency (extras.py), checked before any work: a usage error naming the extra."""
    try:
        require(module, purpose)
    except MissingExtra as exc:
        raise click.UsageError(str(exc)) from None


def _load_bundle(directory: str) -> dict:
    """DIR/run.json, checked (analysis/bundle.py); a usage error saying what is wrong."""
    try:
        return load_bundle(directory)
    except BundleError as exc:
        raise click.UsageError(str(exc)) from exc


@contextlib.contextmanager
def _bundle_errors(*directories: str):
    """Whatever a malformed bundle still trips a reader over (past load_bundle's check) is a
    usage error naming the file, never a traceback."""
    try:
        yield
    except BundleError as exc:  # (an artifact: the message names it)
        raise click.UsageError(str(exc)) from exc
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, ArithmeticError) as exc:
        names = " or ".join(str(Path(directory) / "run.json") for directory in directories)
        raise click.UsageError(f"{names} is not a run.json bundle: {type(exc).__name__}: {exc}") from exc


@main.command("prepare")
@click.option("--learn", "learn", multiple=True, metavar="FILE",
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Also describe the register patterns of this compiled code: an ELF executable, an object "
                   "file or an ar archive of them (a TFLM or vendor HAL library build), so that the first run of "
                   "firmware built with it decodes faster. Code is found by its Arm mapping symbols; may be given "
                   "more than once.")
def prepare_command(learn):
    """Compile mcusim's native code for this machine ahead of the first run.

    numba compiles the simulator's hooks the first time a run needs them, 8 to 18 s before
    that run's first instruction. This compiles them all once (about a minute; scripts/setup.sh
    does it), and runs the bundled hello and bench examples on every board with and without the captures,
    so that later runs load the machine code without importing numba. It is kept in the
    object store: MCUSIM_NATIVE_STORE if that names a folder, else beside NUMBA_CACHE_DIR,
    else in the package's __pycache__ or ~/.cache/mcusim (docs/performance.md). Then it decodes
    every bundled example's code once per core, so that the first run of any firmware finds
    most of its instructions' register patterns described (kept in the decode store,
    MCUSIM_DECODE_CACHE). The libraries arm-none-eabi-gcc links (newlib's C and maths libraries,
    libgcc) are decoded the same way where it is installed, and so is every --learn FILE."""
    import time

    from .code_files import NotCode, thumb_code
    from .machine.native.object_store import STORE
    from .prepare import prepare

    for path in learn:  # (read before the minute of compiling, so a wrong file is said at once)
        try:
            if not thumb_code(path):
                say(f"mcusim: prepare: {path}: no Thumb code found (no Arm mapping symbols: a stripped file?)")
        except NotCode as error:
            raise click.BadParameter(str(error), param_hint="--learn") from None
    started = time.perf_counter()
    steps = prepare(say=lambda line: say(f"mcusim: prepare: {line}"), learn=learn)
    if STORE.saved_in:
        where = f"native code saved in {STORE.saved_in}"
    elif STORE.folders:
        where = f"nothing new to save (the store: {', '.join(map(str, STORE.folders))})"
    else:
        where = "no store (MCUSIM_NATIVE_STORE=off): numba's cache only"
    say(f"mcusim: prepare: {steps} steps in {time.perf_counter() - started:.0f} s; {where}")


@main.command("report")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True))
@click.option("--html", "html_file", is_flag=False, flag_value="", default=None, metavar="[FILE]",
              help="Write the report with plots as one self-contained HTML page instead (default DIR/report.html; "
                   "needs matplotlib: pip install 'mcusim[plots]').")
@click.option("--quiet", "-q", is_flag=True, help="Say nothing on stderr (where the page was written).")
def report_command(bundle, html_file, quiet):
    """Print a result bundle (DIR from `mcusim run --out DIR`): the run and its counters, the
    functions by exclusive cycles (--profile), source lines, PC samples, and the regions the
    firmware marked (a layer, an inference) by cost, with their count, mean, percentiles and
    maximum cycles, share of the run, MACs and MACs per cycle."""
    run = _load_bundle(bundle)
    if html_file is not None:
        _require("matplotlib", "mcusim report --html")
        from .analysis.html_report import build

        artifact = lambda name: Path(bundle, name) if os.path.lexists(Path(bundle, name)) else None  # noqa: E731
        path = Path(html_file or Path(bundle) / "report.html")
        with _bundle_errors(bundle):
            page = build(run, artifact("timeline.json"), artifact("pc_samples.csv"), bundle)
        try:
            path.write_text(page, encoding="utf-8")
        except OSError as exc:
            raise click.UsageError(f"cannot write {path}: {exc.strerror}") from exc
        if not quiet:
            click.echo(f"mcusim: wrote {path}", err=True)
        return
    from rich.console import Console

    from .analysis.report import render_terminal

    # piped: wide enough that the tables keep their names whole
    with _bundle_errors(bundle):
        render_terminal(run, Console(width=None if sys.stdout.isatty() else 160, highlight=False))


@main.command("calibrate")
@click.argument("measurements", type=click.Path(dir_okay=False, exists=True))
@click.option("--board", "-b", required=True, metavar="NAME", help="The board the measurements were taken on.")
@click.option("--power-model", type=click.Path(dir_okay=False, exists=True), default=None, metavar="FILE",
              help="The model to start from (default: the board's); terms not fitted keep its values.")
@click.option("--fit", "terms", multiple=True, metavar="TERM",
              help="Fit only this coefficient (repeatable), e.g. core.energy_j.alu, core.static_w_per_mhz.run, "
                   "board.static_w.run. Default: every one the runs exercise.")
@click.option("--out", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Where to write the fitted model (default: <board>-calibrated.toml).")
def calibrate_command(measurements, board, power_model, terms, out):
    """Fit the power model's coefficients to MEASUREMENTS.csv by non-negative least squares.

    \b
    Columns: firmware (path, relative to the CSV), clock_hz, voltage_range, energy_j, power_w,
    time_s; each row gives energy_j or power_w (x time_s, else x the simulated time). mcusim
    runs each firmware as measured, counts its events and time per operating point, fits,
    prints each row's measured and predicted energy and R^2, and writes a powermodels TOML
    with the fit's provenance (use it with `mcusim run --power-model FILE`). Needs scipy:
    pip install 'mcusim[calibrate]'."""
    import tomllib

    _require("scipy", "mcusim calibrate")
    from .power import calibrate as C
    from .power.model import load_power_model

    try:
        spec = load_board(board)
        rows = C.read_measurements(measurements)
        base_path = load_power_model(spec.name, power_model).source_file  # (checked before any run)
    except (ConfigError, ValueError) as exc:
        raise click.UsageError(str(exc))

    def on_run(i, row):
        click.echo(f"mcusim: run {i + 1}/{len(rows)}: {Path(row.firmware).name}"
                   + (f" at {_mhz(row.clock_hz)}" if row.clock_hz else "")
                   + (f", {row.voltage_range}" if row.voltage_range else ""), err=True)

    try:
        design, measured, base, seconds, model = C.simulate(rows, spec.name, base_path, on_run)
        result = C.calibrate(design, measured, base, model, list(terms) or None)
    except (ElfError, ValueError, ConfigError) as exc:
        raise click.UsageError(str(exc))
    click.echo("\n".join(C.report(rows, result)))
    provenance = C.provenance(measurements, rows, result)
    data = C.apply(tomllib.loads(Path(base_path).read_text()), result, provenance)
    target = Path(out or f"{spec.name}-calibrated.toml")
    try:
        C.check(data)
    except ConfigError as exc:
        raise click.UsageError(f"{exc}: a power model may not hold the fit, so {target} is not written "
                               "(are the measurements in joules, watts and seconds?)") from exc
    target.write_text(f"# {provenance}, starting from {base_path}\n" + C.to_toml(data))
    click.echo(f"mcusim: wrote {target}", err=True)


@main.command("trace")
@click.argument("bundle", type=click.Path(exists=True))
@click.option("--elf", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The firmware the trace was taken of (default: the one run.json names).")
@click.option("--instructions", is_flag=True, help="Rebuild and print every instruction that ran, not just the records.")
@click.option("--limit", type=count(0), default=100, show_default=True, metavar="N",
              help="Print at most N lines (0: all).")
def trace_command(bundle, elf, instructions, limit):
    """Decode a branch trace (DIR/branches.bin from `mcusim run --branch-trace --out DIR`):
    cycle, kind, from and to of each record, symbolized; with --instructions the full
    instruction trace rebuilt from the records and the ELF, each instruction disassembled, with
    its cycle where it made a record (a taken branch; the straight-line code between has none)."""
    path = Path(bundle)
    if path.is_dir():
        path = path / "branches.bin"
        if not path.exists():
            raise click.UsageError(f"{bundle} has no branch trace (branches.bin): record one with `mcusim run FIRMWARE "
                                   f"--board NAME --branch-trace --out {bundle}`")
    try:
        trace = read_branch_trace(path)
    except (OSError, ValueError) as exc:
        raise click.UsageError(f"{path}: {getattr(exc, 'strerror', None) or exc}")
    try:
        _print_trace(trace, path, elf, instructions, limit)
    except BrokenPipeError:  # `mcusim trace DIR | head`: the reader has what it wanted
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)


def _print_trace(trace, path: Path, elf, instructions: bool, limit: int) -> None:
    if elf is None:
        elf = (_load_bundle(str(path.parent)).get("firmware") or {}).get("path")
        if not elf:
            raise click.UsageError(f"{path.parent / 'run.json'} names no firmware: name it with --elf")
    try:
        image = ElfImage.load(elf)
    except ElfError as exc:
        raise click.UsageError(f"{exc} (name the firmware with --elf)")
    if image.sha256[:48] != trace.sha256_prefix.hex():
        click.echo(f"mcusim: warning: {elf} is not the firmware this trace was taken of", err=True)
    shown = 0
    if trace.dropped:
        click.echo(f"mcusim: warning: {trace.dropped:,} records were dropped at capture (--trace-limit)", err=True)
    if instructions:
        aliases = []
        try:
            aliases = board_aliases(load_board(_load_bundle(str(path.parent)).get("board", "")))
        except (click.UsageError, ConfigError):
            pass  # (without the bundle's board: code at aliased addresses cannot be followed)
        disassemble = disassembler(image, aliases)
        try:
            for address, cycle in itertools.islice(instruction_trace(trace, image, aliases, cycles=True),
                                                   limit or None):
                when = "" if cycle is None else f"{cycle:,}"
                click.echo(f"{when:>14}  0x{address:08x}  {image.symbolize(address):<32} {disassemble(address)}")
        except ValueError as exc:  # (records that do not follow the ELF's code)
            raise click.UsageError(f"{path}: {exc}") from exc
        return
    for event in trace.events():
        if limit and shown >= limit:
            click.echo(f"... {len(trace.records) - shown:,} more records (--limit 0 prints all)")
            break
        source = "" if event["source"] == 0xFFFFFFFF else image.symbolize(event["source"])
        if event["kind"] == "loop":
            detail = f"{source}: {event['target']:,} turns"
        elif event["kind"] in ("sync", "end"):
            detail = image.symbolize(event["target"])
        else:
            detail = f"{source or '(tail-chained)'} -> {image.symbolize(event['target'])}"
        if "exception" in event:
            detail += f"  [{exception_name(event['exception'])}]"
        click.echo(f"{event['cycle']:>14,}  {event['kind']:<9} {detail}")
        shown += 1


@main.command("sweep")
@click.argument("spec_file", metavar="[SPEC.toml]", required=False, type=click.Path(dir_okay=False))
@click.option("--out", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Where the bundles (DIR/runs/ID) and results (DIR/results.csv, results.parquet, pareto.png) go.")
@click.option("--board", "boards", multiple=True, metavar="NAME", help="A board to sweep (repeatable).")
@click.option("--clock-hz", "clocks", multiple=True, metavar="HZ|nominal",
              help="A clock to pin (repeatable); nominal: the clock the firmware sets up (the default).")
@click.option("--voltage-range", "voltage_ranges", multiple=True, metavar="NAME",
              help="A power-model voltage range to hold (repeatable; default: the model's own).")
@click.option("--firmware", "firmware", multiple=True, type=click.Path(dir_okay=False), metavar="ELF",
              help="A firmware ELF to run (repeatable).")
@click.option("--model", "models", multiple=True, type=click.Path(dir_okay=False), metavar="MODEL.tflite",
              help="A .tflite model to build, run and validate (repeatable; with each --variant).")
@click.option("--variant", "variants", multiple=True, type=click.Choice(["opt", "ref"]),
              help="The kernels of each --model (repeatable; default opt).")
@click.option("--max-cycles", type=count(), default=None, metavar="N", help="Each run stops after N cycles.")
@click.option("--workers", type=click.IntRange(1, 256), default=None, metavar="N",
              help="Worker processes of the local Dask cluster (default: the machine's cores).")
@click.option("--scheduler", metavar="tcp://HOST:PORT", default=None,
              help="Run on this Dask cluster instead of a local one; its workers must have mcusim and see DIR "
                   "and the programs at the same paths (docs/sweeps.md).")
@click.option("--resume", is_flag=True, help="Skip the runs whose bundle in DIR is complete and from the same run "
              "(board, clock, voltage range, program and placement contents, options).")
@click.option("--example-spec", is_flag=True, help="Print a commented SPEC.toml and exit.")
def sweep_command(spec_file, out, boards, clocks, voltage_ranges, firmware, models, variants, max_cycles, workers,
                  scheduler, resume, example_spec):
    """Run many simulations: every combination of boards, clocks, voltage ranges and programs
    (firmware ELFs, .tflite models with kernel variants and placements) from SPEC.toml or the
    options, on Dask distributed (a local cluster by default), each in its own process, with a
    progress bar. Writes DIR/results.csv and DIR/results.parquet (a row per run, in the spec's
    order: axes, exit code, error, cycles, latency, energy, peak power and memory, validated),
    DIR/pareto.png (latency against energy) and each run's bundle. A run that fails is a row
    with its exit code and error. Exit 0 when every run ended with 0, else 1; 2 for a bad spec."""
    from . import sweep as S

    if example_spec:
        click.echo(S.EXAMPLE_SPEC, nl=False)
        return
    if out is None:
        raise click.UsageError("give --out DIR for the results")
    if not out:
        raise click.BadParameter("an empty name: give the folder for the results", param_hint="--out")
    try:
        import distributed  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        raise click.UsageError("mcusim sweep needs dask distributed and pyarrow: pip install 'mcusim[sweep]'") from None
    command_line = bool(boards or clocks or voltage_ranges or firmware or models)
    if spec_file and command_line:
        raise click.UsageError("give SPEC.toml or --board/--firmware/--model options, not both")
    try:
        if spec_file:
            spec = S.load(spec_file)
        elif command_line:
            parsed_clocks = [S.NOMINAL if c == S.NOMINAL else _clock_value(c) for c in clocks]
            spec = S.build(list(boards), parsed_clocks, list(voltage_ranges), list(firmware),
                           [{"path": m, "variants": list(variants) or ["opt"]} for m in models],
                           {} if max_cycles is None else {"max_cycles": max_cycles})
        else:
            raise click.UsageError("give SPEC.toml, or --board and --firmware/--model (mcusim sweep --example-spec "
                                   "prints a spec)")
    except S.SpecError as exc:
        raise click.UsageError(str(exc)) from None
    _prepare_out(out)
    for note in spec.notes:
        say(f"mcusim: note: {note}")
    directory = Path(out)
    with _SweepProgress(len(spec.runs)) as progress:
        rows = S.execute(spec, directory, workers or os.cpu_count() or 1, scheduler, resume, progress)
    written = S.write_results(rows, directory)
    failed = [row for row in rows if row["exit_code"] != 0]
    say(f"mcusim: {len(rows)} runs, {len(rows) - len(failed)} ended with exit 0"
        + (f"; {len(failed)} did not: " + ", ".join(f"{r['id']} ({r['exit_code']}: {r['error']})"
                                                     for r in failed[:5]) if failed else ""))
    from .extras import MissingExtra, require

    try:
        require("matplotlib", "pareto.png")
        from .analysis.pareto import plot

        if sum(1 for r in rows if r.get("latency_s") is not None and r.get("energy_j") is not None) >= 1:
            plot(rows, "latency_s", "energy_j", directory / "pareto.png", f"sweep: {spec.source}")
            written.append(directory / "pareto.png")
    except MissingExtra:
        pass
    say(f"mcusim: wrote {', '.join(str(p) for p in written)}")
    sys.exit(1 if failed else 0)


def _clock_value(text: str) -> int:
    try:
        return CLOCK_HZ.convert(text, None, None)
    except click.BadParameter as exc:
        raise click.BadParameter(f"{text!r}: {exc.message}", param_hint="--clock-hz") from None


class _SweepProgress:
    """A rich progress bar with ETA over the runs on a terminal; a line per run otherwise."""

    def __init__(self, total: int):
        self.total, self.done, self.bar = total, 0, None

    def __enter__(self):
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

            self.bar = Progress(TextColumn("mcusim sweep"), BarColumn(), MofNCompleteColumn(), TextColumn("ETA"),
                                TimeRemainingColumn(), TextColumn("{task.fields[last]}"),
                                console=Console(file=sys.stderr), transient=True)
            self.task = self.bar.add_task("sweep", total=self.total, last="")
            self.bar.start()
        return self

    def __call__(self, row: dict) -> None:
        self.done += 1
        status = "ok" if row["exit_code"] == 0 else f"exit {row['exit_code']}"
        if self.bar is not None:
            self.bar.update(self.task, advance=1, last=f"{row['id']}: {status}")
        else:
            say(f"mcusim: [{self.done}/{self.total}] {row['id']}: {status}")

    def __exit__(self, *_exc):
        if self.bar is not None:
            self.bar.stop()


@main.command("pareto")
@click.argument("sweep_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True))
@click.option("--x", "x_metric", default="latency", show_default=True, metavar="METRIC",
              help="The metric across: latency, energy, power, memory, cycles, host, or a results.csv column.")
@click.option("--y", "y_metric", default="energy", show_default=True, metavar="METRIC", help="The metric up.")
@click.option("-o", "--out", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Where to write the plot (default DIR/pareto-X-Y.png).")
def pareto_command(sweep_dir, x_metric, y_metric, out):
    """The Pareto front of a sweep (DIR from `mcusim sweep`) on two metrics, lower being better
    for both: prints the runs on it and plots every run, the front highlighted and the dominated
    runs faded. Needs matplotlib: pip install 'mcusim[plots]'."""
    from . import sweep as S
    from .analysis import pareto

    _require("matplotlib", "mcusim pareto")
    try:
        rows = S.read_results(Path(sweep_dir))
    except (OSError, KeyError, ValueError) as exc:
        raise click.UsageError(f"{sweep_dir} has no readable results.csv (from mcusim sweep): {exc}") from None
    x, y = pareto.column(x_metric), pareto.column(y_metric)
    for metric, name in ((x_metric, x), (y_metric, y)):
        if rows and name not in rows[0]:
            raise click.BadParameter(f"{metric!r}: not a metric ({', '.join(pareto.METRICS)}) or a results column",
                                     param_hint="--x/--y")
    best = pareto.front(rows, x, y)
    if not best:
        raise click.UsageError(f"no run in {sweep_dir} has both {x} and {y}")
    click.echo(f"{'run':<48} {x:>16} {y:>16}")
    for i in best:
        click.echo(f"{rows[i]['id'][:48]:<48} {rows[i][x]:>16.6g} {rows[i][y]:>16.6g}")
    path = Path(out or Path(sweep_dir) / f"pareto-{x_metric}-{y_metric}.png")
    try:
        pareto.plot(rows, x, y, path, f"{Path(sweep_dir).name}: {len(best)} of {len(rows)} runs on the front")
    except (OSError, ValueError) as exc:
        raise click.UsageError(f"cannot write {path}: {exc}") from None
    click.echo(f"mcusim: wrote {path}", err=True)


@main.command("compare")
@click.argument("a", type=click.Path(file_okay=False, exists=True))
@click.argument("b", type=click.Path(file_okay=False, exists=True))
@click.option("--force", is_flag=True, help="Compare runs on different boards, cores or clocks anyway.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON (every function and region).")
@click.option("--csv", "as_csv", is_flag=True,
              help="Print it as CSV: kind (total, function, region), name, a, b, ratio (B/A).")
@click.option("--quiet", "-q", is_flag=True, help="No warnings on stderr.")
def compare_command(a, b, force, as_json, as_csv, quiet):
    """Compare two result bundles: total cycles, and per function (with --profile) and per
    region, B against A. Runs on different boards, cores or clocks are refused unless --force."""
    if as_json and as_csv:
        raise click.UsageError("give --json or --csv, not both")
    from .analysis.compare import comparison, csv_rows

    run_a, run_b = _load_bundle(a), _load_bundle(b)
    with _bundle_errors(a, b):
        mismatch = differences(run_a, run_b)
        if mismatch and not force:
            raise click.UsageError("the runs are not comparable (" + "; ".join(mismatch) + "); --force compares anyway")
        for line in ([] if quiet else mismatch + setting_differences(run_a, run_b)):
            click.echo(f"mcusim: warning: {line}", err=True)
        if as_json:
            click.echo(json.dumps(comparison(run_a, run_b), indent=2))
        elif as_csv:
            import csv

            writer = csv.DictWriter(sys.stdout, ["kind", "name", "a", "b", "ratio"], lineterminator="\n")
            writer.writeheader()
            writer.writerows(csv_rows(comparison(run_a, run_b)))
        else:
            click.echo(compare_report(run_a, run_b))


@main.command("power-budget")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True))
@click.option("--period-s", type=FiniteFloat(0, MAX_SECONDS, min_open=True), required=True, metavar="T",
              help="One inference every T seconds; the firmware sleeps in between.")
@click.option("--budget-mw", type=FiniteFloat(0, 1e9, min_open=True), required=True, metavar="P",
              help="The average power the device may draw (mW).")
@click.option("--battery-mah", type=FiniteFloat(0, 1e9, min_open=True), default=None, metavar="C",
              help="Battery capacity (mAh), with --battery-v: prints the battery life.")
@click.option("--battery-v", type=FiniteFloat(0, 1e3, min_open=True), default=None, metavar="V",
              help="Battery voltage (V).")
@click.option("--region", metavar="NAME", default=None,
              help='The region that is one inference (default "inference" when the firmware marks it, else the '
                   "whole run).")
@click.option("--power-model", type=click.Path(dir_okay=False, exists=True), default=None, metavar="FILE",
              help="Take the sleep power and wake-up time from this model instead of the one the run used.")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON.")
def power_budget_command(bundle, period_s, budget_mw, battery_mah, battery_v, region, power_model, as_json):
    """Average power of one inference every T seconds, asleep in between, against a budget:
    the active energy and time from a bundle (DIR from `mcusim run --out DIR`), the sleep power
    of the deepest state the firmware slept in (sleep if it never did) at the run's final clock
    and voltage range, and the wake-up from that state at the active power.

    \b
    Exit status: 0 within the budget, 1 over it, 2 usage error (e.g. T shorter than the inference).
    """
    from .power.budget import BudgetError, budget_lines, power_budget

    run = _load_bundle(bundle)
    with _bundle_errors(bundle):
        try:
            figures = power_budget(run, period_s, budget_mw * 1e-3, region=region, battery_mah=battery_mah,
                                   battery_v=battery_v, model_path=power_model)
        except BudgetError as exc:
            raise click.UsageError(str(exc)) from exc
        text = json.dumps(figures, indent=2, allow_nan=False) if as_json else None  # (strict JSON)
    if as_json:
        click.echo(text)
    else:
        for note in figures["notes"]:
            click.echo(f"mcusim: note: {note}", err=True)
        click.echo("\n".join(budget_lines(figures)))
    sys.exit(0 if figures["pass"] else 1)


@main.command("dvfs")
@click.argument("firmware", type=click.Path(dir_okay=False, exists=True))
@click.option("--board", "-b", required=True, metavar="NAME", help="Board to run on (see `mcusim boards`).")
@click.option("--clock-hz", "clocks", type=CLOCK_HZ, multiple=True, metavar="HZ",
              help="A clock to try (repeatable). Default: the power model's dvfs_clocks_hz, else the board's "
                   "clock, its half and its quarter.")
@click.option("--region", metavar="NAME", default=None,
              help='The region that is one inference (default "inference" when marked, else the whole run).')
@click.option("--plot", type=click.Path(dir_okay=False), default=None, metavar="FILE.png",
              help="Plot energy per inference and latency against the clock (needs matplotlib: "
                   "pip install 'mcusim[plots]').")
@click.option("--power-model", type=click.Path(dir_okay=False, exists=True), default=None, metavar="FILE",
              help="Use this power model (TOML) instead of the board's.")
@click.option("--max-cycles", type=count(), default=None, metavar="N", help="Cycle limit per run.")
@click.option("--json", "as_json", is_flag=True, help="Print the table as JSON.")
def dvfs_command(firmware, board, clocks, region, plot, power_model, max_cycles, as_json):
    """Run FIRMWARE at several clocks, each pinned (as --clock-hz) at the lowest voltage range
    whose max_clock_hz allows it, and print latency, energy per inference and average power
    per clock, and the energy-optimal clock. Exit status 1 when a run did not exit with 0."""
    import time

    if plot:
        _require("matplotlib", "mcusim dvfs --plot")
    from .power.budget import BudgetError, dvfs_lines, dvfs_plan, dvfs_row
    from .power.model import load_power_model

    try:
        spec = load_board(board)
        model = load_power_model(spec.name, power_model)
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--board/--power-model") from exc
    try:
        plan = dvfs_plan(model, spec.clock_hz, clocks)
    except BudgetError as exc:
        raise click.BadParameter(str(exc), param_hint="--clock-hz") from exc
    warnings: dict[str, None] = {}
    rows = []
    bar = None
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

        bar = Progress(TextColumn("{task.description}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                       TimeElapsedColumn(), console=Console(stderr=True), transient=True)
        task = bar.add_task("dvfs", total=len(plan))
        bar.start()
    try:
        for k, (hz, voltage_range) in enumerate(plan, 1):
            if bar:
                bar.update(task, description=f"dvfs: {_mhz(hz)} ({voltage_range})")
            started = time.perf_counter()
            try:
                result = Simulator(firmware, spec, clock_hz=hz, voltage_range=voltage_range, power_model=power_model,
                                   max_cycles=max_cycles, on_warning=lambda m: warnings.setdefault(m)).run()
                row = dvfs_row(result.to_dict(), hz, voltage_range, model, region)
            except ElfError as exc:
                click.echo(f"mcusim: error: {exc}", err=True)
                sys.exit(EXIT_BAD_INPUT)
            except BudgetError as exc:
                raise click.UsageError(str(exc)) from exc
            rows.append(row)
            if bar:
                bar.advance(task)
            else:
                click.echo(f"mcusim: dvfs: {k}/{len(plan)} {_mhz(hz)} ({voltage_range}): "
                           f"{time.perf_counter() - started:.1f} s host", err=True)
    finally:
        if bar:
            bar.stop()
    for message in warnings:  # (the clock is pinned on purpose: not the firmware's clock changes)
        if "--clock-hz keeps it" not in message:
            click.echo(f"mcusim: warning: {message}", err=True)
    failed = [row for row in rows if row["exit_code"]]
    for row in failed:
        click.echo(f"mcusim: warning: the run at {_mhz(row['clock_hz'])} ended with exit code {row['exit_code']}",
                   err=True)
    if as_json:
        click.echo(json.dumps({"board": spec.name, "firmware": firmware, "power_model": model.source_file,
                               "rows": rows, "energy_optimal_hz": min(rows, key=lambda r: r["energy_j"])["clock_hz"]},
                              indent=2, allow_nan=False))
    else:
        click.echo("\n".join(dvfs_lines(rows)))
    if plot:
        from .power.plots import dvfs_plot

        dvfs_plot(rows, plot, f"{spec.name}: {Path(firmware).name}, {rows[0]['what']}")
        click.echo(f"mcusim: wrote {plot}", err=True)
    sys.exit(1 if failed else 0)


@main.command("power-plot")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True))
@click.option("--out", type=click.Path(dir_okay=False), default=None, metavar="FILE.png",
              help="Where to write the PNG (default DIR/power.png).")
@click.option("--quiet", "-q", is_flag=True, help="Say nothing on stderr (what was left out, where the plot went).")
def power_plot_command(bundle, out, quiet):
    """Plot a bundle's power: the trace per rail stacked over time (DIR/power.csv, from
    --power-trace) with the region runs beneath it (DIR/timeline.json, from --perfetto), and
    the energy per region (run.json). Needs matplotlib: pip install 'mcusim[plots]'."""
    _require("matplotlib", "mcusim power-plot")
    from .power.plots import NothingToPlot, power_plot

    run = _load_bundle(bundle)
    path = Path(out or Path(bundle) / "power.png")
    with _bundle_errors(bundle):
        try:
            left_out = power_plot(bundle, path, run)
        except (NothingToPlot, OSError) as exc:
            raise click.UsageError(str(exc)) from exc
    if not quiet:
        for note in left_out:
            click.echo(f"mcusim: note: {note}", err=True)
        click.echo(f"mcusim: wrote {path}", err=True)


@main.command("roofline")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True))
@click.option("-o", "--out", type=click.Path(dir_okay=False), default=None, metavar="FILE",
              help="Where to write the plot (PNG, SVG or PDF by the suffix; default DIR/roofline.png).")
def roofline_command(bundle, out):
    """Plot a bundle's roofline (DIR from `mcusim run --memory-traffic --out DIR`, or `mcusim model
    run --memory-traffic`) and print each region with MACs: MACs per cycle, MACs per byte
    moved, the ceiling that bounds it (the core's SIMD peak, a memory bank's bandwidth or the
    core's load/store bandwidth), the fraction of that ceiling it reaches and a verdict
    (compute-, memory- or, below half of its ceiling, overhead-bound). Needs matplotlib:
    pip install 'mcusim[plots]'. docs/profiling.md explains the model."""
    from .analysis import roofline

    run = _load_bundle(bundle)
    placed = run.get("roofline")
    if not placed or not placed.get("ceilings"):
        raise click.UsageError(f"{bundle} has no memory traffic: run it again with --memory-traffic")
    if not placed["regions"]:
        raise click.UsageError(f"{bundle} has no region with MACs and traffic to place (the firmware's "
                               f"mcusim_region_info table gives regions their MACs: docs/profiling.md)")
    _require("matplotlib", "mcusim roofline")
    click.echo(roofline.format_table(placed["regions"]))
    path = Path(out or Path(bundle) / "roofline.png")
    title = f"{Path((run.get('firmware') or {}).get('path', '?')).name} on {run.get('board', '?')}"
    try:
        roofline.plot(placed["regions"], placed["ceilings"], title, path)
    except (OSError, ValueError) as exc:
        raise click.UsageError(f"cannot write {path}: {exc}") from exc
    click.echo(f"mcusim: wrote {path}", err=True)


@main.group("model")
def model_command():
    """Profile a trained model: a quantized int8 .tflite file (as the TensorFlow Lite converter
    writes it). `show` prints its layers, shapes, MACs, weights and the activation arena planned
    from tensor lifetimes; `build` generates it as C and compiles it for a board; `run` builds,
    runs one inference on the simulator and validates it against the TFLite Micro interpreter
    (docs/models.md)."""


@model_command.command("show")
@click.argument("model_file", metavar="MODEL.tflite", type=click.Path(dir_okay=False))
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON (every layer and tensor).")
def model_show(model_file, as_json):
    """Print MODEL.tflite's inputs and outputs, each layer (operator, shapes, options, MACs,
    weight bytes, arena bytes live while it runs) and the totals. Operators mcusim cannot build
    are marked, and the exit status is then 3, as for a file that is not a TFLite model."""
    from .tinyml.model_summary import show_lines, summarize
    from .tinyml.tflite_model import ModelError, UnsupportedModel, check_supported, load_model

    try:
        model = load_model(model_file)
    except ModelError as exc:
        click.echo(f"mcusim: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    summary = summarize(model)
    if as_json:
        click.echo(json.dumps(summary, indent=1))
    else:
        for line in show_lines(summary):
            click.echo(line)
    try:
        check_supported(model)
    except UnsupportedModel as exc:
        click.echo(f"mcusim: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)


def _load_model_or_exit(model_file):
    from .tinyml.tflite_model import ModelError, UnsupportedModel, check_supported, load_model

    try:
        model = load_model(model_file)
        check_supported(model)
    except (ModelError, UnsupportedModel) as exc:
        click.echo(f"mcusim: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    return model


def _model_inputs(model, input_files):
    """The arrays of --input (.npy, one per model input, in order), checked against the model."""
    import numpy as np

    from .tinyml.model_build import check_inputs

    if not input_files:
        return None
    try:
        arrays = [np.load(path, allow_pickle=False) for path in input_files]
        return check_inputs(model, arrays)
    except (OSError, ValueError) as exc:
        raise click.BadParameter(str(exc), param_hint="--input") from exc


_board_option = click.option("--board", "-b", required=True, metavar="NAME",
                             help="Board to build for (see `mcusim boards`).")
_config_option = click.option("--config", "config_file", type=click.Path(dir_okay=False, exists=True), default=None,
                              metavar="PLACEMENT.toml", help="Where the model's parts go: weights = \"flash\" "
                              "(default) or \"ram\"; arena = \"ram\" (default), \"dtcm\" or \"sram\" and "
                              "code = \"flash\" (default) or \"itcm\" on a board with TCMs (mcu-d); "
                              "kernels = \"opt\" (default) or \"ref\", and per layer in [layer_kernels] "
                              "(docs/models.md).")
_variant_option = click.option("--variant", type=click.Choice(["opt", "ref"]), default=None,
                               help="Every layer's kernels: opt, the SIMD ones (DSP instructions) where a layer "
                               "has them, or ref, the plain C ones; overrides the --config file's. Default: opt.")
_input_option = click.option("--input", "input_files", multiple=True, type=click.Path(dir_okay=False, exists=True),
                             metavar="X.npy", help="The model's input as a .npy array (repeat for each input, in "
                             "order); default: a seeded uniform random input.")


@model_command.command("build")
@click.argument("model_file", metavar="MODEL.tflite", type=click.Path(dir_okay=False))
@_board_option
@click.option("--out", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="Where to write model.c, board_model.c, plan.txt and model.elf.")
@_input_option
@_config_option
@_variant_option
@click.option("--no-check", is_flag=True, help="Do not run the TFLite Micro interpreter: the ELF then carries no "
              "reference outputs and compares nothing.")
def model_build(model_file, board, out, input_files, config_file, variant, no_check):
    """Generate MODEL.tflite as C (TFLite's integer arithmetic, the arena planned from tensor
    lifetimes, each layer a region) and build it for BOARD with arm-none-eabi-gcc. The ELF
    carries the TFLite Micro interpreter's outputs for its input and checks its own against
    them (exit 1 on a difference), as `model run`'s does: the same program."""
    from .tinyml.model_build import BuildError, build, compiler_path, default_inputs
    from .tinyml.model_run import interpreter_reference

    model = _load_model_or_exit(model_file)
    _check_board(board)
    placement = _placement(config_file, model, variant)
    inputs = _model_inputs(model, input_files) or default_inputs(model)
    try:
        compiler_path()  # before the interpreter's run, which can take a while
        _, embedded, problem = (None, None, "--no-check") if no_check else interpreter_reference(model, inputs)
        built = build(model, board, Path(out), inputs, placement, expected=embedded)
    except BuildError as exc:
        click.echo(f"mcusim: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    click.echo(f"mcusim: wrote {built.source}, {built.elf} and {Path(out) / 'plan.txt'} "
               f"(arena {built.plan.size:,} bytes)", err=True)
    if embedded is None:
        click.echo(f"mcusim: warning: the ELF compares its outputs with nothing ({problem})", err=True)


def _placement(config_file, model, variant):
    """The --config placement with --variant applied, checked against the model's layers."""
    from .tinyml.placement import PlacementError, load_placement

    try:
        placement = load_placement(config_file).with_kernels(variant)
        placement.variants(model)
    except PlacementError as exc:
        raise click.BadParameter(str(exc), param_hint="--config") from exc
    return placement


def _check_board(board):
    if board not in board_names():
        raise click.BadParameter(f"unknown board {board!r}; boards: {', '.join(board_names())}", param_hint="--board")


@model_command.command("run")
@click.argument("model_file", metavar="MODEL.tflite", type=click.Path(dir_okay=False))
@_board_option
@click.option("--out", required=True, type=click.Path(file_okay=False), metavar="DIR",
              help="The bundle: DIR/run.json (with a `model` section), DIR/regions.csv (a row per layer), "
                   "DIR/build/ (the generated C and ELF).")
@_input_option
@_config_option
@_variant_option
@click.option("--max-cycles", type=count(), default=None, metavar="N", help="Stop after N core cycles.")
@click.option("--dump", is_flag=True, help="Keep every layer's output (an arena where no tensor is overwritten: "
              "the timing then has that layout) and write them to DIR/tensors.npz.")
@MEMORY_TRAFFIC_OPTION
def model_run(model_file, board, out, input_files, config_file, variant, max_cycles, dump, memory_traffic):
    """Build MODEL.tflite for BOARD, run one inference on the simulator and validate its outputs
    against the TFLite Micro interpreter on the same input. Exit 0 when they are equal bit for
    bit, 1 when they differ (the timing is then not of a correct inference), 3 when the model
    cannot be built. Prints a row per layer (cycles, time, energy, weights and arena bytes,
    kernels) and the memory footprint; `mcusim report DIR` shows the bundle again."""
    from .tinyml import model_run as M
    from .tinyml.model_build import BuildError

    model = _load_model_or_exit(model_file)
    _check_board(board)
    placement = _placement(config_file, model, variant)
    _prepare_out(out)
    options = {} if max_cycles is None else {"max_cycles": max_cycles}
    if memory_traffic:
        options["memory_traffic"] = True
    try:
        done = M.run(model, board, Path(out), _model_inputs(model, input_files), placement,
                     None if config_file is None else str(config_file), dump=dump, **options)
    except (BuildError, ElfError) as exc:
        click.echo(f"mcusim: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    result, section = done.result, done.result.model
    try:
        result.write_bundle(out)
    except OSError as exc:
        click.echo(f"mcusim: error: cannot write the bundle in {out}: {exc}", err=True)
        sys.exit(EXIT_OUTPUT_ERROR)
    if result.stdout:  # what the firmware printed: its own check of the outputs against the interpreter's
        click.echo(result.stdout, nl=False)
    inference = next((r for r in result.regions if r["name"] == "inference"), None)
    for line in M.layer_table(section, result.regions):
        say(line)
    if inference:
        say(f"mcusim: {Path(model_file).name} on {board}: {inference['cycles_mean']:,.0f} cycles, "
            f"{inference['seconds_mean'] * 1e3:.3f} ms per inference"
            + (f", {inference['energy_j'] * 1e6:.1f} uJ" if inference.get("energy_j") is not None else ""))
    if result.memory:
        say(f"mcusim: {memory_line(result.memory)}; model: weights {section['weights_bytes']:,} B "
            f"in {section['weights_in']}, arena {section['arena_bytes']:,} B")
    if section["validated"]:
        say(f"mcusim: validated: outputs equal {section['reference']}'s bit for bit")
        code = 0
    elif section["validation_problem"]:
        say(f"mcusim: NOT validated: {section['validation_problem']}; the timing above is of an unchecked run")
        code = 1
    else:
        gap = section["max_abs_diff"]
        say(f"mcusim: MISMATCH: outputs differ from {section['reference']}'s "
            f"({'other sizes' if gap is None else f'max abs diff {gap:g}'}); the timing above is not of a correct "
            "inference")
        say(f"mcusim: first layer that differs: {section['first_differing_layer']}")
        code = 1
    say(f"mcusim: bundle: {out}/run.json (per-layer rows: mcusim report {out})")
    sys.exit(code)


if __name__ == "__main__":
    main()
