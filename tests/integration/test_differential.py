"""Timing never changes results, and mcusim computes what QEMU computes (docs/testing.md).

The differential programs (firmware/diff) run unchanged on QEMU and on mcusim: one ELF per
memory layout QEMU has (stm32: netduinoplus2, mcu-m, mcu-d; low: mps2-an386/an500, mcu-s;
apollo3: mcu-b, where mcusim's functional run is the oracle). Their output depends on neither
time nor addresses, so every run of every build, on every board, under every flash and cache
configuration the program sets up (its command line picks one), with the timing model on or
off, prints what QEMU prints. Without interrupts, a timed run also executes exactly the
instructions of the functional run, taking the same branches.
"""
import os
import subprocess

import pytest

from conftest import FIRMWARE, program_flow, require_tool
from randprog import generate

import mcusim

pytestmark = pytest.mark.slow  # every configuration of every board, timed and functional

# board -> the diff build it runs (firmware/Makefile DIFF_BUILDS): the core's own build; the random
# sequences (plain ARMv7E-M) run as an M4 build everywhere
BUILDS = {"mcu-m": "stm32-m4", "mcu-d": "stm32-m7", "mcu-s": "low-m4", "mcu-b": "apollo3-m4",
          "mps2-an386": "low-m4", "mps2-an500": "low-m7"}
# the flash/cache configurations firmware/diff/harness.c sets up per board
CONFIGS = {"mcu-m": 10, "mcu-d": 10, "mcu-s": 2, "mcu-b": 6, "mps2-an386": 1, "mps2-an500": 1}
# the QEMU machines of each build
QEMU_MACHINES = {"stm32-m4": ["netduinoplus2"], "low-m4": ["mps2-an386", "mps2-an500"], "low-m7": ["mps2-an500"]}
PROGRAMS = ["diff-core", "diff-irq"]
RANDOM_BUILDS = ["stm32-m4", "low-m4", "apollo3-m4"]  # plain ARMv7E-M: the M4 builds serve every board
# random instruction sequences: seeds (MCUSIM_RANDOM_SEEDS="1 2 3 ..." runs more locally)
RANDOM_SEEDS = [int(s) for s in os.environ.get("MCUSIM_RANDOM_SEEDS", "1 2").split()]


def qemu_output(machine: str, elf, program: str) -> str:
    qemu = require_tool("qemu-system-arm")
    done = subprocess.run([qemu, "-M", machine, "-nographic", "-semihosting-config",
                           f"enable=on,target=native,arg={program},arg=qemu,arg=0", "-kernel", str(elf)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, f"{elf} on QEMU {machine}: exit {done.returncode}\n{done.stdout}{done.stderr}"
    return results(done.stdout)


def results(stdout: str) -> str:
    """The program's result lines (the header naming the configuration left out)."""
    return "".join(line for line in stdout.splitlines(True) if not line.startswith("config "))


@pytest.fixture(scope="module")
def diff_elfs(firmware_build):
    return {(build, program): firmware_build / "diff" / build / f"{program}.elf"
            for build in ("stm32-m4", "stm32-m7", "low-m4", "low-m7", "apollo3-m4") for program in PROGRAMS}


@pytest.fixture(scope="module")
def random_elfs(firmware_build, tmp_path_factory):
    """diff-random for each layout (an M4 build), its sequences from RANDOM_SEEDS, built by the
    firmware Makefile's diff rules into a folder of the test session."""
    require_tool("arm-none-eabi-gcc")
    folder = tmp_path_factory.mktemp("random")
    source = folder / "sequences.S"
    source.write_text(generate(RANDOM_SEEDS, functions=8, length=120))
    elfs = {build: folder / "diff" / build / "diff-random.elf" for build in RANDOM_BUILDS}
    done = subprocess.run(["make", "-C", str(FIRMWARE), f"BUILD={folder}", f"DIFF_RANDOM={source}",
                           *map(str, elfs.values())], capture_output=True, text=True)
    assert done.returncode == 0, f"diff-random build failed:\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return elfs


@pytest.fixture(scope="module")
def expected(diff_elfs, random_elfs):
    """Each program's output on QEMU: the same on every QEMU machine and layout (asserted)."""
    outputs = {}
    for program in PROGRAMS + ["diff-random"]:
        seen = {}
        for build, machines in QEMU_MACHINES.items():
            elf = random_elfs.get(build) if program == "diff-random" else diff_elfs[(build, program)]
            if elf is None:
                continue
            for machine in machines:
                seen[(build, machine)] = qemu_output(machine, elf, program)
        first = next(iter(seen.values()))
        assert all(out == first for out in seen.values()), f"{program} differs between QEMU machines: {seen}"
        assert first.count("\n") >= 4 and "fault" not in first
        outputs[program] = first
    return outputs


def _runs(board, elf, program, expected_output, compare_flow):
    """The functional run, then a timed run per configuration, each checked."""
    def run(config, timing):
        result = mcusim.run(elf, board, cmdline=f"{program} {board} {config}", timing=timing,
                            branch_trace=compare_flow, max_cycles=2_000_000_000)
        where = f"{elf.parent.name}/{elf.name} on {board}, configuration {config}, timing {'on' if timing else 'off'}"
        assert result.exit_code == 0, f"{where}: exit {result.exit_code}\n{result.stdout}\n{result.fault_report}"
        assert results(result.stdout) == expected_output, f"{where}: output differs from QEMU's"
        return result, where

    for config in range(CONFIGS[board]):
        timed, where = run(config, True)
        if compare_flow:  # (the configuration's own set-up code runs too: compare like with like)
            functional, _ = run(config, False)
            assert timed.instructions == functional.instructions, where
            assert program_flow(timed) == program_flow(functional), f"{where}: the branch trace differs from the functional run's"
        else:
            assert timed.exceptions_taken > 100, f"{where}: interrupts should arrive during the work"
    return run(0, False)[0]


@pytest.mark.parametrize("board", list(BUILDS))
def test_diff_core_on_every_configuration(board, diff_elfs, expected):
    _runs(board, diff_elfs[(BUILDS[board], "diff-core")], "diff-core", expected["diff-core"], compare_flow=True)


@pytest.mark.parametrize("board", list(BUILDS))
def test_interrupts_during_waiting_loads_on_every_configuration(board, diff_elfs, expected):
    functional = _runs(board, diff_elfs[(BUILDS[board], "diff-irq")], "diff-irq", expected["diff-irq"],
                       compare_flow=False)
    assert functional.exceptions_taken > 100


@pytest.mark.parametrize("board", list(BUILDS))
def test_random_sequences_on_every_configuration(board, random_elfs, expected):
    build = BUILDS[board].replace("-m7", "-m4")
    _runs(board, random_elfs[build], "diff-random", expected["diff-random"], compare_flow=True)


@pytest.mark.parametrize("board", list(BUILDS))
def test_configuration_table_matches_the_firmware(board, diff_elfs):
    """CONFIGS holds the firmware's own count: one past the last configuration is refused."""
    elf = diff_elfs[(BUILDS[board], "diff-core")]
    result = mcusim.run(elf, board, cmdline=f"diff-core {board} {CONFIGS[board]}", timing=False)
    assert result.exit_code == 99, result.stdout
