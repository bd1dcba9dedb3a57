"""The exact function profile (--profile): every cycle charged to a function, calls counted,
exception overhead and handlers kept apart, and the run's timing unchanged by profiling."""
import pytest

import mcusim
from clirun import run_cli


def by_name(result):
    return {row["function"]: row for row in result.functions}


@pytest.mark.slow
def test_every_cycle_is_charged_to_a_function(firmware_build):
    elf = firmware_build / "mcu-m" / "kws_dscnn-opt.elf"
    profiled = mcusim.run(elf, "mcu-m", profile=True)
    plain = mcusim.run(elf, "mcu-m")
    assert plain.functions == [] and profiled.cycles == plain.cycles  # profiling costs no simulated time
    assert sum(row["exclusive_cycles"] for row in profiled.functions) == profiled.cycles
    rows = by_name(profiled)
    # kws_dscnn: 5 convolutions (conv, pw1-pw4) and 4 depthwise layers, one call each
    assert rows["tfl_conv_opt"]["calls"] == 5 and rows["tfl_depthwise_opt"]["calls"] == 4
    assert rows["main"]["calls"] == 1 and rows["tfl_model_run"]["calls"] == 1
    assert profiled.functions[0]["function"] == "tfl_conv_opt"  # the most expensive first


def test_interrupt_handlers_are_charged_their_own_cycles(firmware_build):
    result = mcusim.run(firmware_build / "mcu-m" / "exceptions.elf", "mcu-m", profile=True)
    rows = by_name(result)
    assert rows["SysTick_Handler"]["calls"] >= 1 and rows["PendSV_Handler"]["calls"] >= 1
    assert rows["(exception entry and return)"]["exclusive_cycles"] >= 12 * result.exceptions_taken
    assert sum(row["exclusive_cycles"] for row in result.functions) == result.cycles


def test_profile_bundle_and_report(firmware_build, tmp_path):
    run = run_cli("run", firmware_build / "mcu-s" / "bench.elf", "--board", "mcu-s", "--profile", "--out", tmp_path, "-q")
    assert run.returncode == 0, run.stderr
    header = (tmp_path / "functions.csv").read_text().splitlines()[0]
    assert header == "function,exclusive_cycles,inclusive_cycles,calls,share,energy_j"
    report = run_cli("report", tmp_path)
    assert report.returncode == 0 and "functions (exact profile)" in report.stdout


@pytest.mark.slow
def test_pc_samples_agree_with_the_exact_profile(firmware_build, tmp_path):
    """DWT-style PC sampling every 1000 cycles: the count follows from the cycles, and each
    function's share of the samples is its share of the cycles within sampling error."""
    from mcusim.analysis.sampling import shares

    result = mcusim.run(firmware_build / "mcu-m" / "kws_dscnn-opt.elf", "mcu-m", profile=True,
                        pc_sample_cycles=1000)
    count = len(result.pc_sample_functions)
    assert count == result.cycles // 1000
    exact = {row["function"]: row["share"] for row in result.functions}
    for name, share in list(shares(result.pc_sample_functions).items())[:5]:
        error = 3 * (exact[name] * (1 - exact[name]) / count) ** 0.5 + 1e-3  # three standard errors
        assert abs(share - exact[name]) <= error, name
    result.write_bundle(tmp_path)
    lines = (tmp_path / "pc_samples.csv").read_text().splitlines()
    assert lines[0] == "cycle,pc,function" and len(lines) == count + 1
    assert lines[1].startswith("1000,0x")


def test_a_sample_every_cycle_reproduces_the_exact_profile(firmware_build):
    """With a sample every cycle, each function's samples are its exclusive cycles, interrupt
    handlers, exception overhead and the code around emulation stops included (the first
    cycle, 0, is never sampled: samples fall at N, 2N, ...)."""
    from collections import Counter

    result = mcusim.run(firmware_build / "mcu-m" / "exceptions.elf", "mcu-m", profile=True, pc_sample_cycles=1)
    samples = Counter(result.pc_sample_functions)
    off = {row["function"]: row["exclusive_cycles"] - samples.get(row["function"], 0) for row in result.functions}
    assert sum(off.values()) == 1 and set(v for v in off.values() if v) == {1}
    assert samples["(exception entry and return)"] == by_name(result)["(exception entry and return)"]["exclusive_cycles"]
