"""Command line: parse, call the API, print. `mcusim --help` lists the commands."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import click

from . import __version__, examples
from .analysis.compare import differences
from .analysis.compare import report as compare_report
from .analysis.profile import format_table as format_functions
from .analysis.regions import format_table
from .api import Simulator
from .config import ConfigError, board_names, load_board
from .elf import ElfError
from .machine.machine import DEFAULT_MAX_CYCLES

EXIT_BAD_INPUT = 3


def _mhz(hz: int) -> str:
    return f"{hz / 1e6:g} MHz"


def _seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.3f} us"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.3f} s"


class _Stream:
    """Writes firmware output through as it comes, flushing at each newline."""

    def __call__(self, data: bytes, stream: str) -> None:
        out = sys.stderr if stream == "stderr" else sys.stdout
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
@click.option("--quiet", "-q", is_flag=True, help="No summary or warnings on stderr (fault reports still print).")
def run_command(firmware, board, example, max_cycles, clock_hz, out, semihosting_root, profile, pc_sample_cycles,
                perfetto, quiet):
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

    def warn(message):
        if not quiet:
            click.echo(f"mcusim: warning: {message}", err=True)

    started = time.perf_counter()

    def progress(machine):
        """Every half second of a run longer than a second, on a terminal only."""
        if not quiet and sys.stderr.isatty():
            mips = machine.instructions / max(time.perf_counter() - started, 1e-9) / 1e6
            click.echo(f"\rmcusim: {machine.cycles:,} cycles, {machine.simulated_seconds():.3f} s simulated, "
                       f"{mips:.0f} MIPS ...", err=True, nl=False)

    if perfetto and not out:
        raise click.UsageError("--perfetto writes DIR/timeline.json: give --out DIR")
    try:
        sim = Simulator(firmware, spec, clock_hz=clock_hz, max_cycles=max_cycles, semihosting_root=semihosting_root,
                        on_output=_Stream(), on_warning=warn, on_progress=progress, stdin=sys.stdin.buffer,
                        profile=profile, pc_sample_cycles=pc_sample_cycles, timeline=perfetto)
        result = sim.run()
    except ElfError as exc:
        click.echo(f"mcusim: error: {exc}", err=True)
        sys.exit(EXIT_BAD_INPUT)
    sys.stdout.flush()
    if not quiet and sys.stderr.isatty():
        click.echo("\r" + " " * 90 + "\r", err=True, nl=False)
    if result.fault_report:
        click.echo("mcusim: " + result.fault_report.replace("\n", "\nmcusim: "), err=True)
    if out:
        result.write_bundle(out)
    if not quiet:
        _summary(result, out)
    sys.exit(result.exit_code)


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
def report_command(bundle):
    """Print a result bundle (DIR from `mcusim run --out DIR`): the functions by exclusive
    cycles when the run had --profile, and the regions the firmware marked (a layer, an
    inference) by cost, with their count, mean and 99th-percentile cycles, share of the run,
    MACs and MACs per cycle."""
    run = _load_bundle(bundle)
    click.echo(f"{run.get('firmware', {}).get('path', '?')} on {run.get('board', '?')}: "
               f"{run.get('cycles', 0):,} cycles at {_mhz(run.get('clock_hz', 0))}")
    functions = run.get("functions") or []
    if functions:
        click.echo("\nfunctions (exact profile)\n" + format_functions(functions))
    samples = run.get("pc_samples")
    if samples:
        click.echo(f"\nPC samples: {samples['count']:,}, one every {samples['period_cycles']:,} cycles")
        for name, share in list(samples["shares"].items())[:10]:
            click.echo(f"  {100 * share:6.1f}%  {name or '(outside any function)'}")
    regions = run.get("regions") or []
    if not regions:
        click.echo("no regions: the firmware marked none (firmware/include/mcusim.h, mcusim_region_begin/end)")
        return
    click.echo(("\nregions\n" if functions else "") + format_table(regions))


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
