"""The timing model never changes what firmware computes (docs/testing.md): the kit's programs,
built with each board's own SystemInit (vendor-like clocks, flash wait states, accelerators and
caches), run timed and functionally (`timing=False`) with the same results. Programs that take no
interrupts also execute the same instructions and take the same branches; for `exceptions`,
whose SysTick interrupts land where time says, the output and exit status agree.
"""
import pytest

from conftest import BOARDS, program_flow

import mcusim
from mcusim.analysis.branch_trace import TraceWindow

pytestmark = pytest.mark.slow  # the kit's programs, timed and functional, on every board

SAME_FLOW = ["hello", "uart-hello", "bench-table", "bench-float", "micro_speech-opt"]
SAME_OUTPUT = ["exceptions"]


@pytest.mark.parametrize("board", BOARDS)
def test_kit_programs_run_the_same_with_timing_on_and_off(board, firmware_build):
    for program in SAME_FLOW + SAME_OUTPUT:
        elf = firmware_build / board / f"{program}.elf"
        window = TraceWindow(limit=4_000_000) if program in SAME_FLOW else None
        timed = mcusim.run(elf, board, branch_trace=window)
        functional = mcusim.run(elf, board, branch_trace=window, timing=False)
        where = f"{program} on {board}"
        assert (timed.stdout, timed.exit_code) == (functional.stdout, functional.exit_code), where
        assert timed.exit_code == 0, f"{where}: {timed.exit_detail}"
        assert functional.cycles == functional.instructions + functional.stalls["exception"], where
        if window:
            assert timed.instructions == functional.instructions, where
            assert program_flow(timed) == program_flow(functional), where
        assert timed.cycles != functional.cycles, f"{where}: the timed run should have been timed"


def test_functional_run_reports_no_timing_model_figures(firmware_build, tmp_path):
    result = mcusim.run(firmware_build / "mcu-d" / "hello.elf", "mcu-d", timing=False)
    assert result.energy is None and not result.icache and not result.dcache and result.branches_predicted == 0
    assert sum(result.stalls.values()) == result.stalls["exception"]
    result.write_bundle(tmp_path)
    assert '"timing": false' in (tmp_path / "run.json").read_text()
