"""Flash wait states and accelerators change cycle counts as the model documents (docs/timing.md).

flash-timing times two 32-byte loops (14 ALU instructions + subs + bne; or 12 + a load from
flash + subs + bne) from flash under every accelerator setting a board offers, and from RAM,
in cycles per iteration with warm caches. From RAM (zero wait) they cost the core timing
alone; from flash each line read the core waits for adds the flash's wait states.
"""
import re

import pytest
from elftools.elf.elffile import ELFFile

import mcusim


def per_iteration(result):
    return {(m[1], m[2], m[3]): int(m[4]) for m in re.finditer(r"^flash (\w+) (\w+) ([\w+]+): (-?\d+)$",
                                                                result.stdout, re.M)}


def lines_of(elf, symbol, line_bytes, size=32):
    """How many flash lines the loop at `symbol` spans."""
    with open(elf, "rb") as f:
        address = ELFFile(f).get_section_by_name(".symtab").get_symbol_by_name(symbol)[0]["st_value"] & ~1
    return (address + size - 1) // line_bytes - address // line_bytes + 1


@pytest.fixture(scope="module")
def runs(firmware_build):
    found = {}
    for board in ("mcu-m", "mcu-s", "mcu-b", "mcu-d"):
        elf = firmware_build / board / "flash-timing.elf"
        result = mcusim.run(elf, board)
        assert result.exit_code == 0, result.stdout
        found[board] = (elf, per_iteration(result), result)
    return found


def test_mcu_m_four_wait_states_and_the_art(runs):
    """STM32L476 at 80 MHz, LATENCY 4 (RM0351 3.3.3): a 64-bit line read waits 4 cycles."""
    elf, t, _ = runs["mcu-m"]
    core_alu, core_load = t["alu", "ram", "none"], t["load", "ram", "none"] - 4  # RAM code, flash constant
    assert core_alu == 17 and core_load == 17  # 14 ALU + SUBS + BNE taken (1 + P = 2)
    alu_lines, load_lines = lines_of(elf, "flash_alu", 8), lines_of(elf, "flash_load", 8)
    # no accelerator: every line waits 4; the load also waits 4 for its data
    assert t["alu", "flash", "none"] == core_alu + 4 * alu_lines
    assert t["load", "flash", "none"] == core_load + 4 * load_lines + 4
    # prefetch: after the branch target's line, each next line was read while the previous one's
    # four 16-bit instructions ran (4 cycles of the 5 a read takes)
    assert t["alu", "flash", "prefetch"] == core_alu + 4 + (alu_lines - 1) * 1
    # instruction cache, warm: no fetch waits; the data cache removes the load's wait
    assert t["alu", "flash", "icache"] == core_alu
    assert t["load", "flash", "icache"] == core_load + 4
    assert t["load", "flash", "icache+dcache"] == core_load
    assert t["load", "flash", "dcache"] == core_load + 4 * load_lines
    assert t["alu", "flash", "prefetch+icache+dcache"] == core_alu


def test_mcu_m_a_data_read_from_flash_delays_the_instruction_prefetch(runs):
    """D-Code has priority over I-Code at the flash (RM0351 3.3.5): with prefetch on, a load from
    flash costs its own 4 wait cycles and delays the prefetch of the code after it (contention);
    with the code in the instruction cache only the 4 wait cycles remain."""
    _, t, result = runs["mcu-m"]
    assert t["mid", "flash", "icache+dcache"] == t["mid", "ram", "none"] - 4 == 18
    assert t["mid", "flash", "icache"] - t["mid", "flash", "icache+dcache"] == 4
    assert t["mid", "flash", "prefetch"] - t["mid", "flash", "prefetch+dcache"] > 4
    assert result.stalls["contention"] > 0


def test_mcu_s_cache_and_the_papers_flash_load(runs):
    """nRF52840: the NVMC cache removes fetch waits; data reads are not cached and keep the
    3 wait cycles behind the paper's 5-cycle flash load."""
    elf, t, _ = runs["mcu-s"]
    assert set(setting for _, _, setting in t) == {"none", "icache"}  # no prefetch or data cache to switch
    core = t["alu", "ram", "none"]
    assert t["alu", "flash", "none"] == core + 3 * lines_of(elf, "flash_alu", 8)
    assert t["alu", "flash", "icache"] == core
    assert t["load", "flash", "icache"] == t["load", "ram", "none"] == core + 3


def test_mcu_b_burst_mode_doubles_the_flash_wait(runs):
    """Apollo3 in burst mode (96 MHz) with RD_WAIT 1: a 16-byte line read takes 2 flash clocks of
    48 MHz, 4 core cycles, so it waits 3; the unified cache serves code and data."""
    elf, t, result = runs["mcu-b"]
    assert result.clock_hz == 96_000_000
    core = t["alu", "ram", "none"]
    assert t["alu", "flash", "none"] == core + 3 * lines_of(elf, "flash_alu", 16)
    assert t["load", "flash", "none"] == core + 3 * lines_of(elf, "flash_load", 16) + 3
    assert t["alu", "flash", "icache"] == core
    assert t["load", "flash", "icache+dcache"] == core


def test_mcu_d_seven_wait_states_and_the_l1_caches(runs):
    """STM32F746 at 216 MHz with LATENCY 7 over AXIM: a 256-bit line read waits 7 cycles, and a
    branch back reads its target's line again; the Cortex-M7's L1 instruction and data caches
    (SCB CCR.IC, CCR.DC) remove the waits once warm."""
    elf, t, _ = runs["mcu-d"]
    assert set(setting for _, where, setting in t if where == "flash") == {"none", "icache", "dcache",
                                                                          "icache+dcache"}
    core_alu, core_load = t["alu", "ram", "none"], t["load", "ram", "none"] - 7
    assert t["alu", "flash", "none"] == core_alu + 7 * lines_of(elf, "flash_alu", 32)
    assert t["load", "flash", "none"] == core_load + 7 * lines_of(elf, "flash_load", 32) + 7
    assert t["alu", "flash", "icache"] == core_alu
    assert t["load", "flash", "dcache"] == core_load + 7 * lines_of(elf, "flash_load", 32)
    assert t["load", "flash", "icache+dcache"] == core_load


def test_mcu_d_itcm_path_and_the_art(runs):
    """The same code through the ITCM interface (0x00200000): not cached by L1 but by the ART
    (FLASH_ACR ARTEN), with prefetch (PRFTEN) for the next line; 7 wait states as over AXIM."""
    elf, t, _ = runs["mcu-d"]
    core_alu = t["alu", "ram", "none"]
    core_load = t["load", "ram", "none"] - 7
    assert t["alu", "alias", "none"] == core_alu + 7 * lines_of(elf, "flash_alu", 32)
    assert t["alu", "alias", "icache"] == core_alu
    assert t["load", "alias", "prefetch+icache"] == core_load  # its flash data comes through the warm L1
    if lines_of(elf, "flash_load", 32) > 1:  # the second line arrives early with prefetch
        assert t["load", "alias", "prefetch"] < t["load", "alias", "none"]


def test_stalls_and_dwt_add_up_with_flash_waits(runs):
    for _, _, result in runs.values():
        stalls = result.stalls
        assert stalls["fetch_wait"] > 0 and stalls["data_wait"] > 0
        assert result.issue_cycles >= result.instructions - result.dwt["foldcnt"]  # stalls not over-counted
        dwt = result.dwt
        assert result.instructions == (dwt["cyccnt"] - dwt["cpicnt"] - dwt["exccnt"] - dwt["sleepcnt"]
                                       - dwt["lsucnt"] + dwt["foldcnt"])


def test_a_pinned_clock_keeps_the_wait_states_the_firmware_chose(firmware_build):
    """--clock-hz 4 MHz is a what-if: the firmware still programs 4 wait states (for 80 MHz), and
    they still cost what they cost at 80 MHz, without a warning."""
    elf = firmware_build / "mcu-m" / "flash-timing.elf"
    result = mcusim.run(elf, "mcu-m", clock_hz=4_000_000)
    t = per_iteration(result)
    assert t["alu", "flash", "none"] == t["alu", "ram", "none"] + 4 * lines_of(elf, "flash_alu", 8)
    assert not any("wait states" in w for w in result.warnings)
