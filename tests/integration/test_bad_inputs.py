"""Bad firmware through the command line: documented messages and exit codes."""
import sys

from clirun import run_cli
from elfgen import elf32_arm, program


def cli(*args):
    return run_cli("run", *args)


def test_truncated_elf(firmware_build, tmp_path):
    data = (firmware_build / "mcu-d" / "hello.elf").read_bytes()
    for size in (40, 300, len(data) // 2):
        path = tmp_path / f"cut{size}.elf"
        path.write_bytes(data[:size])
        done = cli(path, "--board", "mcu-d")
        assert done.returncode == 3, done.stderr
        assert "truncated" in done.stderr


def test_x86_elf(tmp_path):
    path = tmp_path / "x86.elf"
    path.write_bytes(elf32_arm([(0x1000, b"\x90" * 16, 5)], machine=3))  # EM_386
    done = cli(path, "--board", "mcu-d")
    assert done.returncode == 3
    assert "built for EM_386, not for Arm" in done.stderr


def test_host_binary_is_rejected():
    done = cli(sys.executable, "--board", "mcu-d")
    assert done.returncode == 3
    assert "64-bit ELF" in done.stderr or "not an ELF" in done.stderr


def test_segment_outside_board_memory_names_segment_and_regions(firmware_build):
    done = cli(firmware_build / "mcu-d" / "hello.elf", "--board", "mcu-s")
    assert done.returncode == 3
    assert "segment 0 (.isr_vector, .text" in done.stderr
    assert "0x08000000-" in done.stderr
    assert "flash 0x00000000-0x000fffff" in done.stderr and "ram 0x20000000-0x2003ffff" in done.stderr


def test_elf_without_code(tmp_path):
    path = tmp_path / "data.elf"
    path.write_bytes(elf32_arm([(0x20000000, b"\x00" * 16, 6)]))  # RW, not executable
    done = cli(path, "--board", "mcu-s")
    assert done.returncode == 3
    assert "no loadable code" in done.stderr


def test_runaway_loop_hits_max_cycles(tmp_path):
    path = tmp_path / "loop.elf"
    path.write_bytes(program("count"))
    done = cli(path, "--board", "mps2-an386", "--max-cycles", "1000000")
    assert done.returncode == 124
    assert "reached the cycle limit (1,000,000 cycles)" in done.stderr


def test_unhandled_fault_reports_symbolically(tmp_path):
    path = tmp_path / "fault.elf"
    path.write_bytes(program("fault"))
    done = cli(path, "--board", "mps2-an386")
    assert done.returncode == 125
    assert "fault:" in done.stderr and "BusFault" in done.stderr and "BFAR=0x90000000" in done.stderr
