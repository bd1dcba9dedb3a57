"""Flash data pages read plain while all their lines are cached (machine/resident_pages.py): on
mcu-b, whose one direct-mapped flash cache holds code and data, a data page whose every line is
cached is read through a plain alias, and goes back to timed reads as soon as a line of it leaves
the cache. What users rely on: the run is the one timing every read gives (cycles, waits,
misses, energy, DWT counters, output), only the data cache hit count counts fewer reads, and
run.json says it happened.

bench-table walks a 16 KB table in flash that the 16 KB cache holds but for the lines whose sets
its loop's code takes; kws_dscnn-opt's weights do not fit, so its pages go plain and back (and are read again)."""
import pytest

from mcusim.api import Simulator, run

SAME = ("cycles", "instructions", "stalls", "dwt", "icache", "stdout", "exit_code")


def unchanged(sampled, exact):
    for key in SAME:
        assert getattr(sampled, key) == getattr(exact, key), key
    assert sampled.energy["energy_by_rail_j"] == exact.energy["energy_by_rail_j"]
    assert sampled.dcache["misses"] == exact.dcache["misses"]


@pytest.mark.parametrize("program, timed_again", [("bench-table", False), ("kws_dscnn-opt", True)])
def test_reading_cached_pages_plain_changes_nothing_but_the_hit_count(firmware_build, program, timed_again):
    elf = firmware_build / "mcu-b" / f"{program}.elf"
    sampled, exact = run(elf, "mcu-b"), run(elf, "mcu-b", data_timing="exact")
    unchanged(sampled, exact)
    assert sampled.resident_pages["pages_read_plain"] > 0
    assert (sampled.resident_pages["pages_timed_again"] > 0) == timed_again
    assert exact.resident_pages == {}
    assert sampled.dcache["hits"] < exact.dcache["hits"]
    if program == "bench-table":  # most of its million reads are of pages read plain
        assert sampled.dcache["hits"] < exact.dcache["hits"] / 4
    assert sampled.to_dict()["resident_pages"] == sampled.resident_pages


def test_pausing_inside_blocks_changes_nothing(firmware_build):
    elf = firmware_build / "mcu-b" / "kws_dscnn-opt.elf"
    plain = run(elf, "mcu-b")
    sim = Simulator(elf, "mcu-b")
    while sim.step(4_999).reason == "step":  # (an odd count: stops inside blocks)
        pass
    result = sim.run()
    assert (result.cycles, result.dcache, result.resident_pages, result.stdout) == (
        plain.cycles, plain.dcache, plain.resident_pages, plain.stdout)


def run_with_cache_emptied(elf, data_timing):
    """Run to 3M cycles, empty the flash cache as CACHECTRL's INVALIDATE does, run on."""
    sim = Simulator(elf, "mcu-b", data_timing=data_timing)
    while sim.step(20_000).cycles < 3_000_000:
        pass
    pages = sim.machine.resident_pages
    read_plain = pages.plain_pages() if pages is not None else []
    sim.machine.flash_timing.reset_cache(data_side=False)
    assert pages is None or pages.plain_pages() == []
    return sim.run(), read_plain


def test_a_cache_emptied_by_the_firmware_times_every_page_again(firmware_build):
    """Emptied from Python (a register write): every page read plain must be read timed again,
    or its next reads would hit where the emptied cache misses."""
    elf = firmware_build / "mcu-b" / "bench-table.elf"
    (sampled, read_plain), (exact, _) = run_with_cache_emptied(elf, "sampled"), run_with_cache_emptied(elf, "exact")
    assert len(read_plain) > 10
    unchanged(sampled, exact)
    assert sampled.resident_pages["pages_timed_again"] >= len(read_plain)


def test_only_a_direct_mapped_unified_cache_reads_pages_plain(firmware_build):
    """mcu-m's ART data cache is its own and four-way: its pages stay with sampled data timing."""
    result = run(firmware_build / "mcu-m" / "bench-table.elf", "mcu-m")
    assert result.resident_pages == {}


def test_memory_traffic_counts_the_reads_of_pages_read_plain(firmware_build):
    elf = firmware_build / "mcu-b" / "bench-table.elf"
    sampled = run(elf, "mcu-b", memory_traffic=True)
    exact = run(elf, "mcu-b", memory_traffic=True, data_timing="exact")
    assert sampled.resident_pages["pages_read_plain"] > 0
    assert sampled.roofline["traffic"] == exact.roofline["traffic"]


def test_a_read_watchpoint_sees_reads_of_a_page_read_plain(firmware_build):
    sim = Simulator(firmware_build / "mcu-b" / "bench-table.elf", "mcu-b")
    while sim.step(20_000).cycles < 3_000_000:
        pass
    plain = sim.machine.resident_pages.plain_pages()
    table = sim.image.symbol("squares")
    page = next(p for p in plain if p >= table)  # a page of the table read plain now
    sim.add_watchpoint(page, 1024, "read")
    stop = sim.run_until()
    assert stop.reason == "watchpoint"
    assert page <= sim.machine.watchpoints.hit.address < page + 1024
