"""The block hook is compiled per run configuration (native/hooks.py Features): a run must pick a
variant with every feature it uses, and a variant without the features a run does not use must
count exactly what the full hook counts."""
import pytest

import mcusim
from mcusim.machine import native as N
from mcusim.machine.native.core_timing import AGAIN_FP

FIGURES = ("exit_code", "cycles", "instructions", "stalls", "dwt", "stdout", "energy")


def _figures(result):
    return {name: getattr(result, name) for name in FIGURES}


def _chosen_features(monkeypatch) -> list:
    chosen = []
    original = N.register_block_hook

    def spy(uc, state, features=N.ALL_FEATURES):
        chosen.append(features)
        return original(uc, state, features)

    monkeypatch.setattr(N, "register_block_hook", spy)
    return chosen


@pytest.mark.parametrize("board", ["mps2-an386", "mcu-m", "mcu-d"])
def test_the_chosen_variant_counts_as_the_full_hook(firmware_build, board, monkeypatch):
    elf = firmware_build / board / "bench.elf"
    chosen = _chosen_features(monkeypatch)
    selected = mcusim.run(elf, board)
    assert chosen and all(features == chosen[0] for features in chosen)
    assert chosen[0] != N.ALL_FEATURES  # no capture asked for: a smaller hook
    assert chosen[0].fetch == (board != "mps2-an386") and chosen[0].power == (board != "mps2-an386")

    original = N.register_block_hook
    monkeypatch.setattr(N, "register_block_hook", lambda uc, state, features=None: original(uc, state, N.ALL_FEATURES))
    full = mcusim.run(elf, board)
    assert _figures(selected) == _figures(full)


def test_every_capture_asked_for_is_compiled_in(firmware_build, monkeypatch, tmp_path):
    chosen = _chosen_features(monkeypatch)
    mcusim.run(firmware_build / "mcu-m" / "bench.elf", "mcu-m", profile=True, pc_sample_cycles=1000,
               branch_trace=True, swo=True)
    assert chosen[0] == N.ALL_FEATURES


def _entries(simulator):
    buffer = simulator.machine.state.buffer
    return buffer[N.BLOCK_CACHE: N.BLOCK_CACHE + N.CACHE_ENTRIES * N.CACHE_ENTRY].reshape(-1, N.CACHE_ENTRY)


def _again_of(simulator, address: int) -> int:
    entries = _entries(simulator)
    return int(entries[entries[:, N.E_ADDRESS] == address][0, N.E_AGAIN])


@pytest.mark.parametrize("program", ["bench", "bench-float"])
@pytest.mark.parametrize("board", ["mps2-an386", "mps2-an500", "mcu-m", "mcu-d"])
def test_a_block_run_again_counts_as_the_whole_hook_counts_it(firmware_build, board, program):
    """A block run right after its own run (bench's tight loops, bench-float's with FP
    instructions) is counted by the block hook's repeat path from its entry's E_AGAIN; a profiled
    run never takes that path (the profile charges every block), so it counts each such run the
    whole way: the figures must agree, on both cores, with and without flash ports, energy and the
    branch predictor."""
    elf = firmware_build / board / f"{program}.elf"
    simulator = mcusim.Simulator(str(elf), board)
    repeated = simulator.run()
    entries = _entries(simulator)
    assert (entries[:, N.E_AGAIN] != 0).sum() >= 3  # (the path was open to the loops)
    if program == "bench-float":
        assert (entries[:, N.E_AGAIN] >> AGAIN_FP & 1).sum() >= 1  # (FP ones too)
    whole = mcusim.run(elf, board, profile=True)
    assert _figures(repeated) == _figures(whole)
    assert repeated.branches_predicted == whole.branches_predicted
    assert repeated.branch_mispredicts == whole.branch_mispredicts


def test_a_repeated_block_after_a_lazy_fp_store_counts_as_the_whole_hook(tmp_path):
    """A loop block with an FP instruction repeats through the hook's first path once the FPU is
    on and no lazy FP state is pending. Its first run stores the lazy FP context (LAZY_FP_AT, which
    a count read inside the block before that instruction leaves out); a repeat is no such run:
    CYCCNT read before the FP instruction in each run must be what a profiled run (no repeats)
    reads."""
    import subprocess
    from pathlib import Path

    from conftest import require_tool

    gcc = require_tool("arm-none-eabi-gcc")
    elf = tmp_path / "lazy_fp_loop.elf"
    source = Path(__file__).parent / "asm" / "lazy_fp_loop.S"
    done = subprocess.run([gcc, "-nostdlib", "-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard",
                           "-Wl,-Ttext=0,-e,0", f"-Wa,-I{source.parent}", str(source), "-o", str(elf)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    readings = {}
    for profiled in (False, True):
        simulator = mcusim.Simulator(str(elf), "mps2-an386", profile=profiled)
        result = simulator.run()
        assert result.exit_code == 0
        words = simulator.machine.uc.mem_read(0x20000000, 24)
        readings[profiled] = ([int.from_bytes(words[i: i + 4], "little") for i in range(0, 24, 4)], _figures(result))
        if not profiled:  # (the path was open to the loop, FP and all: the vector table's end)
            assert _again_of(simulator, 0x40) >> AGAIN_FP & 1 == 1
    assert readings[False] == readings[True]
    steps = [b - a for a, b in zip(readings[False][0], readings[False][0][1:])]
    fp_context = 17  # (the words the lazy store writes: stored once, in the first run)
    assert steps[0] == steps[1] + fp_context and len(set(steps[1:])) == 1
