"""Flash pages with no code on them are MMIO whose read callback times data reads
(machine/flash_data_pages.py). On pages with code, the block hook times the PC-relative reads
(test_literal_timing.py), and a page that also holds other sections' data (a .rodata section
sharing the page where the code ends) is read through an MMIO alias, whatever section the
bytes read are in (elsewhere register-based reads of the code's own sections, next to a
literal pool, are not timed: docs/timing.md). Every placement must
give the same values for every kind of load, data must wait alike on a data page and through
an alias, watchpoints and the memory traffic count must see reads through an alias, and a
debugger's read of a data page must not count as one."""
import pytest
from unicorn.arm_const import UC_ARM_REG_R4

import mcusim
from mcusim.machine import native as N
from asmbuild import build_elf

SOURCE = """
    .syntax unified
    .thumb
    .cpu cortex-m4
    .fpu fpv4-sp-d16
    .text
    .word 0x20008000
    .word reset + 1
    .global reset, near, mixed, far
    .thumb_func
reset:
    ldr r0, =0xE000ED88        @ CPACR: CP10 and CP11 full access (for VLDR)
    ldr r1, [r0]
    orr r1, r1, #0xF00000
    str r1, [r0]
    ldr r0, =0x40022000        @ FLASH_ACR (RM0351 3.7.1): LATENCY 4, prefetch and caches off
    movs r1, #4
    str r1, [r0]
    dsb
    isb
    ldr r2, ={table}
    movs r4, #0
    {load}
    {store}
    movs r0, #0x18             @ SYS_EXIT
    movw r1, #0x0026
    movt r1, #0x0002
    bkpt 0xab
    .pool
    .balign 4
    .type near, %object
    .size near, 16
near:                          @ in the code's section, on the page that also holds .rodata
    .word 0x11223344, 0x55667788, 0x99aabbcc, 0xddeeff01
    .section .rodata
    .type mixed, %object
    .size mixed, 16
mixed:                         @ data on a page with code (after .text): read through the page's MMIO alias
    .word 0x11223344, 0x55667788, 0x99aabbcc, 0xddeeff01
    .section .far, "a"         @ (a section of its own: .rodata stays on the code's page)
    .balign 2048
    .type far, %object
    .size far, 16
far:                           @ on a page of its own: MMIO
    .word 0x11223344, 0x55667788, 0x99aabbcc, 0xddeeff01
"""

LOADS = {  # each adds what it read to r4; (reads of flash data, literal loads included)
    "word": ("ldr r3, [r2, #4]\n add r4, r3", 2),
    "byte": ("ldrb r3, [r2, #1]\n add r4, r3", 2),
    "halfword": ("ldrh r3, [r2, #2]\n add r4, r3", 2),
    "unaligned word": ("ldr r3, [r2, #1]\n add r4, r3", 3),        # two aligned reads around it
    "unaligned halfword": ("ldrh r3, [r2, #3]\n add r4, r3", 3),
    "ldrd": ("ldrd r3, r5, [r2]\n add r4, r3\n add r4, r5", 3),
    "ldm": ("ldm r2, {r3, r5, r6}\n add r4, r3\n add r4, r5\n add r4, r6", 4),
    "vldr.64": ("vldr d0, [r2, #8]\n vmov r3, r5, d0\n add r4, r3\n add r4, r5", 3),
    "conditional in an IT block": ("movs r0, #1\n cmp r0, #1\n ite eq\n ldreq r3, [r2, #12]\n ldrne r3, [r2]\n"
                                   " add r4, r3", 2),
}
WAIT = 4  # LATENCY 4, caches off: every flash data read waits 4 cycles


def run(tmp_path, table, load, store="", traffic=False):
    elf = build_elf(tmp_path, f"{table}{abs(hash(load))}{bool(store)}",
                    SOURCE.replace("{table}", table).replace("{load}", load).replace("{store}", store))
    sim = mcusim.Simulator(elf, "mcu-m", memory_traffic=traffic)
    return sim, sim.run()


@pytest.mark.parametrize("kind", list(LOADS))
def test_a_load_reads_alike_wherever_its_data_is_and_data_waits_alike(tmp_path, kind):
    load, reads = LOADS[kind]
    sims, results = {}, {}
    for table in ("near", "mixed", "far"):
        sims[table], results[table] = run(tmp_path, table, load)
        assert results[table].exit_code == 0
    memory = {table: sims[table].machine.memory for table in sims}
    assert memory["far"].in_mmio_piece(sims["far"].image.symbol("far"), 16)
    assert not memory["mixed"].in_mmio_piece(sims["mixed"].image.symbol("mixed"), 16)
    assert not memory["near"].in_mmio_piece(sims["near"].image.symbol("near"), 16)
    assert len({sim.machine.uc.reg_read(UC_ARM_REG_R4) for sim in sims.values()}) == 1
    for table in ("near", "mixed", "far"):  # (near shares its page with .rodata: read through the alias)
        assert results[table].stalls["data_wait"] == reads * WAIT
    assert results["far"].cycles == results["mixed"].cycles == results["near"].cycles


def test_a_debugger_read_of_a_data_page_gives_its_bytes_and_takes_no_time(tmp_path):
    sim, result = run(tmp_path, "far", LOADS["word"][0])
    far = sim.image.symbol("far")
    before = int(sim.machine.state[N.CYCLES]), int(sim.machine.state[N.DATA_WAIT_TOTAL])
    assert sim.machine.read_memory(far, 8) == bytes.fromhex("4433221188776655")
    assert sim.machine.read_memory(far - 2, 4)[2:] == bytes.fromhex("4433")  # across the page edge
    assert (int(sim.machine.state[N.CYCLES]), int(sim.machine.state[N.DATA_WAIT_TOTAL])) == before


def test_a_store_to_a_data_page_faults_as_one_to_a_code_page_does(tmp_path):
    store = "str r4, [r2]"
    _, near = run(tmp_path, "near", LOADS["word"][0], store)
    _, far = run(tmp_path, "far", LOADS["word"][0], store)
    assert near.exit_code == far.exit_code and near.exit_code != 0
    assert near.exit_detail.split("0x")[0] == far.exit_detail.split("0x")[0]


def test_a_read_through_an_alias_meets_watchpoints_and_the_traffic_count(tmp_path):
    """A read watchpoint on data of a code page stops after the read, and --memory-traffic counts
    the bytes read through an alias in the flash bank as it counts those of a data page."""
    load = LOADS["word"][0] + "\n b 1f\n1:"  # (a block boundary before the exit: the watchpoint stops there)
    elf = build_elf(tmp_path, "watched", SOURCE.replace("{table}", "mixed").replace("{load}", load)
                    .replace("{store}", ""))
    sim = mcusim.Simulator(elf, "mcu-m")
    mixed = sim.image.symbol("mixed")
    sim.add_watchpoint(mixed + 4, 4, "read")
    stop = sim.run_until()
    assert stop.reason == "watchpoint" and stop.watch.address == mixed + 4 and not stop.watch.is_write
    read = {}
    for table in ("near", "mixed", "far"):
        sim, result = run(tmp_path, table, load, traffic=True)
        assert result.exit_code == 0
        read[table] = result.roofline["traffic"]["flash"]["read_bytes"]
    assert read["near"] == read["mixed"] == read["far"] >= 8  # (the table's address, the word)


@pytest.mark.parametrize("board", ["mcu-s", "mcu-m", "mcu-d"])
def test_the_boot_vector_table_shares_its_page_with_code_without_an_alias(firmware_build, board):
    """A vector table in a section of its own (.isr_vector) is data on the page where the code
    starts, and that page has the same TLB index as the first page of RAM, where the firmware's
    globals are (flash and RAM bases are both multiples of the TLB's reach): read through an
    alias, its TLB entry, which QEMU's victim TLB never keeps, was filled again at almost every
    access to either (1.8M fills on this run). The core reads the vector table itself and firmware
    hardly ever does, so its page is a code page like the others (its literal loads timed by the
    block hook); the .rodata on the page where .text ends is still read through an alias. The
    STM32s boot from an alias of their flash (0 on mcu-m, the ITCM view on mcu-d), so the table
    is at another address in the image: there the page also held dhrystone-like's hot functions,
    and a fetch and a literal load kept taking its TLB entry from each other (1.0M and 1.2M fills)."""
    sim = mcusim.Simulator(firmware_build / board / "dhrystone-like.elf", board)
    assert sim.run().exit_code == 0
    table, page = sim.machine.flash_data_pages.table, sim.machine.page_bytes
    aliased = [(int(table[N.AT_ENTRIES + N.CODE_ALIAS * i + N.AL_BEGIN]),
                int(table[N.AT_ENTRIES + N.CODE_ALIAS * i + N.AL_END])) for i in range(int(table[N.AT_COUNT]))]
    vectors = sim.image.data_ranges[0][0]  # (.isr_vector, at the boot address or in the flash it shows)
    assert sim.board.region_at(vectors) is not None
    rodata = min(a for a, _ in sim.image.data_ranges if a > vectors)
    assert vectors // page == min(a for a, _, _ in sim.image.functions) // page
    assert not any(begin <= vectors < end for begin, end in aliased)
    assert any(begin <= rodata < end for begin, end in aliased)
    assert table[N.AT_FILLS] < 100
