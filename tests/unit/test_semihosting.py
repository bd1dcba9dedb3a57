"""Semihosting operations against a stand-in machine (memory as a bytearray)."""
import errno
import io
import struct
from types import SimpleNamespace

import pytest

from mcusim.config import load_board
from mcusim.elf import Segment
from mcusim.machine import semihosting as S


class FakeUc:
    def __init__(self):
        self.memory = bytearray(0x1000)

    def mem_read(self, address, size):
        return bytes(self.memory[address:address + size])

    def mem_write(self, address, data):
        self.memory[address:address + len(data)] = data


class FakeMachine:
    clock_hz = 64_000_000

    def __init__(self, stdin=b""):
        self.uc = FakeUc()
        self.console = bytearray()
        self.warnings = []
        self.stdin = io.BytesIO(stdin)
        self.cycles = 128_000_000

    def console_write(self, data, source, stderr=False):
        self.console += data

    def warn(self, message):
        self.warnings.append(message)

    def read_stdin(self, size):
        return self.stdin.read(size)

    def host_wait_over(self):
        return False

    def simulated_seconds(self):
        return self.cycles / self.clock_hz

    def cycles_now(self):
        return self.cycles

    def debug_span(self, address, write=False):
        return max(0, len(self.uc.memory) - address)

    def read_memory(self, address, size):
        return bytes(self.uc.mem_read(address, size))


def put(machine, address, *words):
    machine.uc.mem_write(address, struct.pack(f"<{len(words)}I", *words))


def open_file(sh, machine, name, mode):
    machine.uc.mem_write(0x800, name.encode() + b"\0")
    put(machine, 0x100, 0x800, mode, len(name))
    return sh.call(S.SYS_OPEN, 0x100)


@pytest.fixture
def machine():
    return FakeMachine(stdin=b"typed\n")


def test_console_write_and_read(machine):
    sh = S.Semihosting(machine)
    stdin, stdout = open_file(sh, machine, ":tt", 0), open_file(sh, machine, ":tt", 4)
    machine.uc.mem_write(0x400, b"hi there")
    put(machine, 0x100, stdout, 0x400, 8)
    assert sh.call(S.SYS_WRITE, 0x100) == 0
    assert machine.console == b"hi there"
    put(machine, 0x100, stdin, 0x500, 16)
    assert sh.call(S.SYS_READ, 0x100) == 16 - 6  # bytes NOT read
    assert machine.uc.mem_read(0x500, 6) == b"typed\n"
    put(machine, 0x100, stdout)
    assert sh.call(S.SYS_ISTTY, 0x100) == 1


def test_features_file_announces_extended_exit_and_stdout_stderr(machine):
    sh = S.Semihosting(machine)
    handle = open_file(sh, machine, S.FEATURES_FILE, 0)
    put(machine, 0x100, handle)
    assert sh.call(S.SYS_FLEN, 0x100) == 5
    put(machine, 0x100, handle, 0x500, 5)
    assert sh.call(S.SYS_READ, 0x100) == 0
    assert machine.uc.mem_read(0x500, 5) == b"SHFB\x03"


def test_time_comes_from_simulated_time(machine):
    sh = S.Semihosting(machine)
    assert sh.call(S.SYS_CLOCK, 0) == 200  # 2 s simulated, in centiseconds
    assert sh.call(S.SYS_TICKFREQ, 0) == 1_000_000
    assert sh.call(S.SYS_ELAPSED, 0x100) == 0
    assert struct.unpack("<Q", machine.uc.mem_read(0x100, 8))[0] == 2_000_000  # microseconds
    assert sh.call(S.SYS_TIME, 0) - sh.started_wall == pytest.approx(2, abs=1)


def test_command_line(machine):
    sh = S.Semihosting(machine, cmdline="app --fast")
    put(machine, 0x100, 0x600, 64)
    assert sh.call(S.SYS_GET_CMDLINE, 0x100) == 0
    assert machine.uc.mem_read(0x600, 11) == b"app --fast\0"
    assert struct.unpack("<I", machine.uc.mem_read(0x104, 4))[0] == 10


def test_a_command_line_longer_than_the_buffer_fails_and_writes_nothing(machine):
    sh = S.Semihosting(machine, cmdline="app " + "x" * 80)
    put(machine, 0x100, 0x600, 64)
    assert sh.call(S.SYS_GET_CMDLINE, 0x100) == -1
    assert machine.uc.mem_read(0x600, 64) == bytes(64)
    assert struct.unpack("<I", machine.uc.mem_read(0x104, 4))[0] == 64  # the block is left as it was
    assert sh.call(S.SYS_ERRNO, 0) == errno.E2BIG
    assert any("too small" in w for w in machine.warnings)


def segment(start, end):
    """A loadable segment running at start..end (its memsz; no file bytes needed here)."""
    return Segment(index=0, paddr=start, vaddr=start, data=b"", memsz=end - start, executable=False, sections=())


def test_heapinfo_gives_the_ram_after_the_image_and_a_stack_at_the_top_of_the_initial_sps_ram(machine):
    machine.board = load_board("mcu-m")
    machine.image = SimpleNamespace(segments=[segment(0x08000000, 0x08004000), segment(0x20000000, 0x20000b3c)])
    machine.initial_sp = 0x20018000  # the end of SRAM1: the stack is in SRAM1, not the SRAM2 alias after it
    put(machine, 0x100, 0x200)
    assert S.Semihosting(machine).call(S.SYS_HEAPINFO, 0x100) == 0
    heap_base, heap_limit, stack_base, stack_limit = struct.unpack("<4I", machine.uc.mem_read(0x200, 16))
    assert (heap_base, stack_base) == (0x20000b40, 0x20018000)  # after .bss, 8-byte aligned
    assert (heap_limit, stack_limit) == (stack_base, heap_base)  # they share the RAM between them, as on QEMU


def test_heapinfo_shares_adjacent_ram_banks_but_not_a_mirror():
    # mcu-d: .bss in DTCM, SP at the top of SRAM2: DTCM, SRAM1 and SRAM2 follow on, so heap and stack share them
    assert S.heap_info(load_board("mcu-d"), [segment(0x20000000, 0x20000400)], 0x20050000) == (
        0x20000400, 0x20050000, 0x20050000, 0x20000400)
    # MPS2: SSRAM2&3 ends where its own mirror starts: the stack starts at the end of the real memory
    assert S.heap_info(load_board("mps2-an386"), [segment(0, 0x8000), segment(0x20000000, 0x20000100)],
                       0x20400000) == (0x20000100, 0x20400000, 0x20400000, 0x20000100)


def test_heapinfo_leaves_out_what_the_image_places_above_the_initial_sp():
    # mcu-d with an arena linked at the top of SRAM2 and the SP below it (`mcusim model run` with
    # arena = "sram"): the heap follows .bss in DTCM, the stack starts at the SP, under the arena
    segments = [segment(0x20000000, 0x20000130), segment(0x2004e8b0, 0x20050000)]
    assert S.heap_info(load_board("mcu-d"), segments, 0x2004e8b0) == (0x20000130, 0x2004e8b0, 0x2004e8b0, 0x20000130)


def test_heapinfo_of_a_stack_first_layout_puts_the_heap_after_the_image():
    # mcu-s linked stack first: SP 0x20001000 at the bottom, .data and .bss above it
    heap_base = S.heap_info(load_board("mcu-s"), [segment(0x20001000, 0x20001400)], 0x20001000)[0]
    assert heap_base == 0x20001400


def test_heapinfo_keeps_heap_and_stack_in_their_own_ram_when_apart():
    # mcu-m, stack in SRAM2 at 0x10000000: the heap must not grow through the SRAM2 alias after SRAM1
    assert S.heap_info(load_board("mcu-m"), [segment(0x20000000, 0x20000100)], 0x10008000) == (
        0x20000100, 0x20018000, 0x10008000, 0x10000000)


def test_exit_codes(machine):
    sh = S.Semihosting(machine)
    with pytest.raises(S.SemihostingExit) as done:
        sh.call(S.SYS_EXIT, S.ADP_STOPPED_APPLICATION_EXIT)
    assert done.value.code == 0
    put(machine, 0x100, S.ADP_STOPPED_APPLICATION_EXIT, 42)
    with pytest.raises(S.SemihostingExit) as done:
        sh.call(S.SYS_EXIT_EXTENDED, 0x100)
    assert done.value.code == 42
    with pytest.raises(S.SemihostingExit) as done:
        sh.call(S.SYS_EXIT, 0x20023)  # ADP_Stopped_RunTimeErrorUnknown
    assert done.value.code == 1


@pytest.mark.parametrize("operation,words", [(S.SYS_REMOVE, (0x800, 4)), (S.SYS_SYSTEM, (0x800, 4)),
                                             (S.SYS_RENAME, (0x800, 4, 0x800, 4))])
def test_host_side_effects_refused_without_root(machine, operation, words):
    sh = S.Semihosting(machine)
    machine.uc.mem_write(0x800, b"x.txt\0")
    put(machine, 0x100, *words)
    assert sh.call(operation, 0x100) == -1
    assert "refused" in machine.warnings[-1]
    assert sh.call(S.SYS_ERRNO, 0) == 13  # EACCES


def test_system_runs_only_programs_inside_the_root(machine, tmp_path):
    sh = S.Semihosting(machine, root=tmp_path, system=True)
    machine.uc.mem_write(0x800, b"/bin/true\0")
    put(machine, 0x100, 0x800, 9)
    assert sh.call(S.SYS_SYSTEM, 0x100) == -1
    script = tmp_path / "ok.sh"
    script.write_text("#!/bin/sh\nexit 3\n")
    script.chmod(0o755)
    machine.uc.mem_write(0x800, b"ok.sh\0")
    put(machine, 0x100, 0x800, 5)
    assert sh.call(S.SYS_SYSTEM, 0x100) == 3


def test_files_inside_root_can_be_written_and_removed(machine, tmp_path):
    sh = S.Semihosting(machine, root=tmp_path)
    handle = open_file(sh, machine, "out.txt", 4)
    assert handle > 0
    machine.uc.mem_write(0x400, b"data")
    put(machine, 0x100, handle, 0x400, 4)
    assert sh.call(S.SYS_WRITE, 0x100) == 0
    put(machine, 0x100, handle)
    assert sh.call(S.SYS_CLOSE, 0x100) == 0
    assert (tmp_path / "out.txt").read_bytes() == b"data"
    machine.uc.mem_write(0x800, b"out.txt\0")
    put(machine, 0x100, 0x800, 7)
    assert sh.call(S.SYS_REMOVE, 0x100) == 0
    assert not (tmp_path / "out.txt").exists()
