"""run.json `memory`: the footprint per bank from the ELF, and the stack and heap peaks read
from RAM after the run, against firmware whose deepest SP and program break are known."""
import pytest

from conftest import BOARDS
from mcusim.api import Simulator


def _word(simulator, name):
    return int.from_bytes(simulator.machine.read_memory(simulator.image.symbol(name), 4), "little")


@pytest.mark.parametrize("board", BOARDS)
def test_stack_and_heap_peaks_match_the_firmware_s_own_record(firmware_build, board):
    simulator = Simulator(firmware_build / board / "stack-heap.elf", board)
    result = simulator.run()
    assert result.exit_code == 0, result.exit_detail
    memory = result.memory
    deepest = _word(simulator, "deepest_sp")
    # the deepest frame stores its locals at its bottom: nothing below SP, no more than a frame above
    assert memory["lowest_sp"] == deepest
    assert memory["stack_peak_bytes"] == memory["stack_top"] - deepest > 64 * 24  # 64 frames of 6 locals
    # newlib's break: the heap's end as malloc last grew it; what was written stops within one
    # chunk header (8 bytes) and its alignment padding of it
    heap = _word(simulator, "heap_break") - memory["heap_base"]
    assert 1300 <= heap and heap - 16 <= memory["heap_peak_bytes"] <= heap
    # _sbrk's increments, summed, are the break's move: the run's and each region's heap peak
    assert memory["heap_sbrk_peak_bytes"] == heap
    # the process stack: from where the firmware set PSP down to its deepest frame there
    process = memory["process_stack"]
    assert process["highest_sp"] == _word(simulator, "process_stack_top")
    assert process["lowest_sp"] == _word(simulator, "deepest_psp")
    assert process["peak_bytes"] == process["highest_sp"] - process["lowest_sp"] > 16 * 24  # 16 frames
    assert process["peak_function"] == "recurse"
    assert memory["lowest_sp"] > process["highest_sp"] or memory["stack_top"] <= process["lowest_sp"]
    # the block hook saw the deepest frame: the function that reached the peak is named, and each
    # region has the peak inside it
    assert memory["stack_peak_function"] == "recurse"
    regions = {r["name"]: r for r in result.regions}
    assert regions["recurse"]["stack_peak_bytes"] == memory["stack_peak_bytes"]
    assert 0 < regions["allocate"]["stack_peak_bytes"] < memory["stack_peak_bytes"] / 4
    assert regions["allocate"]["heap_peak_bytes"] == heap  # its three blocks, on what start-up code took
    assert regions["recurse"]["heap_peak_bytes"] <= heap - 1300
    # RAM changed by at least the stack's frames (in the bank of the deepest SP) and the filled blocks
    bank = next(b for b in memory["banks"] if b["base"] <= deepest < b["base"] + b["size_bytes"])
    assert bank["changed_bytes"] >= 64 * 24
    assert sum(b["changed_bytes"] or 0 for b in memory["banks"] if b["kind"] == "ram") >= 1300 + 64 * 24


def _frames(firmware_build, board) -> dict[str, int]:
    """Each function's frame in bytes, as GCC's -fstack-usage wrote it for stack-heap (firmware/Makefile)."""
    lines = (firmware_build / board / "obj" / "stack-heap" / "main.su").read_text().splitlines()
    return {line.split("\t")[0].rsplit(":", 1)[1]: int(line.split("\t")[1]) for line in lines}


@pytest.mark.parametrize("board", BOARDS)
def test_stack_peaks_match_the_compiler_s_frame_sizes(firmware_build, board):
    """64 + 1 levels of `recurse` under main on the main stack, 16 + 1 on the process stack:
    the peaks are those frames (the process stack's exactly; the main stack's within one frame,
    the start-up code's under main)."""
    frames = _frames(firmware_build, board)
    memory = Simulator(firmware_build / board / "stack-heap.elf", board).run().memory
    main_stack = 65 * frames["recurse"] + frames["main"]
    assert main_stack <= memory["stack_peak_bytes"] <= main_stack + frames["recurse"]
    assert memory["process_stack"]["peak_bytes"] == 17 * frames["recurse"] + frames["recurse_on_process_stack"]


@pytest.mark.parametrize("board", BOARDS)
def test_footprint_counts_each_section_once_per_bank(firmware_build, board):
    from elftools.elf.elffile import ELFFile

    elf_path = firmware_build / board / "stack-heap.elf"
    memory = Simulator(elf_path, board).run().memory
    with elf_path.open("rb") as stream:
        sections = {s.name: s["sh_size"] for s in ELFFile(stream).iter_sections() if s["sh_flags"] & 2 and s["sh_size"]}
    banks = {bank["name"]: bank for bank in memory["banks"]}
    placed = {}
    for bank in banks.values():
        assert bank["used_bytes"] == sum(bank["sections"].values()) <= bank["size_bytes"]
        for name, size in bank["sections"].items():
            placed[name] = placed.get(name, 0) + size
    assert {name: size for name, size in placed.items() if "(load image)" not in name} == sections
    flash_banks = [bank for bank in banks.values() if bank["kind"] == "flash"]
    assert memory["flash_bytes"] == sum(bank["used_bytes"] for bank in flash_banks)
    assert memory["ram_bytes"] == sum(bank["used_bytes"] for bank in banks.values() if bank["kind"] == "ram")
    if flash_banks:  # the vendor boards: code in flash, .data's initial values copied from there
        assert sections[".text"] <= memory["flash_bytes"] and ".data (load image)" in flash_banks[0]["sections"]


@pytest.mark.parametrize("board", BOARDS)
def test_the_peaks_read_from_a_bank_s_storage_are_those_read_through_unicorn(firmware_build, board):
    """The stack and heap areas are read as views of their bank's storage where one bank holds
    them; through the debugger's read (Unicorn) they give the same peaks."""
    from mcusim.analysis.memory import memory_use

    simulator = Simulator(firmware_build / board / "stack-heap.elf", board)
    simulator.run()
    m = simulator.machine
    viewed, read = (memory_use(simulator.image, simulator.board, m.read_memory, storage, m.initial_sp)
                    for storage in (m.memory.buffers, {}))
    for field in ("stack_peak_bytes", "lowest_sp", "heap_peak_bytes", "heap_base", "stack_top"):
        assert viewed[field] == read[field], field
    assert viewed["stack_peak_bytes"] > 64 * 24 and viewed["heap_peak_bytes"] > 1000
