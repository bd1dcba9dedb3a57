"""The machine on tiny hand-assembled images: exit codes, limits, faults, CYCCNT, host files."""
import pytest

import mcusim
from elfgen import ENTRY, hostfile_program, program


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    return path


def test_semihosting_exit_code_is_the_run_exit_code(tmp_path):
    result = mcusim.run(write(tmp_path, "exit.elf", program("exit7")), "mps2-an386")
    assert (result.exit_reason, result.exit_code) == ("semihosting-exit", 7)
    assert result.instructions == 3  # movs, adr, bkpt
    assert result.cycles == result.instructions  # single-cycle instructions (cores/cortex-m4.toml), zero-wait memory


def test_runaway_loop_stops_at_max_cycles(tmp_path):
    result = mcusim.run(write(tmp_path, "count.elf", program("count")), "mps2-an386", max_cycles=100_000)
    assert result.exit_code == 124
    assert result.exit_reason == "max-cycles"
    assert 100_000 <= result.cycles < 100_100


def test_taken_branch_refills_the_pipeline(tmp_path):
    """loop: adds r0,#1; b loop -- 1 + (1 + P) cycles for two instructions, P = 1 (cores/cortex-m4.toml)."""
    result = mcusim.run(write(tmp_path, "count.elf", program("count")), "mps2-an386", max_cycles=30_000)
    assert abs(result.instructions - 20_000) < 10
    assert result.dwt["cpicnt"] == pytest.approx(10_000, abs=10)  # one refill cycle per iteration
    assert result.stalls["branch_refill"] == result.dwt["cpicnt"]
    assert result.issue_cycles + sum(result.stalls.values()) == result.cycles


def test_endless_self_branch_ends_without_emulating_every_cycle(tmp_path):
    image = program("fault", patch=lambda code: code.__setitem__(slice(0x14, 0x18), bytes.fromhex("00bf00bf")))
    result = mcusim.run(write(tmp_path, "spin.elf", image), "mps2-an386", max_cycles=5_000_000_000)
    assert result.exit_code == 124
    assert "no interrupt source" in result.exit_detail
    assert result.host_seconds < 30  # skipped, not emulated
    # each turn of `b .` is a branch taken to itself: 1 + P = 2 cycles (cores/cortex-m4.toml)
    assert abs(result.cycles - 2 * result.instructions) < 10
    dwt = result.dwt
    assert result.instructions == dwt["cyccnt"] - dwt["cpicnt"] - dwt["lsucnt"] + dwt["foldcnt"]


def test_unhandled_bus_fault_reports_and_exits_125(tmp_path):
    result = mcusim.run(write(tmp_path, "fault.elf", program("fault")), "mps2-an386")
    assert result.exit_code == 125
    assert result.exit_reason == "fault"
    assert "0x90000000" in result.fault_report
    assert "no handler for HardFault" in result.exit_detail
    assert "pc: 0x00000058" in result.fault_report  # the ldr at CODE+0x18


def test_fault_into_a_handler_that_spins_forever_reports_and_exits_125(tmp_path):
    image = program("fault", handlers={3: 0x1A})  # HardFault -> the `b .` after the faulting load
    result = mcusim.run(write(tmp_path, "spin.elf", image), "mps2-an386", max_cycles=10**10)
    assert result.exit_code == 125
    assert "loops forever" in result.exit_detail
    assert "read from unmapped memory at 0x90000000" in result.fault_report


def test_cyccnt_read_mid_block_counts_instructions_between_reads(tmp_path):
    result = mcusim.run(write(tmp_path, "cyc.elf", program("cyccnt")), "mps2-an386")
    # between the two CYCCNT loads: the first load (2 cycles: it follows a store, so it does not
    # pipeline; Cortex-M4 TRM 3.3.2) and five nops
    assert result.exit_code == 7


def test_host_files_are_refused_by_default(tmp_path):
    (tmp_path / "data.txt").write_text("secret")
    result = mcusim.run(write(tmp_path, "open.elf", hostfile_program(str(tmp_path / "data.txt"))), "mps2-an386")
    assert result.exit_code == 255  # SYS_OPEN returned -1
    assert any("refused SYS_OPEN" in w for w in result.warnings)


def test_host_files_open_inside_semihosting_root(tmp_path):
    (tmp_path / "data.txt").write_text("hello")
    result = mcusim.run(write(tmp_path, "open.elf", hostfile_program("data.txt")), "mps2-an386",
                        semihosting_root=tmp_path)
    assert result.exit_code >= 1 and result.exit_code != 255
    escape = mcusim.run(write(tmp_path, "open2.elf", hostfile_program("../outside.txt")), "mps2-an386",
                        semihosting_root=tmp_path)
    assert escape.exit_code == 255


@pytest.mark.parametrize("board", ["mcu-s", "mcu-d"])
def test_bootloader_offset_application_starts_from_its_own_vector_table(tmp_path, board):
    base = 0x10000 if board == "mcu-s" else 0x08010000
    result = mcusim.run(write(tmp_path, "app.elf", program("exit7", flash_base=base)), board)
    assert result.exit_code == 7
    assert f"0x{base:08x}" in result.boot_note


def test_fp_instruction_before_cpacr_enables_the_fpu_faults_with_nocp(tmp_path):
    result = mcusim.run(write(tmp_path, "fpoff.elf", program("fpu_off")), "mps2-an386")
    assert result.exit_code == 125
    assert "FPU disabled" in result.fault_report
    assert "CFSR=0x00080000" in result.fault_report  # UFSR.NOCP


def test_fp_instruction_after_cpacr_runs(tmp_path):
    result = mcusim.run(write(tmp_path, "fpon.elf", program("fpu_on")), "mps2-an386")
    assert result.exit_code == 7


def test_wfi_sleeps_until_systick_and_time_jumps(tmp_path):
    image = program("wfi", handlers={15: ENTRY["return"]})
    result = mcusim.run(write(tmp_path, "wfi.elf", image), "mps2-an386")
    assert result.exit_code == 10
    assert result.exceptions_taken == 10
    # ten SysTick periods of 1000 cycles, nearly all of them asleep
    assert 10_000 <= result.cycles < 10_200
    assert result.dwt["sleepcnt"] > 9_000
    assert result.simulated_seconds == pytest.approx(result.cycles / 25e6)


def test_unmodelled_register_is_storage_and_reported_once(tmp_path):
    result = mcusim.run(write(tmp_path, "store.elf", program("storage")), "mps2-an386")
    assert result.exit_code == 0x5A
    reported = [r for r in result.unmodelled_registers if r["address"] == "0x40013800"]
    assert len(reported) == 1 and reported[0]["writes"] == 1 and reported[0]["reads"] == 1


def test_a_watched_write_in_the_block_that_exits_is_reported_with_the_exit(tmp_path):
    """The storage program writes the watched register and exits in the same block, so the run
    ends before the block boundary where the watchpoint would stop it: run_until says "exit" (the
    run is over) and still names the access, which was lost before."""
    sim = mcusim.Simulator(str(write(tmp_path, "store.elf", program("storage"))), "mps2-an386")
    sim.add_watchpoint(0x40013800, 4, "write")
    stop = sim.run_until()
    assert (stop.reason, stop.exit_code) == ("exit", 0x5A)
    assert stop.watch is not None and stop.watch.address == 0x40013800 and stop.watch.is_write
    assert "a watchpoint was hit just before: wrote 0x40013800 (watching 0x40013800)" in sim.describe(stop)
    unwatched = mcusim.Simulator(str(write(tmp_path, "store.elf", program("storage"))), "mps2-an386").run_until()
    assert (unwatched.reason, unwatched.watch) == ("exit", None)


def test_divide_by_zero_traps_only_when_ccr_asks(tmp_path):
    trapped = mcusim.run(write(tmp_path, "div.elf", program("div_trap")), "mps2-an386")
    assert trapped.exit_code == 125
    assert "divide by zero" in trapped.fault_report and "CFSR=0x02000000" in trapped.fault_report
    plain = mcusim.run(write(tmp_path, "div2.elf", program("div_plain")), "mps2-an386")
    assert plain.exit_code == 7


def test_two_pending_exceptions_tail_chain(tmp_path):
    image = program("tail_chain", handlers={14: ENTRY["return"], 15: ENTRY["return"]})
    result = mcusim.run(write(tmp_path, "tail.elf", image), "mps2-an386")
    assert result.exit_code == 7
    assert result.exceptions_taken == 2
    # entry 12 + tail-chain 6 + return 10 cycles (Cortex-M4 exception overheads, cores/cortex-m4.toml)
    assert result.dwt["exccnt"] == 28


def test_interrupt_pended_while_masked_is_taken_right_after_cpsie(tmp_path):
    image = program("primask", handlers={15: ENTRY["set_r4"]})
    sim = mcusim.Simulator(write(tmp_path, "primask.elf", image), "mps2-an386")
    # decode the code up front, as for an ELF with mapping symbols, so that no decode stop
    # happens to fall right after `cpsie i`
    code = 0x40
    sim.machine.decoder.decode_ranges([(code + ENTRY["primask"], code + 0x148), (code + 0x150, code + 0x154)])
    result = sim.run()
    assert result.exit_code == 1  # the SysTick handler ran between `cpsie i` and `mov r5, r4`


def test_itm_port_0_is_console_output(tmp_path):
    seen = []
    result = mcusim.run(write(tmp_path, "itm.elf", program("itm")), "mps2-an386",
                        on_output=lambda data, stream: seen.append((data, stream)))
    assert result.exit_code == 7
    assert result.stdout == "OK\n" and result.itm == {"0": {"encoding": "utf-8", "data": "OK\n"}}
    assert seen == [(b"O", "stdout"), (b"K", "stdout"), (b"\n", "stdout")]  # streamed as written


def test_block_straddling_two_decode_windows_is_counted_once(tmp_path):
    from elfgen import CODE, PF_R, PF_X, elf32_arm
    import struct

    start = 0xFFF0  # decode windows are 64 KB: this straight-line block crosses 0x10000
    nops = b"\x00\xbf" * 12
    body = nops + CODE[:0x10]  # 12 nops, then movs/adr/bkpt/b and the exit block (code 7)
    vectors = struct.pack("<2I", 0x20001000, start | 1)
    image = elf32_arm([(0, vectors, PF_R), (start, body, PF_R | PF_X)], entry=start)
    result = mcusim.run(write(tmp_path, "straddle.elf", image), "mps2-an386")
    assert result.exit_code == 7
    assert result.instructions == 15


def _straight_line(tmp_path, name, start):
    """mov.w r1,#0x20000000; ldr r0,[r1]; ldr r2,[r1,#4]; then exit7, placed at `start`."""
    from elfgen import CODE, PF_R, PF_X, elf32_arm
    import struct

    pad = (-(start + 8)) % 4  # keep the exit code's literal block 4-byte aligned
    body = bytes.fromhex("4ff00051" "0868" "4a68") + b"\x00\xbf" * (pad // 2) + CODE[:0x10]
    vectors = struct.pack("<2I", 0x20001000, start | 1)
    return write(tmp_path, name, elf32_arm([(0, vectors, PF_R), (start, body, PF_R | PF_X)], entry=start))


def test_a_block_cut_at_a_page_boundary_keeps_its_neighbour_effects(tmp_path):
    """Unicorn also ends blocks at 1 KB page boundaries: the second load still pipelines there."""
    inside = mcusim.run(_straight_line(tmp_path, "inside.elf", 0x80A), "mps2-an386")
    across = mcusim.run(_straight_line(tmp_path, "across.elf", 0x400 - 6), "mps2-an386")  # ldr #2 at 0x400
    assert inside.exit_code == across.exit_code == 7
    assert inside.instructions == across.instructions
    assert inside.cycles == across.cycles
    assert inside.dwt == across.dwt


def test_semihosting_call_mid_block_then_branch_counts_the_refill_once(tmp_path):
    """movs r0,#0x10; bkpt 0xab (SYS_CLOCK); b 1f; 1: exit7 -- 1 + 1 + (1 + P) + 3 = 7 cycles."""
    from elfgen import CODE, PF_R, PF_X, elf32_arm
    import struct

    start = 0x100
    body = bytes.fromhex("1020" "abbe" "00e0" "00bf") + CODE[:0x10]  # b skips the nop
    vectors = struct.pack("<2I", 0x20001000, start | 1)
    image = elf32_arm([(0, vectors, PF_R), (start, body, PF_R | PF_X)], entry=start)
    result = mcusim.run(write(tmp_path, "mid.elf", image), "mps2-an386")
    assert result.exit_code == 7
    assert result.instructions == 6
    assert result.cycles == 7


def test_program_arguments_follow_the_program_name_on_the_command_line_and_in_run_json(tmp_path):
    path = tmp_path / "exit7.elf"
    path.write_bytes(program("exit7"))
    sim = mcusim.Simulator(path, "mcu-m", args=["--fast", "3"])
    assert sim.machine.semihosting.cmdline == f"{path} --fast 3"  # QEMU: arg=PATH,arg=--fast,arg=3
    assert sim.run().to_dict()["settings"]["args"] == ["--fast", "3"]
    assert mcusim.Simulator(path, "mcu-m").machine.semihosting.cmdline == str(path)  # as QEMU's -kernel PATH
    with pytest.raises(ValueError, match="args or cmdline"):
        mcusim.Simulator(path, "mcu-m", args=["a"], cmdline="x a")
