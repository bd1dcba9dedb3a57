"""The flash timing model's rules, on the native state directly (no firmware)."""
import pytest

import mcusim
from elfgen import program
from mcusim.config import load_board
from mcusim.config.loader import ConfigError
from mcusim.machine import native as N
from mcusim.machine.flash_timing import FlashLatencyError, FlashTiming


def model(board="mcu-m", latency=None, clock_pinned=False, capacity_halfwords=64, **settings):
    state = N.NativeState(capacity_halfwords=capacity_halfwords)
    spec = load_board(board)
    warnings = []
    flash = FlashTiming(spec.flash_timing, spec, state, warn=lambda key, text: warnings.append(text),
                        latency=latency, clock_pinned=clock_pinned)
    flash.configure(**settings)
    return flash, state.buffer, warnings


def test_each_new_line_waits_the_wait_states_and_the_buffered_line_is_free():
    flash, st, _ = model(fetch_wait=4, icache=False, prefetch=False)
    assert N.flash_fetch_line(st, flash.g, 10, 0) == (4, 0, False)
    assert N.flash_fetch_line(st, flash.g, 10, 5) == (0, 0, False)   # still in the fetch buffer
    assert N.flash_fetch_line(st, flash.g, 11, 9) == (4, 0, False)
    assert N.flash_fetch_line(st, flash.g, 10, 20) == (4, 0, False)  # no cache: read again


def test_prefetch_hides_what_execution_covers():
    flash, st, _ = model(fetch_wait=4, icache=False, prefetch=True)
    assert N.flash_fetch_line(st, flash.g, 10, 0)[0] == 4    # not prefetched: full wait; arrives at 4
    assert N.flash_fetch_line(st, flash.g, 11, 6)[0] == 3    # prefetch started at 4, ready at 9
    assert N.flash_fetch_line(st, flash.g, 12, 20)[0] == 0   # ready at 9 + 5 = 14 < 20
    assert N.flash_fetch_line(st, flash.g, 40, 21)[0] == 4   # a jump: the prefetched line is the wrong one


def test_instruction_cache_hits_after_the_first_miss_and_evicts_least_recently_used():
    flash, st, _ = model(fetch_wait=4, icache=True, prefetch=False)
    sets, ways = flash.spec.icache.sets, flash.spec.icache.ways
    same_set = [5 + sets * k for k in range(ways + 1)]
    for line in same_set[:ways]:
        assert N.flash_fetch_line(st, flash.g, line, 0) == (4, 0, True)
    assert N.flash_fetch_line(st, flash.g, same_set[0], 0) == (0, 0, False)        # hit; now the most recent
    assert N.flash_fetch_line(st, flash.g, same_set[ways], 0) == (4, 0, True)      # evicts same_set[1], the oldest
    assert N.flash_fetch_line(st, flash.g, same_set[0], 0)[0] == 0
    assert N.flash_fetch_line(st, flash.g, same_set[1], 0) == (4, 0, True)
    assert flash.totals()["icache_hits"] == 2


def test_cache_reset_forgets_every_line():
    flash, st, _ = model(fetch_wait=4, icache=True)
    N.flash_fetch_line(st, flash.g, 3, 0)
    flash.reset_cache(data_side=False)
    assert N.flash_fetch_line(st, flash.g, 3, 0) == (4, 0, True)


def test_data_reads_wait_unless_the_data_cache_holds_the_line():
    flash, st, _ = model(data_wait=4, dcache=False)
    address = 0x08000100
    assert N.flash_data_read(st, address) == 4 and N.flash_data_read(st, address) == 4
    flash.configure(dcache=True)
    assert N.flash_data_read(st, address) == 4
    assert N.flash_data_read(st, address + 4) == 0  # the same 64-bit line
    assert N.flash_data_read(st, 0x00000100) == 0   # the boot alias reads the same flash
    assert N.flash_data_read(st, 0x20000000) == 0   # SRAM


def test_a_data_miss_notes_whether_the_line_it_replaced_was_used_in_the_window():
    """MISS_STALE: a data miss that fills an empty line, or replaces one last used before the
    window of sampled timing opened (WINDOW_USE_START), is stale; one that replaces a line used
    since is not (on a cache for code and data, a window does not learn stale misses:
    data_sampling.py)."""
    from mcusim.machine.native import memory_model as M

    flash, st, _ = model("mcu-b", data_wait=1, dcache=True)
    sets, g = flash.spec.dcache.sets, flash.g
    assert flash.spec.dcache.ways == 2
    stale = []
    for line in (5, 5 + sets):  # both ways empty
        assert not M.data_cache_access(st, g, line, False)[0]
        stale.append(st[N.MISS_STALE])
    st[N.WINDOW_USE_START] = st[N.FL_USE_CLOCK]  # a window opens: both lines are older
    for line in (5 + 2 * sets, 5 + 3 * sets, 5):  # replace line 5, 5 + sets, then 5 + 2 * sets (used in it)
        assert not M.data_cache_access(st, g, line, False)[0]
        stale.append(st[N.MISS_STALE])
    assert stale == [1, 1, 1, 1, 0]
    flash, st, _ = model("mcu-m", data_wait=4, dcache=True)  # (a data cache of its own: never stale)
    assert not M.data_cache_access(st, flash.g, 5, False)[0] and st[N.MISS_STALE] == 0


def test_a_window_opening_makes_a_loops_next_run_stamp_its_lines():
    """A block run again with no cache line used in between keeps its lines' last-use stamps
    (_fetch_hits); a window opening (window_opened) counts as a use, so the loop's next run
    stamps them after WINDOW_USE_START and a data miss that replaces one of them is not stale."""
    from mcusim.machine.native import memory_model as M

    flash, st, _ = model("mcu-b", capacity_halfwords=0x200, fetch_wait=1, icache=True, dcache=True)
    flash.state.rows(flash.state.add_window(flash[N.FL_RANGE_TABLE + N.RANGE_START], 0x400))
    address, g = flash[N.FL_RANGE_TABLE + N.RANGE_START] + 16 * 5, flash.g
    entry = block_entry(st, address, 32)  # (lines 5 and 6)
    for _ in range(3):
        M._fetch(st, entry, address, 32, 0, True)
    N.window_opened(st)
    M._fetch(st, entry, address, 32, 0, True)
    first, ways = N.cache_set(st, g, N.FL_IC_ON, 6)
    assert st[N.cache_find(st, first, ways, 6)[0] + N.LINE_LAST_USE] > st[N.WINDOW_USE_START]


def test_a_data_read_during_a_prefetch_delays_it_as_contention():
    flash, st, _ = model(fetch_wait=4, data_wait=4, prefetch=True, icache=False, dcache=False)
    N.flash_fetch_line(st, flash.g, 10, 0)        # line 11 prefetch: ready at 4 + 5 = 9
    st[N.FL_BLOCK_START] = 5
    assert N.flash_data_read(st, 0x08000000) == 4
    stall, contention, _ = N.flash_fetch_line(st, flash.g, 11, 8)
    assert (stall, contention) == (6, 5)  # ready at 9 + 5 (the data read's 4 + 1) instead of 9


def test_flash_on_its_own_clock_waits_longer_in_core_cycles_when_the_core_runs_faster():
    flash, st, _ = model("mcu-b", fetch_wait=1, data_wait=1)
    flash.clock_changed(48_000_000)
    assert flash[N.FL_FETCH_WAIT] == 1
    flash.clock_changed(96_000_000)
    assert flash[N.FL_FETCH_WAIT] == flash[N.FL_DATA_WAIT] == 3  # 2 flash cycles = 4 core cycles


def test_too_few_wait_states_for_the_clock_warn():
    flash, _, warnings = model(fetch_wait=4)
    flash.clock_changed(80_000_000)
    assert warnings == []
    flash.configure(fetch_wait=3)
    assert any("requires at least 4" in w for w in warnings)
    flash.configure(fetch_wait=4)
    flash.set_voltage_range(2)
    assert any("above every flash wait-state setting" in w for w in warnings)


def test_raising_the_clock_without_wait_states_is_warned_about_but_not_at_reset(tmp_path):
    path = tmp_path / "count.elf"
    path.write_bytes(program("count"))
    sim = mcusim.Simulator(path, "mcu-m", max_cycles=10_000)
    assert sim.machine.warnings == []            # 4 MHz, LATENCY 0: fine
    sim.machine.set_clock(80_000_000, "test")    # as if firmware switched to the PLL first
    assert any("0 wait states at 80 MHz" in w for w in sim.machine.warnings)
    sim.machine.warnings.clear()
    sim.machine.flash_timing.configure(fetch_wait=4, data_wait=4)
    sim.machine._reset_core()                    # back to 4 MHz and LATENCY 0: no false alarm
    assert sim.machine.warnings == []


def test_a_pinned_clock_with_the_reset_latency_is_warned_about_once(tmp_path):
    path = tmp_path / "count.elf"
    path.write_bytes(program("count"))
    result = mcusim.run(path, "mcu-m", clock_hz=80_000_000, max_cycles=10_000)
    assert [w for w in result.warnings if "wait states" in w] == [
        "flash has 0 wait states at 80 MHz (--clock-hz), voltage range 1; the reference manual requires at least 4: "
        "the part would read wrong data (the run keeps 0; --flash-latency auto applies the minimum)"]


def test_a_pinned_clock_checks_the_latency_where_the_firmware_means_it(tmp_path):
    """Not at reset (the firmware has not set its latency yet), but when it switches its clock,
    when it lowers its latency and at the end of the run."""
    path = tmp_path / "count.elf"
    path.write_bytes(program("count"))
    machine = mcusim.Simulator(path, "mcu-m", clock_hz=80_000_000, max_cycles=10_000).machine
    flash = machine.flash_timing
    flash.configure(fetch_wait=4, data_wait=4)   # FLASH_ACR first, as SystemInit does
    machine.set_clock(4_000_000, "RCC")          # the PLL set up while still on MSI: no switch
    machine.set_clock(80_000_000, "RCC")         # the switch: 4 wait states are right for 80 MHz
    assert machine.warnings == ["firmware switched the clock to 4 MHz (RCC); --clock-hz keeps it at 80 MHz"]
    flash.configure(fetch_wait=3, data_wait=3)   # lowered: checked at once
    assert "flash has 3 wait states at 80 MHz (--clock-hz)" in machine.warnings[-1]


def test_auto_latency_follows_the_clock_and_voltage_range_and_overrides_the_firmware():
    flash, _, warnings = model(latency="auto", fetch_wait=0, data_wait=0, prefetch=True, icache=False)
    assert flash[N.FL_FETCH_WAIT] == 0                    # 4 MHz: 0 wait states (RM0351 table 12)
    flash.clock_changed(80_000_000)
    assert flash[N.FL_FETCH_WAIT] == flash[N.FL_DATA_WAIT] == 4
    flash.configure(fetch_wait=1, data_wait=1)            # the firmware's LATENCY is replaced ...
    assert flash[N.FL_FETCH_WAIT] == 4
    assert flash[N.FL_PREFETCH] == 1 and flash[N.FL_IC_ON] == 0  # ... its prefetch and caches are not
    flash.clock_changed(24_000_000)
    flash.set_voltage_range(2)
    assert flash[N.FL_FETCH_WAIT] == 3                    # range 2: 18-26 MHz
    assert warnings == []


def test_a_forced_latency_holds_and_is_checked_like_the_firmwares():
    flash, _, warnings = model(latency=2, fetch_wait=4, data_wait=4)
    assert flash[N.FL_FETCH_WAIT] == flash[N.FL_DATA_WAIT] == 2
    flash.clock_changed(80_000_000)
    assert flash[N.FL_FETCH_WAIT] == 2
    assert warnings == ["flash has 2 wait states (--flash-latency) at 80 MHz, voltage range 1; the reference manual "
                        "requires at least 4: the part would read wrong data (the run keeps 2)"]


def test_stm32f746_wait_states_follow_rm0385_table_5_for_the_nucleo_supply():
    port = FlashTiming(load_board("mcu-d").flash_ports[1], load_board("mcu-d"), N.NativeState(capacity_halfwords=64),
                       latency="auto")
    assert port.voltage_range == "2.7-3.6 V"
    for hz, ws in ((16_000_000, 0), (30_000_000, 0), (30_000_001, 1), (180_000_000, 5), (216_000_000, 7)):
        port.clock_changed(hz)
        assert port.required_wait_states() == ws and port[N.FL_FETCH_WAIT] == ws


@pytest.mark.parametrize("board,latency,message", [
    ("mcu-m", "fast", "not a flash latency"),
    ("mcu-m", -1, "not a flash latency"),
    ("mcu-m", 5, "takes 0 to 4"),
    ("mcu-s", 2, "no flash latency setting"),
    ("mcu-b", "auto", "no reference-manual table"),
])
def test_bad_flash_latencies_are_refused_with_the_reason(board, latency, message):
    with pytest.raises(FlashLatencyError, match=message):
        model(board, latency=latency)


def test_every_wait_state_table_is_checked(tmp_path):
    board = tmp_path / "bad.toml"  # a table row with more wait states than the LATENCY field holds
    board.write_text('[board]\nname = "bad"\nextends = "soc/stm32l476rg"\n'
                     '[flash_timing.wait_state_limits]\n3 = [[1_000_000, 9]]\n')
    with pytest.raises(ConfigError, match="max_wait_states"):
        load_board(str(board))


def test_board_flash_timing_is_checked(tmp_path):
    board = tmp_path / "bad.toml"  # extends the packaged SoC file, with an impossible flash line
    board.write_text('[board]\nname = "bad"\nextends = "soc/stm32l476rg"\n'
                     '[flash_timing]\nregion = "flash"\nline_bytes = 6\n')
    with pytest.raises(ConfigError, match="line_bytes"):
        load_board(str(board))


def axim(**settings):
    """mcu-d's AXIM port: the L1 data cache serves SRAM1/SRAM2 as well as the flash."""
    state = N.NativeState(capacity_halfwords=64)
    spec = load_board("mcu-d")
    port = FlashTiming(spec.flash_ports[0], spec, state)
    port.configure(**settings)
    return port, state.buffer


SRAM1 = 0x20010000


def test_ram_reads_wait_without_the_data_cache_and_writes_do_not():
    port, st = axim(dcache=False)
    wait = port.spec.ram_read_wait_cycles
    assert wait > 0
    assert N.ram_access(st, port.g, SRAM1, False) == wait and N.ram_access(st, port.g, SRAM1, False) == wait
    assert N.ram_access(st, port.g, SRAM1, True) == 0            # the store buffer takes it
    assert not any(start <= 0x20000000 < end for start, end in port.ram_ranges)  # DTCM: not behind the port
    assert port.hooks_needed == (False, True)     # RAM timed (its reads)


def test_ram_lines_are_write_allocated_and_written_back_when_replaced():
    port, st = axim(dcache=True)
    wait, writeback = port.spec.ram_read_wait_cycles, port.spec.writeback_wait_cycles
    sets, ways, line = port.spec.dcache.sets, port.spec.dcache.ways, port.spec.line_bytes
    same_set = [SRAM1 + k * sets * line for k in range(ways + 1)]
    assert N.ram_access(st, port.g, same_set[0], True) == 0      # a write miss allocates, dirty
    assert N.ram_access(st, port.g, same_set[0] + 4, False) == 0  # so the read hits
    for address in same_set[1:ways]:
        assert N.ram_access(st, port.g, address, False) == wait
    # the set is full; the oldest line (dirty) goes: the miss waits for its write-back too
    assert N.ram_access(st, port.g, same_set[ways], False) == wait + writeback
    assert port.totals()["dcache_writebacks"] == 1
    assert N.ram_access(st, port.g, same_set[1], False) == 0      # clean lines replaced later cost no write-back
    assert N.ram_access(st, port.g, same_set[0], False) == wait
    assert port.totals()["dcache_writebacks"] == 1
    assert port.hooks_needed == (True, True)  # flash data reads share the cache: timed too


def test_maintenance_cleans_and_invalidates_by_address_and_by_set_and_way():
    port, st = axim(dcache=True)
    wait = port.spec.ram_read_wait_cycles
    N.ram_access(st, port.g, SRAM1, True)
    port.maintain_address(SRAM1 + 8, clean=True, invalidate=False)   # DCCMVAC: written back, kept
    assert port.totals()["dcache_writebacks"] == 1
    assert N.ram_access(st, port.g, SRAM1, False) == 0
    port.maintain_address(SRAM1, clean=False, invalidate=True)       # DCIMVAC: gone
    assert N.ram_access(st, port.g, SRAM1, False) == wait
    N.ram_access(st, port.g, SRAM1, True)
    set_index = (SRAM1 // port.spec.line_bytes) % port.spec.dcache.sets
    for way in range(port.spec.dcache.ways):                         # DCCISW over the set
        port.maintain_line(set_index, way, clean=True, invalidate=True)
    assert port.totals()["dcache_writebacks"] == 2
    assert N.ram_access(st, port.g, SRAM1, False) == wait


def test_flash_and_ram_lines_share_the_data_cache():
    port, st = axim(dcache=True, data_wait=7)
    sets, ways, line = port.spec.dcache.sets, port.spec.dcache.ways, port.spec.line_bytes
    assert N.flash_data_read(st, 0x08000000) == 7
    for k in range(ways):  # RAM lines of the same set push the flash line out
        N.ram_access(st, port.g, SRAM1 + k * sets * line, True)
    assert N.flash_data_read(st, 0x08000000) == 7 + port.spec.writeback_wait_cycles


def test_ram_ranges_must_name_ram_regions(tmp_path):
    board = tmp_path / "bad.toml"
    board.write_text('[board]\nname = "bad"\nextends = "soc/stm32l476rg"\n'
                     '[flash_timing]\nregion = "flash"\nline_bytes = 8\nram_ranges = ["flash"]\n')
    with pytest.raises(ConfigError, match="ram_ranges"):
        load_board(str(board))


def test_flash_data_reads_are_hooked_while_the_shared_data_cache_is_on_even_without_wait_states():
    """At LATENCY 0 a flash read costs nothing, but its line still pushes RAM lines out."""
    port, _ = axim(dcache=True, data_wait=0)
    assert port.hooks_needed == (True, True)
    port.configure(dcache=False)
    assert port.hooks_needed == (False, True)


def test_ram_ranges_need_a_data_cache_of_their_own(tmp_path):
    board = tmp_path / "bad.toml"
    board.write_text('[board]\nname = "bad"\nextends = "soc/stm32l476rg"\n'
                     '[flash_timing]\nregion = "flash"\nline_bytes = 8\nram_ranges = ["sram1"]\n'
                     'icache = { sets = 1, ways = 4 }\ndcache = { sets = 1, ways = 4, shared_with_icache = true }\n')
    with pytest.raises(ConfigError, match="data cache of their own"):
        load_board(str(board))


def _record(st, address, wait_rate=-1, reads_rate=-1):
    """A block's record in the sampled data timing's table, as a window left it."""
    record = N.sampled_record(address)
    st[record + N.S_ADDRESS], st[record + N.S_WAIT_RATE], st[record + N.S_READS_RATE] = address, wait_rate, reads_rate
    return record


def test_in_a_window_each_block_learns_the_wait_and_reads_its_runs_caused():
    """data_sampling.py: the sampled memory's wait and flash reads between one block's start and
    the next's are the first block's, summed over its runs; a block whose record another block
    took over since it began (the table is direct-mapped) adds nothing to the new owner."""
    _, st, _ = model("mcu-m")
    st[N.SAMPLING], st[N.LEARN_RECORD] = N.LEARNING, -1
    loop, other = _record(st, 0x100), _record(st, 0x200)
    for _ in range(3):
        N.sample_block(st, 0x100, 5)
        st[N.SAMPLED_WAIT] += 4  # (two flash reads waiting 2 each, as the MMIO callback counts them)
        st[N.SAMPLED_READS] += 2
        N.sample_block(st, 0x200, 5)
    assert [st[loop + f] for f in (N.S_WAIT, N.S_READS, N.S_RUNS)] == [12, 6, 3]
    assert [st[other + f] for f in (N.S_WAIT, N.S_READS, N.S_RUNS)] == [0, 0, 2]
    clash = 0x200 + 2 * N.SAMPLED_BLOCKS  # (the same record as 0x200)
    assert N.sampled_record(clash) == other
    N.sample_block(st, clash, 5)  # 0x200's run ends; the record becomes the new block's, from nothing
    assert [st[other + f] for f in (N.S_ADDRESS, N.S_WAIT, N.S_RUNS, N.S_WAIT_RATE)] == [clash, 0, 0, -1]
    st[N.SAMPLED_WAIT] += 7
    N.sample_block(st, 0x100, 5)
    assert (st[other + N.S_WAIT], st[other + N.S_RUNS]) == (7, 1)
    assert st[N.CYCLES] == 0  # (learning adds no cycles)


def test_between_windows_a_block_adds_its_average_and_an_unknown_one_asks_for_a_window():
    """Between windows a learned block adds its wait and flash reads per run (fixed point, the
    fraction carried to the next block); one not run in a window adds the last window's rate per
    cycle and, once REQUEST_AFTER has passed, stops the run to ask for a window, once."""
    _, st, _ = model("mcu-m")
    st[N.SAMPLING] = N.ESTIMATING
    _record(st, 0x100, wait_rate=(3 << N.RATE_SHIFT) // 2, reads_rate=1 << N.RATE_SHIFT)  # 1.5 wait, 1 read a run
    reads_before, energy_before = st[N.P_FLASH_READS], st[N.P_ENERGY_FLASH]
    cycles, lsu = st[N.CYCLES], st[N.LSU_TOTAL]
    N.sample_block(st, 0x100, 9)
    assert (st[N.CYCLES] - cycles, st[N.ESTIMATED_WAIT]) == (1, 1)  # half a cycle carried
    N.sample_block(st, 0x100, 9)
    assert (st[N.CYCLES] - cycles, st[N.LSU_TOTAL] - lsu, st[N.ESTIMATED_WAIT]) == (3, 3, 3)
    assert st[N.DATA_WAIT_TOTAL] == 3
    assert (st[N.P_FLASH_READS] - reads_before, st[N.ESTIMATED_READS]) == (2, 2)
    assert st[N.P_ENERGY_FLASH] - energy_before == 2 * st[N.P_COEF_FLASH]
    _record(st, 0x200)  # (recorded, but never ran in a window)
    st[N.WAIT_PER_CYCLE] = (1 << N.RATE_SHIFT) // 4  # the last window: a wait cycle every 4 cycles
    st[N.REQUEST_AFTER], st[N.CYCLES], st[N.DEADLINE] = 1000, 500, 10_000
    N.sample_block(st, 0x200, 8)
    assert (st[N.ESTIMATED_WAIT], st[N.WINDOW_REQUESTED], st[N.DEADLINE]) == (5, 0, 10_000)  # too early to ask
    st[N.CYCLES] = 1000
    N.sample_block(st, 0x300, 8)  # (no record at all)
    assert (st[N.ESTIMATED_WAIT], st[N.WINDOW_REQUESTED], st[N.DEADLINE]) == (7, 1, 1000)  # stops at the next block
    assert st[N.REQUEST_AFTER] > 1 << 60  # asked once


def test_a_block_learns_its_own_fetch_wait_and_adds_it_as_fetch_wait_between_windows():
    """The fetch model's wait runs in a window only (SAMPLED_FETCH counts it); a block's record
    learns what was fetched after the block began (sample_block comes before the block's own
    fetches), and between windows adds it per run as an instruction-fetch stall (CPICNT, not
    LSUCNT)."""
    _, st, _ = model("mcu-m")
    st[N.SAMPLING], st[N.LEARN_RECORD] = N.LEARNING, -1
    loop = _record(st, 0x100)
    for _ in range(4):
        N.sample_block(st, 0x100, 5)
        st[N.SAMPLED_FETCH] += 5  # (the block's own lines: 0x100's)
        N.sample_block(st, 0x200, 5)
    assert (st[loop + N.S_FETCH], st[loop + N.S_RUNS], st[N.CYCLES]) == (20, 4, 0)
    st[N.SAMPLING] = N.ESTIMATING
    _record(st, 0x100, wait_rate=0, reads_rate=0)
    st[loop + N.S_FETCH_RATE] = (5 << N.RATE_SHIFT) // 2  # 2.5 a run
    cycles, cpi, lsu, fetch = st[N.CYCLES], st[N.CPI_TOTAL], st[N.LSU_TOTAL], st[N.FL_FETCH_TOTAL]
    N.sample_block(st, 0x100, 9)
    N.sample_block(st, 0x100, 9)
    assert (st[N.CYCLES] - cycles, st[N.CPI_TOTAL] - cpi, st[N.FL_FETCH_TOTAL] - fetch) == (5, 5, 5)
    assert (st[N.LSU_TOTAL] - lsu, st[N.ESTIMATED_FETCH], st[N.ESTIMATED_WAIT]) == (0, 5, 0)


@pytest.mark.parametrize("board,settings", [("mcu-m", dict(fetch_wait=4, icache=True, prefetch=True)),
                                            ("mcu-s", dict(fetch_wait=2, icache=True)),
                                            ("mcu-d", dict(fetch_wait=7, icache=True, prefetch=True)),
                                            ("mcu-b", dict(fetch_wait=1, icache=True, dcache=True))])
def test_the_fetch_fast_path_does_what_the_full_model_does(board, settings):
    """memory_model._fetch: a block whose lines (up to FAST_FETCH_LINES) were all cached when it
    last ran, and still are, skips the full model (_fetch_block) for a replay of its hits. Random
    blocks of 2 to FAST_FETCH_LINES + 3 lines, some evicting others' lines, and blocks of exactly
    1, FAST_FETCH_LINES and FAST_FETCH_LINES + 1 lines, blocks that start on the line the block
    before ended on, entered in or out of sequence (a block
    run twice in a row finds its line in the fetch buffer), with time passing between blocks,
    run through both (on mcu-b, whose one cache, made small here, also holds data, with data reads
    and writes between blocks): cycles, hits, misses, LRU order, fetch buffer and prefetch state stay the
    same throughout. (The last-use stamps themselves may differ: a block run again with no other
    line used in between leaves its lines' order as it is, without new stamps.)"""
    import random

    from mcusim.machine.native import memory_model as M

    def state():  # the flash model on a state with one window of 1-cycle 16-bit instructions
        flash, _, _ = model(board, capacity_halfwords=0x2000, **settings)
        native = flash.state
        base = native[flash.g + N.FL_RANGE_TABLE + N.RANGE_START]
        rows = native.rows(native.add_window(base, 0x4000))
        rows[:, N.F_CYCLES] = range(len(rows))
        if board == "mcu-b":
            flash.set_cache_geometry(16, 4)
        return flash, native.buffer, base
    (flash, fast, base), (_, full, _) = state(), state()
    g = flash.g
    line_bytes = 1 << fast[g + N.FL_LINE_SHIFT]
    rng = random.Random(7)
    span = line_bytes * fast[g + N.FL_IC_ON + N.CACHE_SETS] * 3  # three times the cache: lines get evicted
    fixed = [(base + 0x3000, 2), (base + 0x3100, line_bytes * N.FAST_FETCH_LINES),
             (base + 0x3800, line_bytes * (N.FAST_FETCH_LINES + 1))]  # 1, 16 and 17 lines
    blocks, after = [], {}  # (after: the block that follows one, starting on its last line)
    for _ in range(24):
        address = base + 2 * rng.randrange(span // 2)
        blocks.append((address, min(2 * rng.randrange(1, line_bytes * (N.FAST_FETCH_LINES + 2) // 2),
                                    base + 0x3000 - address)))
        end = sum(blocks[-1])
        if end % line_bytes and end < base + 0x3000:
            after[blocks[-1]] = (end, min(2 * rng.randrange(1, 2 * line_bytes), base + 0x3000 - end))
    fast_lines = set()
    skipped_stamps = skipped_checks = 0
    address, size = fixed[0]
    for step in range(4000):
        if (address, size) in after and rng.random() < 0.5:
            address, size = after[address, size]
        elif rng.random() > 0.3:  # (else the block before, again)
            address, size = fixed[step % 3] if step % 4 == 0 else blocks[rng.randrange(len(blocks))]
        in_sequence = rng.random() < 0.3
        start = fast[N.CYCLES]
        entry = block_entry(fast, address, size)
        if fast[entry + N.E_FETCH_KNOWN] != 0 and M._still_cached(fast, entry):
            buffered = fast[entry + N.E_FETCH_FIRST] == fast[g + N.FL_BUFFER_LINE]
            fast_lines.add((fast[entry + N.E_FETCH_LINES], bool(buffered and in_sequence)))
            skipped_checks += fast[entry + N.E_FETCH_TAGS_SEEN] == fast[N.FL_IC_TAG_CHANGES]
            skipped_stamps += fast[entry + N.E_FETCH_USES_SEEN] == fast[N.FL_IC_USES]
        M._fetch(fast, entry, address, size, start, not in_sequence)
        full_entry = N.BLOCK_CACHE  # (the full model's copy never remembers: its entry is cleared every time)
        empty_entry(full, full_entry, address)
        M._fetch(full, full_entry, address, size, start, not in_sequence)
        port = slice(g, g + N.FL_PORT_SLOTS)
        assert fast[N.CYCLES] == full[N.CYCLES], step
        assert (fast[port] == full[port]).all(), step
        assert lru_order(fast, g) == lru_order(full, g), step
        if board == "mcu-b" and rng.random() < 0.4:
            line, write = rng.randrange(span) >> fast[g + N.FL_LINE_SHIFT], rng.random() < 0.3  # (port offsets)
            assert M.data_cache_access(fast, g, line, write) == M.data_cache_access(full, g, line, write), step
        passed = size // 2 + rng.choice((0, 0, 1, 5, 40))  # (the block's cycles, and time before the next)
        fast[N.CYCLES] += passed
        full[N.CYCLES] += passed
    assert skipped_checks > 20 and skipped_stamps > 20, (skipped_checks, skipped_stamps)
    counts = {lines for lines, _ in fast_lines}
    assert {1, 2, N.FAST_FETCH_LINES} <= counts and N.FAST_FETCH_LINES + 1 not in counts, sorted(counts)
    assert (1, True) in fast_lines or fast[g + N.FL_NO_LINE_BUFFER] != 0  # (a 1-line block found in the buffer)


def test_a_block_run_again_keeps_the_order_its_lines_would_get():
    """memory_model._fetch_hits skips the last-use stamps of a block run again with no line used
    in between: only if its last run stamped all its lines. Here it did not: block A starts on
    the line block C ended on (still in the fetch buffer, so not stamped again), a data read of
    the one cache (mcu-b's) used a line of that line's set in between, and A, run again out of
    the buffer, must make that line the newer of the two, as the full model does."""
    from mcusim.machine.native import memory_model as M

    def state():
        flash, _, _ = model("mcu-b", capacity_halfwords=0x200, fetch_wait=1, icache=True, dcache=True)
        flash.set_cache_geometry(16, 4)
        flash.state.rows(flash.state.add_window(flash[N.FL_RANGE_TABLE + N.RANGE_START], 0x400))
        return flash, flash.state.buffer
    (flash, fast), (_, full) = state(), state()
    base, g = flash[N.FL_RANGE_TABLE + N.RANGE_START], flash.g

    def run(address, size):
        M._fetch(fast, block_entry(fast, address, size), address, size, 0, True)
        empty_entry(full, N.BLOCK_CACHE, address)
        M._fetch(full, N.BLOCK_CACHE, address, size, 0, True)
    block_a, block_c = (base + 16 * 5, 32), (base + 16 * 4 + 8, 24)  # lines 5-6; lines 4-5
    for block in (block_a, block_a, block_a, block_c):
        run(*block)
    M.data_cache_access(fast, g, 5 + 16, False)  # (line 21: set 5, as line 5)
    M.data_cache_access(full, g, 5 + 16, False)
    run(*block_a)
    assert fast[g + N.FL_BUFFER_LINE] == 6
    run(*block_a)
    assert lru_order(fast, g)[5] == lru_order(full, g)[5] == [0, 0, 21 + 1, 5 + 1]


@pytest.mark.parametrize("invalidate", ["reset", "line"])
def test_a_block_whose_lines_were_invalidated_misses_again(invalidate):
    """A cache reset (FLASH_ACR ICRST, CACHECTRL) or a line invalidated by set and way (on mcu-b's
    one cache) empties what a block's fetch fast path noted: its next run misses, as on the part."""
    from mcusim.machine.native import memory_model as M

    flash, st, _ = model("mcu-b", capacity_halfwords=0x200, fetch_wait=1, icache=True, dcache=True)
    flash.state.rows(flash.state.add_window(flash[N.FL_RANGE_TABLE + N.RANGE_START], 0x400))
    address, g = flash[N.FL_RANGE_TABLE + N.RANGE_START] + 16 * 5, flash.g
    entry = block_entry(st, address, 4)
    for _ in range(3):
        M._fetch(st, entry, address, 4, 0, True)
    assert st[entry + N.E_FETCH_KNOWN] == 1 and st[g + N.FL_IC_MISSES] == 1
    if invalidate == "reset":
        flash.reset_cache(False)
    else:
        first, ways = N.cache_set(st, g, N.FL_IC_ON, 5)
        flash.maintain_line(N.set_index(5, st[g + N.FL_IC_ON + N.CACHE_SETS]),
                            (N.cache_find(st, first, ways, 5)[0] - first) // N.FL_CACHE_LINE, False, True)
    st[g + N.FL_BUFFER_LINE] = -1
    M._fetch(st, entry, address, 4, 0, True)
    assert st[g + N.FL_IC_MISSES] == 2


def block_entry(st, address, size):
    """The block cache entry of the block [address, address + size), emptied first when it holds
    another block (as the block hook's summary of a block at another address or of another size)."""
    entry = N.BLOCK_CACHE + ((address >> 1) & (N.CACHE_ENTRIES - 1)) * N.CACHE_ENTRY
    if (st[entry + N.E_ADDRESS], st[entry + N.E_SIZE]) != (address, size):
        empty_entry(st, entry, address)
        st[entry + N.E_ADDRESS], st[entry + N.E_SIZE] = address, size
    return entry


def empty_entry(st, entry, address):
    """A block cache entry as the block hook's summary of a block at `address` begins it: nothing
    noted, and the port that holds the block."""
    st[entry: entry + N.CACHE_ENTRY] = 0
    st[entry + N.E_FETCH_PORT] = N.flash_port(st, address)


def lru_order(st, g):
    """Each set of the port's instruction cache: its tags, least recently used first."""
    sets, ways = st[g + N.FL_IC_ON + N.CACHE_SETS], st[g + N.FL_IC_ON + N.CACHE_WAYS]
    slots = st[st[g + N.FL_IC_TAGS]:][:N.FL_CACHE_LINE * sets * ways].reshape(sets, ways, N.FL_CACHE_LINE)
    return [[int(tag) for _, tag in sorted(zip(s[:, N.LINE_LAST_USE], s[:, N.LINE_TAG]), key=lambda x: x[0])]
            for s in slots]


@pytest.mark.parametrize("sets", [1, 2, 3, 32, 48, 64, 512, 1000])
def test_a_set_index_is_the_remainder_for_any_number_of_sets(sets):
    """Caches and the branch predictor find a line's set with a mask when the number of sets is
    a power of two (every board's), and with the remainder otherwise (a board file may give any)."""
    for value in (0, 1, 5, sets - 1, sets, sets + 7, 0x0800_1234 >> 3, 0x2000_0000 >> 1, (1 << 40) + 3, -1, -sets - 5):
        assert N.set_index(value, sets) == value % sets


def test_a_block_summary_names_the_flash_port_that_holds_the_block():
    """The block hook's summary of a block notes the port its fetches and sampled estimate use
    (E_FETCH_PORT), found once; -1 for code no port reads (RAM)."""
    from mcusim.machine.native.block_cache import _summarize

    flash, _, _ = model(capacity_halfwords=0x800)
    state = flash.state
    base = int(state.buffer[flash.g + N.FL_RANGE_TABLE + N.RANGE_START])
    for window, port in ((base, flash.g), (0x20000000, -1)):
        state.rows(state.add_window(window, 0x400))[:, N.KIND] = N.KIND_START
        entry = N.BLOCK_CACHE + ((window + 8 >> 1) & (N.CACHE_ENTRIES - 1)) * N.CACHE_ENTRY
        assert _summarize(state.buffer, window + 8, 4, entry)
        assert state.buffer[entry + N.E_FETCH_PORT] == port
