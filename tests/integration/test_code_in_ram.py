"""Code the firmware writes into RAM runs, and runs as rewritten: a store over translated code
must discard it. Unicorn tracks that with a page flag it clears once a page's stores may skip
the check, and mcusim's TLB fills give data accesses no execute right so that it can be cleared
on pages of data (machine/native/hooks.py, code_page_tlb_fill); a page that holds code must
keep the check, also after stores from before the code was there."""
import pytest

import mcusim
from asmbuild import build_elf
from mcusim.config import board_names, load_board

SOURCE = """
    .syntax unified
    .thumb
    .text
    .word {stack}
    .word reset + 1
    .global reset
    .thumb_func
reset:
    ldr r4, ={code}             @ RAM, stored to before any code is there
    movs r5, #0
    str r5, [r4, #8]
    str r5, [r4, #12]
    ldr r1, =0x47702001         @ movs r0, #1; bx lr
    str r1, [r4]
    dsb
    isb
    adds r2, r4, #1
    blx r2                      @ r0 = 1
    mov r6, r0
    ldr r1, =0x47702002         @ movs r0, #2; bx lr: over the code just run
    str r1, [r4]
    dsb
    isb
    blx r2                      @ r0 = 2, not the translation of before
    lsls r6, r6, #4
    orrs r6, r0                 @ 0x12
    str r6, [r4, #16]           @ a store to the page of the code after it ran
    ldr r1, =0x47702003         @ movs r0, #3; bx lr
    str r1, [r4]
    dsb
    isb
    blx r2                      @ r0 = 3
    lsls r6, r6, #4
    orrs r6, r0                 @ 0x123
    ldr r0, =0x123
    subs r1, r6, r0             @ 0 when every call ran the code as last written
    movs r0, #0x20              @ SYS_EXIT_EXTENDED: exit code r1[1]
    str r1, [r4, #24]
    ldr r2, =0x20026
    str r2, [r4, #20]
    adds r1, r4, #20
    bkpt 0xab
    .pool
"""


def _ram(board) -> int:
    """A RAM address 0x800 into the lowest RAM region of at least 8 KB that is not an alias of
    another (nRF52840's Code RAM at 0x00800000 shows its RAM: code rewritten there runs stale
    under Unicorn, a known gap in docs/machine.md)."""
    region = next(r for r in sorted(board.memory, key=lambda r: r.base)
                  if r.alias_of is None and r.kind == "ram" and r.size_bytes >= 0x2000)
    return region.base + 0x800


@pytest.mark.parametrize("board_name", board_names())
def test_code_rewritten_in_ram_runs_as_rewritten(tmp_path, board_name):
    board = load_board(board_name)
    code = _ram(board)
    flash = next(r for r in board.memory if r.contains(board.boot_address))
    elf = build_elf(tmp_path, "ramcode", SOURCE.format(stack=code + 0x1000, code=code), text_address=flash.base)
    result = mcusim.run(elf, board_name)
    assert result.exit_code == 0, (result.exit_detail, result.stdout)
