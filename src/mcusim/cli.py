"""Command line: parse, call the API, print. `mcusim --help` lists the commands."""
from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

import click

from . import __version__, examples
from .analysis.compare import differences
from .analysis.compare import report as compare_report
from .analysis.branch_trace import DEFAULT_LIMIT as DEFAULT_TRACE_LIMIT
from .analysis.branch_trace import MissingSymbol, TraceWindow
from .analysis.branch_trace import instructions as instruction_trace
from .analysis.branch_trace import read as read_branch_trace
from .api import Simulator
from .config import ConfigError, board_names, load_board
from .elf import ElfError, ElfImage
from .machine.exceptions import exception_name
from .machine.machine import DEFAULT_MAX_CYCLES
from .progress import RunProgress

EXIT_BAD_INPUT = 3
DEFAULT_SAMPLE_PERIOD = 1000  # cycles between PC samples under --all


def _mhz(hz: int) -> str:
    return f"{hz / 1e6:g} MHz"


def _seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.3f} us"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.3f} s"


class _Stream:
    """Writes firmware output through as it comes, flushing at each newline; `before(data, out)`
    runs first (the progress bar steps aside)."""

    def __init__(self, before=None):
        self.before = before

    def __call__(self, data: bytes, stream: str) -> None:
        out = sys.stderr if stream == "stderr" else sys.stdout
        if self.before:
            self.before(data, out)
        out.buffer.write(data)
        if b"\n" in data or stream == "stderr":
            out.flush()


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="mcusim")
def main():
    """mcusim: run Cortex-M4F/M7F firmware on simulated boards and measure it.

    \b
    Start with:  mcusim boards              the boards you can name
                 mcusim run app.elf --board mcu-d
                 mcusim examples            firmware shipped with mcusim
    """


@main.command("run")
@click.argument("firmware", required=False, type=click.Path(dir_okay=False))
@click.option("--board", "-b", required=True, metavar="NAME", help="Board to run on (see `mcusim boards`).")
@click.option("--example", metavar="PROGRAM", help="Run a bundled example program instead of FIRMWARE.")
@click.option("--max-cycles", type=click.IntRange(min=1), default=None, metavar="N",
              help=f"Stop after N core cycles (exit code 124). Default {DEFAULT_MAX_CYCLES:,}.")
@click.option("--clock-hz", type=click.IntRange(min=1), default=None, metavar="HZ",
              help="Pin the core clock at HZ for the whole run, whatever clock the firmware sets up.")
@click.option("--out", type=click.Path(file_okay=False), default=None, metavar="DIR",
              help="Write a result bundle: DIR/run.json, and DIR/regions.csv when the firmware marks regions "
                   "(see `mcusim report`).")
@click.option("--semihosting-root", type=click.Path(file_okay=False, exists=True), default=None, metavar="DIR",
              help="Let semihosting open, remove and rename host files inside DIR (refused otherwise).")
@click.option("--profile", is_flag=True,
              help="Exact function profile: every cycle charged to the function it was spent in "
                   "(DIR/functions.csv with --out; top functions in the summary).")
@click.option("--pc-sample-cycles", type=click.IntRange(min=1), default=None, metavar="N",
              help="Sample the PC every N cycles, as DWT PC sampling does (DIR/pc_samples.csv with --out).")
@click.option("--perfetto", is_flag=True,
              help="Write DIR/timeline.json (with --out): the regions as a Chrome/Perfetto trace in simulated time.")
@click.option("--swo", is_flag=True,
              help="Write DIR/trace.swo (with --out): the ITM/DWT packet stream a SWO probe would capture "
                   "(ITM writes, exception trace, timestamps; PC samples only with --pc-sample-cycles), for "
                   "pyOCD or other SWO tools.")
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
@click.option("--trace-limit", type=click.IntRange(min=1), default=DEFAULT_TRACE_LIMIT, metavar="N",
              show_default=True, help="Keep at most N branch trace records (16 bytes each); the rest are counted.")
@click.option("--flamegraph", is_flag=True,
              help="Write DIR/stacks.folded and DIR/speedscope.json (with --out): the exact profile's call paths "
                   "for flame graphs (implies --profile).")
@click.option("--all", "capture_all", is_flag=True,
              help=f"Capture everything: --profile --flamegraph --pc-sample-cycles (default {DEFAULT_SAMPLE_PERIOD}) "
                   "--perfetto --swo --vcd --branch-trace (needs --out).")
@click.option("--quiet", "-q", is_flag=True, help="No summary or warnings on stderr (fault reports still print).")
def run_command(firmware, board, example, max_cycles, clock_hz, out, semihosting_root, profile, pc_sample_cycles,
                perfetto, swo, vcd, branch_trace, trace_from, trace_to, trace_cycles, trace_limit, flamegraph,
                capture_all, quiet):
    """Run FIRMWARE (an ELF) on a board; its output goes to stdout, a summary to stderr.

    \b
    Exit status: the firmware's semihosting exit code; 124 when the cycle limit ends the
    run (or the core sleeps with nothing to wake it); 125 on a lockup or a fault with no
    handler; 3 for firmware mcusim cannot run; 2 for usage errors.
    """
    if (firmware is None) == (example is None):
        raise click.UsageError("give either FIRMWARE or --example PROGRAM")
    try:
        spec = load_board(board)
    except ConfigError as exc:
        raise click.BadParameter(str(exc), param_hint="--board") from exc
    if example:
        try:
            firmware = str(examples.path(example, spec.name))
        except LookupError as exc:
            raise click.BadParameter(str(exc), param_hint="--example") from exc

    progress = RunProgress(sys.stderr, max_cycles=max_cycles, quiet=quiet)

    def warn(message):
        if not quiet:
            progress.stop()
            click.echo(f"mcusim: warning: {message}", err=True)

    if capture_all:
        profile = flamegraph = perfetto = swo = vcd = branch_trace = True
        pc_sample_cycles = pc_sample_cycles or DEFAULT_SAMPLE_PERIOD
    branch_trace = branch_trace or bool(trace_from or trace_to or trace_cycles)
    for asked, option, writes in ((capture_all, "--all", "the bundle"), (perfetto, "--perfetto", "timeline.json"),
                                  (swo, "--swo", "trace.swo"), (vcd, "--vcd", "signals.vcd"),
                                  (branch_trace, "--branch-trace", "branches.bin"),
                                  (flamegraph, "--flamegraph", "stacks.folded and speedscope.json")):
        if asked and not out:
            raise click.UsageError(f"{option} writes DIR/{writes}: give --out DIR")
    window = None
    if branch_trace:
        first, last = _cycle_range(trace_cycles)
        window = TraceWindow(trace_limit, trace_from, trace_to, first, last)
    try:
        sim = Simulator(firmware, spec, clock_hz=clock_hz, max_cycles=max_cycles, semihosting_root=semihosting_root,
                        on_output=_Stream(progress.before_output), on_warning=warn, on_progress=progress,
                        stdin=sys.stdin.buffer, profile=profile, pc_sample_cycles=pc_sample_cycles, timeline=perfetto,
                        swo=swo, vcd=vcd, branch_trace=window, flamegraph=flamegraph)
        result = sim.run()
    except MissingSymbol as exc:
        raise click.BadParameter(str(exc), param_hint="--trace-from/--trace-to") from exc
    except ElfError as exc:
        click.echo(f"mcusim: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    finally:
        progress.stop()
    sys.stdout.flush()
    if result.fault_report:
        click.echo("mcusim: " + result.fault_report.replace("\n", "\nmcusim: "), err=True)
    if out:
        result.write_bundle(out)
    if not quiet:
        _summary(result, out)
    sys.exit(result.exit_code)


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
    if not colon or start < 0 or end is not None and end <= start:
        raise click.BadParameter(f"{text!r}: expected FROM:TO with 0 <= FROM < TO", param_hint="--trace-cycles")
    return start, end


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
            extras.append(f"{name} {counts['hits']:,} hits, {counts['misses']:,} misses")
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
    if result.boot_note:
        lines.insert(1, f"boot: {result.boot_note}")
    if out:
        lines.append(f"bundle: {out}/run.json")
    for line in lines:
        click.echo(f"mcusim: {line}", err=True)


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


def _load_bundle(directory: str) -> dict:
    path = Path(directory) / "run.json"
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise click.UsageError(f"{path} does not exist: write it with `mcusim run ... --out {directory}`")
    except json.JSONDecodeError as exc:
        raise click.UsageError(f"{path} is not a run.json: {exc}")


@main.command("report")
@click.argument("bundle", type=click.Path(file_okay=False, exists=True))
@click.option("--html", "html_file", is_flag=False, flag_value="", default=None, metavar="[FILE]",
              help="Write the report with plots as one self-contained HTML page instead (default DIR/report.html).")
def report_command(bundle, html_file):
    """Print a result bundle (DIR from `mcusim run --out DIR`): the run and its counters, the
    functions by exclusive cycles (--profile), source lines, PC samples, and the regions the
    firmware marked (a layer, an inference) by cost, with their count, mean, percentiles and
    maximum cycles, share of the run, MACs and MACs per cycle."""
    run = _load_bundle(bundle)
    if html_file is not None:
        from .analysis.html_report import build

        artifact = lambda name: Path(bundle, name) if Path(bundle, name).is_file() else None  # noqa: E731
        path = Path(html_file or Path(bundle) / "report.html")
        path.write_text(build(run, artifact("timeline.json"), artifact("pc_samples.csv")), encoding="utf-8")
        click.echo(f"mcusim: wrote {path}", err=True)
        return
    from rich.console import Console

    from .analysis.report import render_terminal

    # piped: wide enough that the tables keep their names whole
    render_terminal(run, Console(width=None if sys.stdout.isatty() else 160, highlight=False))


@main.command("trace")
@click.argument("bundle", type=click.Path(exists=True))
@click.option("--elf", type=click.Path(dir_okay=False, exists=True), default=None,
              help="The firmware the trace was taken of (default: the one run.json names).")
@click.option("--instructions", is_flag=True, help="Rebuild and print every instruction that ran, not just the records.")
@click.option("--limit", type=click.IntRange(min=0), default=100, show_default=True, metavar="N",
              help="Print at most N lines (0: all).")
def trace_command(bundle, elf, instructions, limit):
    """Decode a branch trace (DIR/branches.bin from `mcusim run --branch-trace --out DIR`):
    cycle, kind, from and to of each record, symbolized; with --instructions the full
    instruction trace rebuilt from the records and the ELF."""
    path = Path(bundle)
    if path.is_dir():
        path = path / "branches.bin"
    try:
        trace = read_branch_trace(path)
    except (OSError, ValueError) as exc:
        raise click.UsageError(str(exc))
    if elf is None:
        run = _load_bundle(str(path.parent))
        elf = run.get("firmware", {}).get("path")
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
        for address in itertools.islice(instruction_trace(trace, image), limit or None):
            click.echo(f"0x{address:08x}  {image.symbolize(address)}")
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


@main.command("compare")
@click.argument("a", type=click.Path(file_okay=False, exists=True))
@click.argument("b", type=click.Path(file_okay=False, exists=True))
@click.option("--force", is_flag=True, help="Compare runs on different boards, cores or clocks anyway.")
def compare_command(a, b, force):
    """Compare two result bundles: total cycles, and per function (with --profile) and per
    region, B against A. Runs on different boards, cores or clocks are refused unless --force."""
    run_a, run_b = _load_bundle(a), _load_bundle(b)
    mismatch = differences(run_a, run_b)
    if mismatch and not force:
        raise click.UsageError("the runs are not comparable (" + "; ".join(mismatch) + "); --force compares anyway")
    for line in mismatch:
        click.echo(f"mcusim: warning: {line}", err=True)
    click.echo(compare_report(run_a, run_b))


if __name__ == "__main__":
    main()
