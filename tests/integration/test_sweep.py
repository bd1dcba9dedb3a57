"""`mcusim sweep` on Dask distributed: a local cluster of two workers over 2 boards x 2 clocks x 2
programs, the same rows from one worker, --resume after an interrupted sweep, failing runs as
rows, a worker killed mid-run, a scheduler started here on the loopback address, and `mcusim
pareto` on the results."""
import csv
import json
import os
import signal
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from mcusim import sweep as S
from mcusim.cli import main

pytestmark = pytest.mark.slow  # eight simulations per sweep, each its own process

BOARDS, CLOCKS, PROGRAMS = ["mcu-s", "mcu-m"], ["nominal", 32_000_000], ["hello", "micro_speech-opt"]


def _spec(firmware_build: Path, folder: Path) -> Path:
    spec = folder / "spec.toml"
    firmware = ", ".join(f'"{firmware_build}/{{board}}/{p}.elf"' for p in PROGRAMS)
    spec.write_text(f"[axes]\nboards = {json.dumps(BOARDS)}\nclocks = [\"nominal\", 32_000_000]\n"
                    f"firmware = [{firmware}]\n[run]\nmax_cycles = 200_000_000\n[keep]\nfiles = [\"run.json\"]\n")
    return spec


def _sweep(*args) -> tuple[int, str]:
    done = CliRunner().invoke(main, ["sweep", *map(str, args)])
    return done.exit_code, done.output


def _rows(out: Path) -> list[dict]:
    with open(out / "results.csv", newline="") as stream:
        return list(csv.DictReader(stream))


def _stable(rows: list[dict]) -> list[dict]:
    """What must not depend on where or how often it ran: all but host time and bundle path."""
    return [{k: v for k, v in row.items() if k not in ("host_seconds", "bundle")} for row in rows]


@pytest.fixture(scope="module")
def swept(firmware_build, tmp_path_factory):
    folder = tmp_path_factory.mktemp("sweep")
    spec = _spec(firmware_build, folder)
    code, output = _sweep(spec, "--out", folder / "two", "--workers", 2)
    assert code == 0, output
    return spec, folder


def test_two_workers_run_the_product_in_the_spec_s_order(swept):
    spec, folder = swept
    out = folder / "two"
    rows = _rows(out)
    expected = [(b, str(c), p) for b in BOARDS for c in CLOCKS for p in PROGRAMS]
    assert [(r["board"], r["clock"], Path(r["program"]).stem) for r in rows] == expected
    for row in rows:
        assert row["exit_code"] == "0" and not row["error"]
        document = json.loads((Path(row["bundle"]) / "run.json").read_text())
        assert float(row["cycles"]) > 0 and int(row["clock_hz"]) == document["clock_hz"]
        if row["clock"] != "nominal":
            assert document["clock_hz"] == 32_000_000 and document["clock_pinned"]
        inference = next((r for r in document["regions"] if r["name"] == "inference"), None)
        if inference:  # the model: its inference's latency and energy, not the whole run's
            assert float(row["latency_s"]) == pytest.approx(inference["seconds_mean"])
            assert float(row["energy_j"]) == pytest.approx(inference["energy_j"])
        else:
            assert float(row["latency_s"]) == pytest.approx(document["simulated_seconds"])
        memory = document["memory"]
        assert int(row["peak_memory_bytes"]) == memory["ram_bytes"] + memory["stack_peak_bytes"] + \
            memory["heap_peak_bytes"]
        kept = {entry.name for entry in Path(row["bundle"]).iterdir()}
        assert kept == {"run.json", "stderr.txt", S.MARKER}  # [keep]: regions.csv went
    import pyarrow.parquet

    table = pyarrow.parquet.read_table(out / "results.parquet").to_pylist()
    assert [r["id"] for r in table] == [r["id"] for r in rows] and table[0]["exit_code"] == 0
    assert (out / "pareto.png").read_bytes()[:4] == b"\x89PNG"
    assert not list((out / "runs").glob(".*"))  # no attempt folder left behind


def test_one_worker_gives_the_same_rows(swept):
    spec, folder = swept
    code, output = _sweep(spec, "--out", folder / "one", "--workers", 1)
    assert code == 0, output
    assert _stable(_rows(folder / "one")) == _stable(_rows(folder / "two"))


def test_resume_runs_only_what_an_interrupted_sweep_left(swept):
    spec, folder = swept
    out = folder / "two"
    runs = sorted((out / "runs").iterdir())
    lost = runs[3]
    (lost / S.MARKER).unlink()  # as if the sweep stopped before this run completed
    before = {run.name: (run / "run.json").stat().st_mtime_ns for run in runs}
    code, output = _sweep(spec, "--out", out, "--workers", 1, "--resume")
    assert code == 0, output
    after = {run.name: (run / "run.json").stat().st_mtime_ns for run in sorted((out / "runs").iterdir())}
    assert [name for name in before if before[name] != after[name]] == [lost.name]
    assert _stable(_rows(out)) == _stable(_rows(folder / "one"))


def test_failing_runs_are_rows_with_their_exit_code(firmware_build, tmp_path):
    not_elf = tmp_path / "notes.elf"
    not_elf.write_text("not firmware\n")
    spec = tmp_path / "spec.toml"
    spec.write_text(f'[[runs]]\nboard = "mcu-s"\nfirmware = "{firmware_build}/mcu-s/hello.elf"\n'
                    f'[[runs]]\nboard = "mcu-s"\nfirmware = "{not_elf}"\n'
                    f'[[runs]]\nboard = "mcu-s"\nfirmware = "{firmware_build}/mcu-s/coremark-like.elf"\n'
                    f'[run]\nmax_cycles = 500_000\n')
    code, output = _sweep(spec, "--out", tmp_path / "out", "--workers", 2)
    assert code == 1, output
    rows = _rows(tmp_path / "out")
    assert [r["exit_code"] for r in rows] == ["0", "3", "124"]
    assert "not" in rows[1]["error"] and rows[1]["cycles"] == "" and rows[2]["cycles"] != ""


def test_a_worker_killed_mid_run_loses_no_row(firmware_build, tmp_path):
    """A cluster whose scheduler listens on the loopback address, started here; one of its
    workers is killed while it runs a simulation: the sweep still ends with a row per run."""
    from distributed import Client, LocalCluster

    spec = S.build(["mps2-an386"], [S.NOMINAL], [], [f"{firmware_build}/mps2-an386/{p}.elf"
                                                     for p in ("coremark-like", "dhrystone-like", "bench", "hello")],
                   [], {})
    with LocalCluster(n_workers=2, threads_per_worker=1, host="127.0.0.1", dashboard_address=None,
                      silence_logs=40) as cluster, Client(cluster) as client:
        assert cluster.scheduler_address.startswith("tcp://127.0.0.1:")
        workers = set(client.run(os.getpid).values())
        rows = []
        sweep = threading.Thread(target=lambda: rows.extend(S.execute(spec, tmp_path, scheduler=cluster.scheduler_address)))
        sweep.start()
        killed = _kill_a_worker_running_a_simulation(workers, tmp_path, deadline=time.monotonic() + 60)
        sweep.join(timeout=300)
        assert not sweep.is_alive()
    assert killed
    assert [Path(r["program"]).stem for r in rows] == ["coremark-like", "dhrystone-like", "bench", "hello"]
    # the killed worker's run was retried elsewhere, or is a row saying what happened
    assert all(r["exit_code"] == 0 or r["error"] for r in rows)
    assert sum(r["exit_code"] == 0 for r in rows) >= 3


def _kill_a_worker_running_a_simulation(workers: set[int], out: Path, deadline: float) -> bool:
    """SIGKILL the worker whose child is simulating into `out`, once one is."""
    while time.monotonic() < deadline:
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            if str(out) in command and "mcusim.launch" in command and parent in workers:
                os.kill(parent, signal.SIGKILL)
                return True
        time.sleep(0.05)
    return False


def test_pareto_lists_the_front_and_plots_it(swept):
    _spec_file, folder = swept
    out = folder / "two"
    done = CliRunner().invoke(main, ["pareto", str(out), "--x", "latency", "--y", "energy", "-o", str(out / "p.png")])
    assert done.exit_code == 0, done.output
    rows = S.read_results(out)
    front = [rows[i]["id"] for i in __import__("mcusim.analysis.pareto", fromlist=["front"]).front(
        rows, "latency_s", "energy_j")]
    listed = [line.split()[0] for line in done.stdout.splitlines()[1:]]
    assert listed == [name[:48] for name in front] and front
    for name in front:  # nothing beats a front run on both
        a = next(r for r in rows if r["id"] == name)
        assert not any(b["latency_s"] <= a["latency_s"] and b["energy_j"] <= a["energy_j"] and
                       (b["latency_s"], b["energy_j"]) != (a["latency_s"], a["energy_j"]) for b in rows
                       if b["latency_s"] is not None and b["energy_j"] is not None)
    assert (out / "p.png").read_bytes()[:4] == b"\x89PNG"
    bad = CliRunner().invoke(main, ["pareto", str(out), "--x", "speed"])
    assert bad.exit_code == 2 and "not a metric" in bad.output


def test_bad_specs_are_usage_errors(tmp_path):
    spec = tmp_path / "spec.toml"
    spec.write_text('[axes]\nboards = ["mcu-x"]\nfirmware = ["missing.elf"]\n')
    code, output = _sweep(spec, "--out", tmp_path / "out")
    assert code == 2 and "missing.elf: no such file" in output
    spec.write_text('[axes]\nboard = ["mcu-s"]\n')
    code, output = _sweep(spec, "--out", tmp_path / "out")
    assert code == 2 and "unknown axes board" in output
    code, output = _sweep("--example-spec")
    assert code == 0 and "[axes]" in output
    example = tmp_path / "example.toml"
    example.write_text(output)
    code, output = _sweep(example, "--out", tmp_path / "out")
    assert code == 2 and "no such file" in output  # the example's paths are placeholders
