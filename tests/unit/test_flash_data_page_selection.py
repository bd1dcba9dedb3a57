"""Which flash pages become MMIO data pages (machine/flash_data_pages.py): only pages no
instruction can be on, so code never runs from MMIO (QEMU cannot translate it there)."""
from types import SimpleNamespace

from mcusim.config import load_board
from mcusim.elf import Segment
from mcusim.machine.flash_data_pages import data_page_runs, split_code_pages

PAGE = 1024
FLASH = 0x08000000


def image(segments, marks=()):
    return SimpleNamespace(segments=segments, mapping_symbols=sorted(marks))


def segment(address, length, executable, vaddr=None):
    return Segment(index=0, vaddr=address if vaddr is None else vaddr, paddr=address, data=b"\0" * length,
                   memsz=length, executable=executable, sections=())


def runs(img, board="mcu-m"):
    return data_page_runs(img, load_board(board), PAGE)["flash"]


def test_pages_of_a_stripped_executable_segment_are_all_code():
    assert runs(image([segment(FLASH, 5000, True)]))[0] == (5 * PAGE, 1024 * PAGE)  # 1 MB flash


def test_pages_the_mapping_symbols_mark_as_data_are_data_pages_and_the_rest_code():
    marks = [(FLASH, "$d"), (FLASH + 0x200, "$t"), (FLASH + 0x900, "$d"), (FLASH + 0x3100, "$t")]
    got = runs(image([segment(FLASH, 0x3400, True)], marks))
    # code 0x200-0x900 (pages 0-2), data 0x900-0x3100 (whole pages 3-11), code 0x3100- (page 12)
    assert got[:2] == [(3 * PAGE, 12 * PAGE), (13 * PAGE, 1024 * PAGE)]


def test_a_read_only_segment_and_the_flash_copy_of_ram_code_are_data():
    got = runs(image([segment(FLASH, 0x300, True), segment(FLASH + 0x800, 0x2000, False),
                      segment(FLASH + 0x2800, 0x400, True, vaddr=0x20000000)]))
    assert got == [(PAGE, 1024 * PAGE)]


def test_code_reached_through_an_alias_keeps_its_storage_pages_code():
    # mcu-d: code linked for the ITCM alias of its flash (0x00200000)
    got = data_page_runs(image([segment(0x00200000, 0x1800, True)]), load_board("mcu-d"), PAGE)["flash"]
    assert got[0][0] == 6 * PAGE  # pages 0-5 of the storage: code


def test_code_pages_that_also_hold_other_sections_data_are_read_through_their_alias():
    """split_code_pages: a code page holding any byte of a non-executable section (the .rodata
    after .text) is aliased whole; the other code pages keep the block hook's literal timing."""
    code = [(FLASH, FLASH + 4 * PAGE), (0, 2 * PAGE)]  # (the second: the flash's boot alias at 0)
    rodata = [(FLASH + 2 * PAGE + 100, FLASH + 2 * PAGE + 300), (FLASH + 5 * PAGE, FLASH + 6 * PAGE)]
    literal, aliased = split_code_pages(code, rodata, PAGE)
    assert aliased == [(FLASH + 2 * PAGE, FLASH + 3 * PAGE)]
    assert literal == [(0, 2 * PAGE), (FLASH, FLASH + 2 * PAGE), (FLASH + 3 * PAGE, FLASH + 4 * PAGE)]
    across = [(FLASH + PAGE - 4, FLASH + PAGE + 4)]  # a section across a page boundary: both pages
    assert split_code_pages(code, across, PAGE)[1] == [(FLASH, FLASH + 2 * PAGE)]
    assert split_code_pages(code, [], PAGE) == (sorted(code), [])
