"""The block hook is compiled per run configuration (native/hooks.py Features): a run must pick a
variant with every feature it uses, and a variant without the features a run does not use must
count exactly what the full hook counts."""
import pytest

import mcusim
from mcusim.machine import native as N

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


@pytest.mark.parametrize("board", ["mps2-an386", "mps2-an500", "mcu-m", "mcu-d"])
def test_a_block_run_again_counts_as_the_whole_hook_counts_it(firmware_build, board):
    """A block run right after its own run (bench's tight loops) is counted by the block hook's
    repeat path from its entry's E_AGAIN; a profiled run never takes that path (the profile
    charges every block), so it counts each such run the whole way: the figures must agree, on
    both cores, with and without flash ports, energy and the branch predictor."""
    elf = firmware_build / board / "bench.elf"
    simulator = mcusim.Simulator(str(elf), board)
    repeated = simulator.run()
    buffer = simulator.machine.state.buffer
    entries = buffer[N.BLOCK_CACHE: N.BLOCK_CACHE + N.CACHE_ENTRIES * N.CACHE_ENTRY].reshape(-1, N.CACHE_ENTRY)
    assert (entries[:, N.E_AGAIN] != 0).sum() >= 3  # (the path was open to bench's loops)
    whole = mcusim.run(elf, board, profile=True)
    assert _figures(repeated) == _figures(whole)
    assert repeated.branches_predicted == whole.branches_predicted
    assert repeated.branch_mispredicts == whole.branch_mispredicts
