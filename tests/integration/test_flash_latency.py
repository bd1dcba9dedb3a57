"""Wait states against the clock, and --flash-latency, on firmware that never sets up its flash.

The program writes FLASH_ACR once (LATENCY as given, caches and prefetch off, so every flash
line waits), then times 100 passes of a 32-byte loop from flash with CYCCNT and stores the
count at 0x20000000. Left at LATENCY 0 with the clock pinned at the board's full speed, the
part would read wrong data: the run warns. `--flash-latency auto` applies the reference
manual's minimum, which must time the loop exactly as firmware that writes that LATENCY itself.
"""
import json

import pytest

import mcusim
from asmbuild import build_elf
from clirun import run_cli

TIMED = """
    .syntax unified
    .thumb
    .text
    .word {sp}
    .word reset + 1
    .global reset
    .thumb_func
reset:
    ldr r0, ={acr}             @ FLASH_ACR
    ldr r1, ={latency}         @ LATENCY; prefetch, caches (and the F7's ART) off
    str r1, [r0]
    ldr r0, =0xE0001000        @ DWT_CTRL.CYCCNTENA (DEMCR.TRCENA is on with a probe attached)
    ldr r1, [r0]
    orr r1, r1, #1
    str r1, [r0]
    movs r3, #100
    ldr r2, [r0, #4]
    b 1f
    .balign 32
1:  .rept 14
    adds r4, #1
    .endr
    subs r3, #1
    bne 1b
    ldr r5, [r0, #4]
    subs r5, r5, r2
    ldr r6, =0x20000000
    str r5, [r6]
    ldr r1, =0x20026           @ SYS_EXIT, ADP_Stopped_ApplicationExit
    movs r0, #0x18
    bkpt 0xab
    .ltorg
"""
# board: (FLASH_ACR, initial SP, full clock, the reference manual's wait states for it)
BOARDS = {"mcu-m": (0x40022000, 0x20018000, 80_000_000, 4),   # RM0351 3.7.1; table 12, range 1
          "mcu-d": (0x40023C00, 0x20010000, 216_000_000, 7)}  # RM0385 3.7.1; table 5, 2.7-3.6 V


def timed_run(tmp_path, board, latency, **options):
    acr, sp, clock, _ = BOARDS[board]
    elf = build_elf(tmp_path, f"{board}-{latency}", TIMED.format(sp=sp, acr=acr, latency=latency))
    sim = mcusim.Simulator(elf, board, clock_hz=clock, **options)
    result = sim.run()
    assert result.exit_code == 0, result.exit_detail
    return int.from_bytes(sim.machine.read_memory(0x20000000, 4), "little"), result


def cli(*args):
    return run_cli("run", *args)


@pytest.mark.parametrize("board", BOARDS)
def test_pinned_full_clock_with_the_reset_latency_is_warned_about(tmp_path, board):
    _, _, clock, needed = BOARDS[board]
    _, result = timed_run(tmp_path, board, 0)
    warnings = [w for w in result.warnings if "wait states" in w]
    assert len(warnings) == 1
    assert f"flash has 0 wait states at {clock / 1e6:g} MHz (--clock-hz)" in warnings[0]
    assert f"requires at least {needed}" in warnings[0]


@pytest.mark.parametrize("board", BOARDS)
def test_auto_latency_times_like_firmware_that_sets_the_manuals_wait_states(tmp_path, board):
    *_, needed = BOARDS[board]
    set_by_firmware, result = timed_run(tmp_path, board, needed)
    assert not any("wait states" in w for w in result.warnings)
    auto, result = timed_run(tmp_path, board, 0, flash_latency="auto")
    assert not any("wait states" in w for w in result.warnings)
    assert auto == set_by_firmware
    reset_latency, _ = timed_run(tmp_path, board, 0)
    assert reset_latency < auto  # 0 wait states: the 4 (or 7) per line the firmware owed are missing
    forced, _ = timed_run(tmp_path, board, 0, flash_latency=needed)
    assert forced == auto


def test_kit_firmware_that_sets_its_flash_is_not_warned_about_at_a_pinned_clock(firmware_build):
    """SystemInit raises LATENCY before it switches to the PLL: no warning at 80 MHz; above
    what any setting allows, one."""
    elf = firmware_build / "mcu-m" / "hello.elf"
    assert not any("wait states" in w for w in mcusim.run(elf, "mcu-m", clock_hz=80_000_000).warnings)
    result = mcusim.run(elf, "mcu-m", clock_hz=100_000_000)
    assert any("100 MHz (--clock-hz) is above every flash wait-state setting" in w for w in result.warnings)


def test_the_command_line_warns_on_stderr_and_in_run_json_and_records_the_latency(tmp_path):
    acr, sp, clock, _ = BOARDS["mcu-m"]
    elf = build_elf(tmp_path, "timed", TIMED.format(sp=sp, acr=acr, latency=0))
    done = cli(elf, "--board", "mcu-m", "--clock-hz", clock, "--out", tmp_path / "pinned")
    assert done.returncode == 0
    assert "mcusim: warning: flash has 0 wait states at 80 MHz (--clock-hz)" in done.stderr
    run = json.loads((tmp_path / "pinned" / "run.json").read_text())
    assert any("flash has 0 wait states" in w for w in run["warnings"]) and run["settings"]["flash_latency"] is None
    done = cli(elf, "--board", "mcu-m", "--clock-hz", clock, "--flash-latency", "auto", "--out", tmp_path / "auto")
    assert done.returncode == 0 and "wait states" not in done.stderr
    assert json.loads((tmp_path / "auto" / "run.json").read_text())["settings"]["flash_latency"] == "auto"


@pytest.mark.parametrize("board,value,message", [
    ("mcu-m", "fast", "not a flash latency"),
    ("mcu-m", "-2", "not a flash latency"),
    ("mcu-m", "5", "takes 0 to 4"),
    ("mcu-s", "auto", "no flash latency setting"),
    ("mcu-b", "auto", "no reference-manual table"),
    ("mps2-an386", "1", "no flash wait states to set"),
])
def test_bad_flash_latency_values_exit_2_with_the_reason(tmp_path, board, value, message):
    acr, sp, *_ = BOARDS["mcu-m"]
    elf = build_elf(tmp_path, "timed", TIMED.format(sp=sp, acr=acr, latency=0), text_address=0)
    done = cli(elf, "--board", board, "--flash-latency", value)
    assert done.returncode == 2
    assert "--flash-latency" in done.stderr and message in done.stderr
