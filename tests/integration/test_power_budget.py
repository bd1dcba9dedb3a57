"""`mcusim power-budget`, `mcusim dvfs` and `mcusim power-plot` on the kit's keyword-spotting
model, with a power model of round numbers written here, so that every expected figure is
computed by hand from the constants below (not by the code under test)."""
import dataclasses
import json
import shutil

import pytest
from click.testing import CliRunner

import mcusim
from mcusim.cli import main
from mcusim.power.budget import BudgetError, dvfs_plan, power_budget
from mcusim.power.model import load_power_model

PNG = b"\x89PNG\r\n\x1a\n"

# the test model (mcu-m): core static and per-MHz power per state, a board rail that does not scale
CORE_STATIC = {"run": 0.001, "sleep": 0.0005, "stop": 0.00001}
CORE_PER_MHZ = {"run": 0.0002, "sleep": 0.00005}
BOARD_STATIC = {"run": 0.002, "sleep": 0.002, "stop": 0.0015}
WAKEUP_US = {"sleep": 50.0, "stop": 200.0}
MODEL = f"""
board = "mcu-m"
reference_core_v = 1.2
default_voltage_range = "range1"
dvfs_clocks_hz = [10_000_000, 30_000_000]
[voltage_ranges.range1]
core_v = 1.2
register_value = 1
max_clock_hz = 80_000_000
[voltage_ranges.range2]
core_v = 1.0
register_value = 2
max_clock_hz = 26_000_000
[wakeup_us]
sleep = {WAKEUP_US['sleep']}
stop = {WAKEUP_US['stop']}
[[rail]]
name = "core"
static_w = {{ run = {CORE_STATIC['run']}, sleep = {CORE_STATIC['sleep']}, stop = {CORE_STATIC['stop']} }}
static_w_per_mhz = {{ run = {CORE_PER_MHZ['run']}, sleep = {CORE_PER_MHZ['sleep']} }}
energy_j = {{ alu = 10e-12, multiply = 15e-12, simd = 20e-12, fp = 20e-12, branch = 12e-12, load = 15e-12, store = 15e-12 }}
[[rail]]
name = "flash"
energy_j = {{ flash_read = 50e-12 }}
[[rail]]
name = "sram"
energy_j = {{ sram_access = 8e-12 }}
[[rail]]
name = "board"
static_w = {{ run = {BOARD_STATIC['run']}, sleep = {BOARD_STATIC['sleep']}, stop = {BOARD_STATIC['stop']} }}
"""


@pytest.fixture(scope="module")
def model_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("model") / "test-mcu-m.toml"
    path.write_text(MODEL)
    return path


@pytest.fixture(scope="module")
def bundle(firmware_build, model_file, tmp_path_factory):
    """kws_dscnn on mcu-m (80 MHz, range 1; it never sleeps) with its power trace and timeline."""
    out = tmp_path_factory.mktemp("kws")
    mcusim.run(firmware_build / "mcu-m" / "kws_dscnn-opt.elf", "mcu-m", power_model=model_file, power_trace=True,
               timeline=True).write_bundle(out)
    return out


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def expected_average(e_active, t_active, period, state, clock_mhz=80.0, scale=1.0):
    """By hand: (E_active + P_sleep x (T - t_active) + wakeup x E_active / t_active) / T."""
    p_sleep = (CORE_STATIC[state] * scale + CORE_PER_MHZ.get(state, 0.0) * clock_mhz * scale ** 2
               + BOARD_STATIC[state])
    wakeup = WAKEUP_US[state] * 1e-6 * e_active / t_active
    return (e_active + p_sleep * (period - t_active) + wakeup) / period, p_sleep, wakeup


@pytest.mark.slow
def test_budget_arithmetic_pass_fail_and_battery(bundle):
    run = json.loads((bundle / "run.json").read_text())
    assert run["clock_hz"] == 80_000_000 and run["power"]["voltage_ranges"] == ["range1"]
    assert run["power"]["seconds_by_state"].get("sleep", 0) == 0  # (so "sleep" is assumed)
    inference = next(r for r in run["regions"] if r["name"] == "inference")
    e_active, t_active = inference["energy_j"], inference["seconds_mean"]
    assert 0.1 < t_active < 0.5 and e_active > 0
    period = 2.0
    average, p_sleep, wakeup = expected_average(e_active, t_active, period, "sleep")
    assert p_sleep == pytest.approx(0.0005 + 0.004 + 0.002)  # the model's numbers at 80 MHz, range 1

    done = invoke("power-budget", bundle, "--period-s", period, "--budget-mw", average * 1e3 * 1.01,
                  "--battery-mah", 1000, "--battery-v", 3.0, "--json")
    assert done.exit_code == 0, done.output
    figures = json.loads(done.stdout)
    assert figures["active"]["region"] == "inference"
    assert figures["active"]["energy_j"] == e_active and figures["active"]["seconds"] == t_active
    assert figures["sleep"]["state"] == "sleep" and figures["sleep"]["assumed"] is True
    assert figures["sleep"]["power_w"] == pytest.approx(p_sleep, rel=1e-12)
    assert figures["wakeup"]["energy_j"] == pytest.approx(wakeup, rel=1e-12)
    assert figures["average_power_w"] == pytest.approx(average, rel=1e-12)
    assert figures["pass"] is True
    hours = 1000 * 3.0 * 3.6 / average / 3600
    assert figures["battery"]["life_h"] == pytest.approx(hours, rel=1e-12)
    assert figures["battery"]["life_days"] == pytest.approx(hours / 24, rel=1e-12)
    # at that shortest period the average is exactly the budget
    budget_w = average * 1.01
    at_min = expected_average(e_active, t_active, figures["min_period_s"], "sleep")[0]
    assert at_min == pytest.approx(budget_w, rel=1e-9)

    text = invoke("power-budget", bundle, "--period-s", period, "--budget-mw", average * 1e3 * 0.99,
                  "--battery-mah", 1000, "--battery-v", 3.0)
    assert text.exit_code == 1, text.output
    assert "FAIL" in text.stdout and 'region "inference"' in text.stdout
    assert "assumed: the firmware never slept" in text.stdout
    assert f"{hours:,.1f} h" in text.stdout
    assert f"{average * 1e3:.3f} mW" in text.stdout


@pytest.mark.slow
def test_budget_region_option_and_usage_errors(bundle):
    run = json.loads((bundle / "run.json").read_text())
    dw1 = next(r for r in run["regions"] if r["name"] == "1_DEPTHWISE_CONV_2D")
    done = invoke("power-budget", bundle, "--period-s", 1, "--budget-mw", 1000, "--region", "1_DEPTHWISE_CONV_2D",
                  "--json")
    assert done.exit_code == 0, done.output
    figures = json.loads(done.stdout)
    assert figures["active"]["energy_j"] == dw1["energy_j"] and figures["active"]["seconds"] == dw1["seconds_mean"]
    assert figures["average_power_w"] == pytest.approx(
        expected_average(dw1["energy_j"], dw1["seconds_mean"], 1.0, "sleep")[0], rel=1e-12)
    too_short = invoke("power-budget", bundle, "--period-s", 0.01, "--budget-mw", 1000)
    assert too_short.exit_code == 2 and "shorter than the active time" in too_short.output
    unknown = invoke("power-budget", bundle, "--period-s", 1, "--budget-mw", 1000, "--region", "nope")
    assert unknown.exit_code == 2 and "no region 'nope'" in unknown.output
    half_battery = invoke("power-budget", bundle, "--period-s", 1, "--budget-mw", 1000, "--battery-mah", 100)
    assert half_battery.exit_code == 2


@pytest.mark.slow
def test_budget_sleeps_in_the_deepest_state_the_firmware_used(bundle):
    run = json.loads((bundle / "run.json").read_text())
    run["power"]["seconds_by_state"].update(sleep=0.01, stop=0.02)  # as if the firmware had slept in both
    inference = next(r for r in run["regions"] if r["name"] == "inference")
    figures = power_budget(run, 1.0, 0.05)
    average, p_sleep, wakeup = expected_average(inference["energy_j"], inference["seconds_mean"], 1.0, "stop")
    assert figures["sleep"]["state"] == "stop" and not figures["sleep"]["assumed"]
    assert figures["sleep"]["power_w"] == pytest.approx(0.00001 + 0.0015, rel=1e-12)
    assert figures["wakeup"]["energy_j"] == pytest.approx(wakeup, rel=1e-12)
    assert figures["average_power_w"] == pytest.approx(average, rel=1e-12)
    run["regions"] = [r for r in run["regions"] if r["name"] != "inference"]  # no inference: the whole run
    whole = power_budget(run, 1.0, 0.05)
    assert whole["active"]["region"] is None and whole["active"]["seconds"] == run["simulated_seconds"]
    assert whole["active"]["energy_j"] == run["energy_j"]
    run["power"] = None
    with pytest.raises(BudgetError):
        power_budget(run, 1.0, 0.05)


def test_dvfs_plan_from_the_model(model_file):
    model = load_power_model("mcu-m", model_file)
    assert model.max_clock_hz == {"range1": 80_000_000, "range2": 26_000_000}
    assert dvfs_plan(model, 80_000_000) == [(10_000_000, "range2"), (30_000_000, "range1")]  # dvfs_clocks_hz
    bare = dataclasses.replace(model, dvfs_clocks_hz=())
    assert dvfs_plan(bare, 80_000_000) == [(20_000_000, "range2"), (40_000_000, "range1"), (80_000_000, "range1")]
    with pytest.raises(BudgetError):
        dvfs_plan(model, 80_000_000, [100_000_000])


@pytest.mark.slow
def test_dvfs_two_clocks_table_and_plot(firmware_build, model_file, tmp_path):
    plot = tmp_path / "dvfs.png"
    firmware = firmware_build / "mcu-m" / "kws_dscnn-opt.elf"
    done = invoke("dvfs", firmware, "--board", "mcu-m", "--power-model", model_file, "--clock-hz", 80_000_000,
                  "--clock-hz", 20_000_000, "--plot", plot, "--json")
    assert done.exit_code == 0, done.output
    table = json.loads(done.stdout)
    slow, fast = table["rows"]
    assert (slow["clock_hz"], slow["voltage_range"]) == (20_000_000, "range2")  # range 2 allows 20 MHz
    assert (fast["clock_hz"], fast["voltage_range"]) == (80_000_000, "range1")
    assert slow["latency_s"] > fast["latency_s"] * 2  # 4x slower clock; flash wait states may narrow it
    for row in (slow, fast):
        assert row["average_power_w"] == pytest.approx(row["energy_j"] / row["latency_s"])
        assert row["what"].startswith('region "inference"')
    assert table["energy_optimal_hz"] == min(table["rows"], key=lambda r: r["energy_j"])["clock_hz"]
    assert "dvfs: 2/2" in done.stderr
    png = plot.read_bytes()
    assert png.startswith(PNG) and len(png) > 10_000


@pytest.mark.slow
def test_power_plot_writes_pngs(bundle, tmp_path):
    out = tmp_path / "power.png"
    done = invoke("power-plot", bundle, "--out", out)
    assert done.exit_code == 0, done.output
    assert "note:" not in done.stderr  # trace, timeline and regions all present
    png = out.read_bytes()
    assert png.startswith(PNG) and len(png) > 20_000
    bare = tmp_path / "bare"  # without power.csv and timeline.json: the region bars only, and a note
    shutil.copytree(bundle, bare)
    (bare / "power.csv").unlink()
    (bare / "timeline.json").unlink()
    done = invoke("power-plot", bare)
    assert done.exit_code == 0, done.output
    assert "no power trace" in done.stderr
    assert (bare / "power.png").read_bytes().startswith(PNG)
    quiet = invoke("power-plot", bare, "-q")
    assert quiet.exit_code == 0 and quiet.stderr == ""
