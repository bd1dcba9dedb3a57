"""Board data: every board loads, the paper's facts hold, and the firmware linker scripts agree."""
import re
from pathlib import Path

import pytest

from mcusim.config import ConfigError, board_names, load_board

ROOT = Path(__file__).resolve().parents[2]
KB = 1024


def test_all_six_boards_are_listed():
    assert board_names() == ["mcu-b", "mcu-d", "mcu-m", "mcu-s", "mps2-an386", "mps2-an500"]


@pytest.mark.parametrize("name,core,clock_hz", [
    ("mcu-s", "cortex-m4", 64_000_000), ("mcu-m", "cortex-m4", 80_000_000), ("mcu-b", "cortex-m4", 96_000_000),
    ("mcu-d", "cortex-m7", 216_000_000), ("mps2-an386", "cortex-m4", 25_000_000),
    ("mps2-an500", "cortex-m7", 25_000_000)])
def test_board_core_and_clock(name, core, clock_hz):
    board = load_board(name)
    assert (board.core.name, board.clock_hz) == (core, clock_hz)


def regions(name):
    return {r.name: (r.base, r.size_bytes, r.alias_of) for r in load_board(name).memory}


def test_mcu_d_memory_map():
    assert regions("mcu-d") == {
        "itcm_ram": (0x0, 16 * KB, None), "flash": (0x08000000, 1024 * KB, None),
        "flash_itcm": (0x00200000, 1024 * KB, "flash"), "dtcm": (0x20000000, 64 * KB, None),
        "sram1": (0x20010000, 240 * KB, None), "sram2": (0x2004C000, 16 * KB, None)}
    assert load_board("mcu-d").boot_address == 0x00200000


def test_mcu_m_memory_map():
    r = regions("mcu-m")
    assert r["flash"] == (0x08000000, 1024 * KB, None)
    assert r["flash_boot_alias"] == (0x0, 1024 * KB, "flash")
    assert r["sram1"] == (0x20000000, 96 * KB, None)
    assert r["sram2"] == (0x10000000, 32 * KB, None)


def test_mcu_s_and_mcu_b_memory_maps():
    s = regions("mcu-s")
    assert s["flash"] == (0x0, 1024 * KB, None) and s["ram"] == (0x20000000, 256 * KB, None)
    b = regions("mcu-b")
    assert b["flash"] == (0x0, 1024 * KB, None)
    assert b["tcm"] == (0x10000000, 64 * KB, None) and b["sram"] == (0x10010000, 320 * KB, None)


def test_unknown_board_is_a_clear_error():
    with pytest.raises(ConfigError, match="unknown board 'mcu-x'.*mcu-d"):
        load_board("mcu-x")


def test_board_file_extends_its_soc(tmp_path):
    (tmp_path / "custom.toml").write_text('[board]\nname = "custom"\nextends = "soc/stm32f746zg"\n'
                                          'clock_hz = 100_000_000\nconsole_uart = "USART3"\n')
    board = load_board(str(tmp_path / "custom.toml"))
    assert board.clock_hz == 100_000_000 and board.soc == "STM32F746ZG" and board.core.name == "cortex-m7"


def linker_regions(board):
    text = (ROOT / "firmware" / "boards" / board / "linker.ld").read_text()
    found = {}
    for name, origin, length, unit in re.findall(
            r"^\s*(\w+)\s*\([rwx]+\)\s*:\s*ORIGIN\s*=\s*(0x[0-9a-fA-F]+)\s*,\s*LENGTH\s*=\s*(\d+)\s*([KM]?)",
            text, re.M):
        found[name] = (int(origin, 16), int(length) * {"": 1, "K": KB, "M": KB * KB}[unit])
    return found


def covered(board, start, length):
    """True if [start, start+length) lies in memory regions that follow each other without gaps."""
    spans = sorted((r.base, r.end) for r in board.memory)
    address = start
    while address < start + length:
        nxt = next((end for base, end in spans if base <= address < end), None)
        if nxt is None:
            return False
        address = nxt
    return True


@pytest.mark.parametrize("name", board_names())
def test_linker_script_matches_board_memory(name):
    board = load_board(name)
    found = linker_regions(name)
    assert {"FLASH", "RAM"} <= set(found), found
    for region, (origin, length) in found.items():
        assert covered(board, origin, length), f"{name}: {region} 0x{origin:08x}+{length} is outside the board"
    flash = board.region_at(found["FLASH"][0])
    assert board.storage_region(flash).kind == ("ram" if name.startswith("mps2") else "flash")
