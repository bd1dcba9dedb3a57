"""The TinyML models of the paper (src/mcusim/tinyml/models.py, built as firmware by
kit_firmware.py) on the boards, in both kernel variants: the firmware's output equals the
reference's bit for bit (the firmware compares them itself and exits 1 on a difference).

The small models run on every board in both variants; each large one runs in each variant on
mcu-d (the Cortex-M7 with its caches) and on one Cortex-M4 board, a different one per model and
variant, so every Cortex-M4 board runs large models too (the ref builds of the large models took
12 to 18 s each in the suite, 48 of them). MCUSIM_FULL_MATRIX=1 runs every pair."""
import os
import re

import pytest

import mcusim
from conftest import BOARDS, MODELS, VARIANTS


pytestmark = pytest.mark.slow  # whole TinyML models

LARGE = ["person_detection", "kws_dscnn", "resnet8", "kws_dscnn_l"]  # 10 to 70 M instructions (ref kernels)
CORTEX_M4 = ["mcu-s", "mcu-m", "mcu-b", "mps2-an386"]


def _cases() -> list[tuple[str, str, str]]:
    """(variant, model, board) to run: every pair under MCUSIM_FULL_MATRIX=1."""
    full = os.environ.get("MCUSIM_FULL_MATRIX", "") not in ("", "0")
    cases = []
    for v, variant in enumerate(VARIANTS):
        for m, model in enumerate(MODELS):
            boards = BOARDS if full or model not in LARGE else \
                ["mcu-d", CORTEX_M4[(LARGE.index(model) + 2 * v) % len(CORTEX_M4)]]
            cases += [(variant, model, board) for board in boards]
    return cases


def test_the_cases_cover_every_board_and_every_model():
    cases = _cases()
    assert {board for _, model, board in cases if model in LARGE} == set(BOARDS) - {"mps2-an500"}
    assert {(variant, model) for variant, model, _ in cases} == {(v, m) for v in VARIANTS for m in MODELS}


@pytest.mark.parametrize("variant, model, board", _cases())
def test_model_output_matches_the_reference(firmware_build, board, model, variant):
    result = mcusim.run(firmware_build / board / f"{model}-{variant}.elf", board)
    assert result.exit_code == 0, result.stdout
    assert "output matches the reference" in result.stdout
    layers = [r["name"] for r in result.regions if r["name"] != "inference"]
    assert layers and all(re.fullmatch(r"\d+_[A-Z0-9_]+", name) for name in layers)


@pytest.mark.parametrize("model", [m for m in MODELS if m != "odd_shapes" and m not in LARGE[2:]])
def test_simd_kernels_are_faster_than_plain_c(firmware_build, model):
    """(resnet8 and kws_dscnn_l, 20 s each here, are left to benchmarks/: their layers are of the
    kinds the others have)"""
    cycles = {variant: mcusim.run(firmware_build / "mcu-m" / f"{model}-{variant}.elf", "mcu-m").cycles
              for variant in VARIANTS}
    assert cycles["opt"] * 2 < cycles["ref"]
