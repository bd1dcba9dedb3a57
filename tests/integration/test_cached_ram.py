"""mcu-d's SRAM1 behind the L1 data cache, timed through an MMIO alias (machine/cached_ram.py):
what the firmware computes (code copied into it and rewritten, an exclusive load and store),
watchpoints and traffic counts."""
from unicorn.arm_const import UC_ARM_REG_R4

from asmbuild import RESET, build_elf
from mcusim import Simulator

SRAM1 = 0x20010000
SOURCE = RESET.format(stack="0x20001000") + """
    ldr r2, =0xE000ED14      @ SCB CCR.DC: the data cache on
    ldr r1, [r2]
    orr r1, r1, #0x10000
    str r1, [r2]
    dsb
    isb
    .macro copy_and_call function  @ copy the function's 4 bytes to SRAM1 (r5) and call the copy
    ldr r1, =\\function
    ldr r3, [r1]
    str r3, [r5]
    dsb
    isb
    adds r3, r5, #1
    blx r3
    .endm
    ldr r5, =0x20010000      @ SRAM1
    copy_and_call one
    mov r4, r0
    copy_and_call two        @ over the first
    add r4, r4, r0, lsl #4   @ 0x21 if the second call ran `two`
    ldr r3, [r5, #64]        @ a load of another line
    b exclusive              @ (a watchpoint stops the run at the next block)
exclusive:                   @ an atomic increment of a word in SRAM1: 5 + 1
    movs r1, #5
    str r1, [r5, #128]
again:
    ldrex r1, [r5, #128]
    adds r1, #1
    strex r2, r1, [r5, #128]
    cmp r2, #0
    bne again
    ldr r1, [r5, #128]
    add r4, r4, r1, lsl #8   @ 0x621
    movs r0, #0x18           @ SYS_EXIT
    movw r1, #0x0026
    movt r1, #0x0002
    bkpt 0xab
    .balign 4
one:
    movs r0, #1
    bx lr
two:
    movs r0, #2
    bx lr
    .pool
"""


def simulator(tmp_path, **options):
    return Simulator(build_elf(tmp_path, "cached_ram", SOURCE), "mcu-d", **options)


def test_code_copied_into_cached_ram_runs_as_rewritten_and_its_accesses_are_timed(tmp_path):
    """The stores reach SRAM1 through the alias, which Unicorn's tracking of writes to translated
    code does not see: the second call must run the code written over the first. LDREX/STREX
    through the alias increment the word once."""
    for mode in ("sampled", "exact"):
        sim = simulator(tmp_path, data_timing=mode)
        result = sim.run()
        assert result.exit_code == 0
        assert sim.machine.uc.reg_read(UC_ARM_REG_R4) == 0x621
        assert result.dcache["misses"] >= 2  # the first store allocated a line, the last load missed
        assert sim.machine._memory_hooks == []  # timed without a memory hook


def test_watchpoints_see_stores_and_loads_through_the_alias(tmp_path):
    sim = simulator(tmp_path)
    sim.add_watchpoint(SRAM1, 4, "write")
    sim.add_watchpoint(SRAM1 + 64, 4, "read")
    stop = sim.run_until()
    assert stop.reason == "watchpoint"
    hit = sim.machine.watchpoints.hit
    assert (hit.address, hit.is_write) == (SRAM1, True)
    sim.remove_watchpoint(SRAM1, 4, "write")
    stop = sim.run_until()
    assert stop.reason == "watchpoint"
    hit = sim.machine.watchpoints.hit
    assert (hit.address, hit.is_write) == (SRAM1 + 64, False)


def test_memory_traffic_counts_the_accesses_through_the_alias_in_sram1(tmp_path):
    sim = simulator(tmp_path, memory_traffic=True)
    assert sim.run().exit_code == 0
    machine = sim.machine
    bank = next(machine.board.storage_region(r).name for r in machine.board.memory if r.base == SRAM1)
    read, written = machine.traffic_now()[machine.traffic_banks.index(bank)]
    # two stores of code, the load of another line, then a store, LDREX, STREX and a load of the
    # word; QEMU runs STREX as a load, a compare and a store, so its load counts too (as it did with
    # a memory hook); the fetches from SRAM1 are not data traffic
    assert (written, read) == (16, 16)
