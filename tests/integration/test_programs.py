"""Every firmware program on every board: expected output and exit status."""
import json

import pytest

import mcusim
from clirun import run_cli
from conftest import BOARDS, PROGRAMS

EXPECTED = {
    "hello": "Hello from mcusim on {board}",
    "uart-hello": 'crc32("123456789") = 0xCBF43926 ok',
    "exceptions": "exceptions: all ok",
    "dwt": "dwt: ok",
    "bench": "",  # silent: its exit status says whether the results were right
    "isa": "isa vpush vpop: ",
    "bench-dsp": "",
    "bench-table": "",
    "bench-float": "",
    "flash-timing": "flash alu ram none: ",
    "pipeline": "pipeline branch_alt: ",
    "sram-timing": "sram",  # test_sram_timing checks the numbers where there is cached RAM
}


@pytest.mark.parametrize("board", BOARDS)
@pytest.mark.parametrize("program", PROGRAMS)
def test_program_runs_and_passes(firmware_build, board, program):
    result = mcusim.run(firmware_build / board / f"{program}.elf", board, max_cycles=200_000_000)
    assert result.exit_reason == "semihosting-exit", result.exit_detail + (result.fault_report or "")
    assert result.exit_code == 0, result.stdout
    assert EXPECTED[program].format(board=board) in result.stdout
    dwt = result.dwt
    # ARMv7-M ARM C1.8 (and Arm KB 103489824): instructions = CYCCNT - CPICNT - EXCCNT - SLEEPCNT
    # - LSUCNT + FOLDCNT, with every counter unwrapped
    assert result.instructions == (dwt["cyccnt"] - dwt["cpicnt"] - dwt["exccnt"] - dwt["sleepcnt"]
                                   - dwt["lsucnt"] + dwt["foldcnt"])
    issue_width = 2 if result.core == "cortex-m7" else 1  # the Cortex-M7 issues up to two a cycle
    assert result.cycles * issue_width >= result.instructions > 0
    assert all(cycles >= 0 for cycles in result.stalls.values())
    # every instruction that is not folded issues in at least one cycle
    assert result.issue_cycles >= result.instructions - dwt["foldcnt"]


def test_uart_output_comes_from_the_console_uart(firmware_build):
    result = mcusim.run(firmware_build / "mcu-d" / "uart-hello.elf", "mcu-d")
    assert "Hello from mcusim on mcu-d" in result.uart["USART3"]


@pytest.mark.parametrize("board,clock_hz", [("mcu-m", 80_000_000), ("mcu-d", 216_000_000), ("mcu-b", 96_000_000)])
def test_firmware_clock_setup_changes_the_simulated_clock(firmware_build, board, clock_hz):
    result = mcusim.run(firmware_build / board / "hello.elf", board)
    assert result.clock_hz == clock_hz
    assert result.clock_changes and result.clock_changes[-1]["clock_hz"] == clock_hz


def test_clock_hz_pins_the_clock(firmware_build):
    result = mcusim.run(firmware_build / "mcu-d" / "hello.elf", "mcu-d", clock_hz=100_000_000)
    assert result.clock_hz == 100_000_000
    assert result.simulated_seconds == pytest.approx(result.cycles / 100e6)


def test_systick_interrupts_are_counted_as_exceptions(firmware_build):
    result = mcusim.run(firmware_build / "mcu-m" / "exceptions.elf", "mcu-m")
    assert result.exceptions_taken >= 8  # 5 SysTicks, SVC, PendSV, IRQ0, HardFault
    assert result.dwt["exccnt"] > 0


def test_cli_hello_on_mcu_d_prints_greeting_and_summary(firmware_build, tmp_path):
    elf = firmware_build / "mcu-d" / "hello.elf"
    done = run_cli("run", elf, "--board", "mcu-d", "--out", tmp_path / "bundle")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "Hello from mcusim on mcu-d"
    for word in ("board mcu-d", "cortex-m7", "216 MHz", "instructions", "cycles", "simulated", "host", "MIPS",
                 "exit"):
        assert word in done.stderr
    run = json.loads((tmp_path / "bundle" / "run.json").read_text())
    for key in ("mcusim_version", "board", "core", "clock_hz", "firmware", "exit", "instructions", "cycles",
                "simulated_seconds", "host_seconds", "mips", "dwt", "stdout", "cpi", "stalls", "issue_cycles"):
        assert key in run
    assert set(run["dwt"]) == {"cyccnt", "cpicnt", "exccnt", "sleepcnt", "lsucnt", "foldcnt"}
    assert run["firmware"]["sha256"] and run["exit"] == {"reason": "semihosting-exit", "code": 0,
                                                         "detail": run["exit"]["detail"]}
    assert run["stdout"] == "Hello from mcusim on mcu-d\n"


def test_symbols_and_source_lines_come_from_the_elf(firmware_build):
    from mcusim.elf import ElfImage

    image = ElfImage.load(firmware_build / "mcu-d" / "hello.elf")
    main = image.symbol("main")
    assert main is not None and image.symbolize(main + 2) == "main+0x2"
    assert image.source_line(main).startswith("programs/hello/main.c:")


def test_code_is_decoded_as_it_first_runs(firmware_build):
    sim = mcusim.Simulator(firmware_build / "mcu-m" / "hello.elf", "mcu-m")
    assert sim.machine.state.windows == []  # nothing decoded before the run
    result = sim.run()
    assert result.exit_code == 0
    ranges = sim.machine.decoder._ranges
    decoded = sim.machine.decoder._ranges_done
    assert 0 < len(decoded) < len(ranges)  # only the code ranges that ran
