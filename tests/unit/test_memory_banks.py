"""Segments may cross adjacent memory banks, as vendor linker scripts have them (one `RAM`
region over DTCM + SRAM1 + SRAM2 on the STM32F7, SRAM1 + SRAM2's alias on the STM32L4, TCM +
SRAM on the Apollo3); each piece lands in its own bank (and that bank's aliases)."""
import pytest

import mcusim
from mcusim.config import board_names, load_board
from elfgen import PF_R, PF_W, PF_X, program

PATTERN = bytes(range(256)) * 2  # 512 bytes


def write(tmp_path, data):
    path = tmp_path / "app.elf"
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("board,flash,boundary,alias", [
    ("mcu-m", 0x08000000, 0x20018000, 0x10000000),   # SRAM1 | SRAM2 through its alias at 0x20018000
    ("mcu-d", 0x08000000, 0x20010000, None),         # DTCM | SRAM1
    ("mcu-d", 0x08000000, 0x2004C000, None),         # SRAM1 | SRAM2
    ("mcu-b", 0x0000C000, 0x10010000, None),         # TCM | SRAM
])
def test_a_segment_across_two_banks_loads_into_both(tmp_path, board, flash, boundary, alias):
    start = boundary - 256
    sim = mcusim.Simulator(write(tmp_path, program("exit7", flash_base=flash,
                                                   extra=[(start, PATTERN, PF_R | PF_W)])), board)
    memory = sim.machine.read_memory
    assert memory(start, len(PATTERN)) == PATTERN
    if alias is not None:  # the second bank's own address shows the same bytes
        assert memory(alias, 256) == PATTERN[256:]
    assert sim.run().exit_code == 7


def test_code_linked_for_the_itcm_flash_alias_and_data_in_itcm_ram_run_on_mcu_d(tmp_path):
    sim = mcusim.Simulator(write(tmp_path, program("exit7", flash_base=0x00200000,
                                                   extra=[(0x00000000, PATTERN, PF_R | PF_W | PF_X)])), "mcu-d")
    assert sim.machine.read_memory(0x08000000, 8) == sim.machine.read_memory(0x00200000, 8)  # one flash
    assert sim.machine.read_memory(0, len(PATTERN)) == PATTERN
    assert sim.run().exit_code == 7


def test_a_segment_running_off_the_last_bank_is_refused_with_the_map(tmp_path):
    image = program("exit7", flash_base=0x08000000, extra=[(0x20050000 - 16, PATTERN, PF_R | PF_W)])
    with pytest.raises(mcusim.elf.ElfError) as error:
        mcusim.Simulator(write(tmp_path, image), "mcu-d")
    message = str(error.value)
    assert "0x2004fff0-0x200501ef" in message and "does not fit the memory of board mcu-d" in message
    assert "sram2 0x2004c000-0x2004ffff" in message


STORE_LOOP = bytes.fromhex("4254" "0131" "9942" "fbd1" "fee7")  # strb r2,[r0,r1]; adds r1,#1; cmp r1,r3; bne; b .


@pytest.mark.parametrize("board_name", board_names())
@pytest.mark.parametrize("data_pages", [False, True])
def test_stores_to_ram_do_not_retranslate_flash_code_at_the_same_offset(board_name, data_pages):
    """Unicorn gave a mapping larger than an earlier one the internal addresses of another, so
    stores to RAM discarded the translated flash code at the same offset (mcu-d: DTCM and flash):
    each block must be translated once, also with the flash split into RAM and MMIO pieces
    (flash_data_pages.py)."""
    from unicorn import UC_ARCH_ARM, UC_HOOK_EDGE_GENERATED, UC_MODE_MCLASS, UC_MODE_THUMB, Uc
    from unicorn.arm_const import UC_ARM_REG_R0, UC_ARM_REG_R3

    from mcusim.machine.memory import MemoryMap

    board = load_board(board_name)
    flash = board.storage_region(next(r for r in board.memory if r.contains(board.boot_address)))
    offset = 0x600
    for ram in (r for r in board.memory if board.storage_region(r).kind == "ram" and r.size_bytes > offset + 0x100
                and board.storage_region(r) != flash):
        uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
        memory = MemoryMap(uc, board, {flash.name: [(0x2000, 0x6000)]} if data_pages else None)
        memory.buffers[flash.name][offset:offset + len(STORE_LOOP)] = list(STORE_LOOP)
        translated = []
        uc.hook_add(UC_HOOK_EDGE_GENERATED, lambda _uc, block, _previous, _data: translated.append(block.pc))
        uc.reg_write(UC_ARM_REG_R0, ram.base + offset)
        uc.reg_write(UC_ARM_REG_R3, 100)
        code = flash.base + offset
        uc.emu_start(code | 1, code + 8, count=1000)
        assert len(translated) == len(set(translated)), f"{board_name}: stores to {ram.name} retranslated the code at the same offset"


def test_reads_of_any_size_and_of_unmapped_memory():
    """MemoryMap.read (what the decoder and the debugger read) gives Unicorn's bytes whatever the
    size, also beyond the buffer it keeps between reads, and an unmapped address raises
    Unicorn's error as mem_read does."""
    from unicorn import UC_ARCH_ARM, UC_MODE_MCLASS, UC_MODE_THUMB, Uc, UcError

    from mcusim.machine.memory import MemoryMap

    board = load_board("mps2-an386")
    ram = next(r for r in board.memory if board.storage_region(r).kind == "ram" and r.size_bytes >= 0x10000)
    uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
    memory = MemoryMap(uc, board)
    pattern = bytes(range(251)) * 261  # (65,511 bytes: not a multiple of any buffer size)
    uc.mem_write(ram.base, pattern)
    for size in (1, 2, 3, 4095, 4096, 4097, 9000, len(pattern) - 1):
        assert memory.read(ram.base + 1, size) == pattern[1:1 + size] == bytes(uc.mem_read(ram.base + 1, size))
    assert memory.read(ram.base, 2) == pattern[:2]  # (a short read after a long one: only its own bytes)
    with pytest.raises(UcError):
        memory.read(0xFFFF_0000, 4)
