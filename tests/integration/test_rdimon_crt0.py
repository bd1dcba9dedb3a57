"""A program linked with newlib's own rdimon crt0 runs on every board as on QEMU.

crt0 (libgloss/arm/crt0.S) takes SP from semihosting SYS_HEAPINFO, falling back to a `__stack`
symbol only when the answer is 0; the linker script here, like many, has none, so a zero answer
leaves SP = 0. It builds argc/argv from SYS_GET_CMDLINE: the same arguments must reach the
program as QEMU's `-semihosting-config arg=...` gives them (joined with spaces, split again by
crt0, which keeps '"..."' together). The same source is built for each board's memory map and
compared with QEMU's mps2 machine of the same core.
"""
import json
import subprocess
from pathlib import Path

import pytest

import mcusim
from clirun import run_cli
from conftest import BOARDS, require_tool

PROBE = Path(__file__).parent / "probes" / "rdimon_args.c"
# board: (cpu, flash origin, flash length, RAM origin, RAM length), as firmware/boards/*/linker.ld
LAYOUT = {"mcu-s": ("cortex-m4", 0x00000000, "1024K", 0x20000000, "256K"),
          "mcu-m": ("cortex-m4", 0x08000000, "1024K", 0x20000000, "96K"),
          "mcu-b": ("cortex-m4", 0x0000C000, "976K", 0x10000000, "384K"),
          "mcu-d": ("cortex-m7", 0x08000000, "1024K", 0x20000000, "320K"),
          "mps2-an386": ("cortex-m4", 0x00000000, "4096K", 0x20000000, "4096K"),
          "mps2-an500": ("cortex-m7", 0x00000000, "4096K", 0x20000000, "4096K")}
QEMU_FOR = {"cortex-m4": "mps2-an386", "cortex-m7": "mps2-an500"}
# what QEMU passes through: a plain word, a space inside one argument (crt0 splits it), quotes
ARGS = ["one", "two words", '"kept together"', "--flag=3"]
LINKER_SCRIPT = """\
MEMORY {{ FLASH (rx) : ORIGIN = 0x{flash:08x}, LENGTH = {flash_length}
         RAM (rwx) : ORIGIN = 0x{ram:08x}, LENGTH = {ram_length} }}
_estack = ORIGIN(RAM) + LENGTH(RAM);
SECTIONS {{
  .text : {{ KEEP(*(.isr_vector)) *(.text .text.*) *(.rodata .rodata.*) KEEP(*(.init)) KEEP(*(.fini))
            . = ALIGN(4); __init_array_start = .; KEEP(*(.init_array*)) __init_array_end = .;
            __fini_array_start = .; KEEP(*(.fini_array*)) __fini_array_end = .; }} > FLASH
  .ARM.exidx : {{ *(.ARM.exidx*) }} > FLASH
  .data : {{ *(.data .data.*) }} > RAM
  .bss : {{ __bss_start__ = .; *(.bss .bss.*) *(COMMON) . = ALIGN(8); __bss_end__ = .; }} > RAM
  end = .; __end__ = .;
}}
"""


def build(tmp_path: Path, board: str, zero_sp: bool = False) -> Path:
    """The probe for `board`, soft-float (crt0 does not switch the FPU on), loaded as linked:
    .data lives in RAM in the image, as a debugger or QEMU loads it (crt0 copies nothing)."""
    gcc = require_tool("arm-none-eabi-gcc")
    cpu, flash, flash_length, ram, ram_length = LAYOUT[board]
    script = tmp_path / f"{board}.ld"
    script.write_text(LINKER_SCRIPT.format(flash=flash, flash_length=flash_length, ram=ram, ram_length=ram_length))
    elf = tmp_path / f"{board}{'-zero-sp' if zero_sp else ''}.elf"
    done = subprocess.run([gcc, f"-mcpu={cpu}", "-mthumb", "-mfloat-abi=soft", "-O2", "--specs=rdimon.specs",
                           *(["-DZERO_SP"] if zero_sp else []), "-T", str(script), str(PROBE), "-o", str(elf)],
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return elf


def run_qemu(qemu: str, machine: str, elf: Path, argv: list[str]) -> tuple[str, int]:
    assert not any("," in arg for arg in argv)  # QEMU's option syntax would need them doubled
    config = ",".join(["enable=on", "target=native", *(f"arg={arg}" for arg in argv)])
    done = subprocess.run([qemu, "-M", machine, "-nographic", "-semihosting-config", config, "-kernel", str(elf)],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    return done.stdout.replace("\r\n", "\n"), done.returncode


@pytest.fixture(scope="module")
def elfs(tmp_path_factory):
    folder = tmp_path_factory.mktemp("rdimon")
    return {board: build(folder, board) for board in BOARDS}


@pytest.mark.parametrize("board", BOARDS)
def test_runs_as_on_qemu_with_the_same_arguments(elfs, qemu, board):
    elf = elfs[board]
    machine = QEMU_FOR[LAYOUT[board][0]]
    expected, code = run_qemu(qemu, machine, elfs[machine], [str(elf), *ARGS])
    assert "heap: ok" in expected and "argv[3]=<words>" in expected and "argv[4]=<kept together>" in expected
    result = mcusim.run(elf, board, args=ARGS)
    assert (result.stdout, result.exit_code) == (expected, code)


@pytest.mark.parametrize("board", ["mcu-m", "mps2-an386"])
def test_without_arguments_argv0_is_the_firmware_path_as_for_qemu_kernel(elfs, qemu, board):
    expected, code = run_qemu(qemu, "mps2-an386", elfs["mps2-an386"], [])
    expected = expected.replace(str(elfs["mps2-an386"]), str(elfs[board]))
    result = mcusim.run(elfs[board], board)
    assert (result.stdout, result.exit_code) == (expected, code) == (expected, 1)


def test_command_line_arguments_after_double_dash_reach_the_program_and_run_json(elfs, qemu, tmp_path):
    elf = elfs["mcu-d"]
    expected, code = run_qemu(qemu, "mps2-an500", elfs["mps2-an500"], [str(elf), "-v", "two words"])
    done = run_cli("run", elf, "--board", "mcu-d", "--out", tmp_path, "--", "-v", "two words")
    assert (done.stdout, done.returncode) == (expected, code) == (expected, 4)
    assert "'two words'" in done.stderr  # warned: it reaches the program as two arguments
    settings = json.loads((tmp_path / "run.json").read_text())["settings"]
    assert settings["args"] == ["-v", "two words"] and settings["cmdline"] == f"{elf} -v two words"


def test_a_command_line_too_long_for_crt0s_buffer_gives_no_arguments_as_on_qemu(elfs, qemu):
    long = "x" * 300  # crt0 offers 255 bytes
    expected, code = run_qemu(qemu, "mps2-an386", elfs["mps2-an386"], ["prog", long])
    result = mcusim.run(elfs["mps2-an386"], "mps2-an386", cmdline=f"prog {long}")
    assert (result.stdout, result.exit_code) == (expected, code) == (expected, 0)
    assert "argc=0" in expected and any("too small" in w for w in result.warnings)


def test_a_word_before_double_dash_is_a_usage_error_not_an_argument(elfs):
    done = run_cli("run", elfs["mcu-d"], "stray", "--board", "mcu-d")
    assert done.returncode == 2 and "'stray'" in done.stderr and "after `--`" in done.stderr
    assert done.stdout == ""


@pytest.mark.parametrize("board", ["mcu-m", "mps2-an386", "mps2-an500"])
def test_a_vector_table_with_sp_0_runs_as_on_qemu_when_crt0_sets_the_stack(tmp_path, qemu, board):
    elf = build(tmp_path, board, zero_sp=True)
    expected, code = run_qemu(qemu, QEMU_FOR[LAYOUT[board][0]], build(tmp_path, QEMU_FOR[LAYOUT[board][0]],
                                                                       zero_sp=True), ["prog", "a"])
    result = mcusim.run(elf, board, cmdline="prog a")
    assert (result.stdout, result.exit_code) == (expected, code) == (expected, 2)
    assert any("initial SP is 0" in warning for warning in result.warnings)
