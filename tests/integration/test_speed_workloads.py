"""The workloads of benchmarks/speed.py (issue 15) on every board: each builds, checks itself and
exits 0 under mcusim, prints what QEMU prints on the MPS2 boards, and the expected values in
their sources are what the same C computes on the host.

Short runs keep this quick: the Makefile's CFLAGS_<program> and LARGE_STARTUP_FUNCTIONS build
fewer iterations into a build folder of the test's own; the self-checks hold for any count.
"""
import re
import subprocess
import sys

import pytest

import mcusim
from conftest import BOARDS, FIRMWARE, require_tool
from test_qemu_differential import run_qemu

WORKLOADS = ["coremark-like", "dhrystone-like", "large-startup", "printf-uart"]
SHORT = {"CFLAGS_coremark-like": "-DITERATIONS=4", "CFLAGS_dhrystone-like": "-DITERATIONS=8",
         "CFLAGS_printf-uart": "-DBLOCKS=1", "LARGE_STARTUP_FUNCTIONS": "300"}
LAST_LINE = {"coremark-like": "coremark-like: 4 iterations, checksum 0x[0-9A-F]{4} ok",
             "dhrystone-like": "dhrystone-like: 8 iterations, checksum 0x[0-9A-F]{8} ok",
             "large-startup": "large-startup: 300 functions, checksum 0x[0-9A-F]{8} ok",
             "printf-uart": "printf-uart: 100 lines, checksum 0x[0-9A-F]{4} ok"}


@pytest.fixture(scope="module")
def short_build(tmp_path_factory):
    require_tool("arm-none-eabi-gcc")
    build = tmp_path_factory.mktemp("speed-workloads")
    targets = [f"{build}/{board}/{program}.elf" for board in BOARDS for program in WORKLOADS]
    done = subprocess.run(["make", "-C", str(FIRMWARE), "-j2", f"BUILD={build}", f"PYTHON={sys.executable}",
                           *[f"{k}={v}" for k, v in SHORT.items()], *targets], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"firmware build failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return build


@pytest.mark.parametrize("board", BOARDS)
def test_workloads_check_themselves_on_every_board(short_build, board):
    for program in WORKLOADS:
        result = mcusim.run(short_build / board / f"{program}.elf", board, max_cycles=200_000_000)
        assert result.exit_reason == "semihosting-exit", f"{program}: {result.exit_detail}"
        assert result.exit_code == 0, f"{program}: {result.stdout[-500:]}"
        assert re.fullmatch(LAST_LINE[program], result.stdout.splitlines()[-1]), result.stdout[-500:]


@pytest.mark.parametrize("board", ["mps2-an386", "mps2-an500"])
def test_workloads_print_what_qemu_prints(short_build, qemu, board):
    for program in WORKLOADS:
        elf = short_build / board / f"{program}.elf"
        qemu_out, qemu_code = run_qemu(qemu, board, elf)
        result = mcusim.run(elf, board, max_cycles=200_000_000)
        assert (result.stdout, result.exit_code) == (qemu_out, qemu_code), program
        assert qemu_code == 0


@pytest.mark.parametrize("program", ["coremark-like", "dhrystone-like", "printf-uart"])
def test_expected_values_are_what_the_host_computes(tmp_path, program):
    """The self-check's table in main.c equals the output of the host build (-DHOST_EXPECTED);
    scripts/setup.sh installs the host compiler (in CI its absence fails)."""
    gcc = require_tool("gcc")
    source = FIRMWARE / "programs" / program / "main.c"
    subprocess.run([gcc, "-O2", "-DHOST_EXPECTED", str(source), "-o", str(tmp_path / "host")], check=True)
    host = subprocess.run([str(tmp_path / "host")], check=True, capture_output=True, text=True).stdout
    table = re.search(r"expected\[PHASES\] = \{([^}]*)\}", source.read_text()).group(1)
    assert [int(v.rstrip("uU"), 16) for v in re.findall(r"0x[0-9A-Fa-f]+[uU]?", host)] == \
        [int(v.rstrip("uU"), 16) for v in re.findall(r"0x[0-9A-Fa-f]+[uU]?", table)]
