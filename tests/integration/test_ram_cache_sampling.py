"""The sampled data cache (machine/ram_cache_sampling.py, `--data-cache`): on mcu-d the loads and
stores of SRAM1/SRAM2 are timed access by access only in windows, and the wait a window measured
is charged per cycle in between. What users rely on: the firmware computes the same thing, the
cycles stay close to the exact model's, a run shorter than the exact start is exact, the same
run gives the same cycles, pausing changes nothing, and run.json says what was sampled.

cached-ram sweeps a 16 KB buffer in SRAM1 (four times the L1 data cache) at a steady rate: with
a schedule shrunk to fit its 3.3M cycles, most of the run is estimated."""
import json

import pytest

import mcusim.machine.ram_cache_sampling as sampling
from mcusim.api import Simulator, run

SHORT_SCHEDULE = (300_000, 600_000, 150_000)  # exact start, period, window


@pytest.fixture
def short_schedule(monkeypatch):
    exact, period, window = SHORT_SCHEDULE
    monkeypatch.setattr(sampling, "EXACT_CYCLES", exact)
    monkeypatch.setattr(sampling, "PERIOD_CYCLES", period)
    monkeypatch.setattr(sampling, "WINDOW_CYCLES", window)


@pytest.fixture(scope="module")
def exact(firmware_build):
    result = run(firmware_build / "mcu-d" / "cached-ram.elf", "mcu-d", data_cache="exact")
    assert result.exit_code == 0 and result.stalls["data_wait"] > 500_000, result.stdout
    return result


def test_sampled_timing_computes_the_same_and_estimates_the_wait(firmware_build, exact, short_schedule):
    sampled = run(firmware_build / "mcu-d" / "cached-ram.elf", "mcu-d")
    assert (sampled.stdout, sampled.exit_code, sampled.instructions) == (exact.stdout, 0, exact.instructions)
    assert sampled.dcache["untimed_cycles"] > sampled.cycles / 2
    assert sampled.dcache["estimated_wait_cycles"] > 0
    # the hook was off: far fewer look-ups than the exact run's
    assert sampled.dcache["hits"] + sampled.dcache["misses"] < (exact.dcache["hits"] + exact.dcache["misses"]) / 2
    assert sampled.cycles == pytest.approx(exact.cycles, rel=0.01)
    assert sampled.stalls["data_wait"] == pytest.approx(exact.stalls["data_wait"], rel=0.02)
    assert sampled.dwt["lsucnt"] - exact.dwt["lsucnt"] == sampled.cycles - exact.cycles  # LSUCNT counts it


def test_the_same_run_gives_the_same_cycles_and_pausing_changes_nothing(firmware_build, short_schedule):
    elf = firmware_build / "mcu-d" / "cached-ram.elf"
    plain = run(elf, "mcu-d")
    again = run(elf, "mcu-d")
    assert (again.cycles, again.dcache) == (plain.cycles, plain.dcache)
    sim = Simulator(elf, "mcu-d")
    exact_start, period, window = SHORT_SCHEDULE
    for switch in (exact_start - window, exact_start, exact_start + period - window, exact_start + period):
        while sim.step(1000).cycles < switch - 3_000:
            pass
        while (stop := sim.step(3)).cycles < switch + 3_000:  # pauses inside blocks, across the switch
            assert stop.reason == "step"
    sim.add_breakpoint("printf")
    assert sim.run_until().reason == "breakpoint"
    result = sim.run()
    assert (result.cycles, result.dcache, result.stdout) == (plain.cycles, plain.dcache, plain.stdout)


def test_a_run_shorter_than_the_exact_start_is_exact(firmware_build):
    elf = firmware_build / "mcu-d" / "sram-timing.elf"
    sampled, exact = run(elf, "mcu-d"), run(elf, "mcu-d", data_cache="exact")
    assert sampled.cycles < sampling.EXACT_CYCLES
    assert (sampled.cycles, sampled.stdout, sampled.dcache) == (exact.cycles, exact.stdout, exact.dcache)
    assert "untimed_cycles" not in sampled.dcache


def test_exact_times_every_access(firmware_build, exact, short_schedule):
    again = run(firmware_build / "mcu-d" / "cached-ram.elf", "mcu-d", data_cache="exact")
    assert (again.cycles, again.dcache) == (exact.cycles, exact.dcache)
    assert "untimed_cycles" not in again.dcache


def test_a_board_without_cached_ram_is_not_sampled(firmware_build, short_schedule):
    """mcu-m's ART data cache serves only flash (no memory hook to switch): one result either way."""
    elf = firmware_build / "mcu-m" / "cached-ram.elf"
    sampled, exact = run(elf, "mcu-m"), run(elf, "mcu-m", data_cache="exact")
    assert (sampled.cycles, sampled.dcache) == (exact.cycles, exact.dcache)


def test_the_cli_records_and_reports_the_sampling(firmware_build, tmp_path, short_schedule):
    from click.testing import CliRunner

    from mcusim.cli import main

    out = tmp_path / "bundle"
    done = CliRunner().invoke(main, ["run", str(firmware_build / "mcu-d" / "cached-ram.elf"), "--board", "mcu-d",
                                     "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "RAM accesses sampled" in done.output
    record = json.loads((out / "run.json").read_text())
    assert record["settings"]["data_cache"] == "sampled"
    assert record["dcache"]["untimed_cycles"] > 0 and record["dcache"]["estimated_wait_cycles"] > 0
    bad = CliRunner().invoke(main, ["run", str(firmware_build / "mcu-d" / "cached-ram.elf"), "--board", "mcu-d",
                                    "--data-cache", "sometimes"])
    assert bad.exit_code == 2 and "sometimes" in bad.output


def test_a_bad_mode_is_refused(firmware_build):
    with pytest.raises(ValueError, match="data_cache"):
        Simulator(firmware_build / "mcu-d" / "hello.elf", "mcu-d", data_cache="fast")
