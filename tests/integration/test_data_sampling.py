"""Sampled data timing (machine/data_sampling.py, `--data-timing`): the flash data pages and
mcu-d's cached RAM are timed access by access only in windows, and between windows each block is
charged what its runs averaged in the last window it ran in. What users rely on: the firmware
computes the same thing, the cycles, each layer's cycles and the energy stay close to the exact
model's, a run shorter than the exact start is exact, the same run gives the same cycles,
pausing changes nothing, and run.json says what was estimated.

cached-ram sweeps a 16 KB buffer in SRAM1 (four times the L1 data cache) at a steady rate: with
a schedule shrunk to fit its 3.3M cycles, most of the run is estimated. bench-table walks a table
in flash; kws_dscnn reads its weights from flash, one marked region per layer; dhrystone-like reads
strings from a code page that also holds .rodata (read through its MMIO alias when timed)."""
import json

import pytest

import mcusim.machine.data_sampling as sampling
from mcusim.machine import native as N
from mcusim.api import Simulator, run

SHORT_SCHEDULE = (300_000, 600_000, 150_000, 50_000, 450_000)  # exact start, period, window, settle, start at most


@pytest.fixture
def short_schedule(monkeypatch):
    exact, period, window, settle, longest = SHORT_SCHEDULE
    monkeypatch.setattr(sampling, "EXACT_CYCLES", exact)
    monkeypatch.setattr(sampling, "PERIOD_CYCLES", period)
    monkeypatch.setattr(sampling, "WINDOW_CYCLES", window)
    monkeypatch.setattr(sampling, "SETTLE_CYCLES", settle)
    monkeypatch.setattr(sampling, "EXACT_CYCLES_MAX", longest)


@pytest.fixture(scope="module")
def exact(firmware_build):
    result = run(firmware_build / "mcu-d" / "cached-ram.elf", "mcu-d", data_timing="exact")
    assert result.exit_code == 0 and result.stalls["data_wait"] > 500_000, result.stdout
    return result


def test_sampled_cached_ram_computes_the_same_and_estimates_the_wait(firmware_build, exact, short_schedule):
    sampled = run(firmware_build / "mcu-d" / "cached-ram.elf", "mcu-d")
    assert (sampled.stdout, sampled.exit_code, sampled.instructions) == (exact.stdout, 0, exact.instructions)
    assert sampled.sampled_data["untimed_cycles"] > sampled.cycles / 2
    assert sampled.sampled_data["estimated_wait_cycles"] > 0
    assert exact.sampled_data == {}
    # the hook was off: far fewer look-ups than the exact run's
    assert sampled.dcache["hits"] + sampled.dcache["misses"] < (exact.dcache["hits"] + exact.dcache["misses"]) / 2
    assert sampled.cycles == pytest.approx(exact.cycles, rel=0.01)
    assert sampled.stalls["data_wait"] == pytest.approx(exact.stalls["data_wait"], rel=0.02)
    waits = sampled.dwt["lsucnt"] - exact.dwt["lsucnt"] + sampled.dwt["cpicnt"] - exact.dwt["cpicnt"]
    assert waits == sampled.cycles - exact.cycles  # LSUCNT counts the data wait, CPICNT the fetch wait


@pytest.mark.parametrize("board, error", [("mcu-s", 0.005), ("mcu-m", 0.005), ("mcu-d", 0.01)])
def test_sampled_flash_data_pages_estimate_the_wait_and_the_flash_reads(firmware_build, board, error):
    """bench-table's table lives on flash pages of its own (MMIO): between windows they are plain
    memory, and the walk's wait and flash reads (for energy) come from its blocks' averages."""
    elf = firmware_build / board / "bench-table.elf"
    sampled, exact = run(elf, board), run(elf, board, data_timing="exact")
    assert (sampled.stdout, sampled.exit_code, sampled.instructions) == (exact.stdout, 0, exact.instructions)
    assert sampled.sampled_data["untimed_cycles"] > sampled.cycles / 2
    assert sampled.cycles == pytest.approx(exact.cycles, rel=error)
    assert sampled.energy["energy_j"] == pytest.approx(exact.energy["energy_j"], rel=error)
    assert sampled.sampled_data["estimated_wait_cycles"] > exact.stalls["data_wait"] / 2
    assert sampled.sampled_data["estimated_flash_reads"] > 0
    assert sampled.stalls["data_wait"] == pytest.approx(exact.stalls["data_wait"], rel=0.02)


def test_reads_between_windows_meet_watchpoints_and_the_traffic_count(firmware_build):
    """Between windows the TLB fill hook sends the data pages' reads to their plain aliases
    (flash_data_pages.map_plain): a read watchpoint on bench-table's table stops at the next
    read, not at the next window, and --memory-traffic counts every read, as the exact run does."""
    elf = firmware_build / "mcu-m" / "bench-table.elf"
    sim = Simulator(elf, "mcu-m")
    while sim.step(20_000).cycles < sampling.EXACT_CYCLES + 100_000:
        pass
    assert not sim.machine.data_sampling.learning and sim.machine.flash_data_pages.plain
    page = (sim.image.symbol("squares") // 1024 + 2) * 1024  # (a page of the table with no code on it)
    assert any(int(run[N.RUN_BASE]) <= page < int(run[N.RUN_BASE]) + size for run, size in sim.machine.data_sampling.pages)
    sim.add_watchpoint(page, 1024, "read")
    before = sim.machine.cycles_now()
    stop = sim.run_until()
    assert stop.reason == "watchpoint" and page <= sim.machine.watchpoints.hit.address < page + 1024
    assert sim.machine.cycles_now() - before < 1_000 and not sim.machine.data_sampling.learning
    sampled = run(elf, "mcu-m", memory_traffic=True)
    exact = run(elf, "mcu-m", memory_traffic=True, data_timing="exact")
    assert sampled.sampled_data["untimed_cycles"] > sampled.cycles / 2
    assert sampled.roofline["traffic"] == exact.roofline["traffic"]


def test_each_layer_of_a_model_keeps_its_cycles(firmware_build):
    """A window opens as each layer's region begins, so each kernel is charged what it waits in
    that layer (a rate carried over from another layer was 10 % off on the small ones)."""
    elf = firmware_build / "mcu-m" / "kws_dscnn-opt.elf"
    sampled, exact = run(elf, "mcu-m"), run(elf, "mcu-m", data_timing="exact")
    assert sampled.stdout == exact.stdout and sampled.sampled_data["untimed_cycles"] > sampled.cycles / 2
    assert sampled.cycles == pytest.approx(exact.cycles, rel=0.005)
    layers = {row["name"]: row["cycles_mean"] for row in exact.regions}
    assert len(layers) > 10
    for row in sampled.regions:
        assert row["cycles_mean"] == pytest.approx(layers[row["name"]], rel=0.02), row["name"]


def test_the_same_run_gives_the_same_cycles_and_pausing_changes_nothing(firmware_build, short_schedule):
    elf = firmware_build / "mcu-d" / "cached-ram.elf"
    plain = run(elf, "mcu-d")
    again = run(elf, "mcu-d")
    assert (again.cycles, again.dcache, again.sampled_data) == (plain.cycles, plain.dcache, plain.sampled_data)
    sim = Simulator(elf, "mcu-d")
    sampler = sim.machine.data_sampling
    switches = 0
    while switches < 3:  # the start's end, a window's start and its end
        due = sampler.next_switch
        while (stop := sim.step(1000)).cycles < due - 3_000:
            assert stop.reason == "step"
        learning = sampler.learning
        while (stop := sim.step(3)).cycles < due + 3_000:  # pauses inside blocks, across the switch
            assert stop.reason == "step"
        switches += sampler.learning != learning
    sim.add_breakpoint("printf")
    assert sim.run_until().reason == "breakpoint"
    result = sim.run()
    assert (result.cycles, result.dcache, result.stdout) == (plain.cycles, plain.dcache, plain.stdout)


def test_pausing_inside_blocks_on_a_cache_for_code_and_data_changes_nothing(firmware_build):
    """kws_dscnn-opt on mcu-b, stopped every 4,999 instructions (inside blocks), across windows that
    open as its layers begin: the same cycles, cache counts and estimates as a run straight through."""
    elf = firmware_build / "mcu-b" / "kws_dscnn-opt.elf"
    plain = run(elf, "mcu-b")
    assert plain.sampled_data["windows"] > 5
    sim = Simulator(elf, "mcu-b")
    while sim.step(4_999).reason == "step":
        pass
    result = sim.run()
    assert (result.cycles, result.icache, result.dcache, result.sampled_data, result.stdout) == (
        plain.cycles, plain.icache, plain.dcache, plain.sampled_data, plain.stdout)


def test_pausing_where_a_region_asks_for_a_window_changes_nothing(firmware_build):
    """A region's begin asks for a window from inside the block that marks it; a pause there
    puts the switch off, and the run after it must still switch at its first block."""
    elf = firmware_build / "mcu-m" / "kws_dscnn-opt.elf"
    plain = run(elf, "mcu-m")
    assert plain.sampled_data["windows"] > 5
    sim = Simulator(elf, "mcu-m")
    sim.add_watchpoint(0xE0000000, 0x80, "write")  # (the ITM ports, where the region markers are written)
    hits = 0
    while sim.run_until().reason == "watchpoint":
        hits += 1
        for _ in range(15):
            assert sim.step(1).reason in ("step", "watchpoint")
    result = sim.run()
    assert hits >= len(plain.regions)
    assert (result.cycles, result.sampled_data, result.stdout) == (plain.cycles, plain.sampled_data, plain.stdout)


def test_a_sleep_past_a_switch_and_a_flash_setting_change(firmware_build):
    """Switches wake nothing, so a sleep may pass one: the window then opens from when the core
    woke, and a window the firmware slept through keeps the rates measured before. A change of
    the flash's wait states asks for a window (what the blocks learned no longer holds)."""
    machine = Simulator(firmware_build / "mcu-m" / "bench-table.elf", "mcu-m").machine
    sampler, st = machine.data_sampling, machine.state
    st[N.SAMPLED_WAIT] += 250_000  # (a window that measured a wait every 8 cycles)
    sampler.on_time(sampling.EXACT_CYCLES)
    rate = int(st[N.WAIT_PER_CYCLE])
    assert not sampler.learning and rate > 0
    machine.sleep_cycles += 40_000_000  # the core slept past the window at 15M
    sampler.on_time(42_000_000)
    assert sampler.learning and sampler.next_switch == 42_000_000 + sampling.WINDOW_CYCLES
    machine.sleep_cycles += sampling.WINDOW_CYCLES - 100  # ... and through all of the window
    sampler.on_time(sampler.next_switch)
    assert not sampler.learning and st[N.WAIT_PER_CYCLE] == rate
    port = machine.flash_ports[0]
    assert st[N.WINDOW_REQUESTED] == 0
    port.configure(data_wait=port.settings["data_wait"] + 1)
    assert st[N.WINDOW_REQUESTED] == 1 and sampler.due(43_000_000)


@pytest.mark.parametrize("board, wait_error", [("mcu-s", 0.01), ("mcu-m", 0.02)])  # (mcu-m: -1.5 %, docs/timing.md)
def test_sampled_code_pages_that_hold_data_estimate_the_wait(firmware_build, board, wait_error):
    """dhrystone-like copies strings from the .rodata that shares a flash page with the end of
    its .text: that page's data reads go through its MMIO alias in windows and read the page
    itself between them, and the copies' wait comes from their blocks' averages."""
    elf = firmware_build / board / "dhrystone-like.elf"
    sampled, exact = run(elf, board), run(elf, board, data_timing="exact")
    assert (sampled.stdout, sampled.exit_code, sampled.instructions) == (exact.stdout, 0, exact.instructions)
    assert sampled.sampled_data["estimated_wait_cycles"] > exact.stalls["data_wait"] / 3  # (the rest: literal loads)
    assert sampled.cycles == pytest.approx(exact.cycles, rel=0.001)
    assert sampled.stalls["data_wait"] == pytest.approx(exact.stalls["data_wait"], rel=wait_error)
    assert sampled.energy["energy_j"] == pytest.approx(exact.energy["energy_j"], rel=0.001)


def test_a_run_shorter_than_the_exact_start_is_exact(firmware_build):
    elf = firmware_build / "mcu-d" / "large-startup.elf"  # (122,212 cycles; a start cut to 5,000 changes them)
    sampled, exact = run(elf, "mcu-d"), run(elf, "mcu-d", data_timing="exact")
    assert sampled.cycles < sampling.EXACT_CYCLES
    assert (sampled.cycles, sampled.stdout, sampled.dcache) == (exact.cycles, exact.stdout, exact.dcache)
    assert sampled.sampled_data == {}


def test_the_exact_start_lasts_while_new_code_runs(firmware_build):
    """sram-timing runs one short test after another, each new code, past EXACT_CYCLES: its start
    goes on until no block has run for the first time for SETTLE_CYCLES, so it stays exact."""
    elf = firmware_build / "mcu-d" / "sram-timing.elf"
    sampled, exact = run(elf, "mcu-d"), run(elf, "mcu-d", data_timing="exact")
    assert sampling.EXACT_CYCLES < sampled.cycles < sampling.EXACT_CYCLES_MAX
    assert (sampled.cycles, sampled.stdout, sampled.dcache) == (exact.cycles, exact.stdout, exact.dcache)
    assert sampled.sampled_data == {}


def test_the_exact_start_ends_once_the_code_settles_and_at_its_limit(firmware_build):
    machine = Simulator(firmware_build / "mcu-m" / "bench-table.elf", "mcu-m").machine
    sampler, st = machine.data_sampling, machine.state
    st[N.NEW_RECORD_AT] = sampling.EXACT_CYCLES - 1_000  # a block first ran just before the start's end
    sampler.on_time(sampling.EXACT_CYCLES)
    assert sampler.learning and sampler.next_switch == sampling.EXACT_CYCLES - 1_000 + sampling.SETTLE_CYCLES
    sampler.on_time(sampler.next_switch)  # no new code since: it ends
    assert not sampler.learning
    sampler.region_began(0x2000_0000)  # a later window, before EXACT_CYCLES_MAX, with new code in it
    sampler.on_time(900_000)
    assert sampler.learning and sampler.next_switch == 900_000 + sampling.REQUESTED_CYCLES
    st[N.NEW_RECORD_AT] = 950_000
    sampler.on_time(sampler.next_switch)  # is not extended
    assert not sampler.learning
    machine = Simulator(firmware_build / "mcu-m" / "bench-table.elf", "mcu-m").machine
    sampler, st = machine.data_sampling, machine.state
    st[N.NEW_RECORD_AT] = sampling.EXACT_CYCLES_MAX - 1  # new code all along: it ends at the limit
    sampler.on_time(sampling.EXACT_CYCLES)
    assert sampler.learning and sampler.next_switch == sampling.EXACT_CYCLES_MAX
    sampler.on_time(sampling.EXACT_CYCLES_MAX)
    assert not sampler.learning


def test_a_flash_cache_shared_with_data_is_sampled_without_its_warm_up_misses(firmware_build):
    """mcu-b's flash cache holds instructions and data in one 16 KB array, and bench-table's 16 KB
    table fits it: the exact start's first walk of the table misses on every line, the later ones
    hit. Between windows the table is plain memory and the fetch model rests; the window does not
    learn the misses that filled empty lines (charged per run they put the run 0.59 % high), so
    the cycles stay within 0.05 % of timing every access."""
    elf = firmware_build / "mcu-b" / "bench-table.elf"
    sampled, exact = run(elf, "mcu-b"), run(elf, "mcu-b", data_timing="exact")
    assert (sampled.stdout, sampled.exit_code, sampled.instructions) == (exact.stdout, 0, exact.instructions)
    assert sampled.sampled_data["untimed_cycles"] > sampled.cycles / 2
    assert sampled.icache["hits"] + sampled.icache["misses"] < (exact.icache["hits"] + exact.icache["misses"]) / 2
    assert sampled.dcache["misses"] >= 1024  # (the first walk, timed)
    assert sampled.cycles == pytest.approx(exact.cycles, rel=0.0005)  # (learning the first walk: +0.585 %)
    assert sampled.energy["energy_j"] == pytest.approx(exact.energy["energy_j"], rel=0.0005)
    waits = sampled.dwt["lsucnt"] - exact.dwt["lsucnt"] + sampled.dwt["cpicnt"] - exact.dwt["cpicnt"]
    assert waits == sampled.cycles - exact.cycles


def test_the_cli_records_and_reports_the_sampling(firmware_build, tmp_path, short_schedule):
    from click.testing import CliRunner

    from mcusim.cli import main
    from mcusim.analysis.report import counters

    out = tmp_path / "bundle"
    done = CliRunner().invoke(main, ["run", str(firmware_build / "mcu-d" / "cached-ram.elf"), "--board", "mcu-d",
                                     "--out", str(out)])
    assert done.exit_code == 0, done.output
    assert "data timing sampled" in done.output
    record = json.loads((out / "run.json").read_text())
    assert record["settings"]["data_timing"] == "sampled"
    assert record["sampled_data"]["untimed_cycles"] > 0 and record["sampled_data"]["estimated_wait_cycles"] > 0
    rows = {row[0]: row[1] for row in counters(record).rows}
    assert "estimated data wait" in rows
    old = CliRunner().invoke(main, ["run", str(firmware_build / "mcu-d" / "cached-ram.elf"), "--board", "mcu-d",
                                    "--data-cache", "exact", "--out", str(out)])  # (the option's earlier name)
    assert old.exit_code == 0 and "data timing sampled" not in old.output
    assert json.loads((out / "run.json").read_text())["sampled_data"] == {}
    bad = CliRunner().invoke(main, ["run", str(firmware_build / "mcu-d" / "cached-ram.elf"), "--board", "mcu-d",
                                    "--data-timing", "sometimes"])
    assert bad.exit_code == 2 and "sometimes" in bad.output


def test_a_bad_mode_is_refused(firmware_build):
    with pytest.raises(ValueError, match="data_timing"):
        Simulator(firmware_build / "mcu-d" / "hello.elf", "mcu-d", data_timing="fast")


def test_a_block_not_run_in_a_window_asks_for_one_once(firmware_build):
    """printf-uart on mcu-d: a block that runs once per printed line ran in none of the windows
    it asked for, and asked again at each run (24 windows in 37M cycles, each flushing Unicorn's
    translated code). It asks once; the windows are the exact start, one per period and a few
    for new code, and the run still computes what the exact one does."""
    elf = firmware_build / "mcu-d" / "printf-uart.elf"
    sampled, exact = run(elf, "mcu-d"), run(elf, "mcu-d", data_timing="exact")
    assert (sampled.stdout, sampled.exit_code) == (exact.stdout, 0)
    periods = sampled.cycles // sampling.PERIOD_CYCLES
    assert sampled.sampled_data["windows"] <= 1 + periods + 4, sampled.sampled_data  # (7: 4 for new code)
    assert sampled.cycles == pytest.approx(exact.cycles, rel=0.001)


def test_the_fetch_model_rests_between_windows_and_each_block_adds_its_fetch_wait(firmware_build):
    """printf-uart on mcu-m (4 wait states, ART cache and prefetch, its code larger than the 1 KB
    cache): between windows the fetch model does not run (far fewer I-cache look-ups) and each
    block adds the fetch wait its runs averaged in a window, as CPICNT counts it; the cycles and
    the fetch wait stay close to timing every fetch."""
    elf = firmware_build / "mcu-m" / "printf-uart.elf"
    sampled, exact = run(elf, "mcu-m"), run(elf, "mcu-m", data_timing="exact")
    assert (sampled.stdout, sampled.exit_code, sampled.instructions) == (exact.stdout, 0, exact.instructions)
    assert sampled.sampled_data["untimed_cycles"] > sampled.cycles / 2
    assert sampled.icache["hits"] + sampled.icache["misses"] < (exact.icache["hits"] + exact.icache["misses"]) / 2
    fetch, exact_fetch = (r.stalls["fetch_wait"] + r.stalls["contention"] for r in (sampled, exact))
    assert sampled.sampled_data["estimated_fetch_wait_cycles"] > exact_fetch / 2
    assert fetch == pytest.approx(exact_fetch, rel=0.01)
    assert sampled.dwt["cpicnt"] - exact.dwt["cpicnt"] == fetch - exact_fetch
    assert sampled.cycles == pytest.approx(exact.cycles, rel=0.005)
    assert sampled.energy["energy_j"] == pytest.approx(exact.energy["energy_j"], rel=0.005)


def test_a_flash_cache_that_also_holds_data_estimates_its_fetches_and_data_reads(firmware_build):
    """printf-uart on mcu-b: code and printf's tables share the one flash cache; between windows
    neither is timed, and the run stays within 0.1 % of timing every access."""
    elf = firmware_build / "mcu-b" / "printf-uart.elf"
    sampled, exact = run(elf, "mcu-b"), run(elf, "mcu-b", data_timing="exact")
    assert (sampled.stdout, sampled.exit_code, sampled.instructions) == (exact.stdout, 0, exact.instructions)
    assert sampled.sampled_data["estimated_fetch_wait_cycles"] > 0 and sampled.sampled_data["estimated_flash_reads"] > 0
    assert sampled.icache["hits"] + sampled.icache["misses"] < (exact.icache["hits"] + exact.icache["misses"]) / 2
    assert sampled.cycles == pytest.approx(exact.cycles, rel=0.001)
