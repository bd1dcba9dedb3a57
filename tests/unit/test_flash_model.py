"""The flash timing model's rules, on the native state directly (no firmware)."""
import pytest

import mcusim
from elfgen import program
from mcusim.config import load_board
from mcusim.config.loader import ConfigError
from mcusim.machine import native as N
from mcusim.machine.flash_timing import FlashTiming


def model(board="mcu-m", **settings):
    state = N.NativeState(capacity_halfwords=64)
    spec = load_board(board)
    warnings = []
    flash = FlashTiming(spec.flash_timing, spec, state, warn=lambda key, text: warnings.append(text))
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


def test_a_pinned_clock_is_not_checked_against_the_firmware_wait_states(tmp_path):
    path = tmp_path / "count.elf"
    path.write_bytes(program("count"))
    result = mcusim.run(path, "mcu-m", clock_hz=80_000_000, max_cycles=10_000)
    assert not any("wait states" in w for w in result.warnings)


def test_board_flash_timing_is_checked(tmp_path):
    board = tmp_path / "bad.toml"  # extends the packaged SoC file, with an impossible flash line
    board.write_text('[board]\nname = "bad"\nextends = "soc/stm32l476rg"\n'
                     '[flash_timing]\nregion = "flash"\nline_bytes = 6\n')
    with pytest.raises(ConfigError, match="line_bytes"):
        load_board(str(board))
