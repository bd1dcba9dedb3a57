"""Energy accounting against hand-derived expectations: with a test power model whose
coefficients are known, each rail's energy follows from the run's event counts, the time in
each power state and the voltage; the trace, regions and functions add up to the total."""
import csv
import json

import pytest

import mcusim
from asmbuild import build_elf
from conftest import PAPER_BOARDS

MODEL = """
board = "mcu-m"
reference_core_v = 1.2
default_voltage_range = "range1"
[voltage_ranges.range1]
core_v = 1.2
register_value = 1
[voltage_ranges.range2]
core_v = 1.0
register_value = 2
[[rail]]
name = "core"
static_w = {{ run = 0.002, sleep = 0.0007, stop = 0.00003 }}
static_w_per_mhz = {{ run = 0.0001, sleep = 0.00002 }}
energy_j = {{ alu = {alu}, multiply = 0.0, simd = 0.0, fp = 0.0, branch = 0.0, load = 0.0, store = 0.0 }}
[[rail]]
name = "flash"
energy_j = {{ flash_read = 100e-12 }}
[[rail]]
name = "sram"
energy_j = {{ sram_access = 10e-12 }}
[[rail]]
name = "board"
static_w = {{ run = 0.05, sleep = 0.05, stop = 0.05 }}
"""
ALU = 20e-12

# SysTick every 2000 cycles at the 4 MHz reset clock wakes a WFI loop 20 times (SCR.SLEEPDEEP
# for the stop state).
SLEEPER = """
    .syntax unified
    .cpu cortex-m4
    .thumb
    .text
    .word 0x20001000
    .word reset
    .rept 13
    .word default
    .endr
    .word tick               @ SysTick (exception 15)
    .thumb_func
default:
    b .
    .thumb_func
tick:
    bx lr
    .global reset
    .thumb_func
reset:
    ldr r0, =0xE000ED10      @ SCR
    movs r1, #{scr}
    str r1, [r0]
    ldr r0, =0xE000E010      @ SysTick CTRL, LOAD, VAL
    ldr r1, =1999
    str r1, [r0, #4]
    movs r1, #0
    str r1, [r0, #8]
    movs r1, #7
    str r1, [r0]
    movs r4, #20
again:
    wfi
    subs r4, #1
    bne again
    movs r0, #0x18
    ldr r1, =0x20026
    bkpt 0xab
    .ltorg
"""


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "model.toml"
    path.write_text(MODEL.format(alu=ALU))
    return path


def sleeper(tmp_path, deep: bool):
    return build_elf(tmp_path, f"sleep{int(deep)}", SLEEPER.format(scr=4 if deep else 0))


@pytest.mark.slow
def test_each_rail_follows_from_counts_time_and_voltage(firmware_build, model):
    elf = firmware_build / "mcu-m" / "kws_dscnn-opt.elf"
    high = mcusim.run(elf, "mcu-m", power_model=model)
    low = mcusim.run(elf, "mcu-m", power_model=model, voltage_range="range2")
    assert high.cycles == low.cycles  # the voltage changes energy only
    for result, scale in ((high, 1.0), (low, 1.0 / 1.2)):
        power = result.energy["power"]
        rails = result.energy["energy_by_rail_j"]
        assert power["seconds_by_state"].keys() == {"run"}
        seconds = result.simulated_seconds
        # the board rail is outside the core domain: 50 mW all the time
        assert rails["board"] == pytest.approx(0.05 * seconds, rel=1e-9)
        assert rails["flash"] == pytest.approx(power["events"]["flash_read"] * 100e-12 * scale ** 2, rel=1e-4)  # (coefficients are whole femtojoules)
        assert rails["sram"] == pytest.approx(power["events"]["sram_access"] * 10e-12 * scale ** 2, rel=1e-4)  # (coefficients are whole femtojoules)
        # core: leakage x V, clock tree x f x V^2 (4 MHz at reset, then 80 MHz), ALU instructions x V^2
        clock_seconds = sum(_clock_seconds(result))
        expected = (0.002 * scale * seconds + 0.0001 * clock_seconds * scale ** 2
                    + power["events"]["alu"] * ALU * scale ** 2)
        assert rails["core"] == pytest.approx(expected, rel=1e-4)
        assert result.energy["energy_j"] == pytest.approx(sum(rails.values()), rel=1e-12)
        assert result.energy["average_power_w"] == pytest.approx(result.energy["energy_j"] / seconds, rel=1e-9)
    assert low.energy["power"]["voltage_ranges"] == ["range2"] and low.energy["energy_j"] < high.energy["energy_j"]


def _clock_seconds(result):
    """Seconds x MHz over the run's clock changes."""
    changes = [(0, result.reset_clock_hz)] + [(c["cycle"], c["clock_hz"]) for c in result.clock_changes]
    for (start, hz), (end, _) in zip(changes, changes[1:] + [(result.cycles, 0)]):
        yield (end - start) / hz * hz / 1e6


@pytest.mark.parametrize("deep", [False, True])
def test_sleep_and_stop_states_follow_the_firmware(tmp_path, model, deep):
    result = mcusim.run(sleeper(tmp_path, deep), "mcu-m", power_model=model)
    states = result.energy["power"]["seconds_by_state"]
    asleep = states["stop" if deep else "sleep"]
    assert set(states) == {"run", "stop" if deep else "sleep"} and asleep > 0.8 * result.simulated_seconds
    assert asleep == pytest.approx(_slept_cycles(result) / 4e6, rel=1e-9)  # at the 4 MHz reset clock
    run = states["run"]
    core_static = 0.002 * run + 0.0001 * 4 * run + (0.00003 * asleep if deep else 0.0007 * asleep + 0.00002 * 4 * asleep)
    dynamic = result.energy["power"]["events"]["alu"] * ALU
    assert result.energy["energy_by_rail_j"]["core"] == pytest.approx(core_static + dynamic, rel=1e-6)


def _slept_cycles(result):
    return next(r["exclusive_cycles"] for r in mcusim.run(result.firmware_path, "mcu-m", profile=True).functions
                if r["function"] == "(sleep)")


@pytest.mark.slow
def test_trace_regions_and_functions_add_up(firmware_build, model, tmp_path):
    elf = firmware_build / "mcu-m" / "kws_dscnn-opt.elf"
    result = mcusim.run(elf, "mcu-m", power_model=model, power_trace=True, profile=True, timeline=True,
                        power_bin_us=50)
    result.write_bundle(tmp_path)
    with open(tmp_path / "power.csv") as f:
        rows = list(csv.DictReader(f))
    assert list(rows[0]) == ["time_s", "core_w", "flash_w", "sram_w", "board_w"]
    width = 50e-6
    integral = sum(sum(float(v) for k, v in row.items() if k != "time_s") for row in rows) * width
    assert integral == pytest.approx(result.energy["energy_j"], rel=2e-3)  # (the last bin is partial)
    assert result.energy["peak_power_w"] >= result.energy["average_power_w"]
    assert sum(r["energy_j"] for r in result.functions) == pytest.approx(result.energy["energy_j"], rel=1e-9)
    inference = next(r for r in result.regions if r["name"] == "inference")
    layers = [r for r in result.regions if r["name"] != "inference"]
    assert sum(r["energy_j_total"] for r in layers) < inference["energy_j"] < result.energy["energy_j"]
    assert inference["average_power_w"] == pytest.approx(inference["energy_j"] / inference["seconds_mean"])
    timeline = json.loads((tmp_path / "timeline.json").read_text())
    counters = [e for e in timeline["traceEvents"] if e["ph"] == "C"]
    assert len(counters) == len(rows) and set(counters[0]["args"]) == {"core", "flash", "sram", "board"}
    document = json.loads((tmp_path / "run.json").read_text())
    assert document["energy_j"] == result.energy["energy_j"] and "energy_j" in document["regions"][0]


def test_power_can_be_left_out_and_boards_without_a_model_say_so(firmware_build):
    plain = mcusim.run(firmware_build / "mcu-m" / "hello.elf", "mcu-m", power=False)
    assert plain.energy is None and plain.to_dict()["energy_j"] is None
    qemu = mcusim.run(firmware_build / "mps2-an386" / "hello.elf", "mps2-an386")
    assert qemu.energy is None
    with pytest.raises(ValueError, match="no power model"):
        mcusim.run(firmware_build / "mps2-an386" / "hello.elf", "mps2-an386", voltage_range="range1")


@pytest.mark.parametrize("board", PAPER_BOARDS)
def test_shipped_models_give_energy_on_every_board(firmware_build, board):
    result = mcusim.run(firmware_build / board / "hello.elf", board)
    rails = result.energy["energy_by_rail_j"]
    assert {"core", "flash", "sram", "board"} <= set(rails) and all(j >= 0 for j in rails.values())
    assert result.energy["energy_j"] > 0 and result.energy["power"]["model"].endswith(f"{board}.toml")


def test_function_energies_add_up_with_sleep_and_a_per_cycle_energy(tmp_path):
    path = tmp_path / "cycle.toml"
    path.write_text(MODEL.format(alu=ALU).replace("energy_j = { alu", "energy_j = { cycle = 5e-12, alu"))
    result = mcusim.run(sleeper(tmp_path, False), "mcu-m", power_model=path, profile=True)
    assert result.energy["power"]["seconds_by_state"]["sleep"] > 0
    assert sum(r["energy_j"] for r in result.functions) == pytest.approx(result.energy["energy_j"], rel=1e-9)


def test_a_pinned_clock_picks_the_voltage_where_it_follows_the_clock(firmware_build):
    """Apollo3 burst: at 96 MHz the part runs on its higher supply, pinned or not."""
    pinned = mcusim.run(firmware_build / "mcu-b" / "hello.elf", "mcu-b", clock_hz=96_000_000)
    assert pinned.energy["power"]["voltage_ranges"] == ["burst"]
