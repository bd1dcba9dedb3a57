"""Hostile semihosting through a real C library: newlib's rdimon firmware rewrites the user's
executable in the semihosting root and asks to run it, writes from unmapped memory and reads a
file into flash. mcusim runs nothing, crashes on nothing and leaves flash as it was."""
import subprocess
from pathlib import Path

import pytest

import mcusim
from conftest import require_tool
from test_rdimon_crt0 import LAYOUT, LINKER_SCRIPT

PROBE = Path(__file__).parent / "probes" / "semihosting_hostile.c"
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def elf(tmp_path_factory):
    gcc = require_tool("arm-none-eabi-gcc")
    folder = tmp_path_factory.mktemp("hostile")
    cpu, flash, flash_length, ram, ram_length = LAYOUT["mcu-d"]
    script = folder / "mcu-d.ld"
    script.write_text(LINKER_SCRIPT.format(flash=flash, flash_length=flash_length, ram=ram, ram_length=ram_length))
    elf = folder / "hostile.elf"
    done = subprocess.run([gcc, f"-mcpu={cpu}", "-mthumb", "-mfloat-abi=soft", "-O2", "--specs=rdimon.specs",
                           "-T", str(script), str(PROBE), "-o", str(elf)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return elf


@pytest.mark.parametrize("allow_system", [False, True])
def test_hostile_firmware_runs_nothing_and_ends_normally(elf, tmp_path, allow_system):
    tool = tmp_path / "tool.sh"
    tool.write_text("#!/bin/sh\nexit 0\n")
    tool.chmod(0o755)
    (tmp_path / "data.txt").write_text("hello")
    options = {"semihosting_system": True} if allow_system else {}
    result = mcusim.run(elf, "mcu-d", semihosting_root=tmp_path, **options)
    assert (result.exit_reason, result.exit_code) == ("semihosting-exit", 0)
    lines = result.stdout.splitlines()
    assert "rewrote 1" in lines and "system -1" in lines  # written, but not run
    assert not (tmp_path / "pwned").exists()
    # nothing written or read: newlib's rdimon returns 0 and takes errno from SYS_ERRNO (14: EFAULT)
    assert "write-unmapped 0 errno 14" in lines and "write-huge 0 errno 14" in lines
    assert "read-flash 0 errno 0" in lines  # (newlib's read takes nothing read as end of file)
    assert "read-ram 5 hello" in lines and "flash ff" in lines  # ... nothing consumed, flash left erased
