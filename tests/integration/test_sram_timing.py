"""mcu-d's SRAM1/SRAM2 over AXIM, through the L1 data cache (docs/timing.md, Cortex-M7 memory).

sram-timing runs the same loops (one access per 32-byte line: read, write, read-modify-write)
over SRAM1 and over DTCM; the difference per iteration is what the memory adds. The expected
values come from the board's data (ram_read_wait_cycles, writeback_wait_cycles) by the rules:
without the data cache every read waits and writes do not; with it a 2 KB span stays cached,
an 8 KB span misses on every line (4 KB, LRU), and a miss whose victim the loop itself dirtied
waits for the write-back too; an emptied cache misses once per line, unless stores allocated
the lines first.
"""
import re

import pytest

import mcusim
from mcusim.config import load_board


@pytest.fixture(scope="module")
def sram(firmware_build):
    result = mcusim.run(firmware_build / "mcu-d" / "sram-timing.elf", "mcu-d")
    assert result.exit_code == 0, result.stdout
    found = {(m[1], int(m[2]), m[3], m[4]): int(m[5])
             for m in re.finditer(r"^sram ([\w-]+) (\d+) (\w+) (\w+): (\d+)$", result.stdout, re.M)}
    assert len(found) == 2 * 2 * 3 * 2 + 4, result.stdout
    axim = load_board("mcu-d").flash_ports[0]
    return found, result, axim.ram_read_wait_cycles, axim.writeback_wait_cycles


def added(found, loop, span, setting):
    return found[(loop, span, "cached", setting)] - found[(loop, span, "tcm", setting)]


@pytest.mark.parametrize("span", [2048, 8192])
def test_without_the_data_cache_every_read_waits_and_writes_do_not(sram, span):
    found, _, wait, _ = sram
    assert added(found, "read", span, "none") == wait
    assert added(found, "write", span, "none") == 0
    assert added(found, "rmw", span, "none") == wait


def test_a_span_the_data_cache_holds_costs_nothing(sram):
    found, *_ = sram
    assert [added(found, loop, 2048, "dcache") for loop in ("read", "write", "rmw")] == [0, 0, 0]


def test_a_span_larger_than_the_cache_misses_every_line_and_writes_back_what_it_dirtied(sram):
    found, _, wait, writeback = sram
    assert added(found, "read", 8192, "dcache") == wait
    assert added(found, "write", 8192, "dcache") == 0           # write misses allocate behind the store buffer
    assert added(found, "rmw", 8192, "dcache") == wait + writeback


def test_stores_allocate_lines_that_later_reads_hit(sram):
    found, _, wait, _ = sram
    assert added(found, "cold-read", 2048, "dcache") == 64 * wait  # 64 lines, each a miss
    assert added(found, "written-read", 2048, "dcache") == 0        # write-allocate: all hits


def test_run_reports_data_cache_hits_misses_and_write_backs(sram):
    _, result, *_ = sram
    assert result.dcache["hits"] > 0 and result.dcache["misses"] > 0
    assert result.dcache["writebacks"] > 0
    assert result.stalls["data_wait"] > 0
