"""Sweeps (`mcusim sweep`, docs/sweeps.md): many independent runs, the product of boards, clocks,
voltage ranges and programs (firmware ELFs; .tflite models with kernel variants and placement
files), run on Dask distributed, each simulation in its own process (`mcusim run` or `mcusim
model run`), its bundle in DIR/runs/ID. One row per run, in the spec's order whatever order the
runs finish in: DIR/results.csv and DIR/results.parquet. A run that fails or crashes is a row
with its exit code and error; a run whose bundle is complete (DIR/runs/ID/sweep.json, written
last) is skipped by --resume. ID names what decides the result: the board, clock, voltage
range, the program's and placement's SHA-256 and the run options.
"""
from __future__ import annotations

import csv
import hashlib
import itertools
import json
import os
import shutil
import subprocess
import sys
import tomllib
import uuid
from dataclasses import asdict, dataclass, field
from pathlib import Path

NOMINAL = "nominal"  # the clock the firmware sets up itself
RUN_OPTIONS = {"max_cycles": int, "max_seconds": float, "memory_traffic": bool, "flash_latency": str, "data_timing": str}
COLUMNS = ["id", "board", "clock", "voltage_range", "kind", "program", "variant", "placement", "exit_code", "error",
           "clock_hz", "cycles", "latency_s", "energy_j", "peak_power_w", "peak_memory_bytes", "validated",
           "host_seconds", "bundle"]
MARKER = "sweep.json"  # written into a run's bundle when it is complete
LAUNCH = "import sys; from mcusim.launch import main; sys.exit(main())"

EXAMPLE_SPEC = '''\
# mcusim sweep SPEC.toml --out DIR: every combination of the axes below is one run.
[axes]
boards = ["mcu-s", "mcu-d"]            # `mcusim boards` lists them
clocks = ["nominal", 48_000_000]       # Hz, or "nominal": the clock the firmware sets up
voltage_ranges = ["default"]           # "default": the power model's; or names (`mcusim boards show B`)
firmware = ["build/{board}/app.elf"]   # ELF files, relative to this file; {board}: each board's own build

# .tflite models, built and validated by `mcusim model run` (docs/models.md)
[[axes.models]]
path = "model.tflite"
variants = ["opt", "ref"]              # the kernels
placements = ["default"]               # "default", or placement TOML files

[run]                                  # options of every run
max_cycles = 2_000_000_000
# max_seconds = 600                    # host seconds per run (exit 124 past it)
# memory_traffic = true                # bytes per memory bank and the roofline
# data_timing = "exact"                # firmware runs: time every flash data read and cached-RAM access
region = "inference"                   # latency and energy of this region when the run marks it

[keep]                                 # what each run's bundle keeps (default: everything it wrote)
files = ["run.json", "regions.csv"]    # run.json always stays: the row and --resume read it

# Instead of the product, list the runs:
# [[runs]]
# board = "mcu-s"
# clock = "nominal"
# firmware = "build/mcu-s/app.elf"
'''


class SpecError(ValueError):
    """A sweep spec that cannot be run: the message says what and where."""


@dataclass(frozen=True)
class Run:
    """One simulation of a sweep."""

    board: str
    clock: str | int = NOMINAL
    voltage_range: str = "default"
    firmware: str | None = None     # an ELF, or ...
    model: str | None = None        # ... a .tflite model
    variant: str | None = None      # (models) opt or ref
    placement: str | None = None    # (models) a placement TOML, None for the default
    options: tuple = ()             # sorted (name, value) pairs of RUN_OPTIONS

    @property
    def program(self) -> str:
        return self.firmware or self.model

    def identity(self) -> str:
        """What decides the run's result, hashed: the board, clock, voltage range, options and
        the contents (not the paths) of its program and placement."""
        parts = [self.board, str(self.clock), self.voltage_range, self.variant or "", json.dumps(self.options),
                 "model" if self.model else "firmware", _sha256(self.program),
                 _sha256(self.placement) if self.placement else ""]
        return hashlib.sha256("\0".join(parts).encode()).hexdigest()

    def name(self) -> str:
        """The run's folder under DIR/runs: readable, and unique by its identity."""
        stem = Path(self.program).stem
        variant = f"-{self.variant}" if self.variant else ""
        clock = "" if self.clock == NOMINAL else f"-{self.clock / 1e6:g}MHz"
        return f"{self.board}-{stem}{variant}{clock}-{self.identity()[:12]}"

    def command(self, out: Path) -> list[str]:
        """The `mcusim` command line that runs it into `out`."""
        options = dict(self.options)
        if self.model:
            args = ["model", "run", self.model, "--board", self.board, "--out", str(out), "--variant", self.variant]
            if self.placement:
                args += ["--config", self.placement]
        else:
            args = ["run", self.firmware, "--board", self.board, "--out", str(out), "-q"]
            if self.voltage_range != "default":
                args += ["--voltage-range", self.voltage_range]
            if self.clock != NOMINAL:
                args += ["--clock-hz", str(self.clock)]
            for name in ("max_seconds", "flash_latency", "data_timing"):
                if name in options:
                    args += [f"--{name.replace('_', '-')}", str(options[name])]
        if "max_cycles" in options:
            args += ["--max-cycles", str(options["max_cycles"])]
        if options.get("memory_traffic"):
            args.append("--memory-traffic")
        return [sys.executable, "-c", LAUNCH, *args]


@dataclass
class Spec:
    runs: list[Run]
    region: str = "inference"
    source: str = "command line"
    notes: list[str] = field(default_factory=list)
    keep: tuple[str, ...] | None = None  # the bundle files each run keeps (None: all)


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as stream:
        for chunk in iter(lambda: stream.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _file(path, base: Path, what: str) -> str:
    """An existing file, relative to `base` unless absolute, as an absolute path."""
    resolved = (base / os.path.expanduser(str(path))).resolve()
    if not resolved.is_file():
        raise SpecError(f"{what} {path}: no such file")
    return str(resolved)


def _clock(value) -> str | int:
    if value == NOMINAL:
        return NOMINAL
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise SpecError(f"clock {value!r}: give Hz as a positive integer, or \"nominal\"")
    return value


def _options(table: dict) -> tuple:
    options = {}
    for name, value in table.items():
        if name == "region":
            continue
        kind = RUN_OPTIONS.get(name)
        if kind is None:
            raise SpecError(f"[run] {name}: unknown option; options: {', '.join(sorted(RUN_OPTIONS))}, region")
        if kind is bool and not isinstance(value, bool) or kind is not bool and isinstance(value, bool):
            raise SpecError(f"[run] {name} = {value!r}: expected {kind.__name__}")
        try:
            options[name] = kind(value)
        except (TypeError, ValueError):
            raise SpecError(f"[run] {name} = {value!r}: expected {kind.__name__}") from None
    return tuple(sorted(options.items()))


def _programs(firmware: list, models: list, base: Path) -> list[dict]:
    """The program axis: each firmware, and each model x variant x placement."""
    programs = [{"firmware": _file(path, base, "firmware")} for path in firmware]
    for entry in models:
        entry = {"path": entry} if isinstance(entry, str) else entry
        if "path" not in entry:
            raise SpecError("a model needs a path")
        path = _file(entry["path"], base, "model")
        variants = entry.get("variants", ["opt"])
        if any(v not in ("opt", "ref") for v in variants):
            raise SpecError(f"model {entry['path']}: variants are opt and ref, not {variants}")
        placements = [None if p == "default" else _file(p, base, "placement")
                      for p in entry.get("placements", ["default"])]
        programs += [{"model": path, "variant": v, "placement": p} for v in variants for p in placements]
    return programs


def build(boards: list[str], clocks: list, voltage_ranges: list[str], firmware: list, models: list,
          run_options: dict, base: Path = Path.cwd(), explicit: list[dict] | None = None,
          source: str = "command line") -> Spec:
    """The sweep's runs: the product of the axes (boards, clocks, voltage ranges, programs), or the
    `explicit` list; checked (boards known, files present, options valid) before anything runs."""
    from .config.loader import board_names

    known = board_names()
    options = _options(run_options)
    if explicit:
        runs = []
        for i, entry in enumerate(explicit):
            unknown = set(entry) - {"board", "clock", "voltage_range", "firmware", "model", "variant", "placement"}
            if unknown or "board" not in entry or ("firmware" in entry) == ("model" in entry):
                raise SpecError(f"[[runs]] entry {i + 1}: give board and one of firmware or model "
                                f"(and clock, voltage_range, variant, placement){'; unknown: ' if unknown else ''}"
                                f"{', '.join(sorted(unknown))}")
            program = _programs([str(entry["firmware"]).replace("{board}", str(entry["board"]))]
                                if "firmware" in entry else [],
                                [{"path": entry["model"], "variants": [entry.get("variant", "opt")],
                                  "placements": [entry.get("placement", "default")]}] if "model" in entry else [],
                                base)[0]
            runs.append(Run(entry["board"], _clock(entry.get("clock", NOMINAL)), entry.get("voltage_range", "default"),
                            options=options, **program))
    else:
        if not boards or not (firmware or models):
            raise SpecError("a sweep needs at least one board and one firmware or model")
        runs = []
        for board in boards:  # ("{board}" in a firmware path: each board's own build)
            programs = _programs([str(path).replace("{board}", board) for path in firmware], models, base)
            runs += [Run(board, _clock(clock), voltage, options=options, **program)
                     for clock, voltage, program in itertools.product(clocks or [NOMINAL], voltage_ranges or ["default"],
                                                                      programs)]
    for run in runs:
        if run.board not in known:
            raise SpecError(f"unknown board {run.board!r}; boards: {', '.join(known)}")
    notes = []
    models_pinned = [run for run in runs if run.model and (run.clock != NOMINAL or run.voltage_range != "default")]
    if models_pinned:
        notes.append("model runs use the clock and voltage their generated firmware sets up: their clock and "
                     "voltage_range axes are recorded but do not change them")
    names = [run.name() for run in runs]
    if len(set(names)) != len(names):
        raise SpecError("the spec lists the same run more than once")
    return Spec(runs, str(run_options.get("region", "inference")), source, notes)


def load(path: str | Path) -> Spec:
    """A SPEC.toml (EXAMPLE_SPEC shows every key); paths in it are relative to its folder."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError(f"{path}: cannot read it ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise SpecError(f"{path}: not valid TOML ({exc})") from None
    unknown = set(data) - {"axes", "run", "runs", "keep"}
    if unknown:
        raise SpecError(f"{path}: unknown tables {', '.join(sorted(unknown))}; a spec has [axes], [run], [[runs]], "
                        f"[keep]")
    keep = data.get("keep", {})
    if set(keep) - {"files"} or not isinstance(keep.get("files", []), list):
        raise SpecError(f"{path}: [keep] has one key, files: a list of bundle file names")
    axes = data.get("axes", {})
    known_axes = {"boards", "clocks", "voltage_ranges", "firmware", "models"}
    if set(axes) - known_axes:
        raise SpecError(f"{path}: unknown axes {', '.join(sorted(set(axes) - known_axes))}; "
                        f"axes: {', '.join(sorted(known_axes))}")
    for name, value in axes.items():
        if not isinstance(value, list):
            raise SpecError(f"{path}: axes.{name} must be a list")
    try:
        spec = build(axes.get("boards", []), axes.get("clocks", []), axes.get("voltage_ranges", []),
                     axes.get("firmware", []), axes.get("models", []), data.get("run", {}), path.parent.resolve(),
                     data.get("runs"), str(path))
    except SpecError as exc:
        raise SpecError(f"{path}: {exc}") from None
    if "files" in keep:
        spec.keep = tuple(str(name) for name in keep["files"])
    return spec


def run_one(run: Run, out: str, region: str, keep: tuple[str, ...] | None = None) -> dict:
    """Run one simulation in its own process (on a Dask worker) and return its row. It runs
    into a folder of its own beside `out`, renamed to `out` when complete (with sweep.json, for
    --resume): a retry after a worker died, or a simulation the dead worker left running, never
    mixes its files with another attempt's."""
    final = Path(out)
    attempt = final.parent / f".{final.name}.{uuid.uuid4().hex[:8]}"
    attempt.mkdir(parents=True)
    done = subprocess.run(run.command(attempt), capture_output=True, text=True, errors="replace",
                          env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    error = None
    if done.returncode < 0:
        error = f"the simulation was killed by signal {-done.returncode}"
    elif done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if "error" in line.lower() or "MISMATCH" in line]
        error = (lines or done.stderr.splitlines() or [f"exit {done.returncode}"])[-1]
        error = error.removeprefix("mcusim: ").removeprefix("error: ")[:500]
    (attempt / "stderr.txt").write_text(done.stderr)
    row = dict(row_of(run, attempt, done.returncode, error, region), bundle=str(final))
    if keep is not None:
        for entry in attempt.iterdir():
            if entry.name not in (*keep, "run.json", "stderr.txt"):
                shutil.rmtree(entry) if entry.is_dir() else entry.unlink()
    (attempt / MARKER).write_text(json.dumps({"identity": run.identity(), "run": asdict(run), "row": row}) + "\n")
    shutil.rmtree(final, ignore_errors=True)
    os.replace(attempt, final)
    return row


def row_of(run: Run, bundle: Path, exit_code: int | None, error: str | None, region: str) -> dict:
    """The results row of a run: its axes, exit code and error, and from its run.json (when it
    wrote one) the clock, cycles, latency and energy (of `region` when the run marked it, else of
    the whole run), peak power, peak memory (RAM footprint plus stack and heap peaks) and, for
    models, whether the outputs were validated."""
    row = {"id": run.name(), "board": run.board, "clock": str(run.clock), "voltage_range": run.voltage_range,
           "kind": "model" if run.model else "firmware", "program": run.program, "variant": run.variant,
           "placement": run.placement, "exit_code": exit_code, "error": error, "bundle": str(bundle)}
    try:
        document = json.loads((bundle / "run.json").read_text())
    except (OSError, ValueError):
        return {column: row.get(column) for column in COLUMNS}
    marked = next((r for r in document.get("regions") or [] if r.get("name") == region), None)
    memory = document.get("memory") or {}
    peaks = [memory.get(k) for k in ("ram_bytes", "stack_peak_bytes", "heap_peak_bytes")]
    row.update(clock_hz=document.get("clock_hz"), host_seconds=document.get("host_seconds"),
               cycles=marked["cycles_mean"] if marked else document.get("cycles"),
               latency_s=marked["seconds_mean"] if marked else document.get("simulated_seconds"),
               energy_j=marked.get("energy_j") if marked else document.get("energy_j"),
               peak_power_w=document.get("peak_power_w"),
               peak_memory_bytes=sum(peaks) if all(p is not None for p in peaks) else None,
               validated=(document.get("model") or {}).get("validated") if run.model else None)
    return {column: row.get(column) for column in COLUMNS}


def completed(run: Run, out: Path) -> dict | None:
    """The row of a run whose bundle in `out` is complete and was made by the same run, else None."""
    try:
        marker = json.loads((out / MARKER).read_text())
    except (OSError, ValueError):
        return None
    return marker.get("row") if marker.get("identity") == run.identity() else None


def failed_row(run: Run, out: Path, error: str) -> dict:
    """The row of a run that never reported (its worker died, say)."""
    return row_of(run, out, None, error, "")


def execute(spec: Spec, out: Path, workers: int = 2, scheduler: str | None = None, resume: bool = False,
            progress=None) -> list[dict]:
    """Run the sweep on Dask: a LocalCluster of `workers` processes, or the cluster at `scheduler`
    (whose workers must see `out` and the programs at the same paths). Returns the rows in the
    spec's order; `progress(row)` hears each run as it ends (rows of resumed runs too)."""
    from distributed import Client, LocalCluster, as_completed

    runs_dir = out / "runs"
    _remove_attempts(runs_dir, spec.runs)  # (what an earlier sweep's dead workers left)
    rows: list[dict | None] = [None] * len(spec.runs)
    pending = []
    for index, run in enumerate(spec.runs):
        kept = completed(run, runs_dir / run.name()) if resume else None
        if kept is not None:
            rows[index] = kept
            if progress:
                progress(kept)
        else:
            pending.append(index)
    if not pending:
        return rows
    cluster = None
    if scheduler is None:
        cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                               host="127.0.0.1", silence_logs=40)
    try:
        with Client(cluster if cluster is not None else scheduler, timeout="30s") as client:
            futures = {client.submit(run_one, spec.runs[i], str(runs_dir / spec.runs[i].name()), spec.region,
                                     spec.keep, key=f"mcusim-{spec.runs[i].name()}-{uuid.uuid4().hex[:8]}"): i for i in pending}
            for future in as_completed(futures):
                index = futures[future]
                run = spec.runs[index]
                try:
                    row = future.result()
                except Exception as exc:  # (the worker died, or the task raised): a row, not a lost sweep
                    row = failed_row(run, runs_dir / run.name(), f"{type(exc).__name__}: {exc}"[:500])
                rows[index] = row
                if progress:
                    progress(row)
    finally:
        if cluster is not None:
            cluster.close()
    _remove_attempts(runs_dir, spec.runs)
    return rows


def _remove_attempts(runs_dir: Path, runs: list[Run]) -> None:
    """The unfinished attempt folders of these runs (a simulation still writing into one fails)."""
    for run in runs:
        for attempt in runs_dir.glob(f".{run.name()}.*"):
            shutil.rmtree(attempt, ignore_errors=True)


def write_results(rows: list[dict], out: Path) -> list[Path]:
    """DIR/results.csv and DIR/results.parquet (one row per run, the spec's order)."""
    csv_path = out / "results.csv"
    with open(csv_path, "w", newline="") as stream:
        writer = csv.DictWriter(stream, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    import pyarrow
    import pyarrow.parquet

    types = {"exit_code": pyarrow.int64(), "clock_hz": pyarrow.int64(), "cycles": pyarrow.float64(),
             "latency_s": pyarrow.float64(), "energy_j": pyarrow.float64(), "peak_power_w": pyarrow.float64(),
             "peak_memory_bytes": pyarrow.int64(), "validated": pyarrow.bool_(), "host_seconds": pyarrow.float64()}
    schema = pyarrow.schema([(name, types.get(name, pyarrow.string())) for name in COLUMNS])
    parquet_path = out / "results.parquet"
    pyarrow.parquet.write_table(pyarrow.Table.from_pylist(rows, schema=schema), parquet_path)
    return [csv_path, parquet_path]


def read_results(out: Path) -> list[dict]:
    """DIR/results.csv as rows, each cell as its column's type in csv.schema.json (`mcusim pareto`)."""
    from .schemas import csv_rows

    return csv_rows(out / "results.csv")
