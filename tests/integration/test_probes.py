"""Small bare-metal probes of core behaviour (probes/*.c), built for mps2-an386.

Most are compared with QEMU (same output, same exit status); the ones that need a cycle
counter, which QEMU lacks, check mcusim's answer directly.
"""
import subprocess
from pathlib import Path

import pytest

import mcusim
from conftest import require_tool

PROBES = Path(__file__).parent / "probes"
CFLAGS = ["-mcpu=cortex-m4", "-mfpu=fpv4-sp-d16", "-mthumb", "-mfloat-abi=hard", "-O1", "-g", "-nostdlib",
          "-ffreestanding"]


def run_qemu(qemu: str, elf) -> tuple[str, int]:
    """QEMU with its semihosting console (SYS_WRITE0 here) on stdout; no UART."""
    done = subprocess.run([qemu, "-M", "mps2-an386", "-display", "none", "-serial", "none", "-monitor", "none",
                           "-chardev", "stdio,id=console", "-semihosting-config",
                           "enable=on,target=native,chardev=console", "-kernel", str(elf)],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return done.stdout.replace("\r\n", "\n"), done.returncode


def build(tmp_path, name, *defines):
    gcc = require_tool("arm-none-eabi-gcc")
    elf = tmp_path / f"{name}{''.join(defines)}.elf"
    done = subprocess.run([gcc, *CFLAGS, *defines, "-T", str(PROBES / "link.ld"), str(PROBES / "vec.c"),
                           str(PROBES / f"{name}.c"), "-o", str(elf), "-lgcc"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return elf


@pytest.mark.parametrize("name,code", [
    ("straddle", 0),   # a 32-bit instruction across a 64 KB decode-window boundary
    ("undef", 50),     # an encoding no decoder knows: UsageFault UNDEFINSTR
    ("one", 0),        # WFE with SysTick running
    ("fpoff", 61),     # a bus fault just before an FP instruction while CPACR denies the FPU
    ("reset", 0),      # AIRCR.SYSRESETREQ, and CCR.DIV_0_TRP gone after it
    ("unpriv2", 0),    # SVC from unprivileged Thread mode
    ("exc", 0),        # priorities, BASEPRI/FAULTMASK, escalation, tail-chaining
    ("psp", 0),        # Thread mode on PSP taking interrupts
])
def test_probe_matches_qemu(tmp_path, qemu, name, code):
    elf = build(tmp_path, name)
    qemu_out, qemu_code = run_qemu(qemu, elf)
    result = mcusim.run(elf, "mps2-an386", max_cycles=50_000_000)
    assert (result.stdout, result.exit_code) == (qemu_out, qemu_code)
    assert result.exit_code == code, result.stdout


@pytest.mark.parametrize("name", ["cyc", "sleep", "divide"])
def test_cycle_counter_probes(tmp_path, name):
    """cyc: CYCCNT reads are attributed to the right instruction; sleep: SEV/WFE, sleep-on-exit,
    WFI under PRIMASK; divide: SDIV/UDIV early termination from the operands."""
    result = mcusim.run(build(tmp_path, name), "mps2-an386", max_cycles=50_000_000)
    assert result.exit_code == 0, result.stdout
    assert "MISMATCH" not in result.stdout


def test_code_rewritten_in_ram_is_timed_as_the_new_code(tmp_path):
    """The same RAM address first holds 8 x nop, then 4 x nop.w: B must cost the same either way."""
    after_a = mcusim.run(build(tmp_path, "ram", "-DWITH_A"), "mps2-an386")
    alone = mcusim.run(build(tmp_path, "ram"), "mps2-an386")
    assert after_a.exit_code == alone.exit_code == 0
    assert after_a.stdout == alone.stdout
