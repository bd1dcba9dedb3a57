"""The power model's figures stay bounded and well-formed whatever the run and the model file:
peak power in bounded memory, a bounded power trace, power models and calibration
measurements checked before use (issue 14)."""
import json
import re
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mcusim import examples
from mcusim.api import Simulator
from mcusim.cli import main
from mcusim.config import ConfigError
from mcusim.power.model import load_power_model
from mcusim.power.energy import MAX_COUNTER_BINS, MAX_TRACE_BINS, RunEnergy, summary

HELLO = examples.path("hello", "mcu-d")
SHAPES = examples.path("odd_shapes-opt", "mcu-d")


def run_energy(firmware, **options):
    sim = Simulator(firmware, "mcu-d", **options)
    result = sim.run()
    return result, RunEnergy(sim.machine.power, result.cycles, result.simulated_seconds)


def trace_maximum(energy, bin_us):
    """Peak power as it was computed before: the maximum of the whole trace."""
    return float(sum(energy.trace(bin_us)[1].values()).max())


@pytest.fixture(scope="module")
def shapes():
    return run_energy(SHAPES)


@pytest.fixture(scope="module")
def slow_hello():
    """hello at a 25 Hz clock: 306 s simulated, 3 million power bins of 100 us."""
    return run_energy(HELLO, clock_hz=25)


@pytest.mark.parametrize("bin_us", [100.0, 7.3, 1.0, 0.05, 1e6])
def test_peak_power_is_the_maximum_of_the_trace(shapes, bin_us):
    result, energy = shapes
    assert energy.peak_power(bin_us) == trace_maximum(energy, bin_us)
    if bin_us == 100.0:
        assert result.energy["peak_power_w"] == trace_maximum(energy, bin_us)


def test_peak_power_of_a_long_slow_run_takes_bounded_memory(slow_hello):
    result, energy = slow_hello
    assert energy.bin_count(100.0) > 3 * MAX_TRACE_BINS
    tracemalloc.start()
    try:
        figures = summary(energy, 100.0, {})
        _, peak_bytes = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak_bytes < 32 << 20  # (the whole trace: 3 million bins x 5 rails, several arrays each, ~0.5 GB)
    # the bins around the knots hold the peak: the same as every bin's maximum, up to rounding
    exact = 0.0
    for first in range(0, energy.bin_count(100.0), 1 << 18):
        index = np.arange(first, min(first + (1 << 18), energy.bin_count(100.0)))
        exact = max(exact, float(sum(energy.bins(index, 100.0)[1].values()).max()))
    assert figures["peak_power_w"] == pytest.approx(exact, rel=1e-9)
    assert result.energy["peak_power_w"] == figures["peak_power_w"]


@pytest.mark.parametrize("timeline, most", [(False, MAX_TRACE_BINS), (True, MAX_COUNTER_BINS)])
def test_a_power_trace_too_long_for_its_bins_is_widened_with_a_warning(timeline, most):
    warnings = []
    sim = Simulator(HELLO, "mcu-d", clock_hz=25, power_trace=True, timeline=timeline, on_warning=warnings.append)
    result = sim.run()
    times, watts = result.power_trace
    assert len(times) <= most
    widened = result.energy["power"]["trace_bin_us"]
    assert widened > 100.0 and widened % 100.0 == 0
    assert times[1] - times[0] == pytest.approx(widened * 1e-6)
    assert any("--power-bin-us" in w and f"{widened:g} us bins" in w for w in warnings)
    assert result.energy["power"]["bin_us"] == 100.0  # (the peak stays over the bins asked for)


# power models -----------------------------------------------------------------------------------
MODEL = (Path(__file__).resolve().parents[2] / "powermodels" / "mcu-d.toml").read_text()
BAD_MODELS = {  # what is wrong: (text to replace in mcu-d.toml, its replacement, what the message names)
    "nan energy": ("branch = 9.497e-11", "branch = nan", "energy_j.branch"),
    "infinite static power": ("run = 2.970e-3", "run = inf", "static_w.run"),
    "negative energy": ("flash_read = 3.574e-10", "flash_read = -3.574e-10", "energy_j.flash_read"),
    "string energy": ("sram_access = 1.191e-10", 'sram_access = "1e-10"', "energy_j.sram_access"),
    "string supply": ("supply_v = 3.3", 'supply_v = "3.3"', "supply_v"),
    "nan core voltage": ("core_v = 1.0", "core_v = nan", "core_v"),
    "zero reference voltage": ("reference_core_v = 1.4", "reference_core_v = 0.0", "reference_core_v"),
    "energy too large for the counters": ("cycle = 9.497e-10", "cycle = 1.0", "energy_j.cycle"),
    "boolean register value": ("register_value = 3", "register_value = true", "register_value"),
    "negative wake-up": ("stop = 20.0", "stop = -20.0", "wakeup_us.stop"),
    "rail without a name": ('name = "core"', 'nom = "core"', "a rail needs a name"),
    "string for a table": ("static_w_per_mhz = { run = 0.0, sleep = 0.0 }", 'static_w_per_mhz = "fast"',
                           "static_w_per_mhz: expected a table"),
    "another board's model": ('board = "mcu-d"', 'board = "mcu-m"', "mcu-m, not mcu-d"),
}


def bad_model(tmp_path, change) -> Path:
    old, new, _ = change
    assert old in MODEL
    path = tmp_path / "bad.toml"
    path.write_text(MODEL.replace(old, new, 1))
    return path


@pytest.mark.parametrize("what", BAD_MODELS)
def test_a_malformed_power_model_is_refused_naming_the_key(tmp_path, what):
    with pytest.raises(ConfigError, match=re.escape(BAD_MODELS[what][2])):
        load_power_model("mcu-d", bad_model(tmp_path, BAD_MODELS[what]))


def test_a_binary_file_is_not_a_power_model(tmp_path):
    path = tmp_path / "model.toml"
    path.write_bytes(bytes(range(256)) * 4)
    with pytest.raises(ConfigError, match="is not a power model"):
        load_power_model("mcu-d", path)


@pytest.mark.parametrize("what", ["nan energy", "string supply", "another board's model", "binary"])
def test_run_with_a_bad_power_model_is_a_usage_error(tmp_path, what):
    if what == "binary":
        path = tmp_path / "model.toml"
        path.write_bytes(b"\xff\xfe\x00binary" * 50)
    else:
        path = bad_model(tmp_path, BAD_MODELS[what])
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["run", "--example", "hello", "--board", "mcu-d", "--power-model", str(path),
                                       "--out", str(out), "--quiet"])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "--power-model" in result.output and str(path) in result.output
    assert not (out / "run.json").exists()


def test_run_json_is_strict_json_with_undefined_figures_as_null(tmp_path):
    result = Simulator(HELLO, "mcu-d").run()
    result.energy["peak_power_w"] = float("nan")  # (as a figure undefined for a run would be)
    result.regions = [{"name": "r", "count": 1, "average_power_w": float("inf")}]
    path = result.write_bundle(tmp_path)

    def refuse(constant):
        raise AssertionError(f"run.json holds {constant}, which is not JSON")

    run = json.loads(path.read_text(), parse_constant=refuse)
    assert run["peak_power_w"] is None and run["regions"][0]["average_power_w"] is None
    assert run["energy_j"] == result.energy["energy_j"]


def test_power_bin_width_must_be_finite_and_at_least_a_nanosecond():
    for width in (float("nan"), float("inf"), 0.0, 1e-300):
        with pytest.raises(ValueError, match="power bin width"):
            Simulator(HELLO, "mcu-d", power_bin_us=width)


@pytest.mark.parametrize("width", ["nan", "inf", "1e-300"])
def test_run_with_a_power_bin_width_out_of_range_is_a_usage_error(width):
    result = CliRunner().invoke(main, ["run", "--example", "hello", "--board", "mcu-d", "--power-bin-us", width])
    assert result.exit_code == 2 and "--power-bin-us" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


# calibration ---------------------------------------------------------------------------------
def calibrate(tmp_path, rows, *fit):
    csv = tmp_path / "measurements.csv"
    csv.write_text("firmware,clock_hz,voltage_range,energy_j,power_w,time_s\n" + "".join(f"{row}\n" for row in rows))
    fit_args = [arg for term in fit for arg in ("--fit", term)]
    return CliRunner().invoke(main, ["calibrate", str(csv), "--board", "mcu-d", "--out", str(tmp_path / "fit.toml"),
                                     *fit_args])


@pytest.mark.parametrize("energy", ["-1e-5", "0", "nan", "inf", "x"])
def test_calibrate_refuses_a_measured_energy_that_is_not_positive_naming_the_row(tmp_path, energy):
    result = calibrate(tmp_path, [f"{HELLO},,,3e-5,,", f"{HELLO},,,{energy},,"])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "measurements.csv:3" in result.output and "energy_j" in result.output
    assert "R^2" not in result.output


@pytest.mark.parametrize("rows", [1, 2], ids=["one run", "equal measurements"])
def test_calibrate_says_r_squared_is_undefined_without_spread(tmp_path, rows):
    result = calibrate(tmp_path, [f"{HELLO},,,3e-5,,"] * rows, "board.static_w.run")
    assert result.exit_code == 0, result.output
    assert "R^2 = n/a" in result.output and "R^2 = 1.0" not in result.output
    assert "R^2 n/a" in (tmp_path / "fit.toml").read_text().splitlines()[0]
