"""The run ends as promised on any firmware: faults at the edge of memory, limits, interrupts."""
import struct

import pytest

import mcusim
from elfgen import PF_R, PF_W, PF_X, elf32_arm, program
from mcusim.config import board_names, load_board

UDF = bytes.fromhex("ffde")  # udf #255: permanently undefined (ARMv7-M ARM A7.7.194)


def _first_ram_after_a_hole(board):
    """A RAM region whose first halfword has nothing mapped just before it."""
    return next(r for r in sorted(board.memory, key=lambda r: r.base)
                if r.kind == "ram" and r.alias_of is None and r.base >= 4 and board.region_at(r.base - 2) is None)


@pytest.mark.parametrize("board_name", board_names())
def test_undefined_instruction_at_the_start_of_a_region_is_a_fault_report(tmp_path, board_name):
    """The fault report looks at the halfwords before the PC (was it a hint?), which are unmapped
    here: still exit 125 with the usual report, never a traceback."""
    board = load_board(board_name)
    region = _first_ram_after_a_hole(board)
    vectors = struct.pack("<16I", region.base + 0x1000, region.base | 1, *[0] * 14)
    image = elf32_arm([(board.boot_address, vectors, PF_R | PF_X), (region.base, UDF + UDF, PF_R | PF_W | PF_X)])
    path = tmp_path / "udf.elf"
    path.write_bytes(image)
    result = mcusim.run(path, board_name, max_cycles=10_000)
    assert (result.exit_reason, result.exit_code) == ("fault", 125)
    assert f"undefined instruction deff at 0x{region.base:08x}" in result.fault_report
    assert f"pc: 0x{region.base:08x}" in result.fault_report


def _zeroed_ram_runaway(tmp_path):
    """Reset jumps into RAM that holds nothing: zeros run as `movs r0, r0`, blocks of 512."""
    vectors = struct.pack("<16I", 0x20001000, 0x20000001, *[0] * 14)
    path = tmp_path / "runaway.elf"
    path.write_bytes(elf32_arm([(0, vectors, PF_R | PF_X)]))
    return path


@pytest.mark.parametrize("limit", [1, 10, 1000])
@pytest.mark.parametrize("timing", [True, False])
def test_cycle_limit_stops_at_the_instruction_that_reaches_it(tmp_path, limit, timing):
    """One cycle per instruction (and 1 for `movs`, `adds`, 2 for the taken `b` on the
    zero-wait mps2-an386): the run ends exactly at the limit, not at the end of its block."""
    for path in (_zeroed_ram_runaway(tmp_path), tmp_path / "count.elf"):
        if not path.exists():
            path.write_bytes(program("count"))
        result = mcusim.run(path, "mps2-an386", max_cycles=limit, timing=timing)
        assert (result.exit_reason, result.exit_code) == ("max-cycles", 124)
        assert result.cycles == limit, path.name
        if not timing:
            assert result.instructions == limit


@pytest.mark.parametrize("entry", ["count", "runaway"])
def test_time_limit_ends_a_run_with_no_events_within_a_fraction_of_a_second(tmp_path, entry):
    """`adds; b` forever runs in Unicorn without a stop; zeroed RAM decodes at every block."""
    path = _zeroed_ram_runaway(tmp_path) if entry == "runaway" else tmp_path / "count.elf"
    if entry == "count":
        path.write_bytes(program("count"))
    result = mcusim.run(path, "mps2-an386", max_seconds=0.5)
    assert (result.exit_reason, result.exit_code) == ("time-limit", 124)
    assert "time limit (0.5 s of host time)" in result.exit_detail
    assert 0.5 <= result.host_seconds < 1.2
    assert result.cycles > 0 and result.to_dict()["settings"]["max_seconds"] == 0.5


def test_interrupt_from_another_thread_ends_the_run_with_its_results(tmp_path):
    import threading

    (tmp_path / "count.elf").write_bytes(program("count"))
    sim = mcusim.Simulator(tmp_path / "count.elf", "mps2-an386", profile=True)
    threading.Timer(0.5, sim.interrupt).start()
    result = sim.run()
    assert (result.exit_reason, result.exit_code) == ("interrupted", 130)
    assert "interrupted by SIGINT" in result.exit_detail
    assert result.cycles > 1000 and result.instructions > 1000 and result.functions


def test_code_running_away_through_zeroed_ram_decodes_fast(tmp_path):
    """Each fresh 1 KB block of zeros used to take ~50 ms to decode (0.01 MIPS): 200,000
    instructions took half a minute. Blocks seen before are copied by content."""
    result = mcusim.run(_zeroed_ram_runaway(tmp_path), "mps2-an500", max_cycles=200_000)
    assert result.exit_reason == "max-cycles" and result.instructions >= 200_000
    assert result.host_seconds < 6


@pytest.mark.parametrize("board_name", ["mps2-an386", "mps2-an500"])  # Cortex-M4 and (dual-issue) M7
def test_blocks_decoded_by_content_cost_what_a_fresh_decode_does(tmp_path, board_name, monkeypatch):
    """RAM filled with a 12-byte pattern of loads, stores, a multiply and ALU operations (with
    interlocks and dual issue): 1 KB blocks repeat every third one, in each phase."""
    from mcusim.timing import decoder

    pattern = bytes.fromhex("0099" "0131" "4a43" "0192" "019b" "5818")  # ldr, adds, muls, str, ldr, adds
    vectors = struct.pack("<16I", 0x20001000, 0x20010001, *[0] * 14)
    path = tmp_path / "pattern.elf"
    path.write_bytes(elf32_arm([(0, vectors, PF_R | PF_X), (0x20010000, pattern * 1400, PF_R | PF_W | PF_X)]))
    copied = mcusim.run(path, board_name, max_cycles=12_000)
    monkeypatch.setattr(decoder, "CHUNK_CACHE_BYTES", 0)
    fresh = mcusim.run(path, board_name, max_cycles=12_000)
    assert (copied.cycles, copied.instructions, copied.stalls, copied.dwt) == \
        (fresh.cycles, fresh.instructions, fresh.stalls, fresh.dwt)
