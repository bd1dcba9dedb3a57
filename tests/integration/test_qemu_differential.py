"""The same ELFs on QEMU (mps2-an386, mps2-an500) and on mcusim: same output, same exit status.

QEMU 7.2 models no DWT cycle counter (its DWT reads as zero), so `dwt` and the timing
programs (`isa`, `flash-timing`, `pipeline`, `sram-timing`) are the ones whose results legitimately differ: there QEMU must report the missing counter and
mcusim must count.
"""
import subprocess

import pytest

import mcusim
from conftest import MODELS, PROGRAMS, VARIANTS

TIMING_PROGRAMS = ("isa", "flash-timing", "pipeline", "sram-timing")


def run_qemu(qemu: str, board: str, elf) -> tuple[str, int]:
    done = subprocess.run([qemu, "-M", board, "-nographic", "-semihosting-config", "enable=on,target=native",
                           "-kernel", str(elf)], capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return done.stdout.replace("\r\n", "\n"), done.returncode


@pytest.mark.parametrize("board", ["mps2-an386", "mps2-an500"])
@pytest.mark.parametrize("program", [p for p in PROGRAMS if p not in ("dwt",) + TIMING_PROGRAMS]
                         + [pytest.param(f"{m}-{v}", marks=pytest.mark.slow) for m in MODELS for v in VARIANTS])
def test_same_output_and_exit_status_as_qemu(firmware_build, qemu, board, program):
    elf = firmware_build / board / f"{program}.elf"
    qemu_out, qemu_code = run_qemu(qemu, board, elf)
    result = mcusim.run(elf, board, max_cycles=500_000_000)
    assert result.stdout == qemu_out
    assert result.exit_code == qemu_code == 0


@pytest.mark.parametrize("board", ["mps2-an386", "mps2-an500"])
def test_dwt_differs_only_because_qemu_has_no_cycle_counter(firmware_build, qemu, board):
    elf = firmware_build / board / "dwt.elf"
    qemu_out, qemu_code = run_qemu(qemu, board, elf)
    assert "CYCCNT does not count" in qemu_out and qemu_code == 2
    result = mcusim.run(elf, board)
    assert "dwt: ok" in result.stdout and result.exit_code == 0
    assert qemu_out.splitlines()[0] == result.stdout.splitlines()[0]  # the same banner line


@pytest.mark.parametrize("board", ["mps2-an386", "mps2-an500"])
@pytest.mark.parametrize("program", TIMING_PROGRAMS)
def test_timing_programs_need_the_cycle_counter_qemu_lacks(firmware_build, qemu, board, program):
    qemu_out, qemu_code = run_qemu(qemu, board, firmware_build / board / f"{program}.elf")
    assert (qemu_out, qemu_code) == (f"{program}: CYCCNT does not count\n", 2)
