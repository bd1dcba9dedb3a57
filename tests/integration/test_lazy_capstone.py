"""capstone is loaded when something is first disassembled (timing/lazy_capstone.py), not when
mcusim is: the commands that run no firmware and a run whose code the decode store holds never
pay for it, and what they compute does not change. A run that disassembles calls capstone's C
library without importing capstone's Python package (timing/capstone_library.py)."""
import json
import os
import subprocess
import sys

from mcusim.timing import lazy_capstone

RUN = """
import json, sys
import mcusim.cli
result = mcusim.run(sys.argv[1], sys.argv[2])
lazy = sys.modules.get("mcusim.timing.lazy_capstone")
print(json.dumps([result.exit_code, result.cycles, result.instructions, result.stdout, "numpy.ma" in sys.modules,
                  "capstone" in sys.modules, bool(lazy and lazy._library.cache_info().currsize)]))
"""


def _python(*arguments, environment=None):
    done = subprocess.run([sys.executable, *arguments], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **(environment or {})})
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_the_command_line_and_the_api_does_not_import_capstone():
    assert _python("-c", "import json, sys, mcusim, mcusim.api, mcusim.cli; print(json.dumps('capstone' in sys.modules))") \
        is False


def test_a_run_whose_code_the_decode_store_holds_disassembles_nothing_and_computes_the_same(firmware_build, tmp_path):
    elf = str(firmware_build / "mps2-an386" / "coremark-like.elf")
    store = {"MCUSIM_DECODE_CACHE": str(tmp_path)}
    first = _python("-c", RUN, elf, "mps2-an386", environment=store)  # decodes the image: capstone reads it
    second = _python("-c", RUN, elf, "mps2-an386", environment=store)
    assert first[-1] and not second[-1], "capstone's library loaded by the first run only"
    assert not first[-2] and not second[-2], "capstone's Python package imported"
    assert first[0] == 0 and second[:-2] == first[:-2]
    assert not second[-3], "the second run (its code copied at once: Decoder.preload) imported numpy.ma"


def test_the_stand_in_module_imports_on_first_read_and_keeps_what_it_read():
    stand_in = lazy_capstone._Module("json")
    assert stand_in.dumps is json.dumps
    assert "dumps" in vars(stand_in)  # (kept: the next read is a plain attribute)
    first, again = lazy_capstone.thumb(True), lazy_capstone.thumb(True)
    assert first is again and first.detail and not lazy_capstone.thumb().detail
    assert lazy_capstone.disassembler(detail=True) is not first


def test_a_vendor_board_run_finds_its_mmio_accesses_without_capstones_package(firmware_build, tmp_path):
    """mcu-m's SystemInit writes clock and flash registers: a run whose code the decode store
    holds still finds each such access's instruction (machine/access_locator.py), through
    capstone's library alone, and computes what a run with capstone's package imported first does."""
    elf = str(firmware_build / "mcu-m" / "printf-uart.elf")
    store = {"MCUSIM_DECODE_CACHE": str(tmp_path)}
    _python("-c", RUN, elf, "mcu-m", environment=store)
    again = _python("-c", RUN, elf, "mcu-m", environment=store)  # (its code copied from the store)
    assert again[-1] and not again[-2], "capstone's library loaded (by the access locator), its package not imported"
    with_package = _python("-c", "import capstone\n" + RUN, elf, "mcu-m", environment={"MCUSIM_DECODE_CACHE": "off"})
    assert again[0] == 0 and again[:-3] == with_package[:-3] and again[3]
