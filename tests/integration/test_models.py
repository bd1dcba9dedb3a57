"""The TinyML models of the paper (firmware/models, src/mcusim/tinyml) on every board, in both
kernel variants: the firmware's output equals the numpy oracle's bit for bit."""
import re

import pytest

import mcusim
from conftest import BOARDS, MODELS, VARIANTS


pytestmark = pytest.mark.slow  # whole TinyML models


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("variant", VARIANTS)
def test_model_output_matches_the_oracle(firmware_build, board, model, variant):
    result = mcusim.run(firmware_build / board / f"{model}-{variant}.elf", board)
    assert result.exit_code == 0, result.stdout
    assert "output matches the golden output" in result.stdout
    assert "every layer matches the oracle" in result.stdout
    assert re.search(rf"model {model} \({variant} kernels\)", result.stdout)


@pytest.mark.parametrize("model", [m for m in MODELS if m != "odd_shapes"])
def test_simd_kernels_are_faster_than_plain_c(firmware_build, model):
    cycles = {variant: mcusim.run(firmware_build / "mcu-m" / f"{model}-{variant}.elf", "mcu-m").cycles
              for variant in VARIANTS}
    assert cycles["opt"] * 2 < cycles["ref"]
