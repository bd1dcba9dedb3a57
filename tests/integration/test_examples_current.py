"""The shipped example ELFs are what the firmware Makefile builds today (same compiler only)."""
import subprocess
import sys

import pytest
from elftools.elf.elffile import ELFFile

from conftest import FIRMWARE, require_tool
from mcusim import examples


def loadable(path):
    with open(path, "rb") as f:
        elf = ELFFile(f)
        return [(s["p_paddr"], s["p_memsz"], s.data()) for s in elf.iter_segments() if s["p_type"] == "PT_LOAD"]


@pytest.mark.slow
def test_shipped_examples_match_a_fresh_build(tmp_path):
    gcc = require_tool("arm-none-eabi-gcc")
    version = subprocess.run([gcc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    if version != examples.toolchain():
        pytest.skip(f"examples were built with '{examples.toolchain()}', this machine has '{version}'")
    done = subprocess.run(["make", "-C", str(FIRMWARE), "-s", "examples", f"DEST={tmp_path}",
                           f"PYTHON={sys.executable}"], capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr
    fresh = sorted(p.relative_to(tmp_path) for p in tmp_path.glob("*/*.elf"))
    shipped = sorted(p.relative_to(examples.EXAMPLES_DIR) for p in examples.EXAMPLES_DIR.glob("*/*.elf"))
    assert fresh == shipped
    stale = [str(p) for p in fresh if loadable(tmp_path / p) != loadable(examples.EXAMPLES_DIR / p)]
    assert not stale, f"rebuild the examples (make -C firmware examples DEST=$PWD/src/mcusim/examples): {stale}"
