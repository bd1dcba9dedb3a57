"""A run stays bounded whatever the firmware does and whenever the user stops it: firmware output
is kept in bounded memory, waits on the host (console input, SYS_SYSTEM) give way to the time
limit and to interrupts, a signal before the run or while its bundle is written never ends in a
traceback or a lost bundle, and `--out` is checked after the firmware (docs/reliability.md)."""
import json
import os
import random
import signal
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import mcusim
from clirun import run_cli
from elfgen import PF_R, PF_W, PF_X, elf32_arm, program
from mcusim.api import RunResult
from mcusim.machine.machine import OUTPUT_HEAD, OUTPUT_TAIL, Kept
from mcusim.machine.semihosting import SYS_READ, SYS_READC, SYS_SYSTEM, SYS_WRITE

BOARD = "mcu-m"  # flash at 0, SRAM at 0x20000000
CONFIG = 0x20000100
# ldr r4,=CONFIG; movs r0,#1; add r1,r4,#20; bkpt 0xab      SYS_OPEN(":tt", mode): handle 3
# loop: ldr r0,[r4]; add r1,r4,#8; bkpt 0xab                 the operation, its block at CONFIG+8
#       ldr r2,[r4,#4]; cmp r2,#0; bne loop                  again while CONFIG+4 is set
# str r0,[r4,#40]; movs r0,#0x20; add r1,r4,#36; bkpt 0xab; b .   exit with the result
CODE = bytes.fromhex("084c012004f11401abbe206804f10801abbe6268002af8d1a062202004f12401abbefee700010020")


def semihosting_program(operation: int, block=(0, 0, 0), repeat=False, open_mode=4, text=b"") -> bytes:
    """Opens :tt (handle 3), calls `operation` with `block` (once, or forever), exits with its
    result; `text` lies at CONFIG + 48."""
    vectors = struct.pack("<16I", 0x20008000, 0x41, *[0] * 14)
    config = struct.pack("<11I", operation, int(repeat), *block, CONFIG + 44, open_mode, 3, 0, 0x20026, 0)
    return elf32_arm([(0, vectors + CODE, PF_R | PF_X), (CONFIG, config + b":tt\0" + text, PF_R | PF_W)],
                     entry=0x41)


def write_elf(tmp_path, image: bytes, name="fw.elf") -> Path:
    path = tmp_path / name
    path.write_bytes(image)
    return path


# A. output ------------------------------------------------------------------------

def test_kept_output_is_the_head_and_the_tail_with_the_rest_counted():
    rng = random.Random(1)
    kept, stream = Kept(), bytearray()
    while len(stream) < 3 * OUTPUT_HEAD:
        chunk = rng.randbytes(rng.choice([1, 100, 4096, 70_000, 300_000]))
        kept += chunk
        stream += chunk
        assert len(kept) <= OUTPUT_HEAD + OUTPUT_TAIL
    assert bytes(kept) == bytes(stream[:OUTPUT_HEAD] + stream[-OUTPUT_TAIL:])
    assert kept.dropped == len(stream) - OUTPUT_HEAD - OUTPUT_TAIL


def test_flooding_firmware_runs_in_bounded_memory_and_counts_what_was_not_kept(tmp_path):
    """SYS_WRITE of 64 KiB in a loop: everything passes through, run.json keeps a bounded part."""
    elf = write_elf(tmp_path, semihosting_program(SYS_WRITE, (3, 0x20000000, 0x10000), repeat=True))
    passed = []
    sim = mcusim.Simulator(elf, BOARD, max_cycles=3000, on_output=lambda data, stream: passed.append(len(data)))
    result = sim.run()
    total = sum(passed)
    assert result.exit_reason == "max-cycles" and total > 10 * OUTPUT_HEAD
    m = sim.machine
    assert len(m.outputs.stdout) == OUTPUT_HEAD + OUTPUT_TAIL
    assert result.output_dropped_bytes == {"stdout": total - OUTPUT_HEAD - OUTPUT_TAIL}
    assert sum("run.json keeps" in warning for warning in result.warnings) == 1
    document = json.loads(result.write_bundle(tmp_path / "out").read_text())
    assert document["output_dropped_bytes"]["stdout"] == total - OUTPUT_HEAD - OUTPUT_TAIL
    assert f"{total - OUTPUT_HEAD - OUTPUT_TAIL:,} bytes of output not kept" in document["stdout"]
    assert len(document["stdout"]) < OUTPUT_HEAD + OUTPUT_TAIL + 100


def test_uart_and_itm_output_are_bounded_per_stream(tmp_path):
    sim = mcusim.Simulator(write_elf(tmp_path, program("exit7")), BOARD)
    m = sim.machine
    for _ in range(20):
        m.uart_write("UART4", bytes(100_000))
        m.itm_write(5, bytes(100_000))
    assert len(m.outputs.uart["UART4"]) == len(m.outputs.itm[5]) == OUTPUT_HEAD + OUTPUT_TAIL
    dropped = 2_000_000 - OUTPUT_HEAD - OUTPUT_TAIL
    assert m.outputs.dropped() == {"uart.UART4": dropped, "itm.5": dropped}


# B. host waits --------------------------------------------------------------------

@pytest.fixture
def silent_pipe():
    """stdin from a pipe nobody writes to; its write end closes after 6 s, so that code which
    ignores the limits fails slowly instead of hanging."""
    read_end, write_end = os.pipe()
    closed = []
    timer = threading.Timer(6, lambda: closed.append(os.close(write_end)))
    timer.start()
    with os.fdopen(read_end, "rb", buffering=0) as stdin:
        yield stdin
    timer.cancel()
    timer.join()
    if not closed:
        os.close(write_end)


@pytest.mark.parametrize("operation", [SYS_READ, SYS_READC])
def test_a_console_read_that_gets_nothing_ends_at_the_time_limit(tmp_path, silent_pipe, operation):
    elf = write_elf(tmp_path, semihosting_program(operation, (3, 0x20000400, 4), open_mode=0))
    sim = mcusim.Simulator(elf, BOARD, stdin=silent_pipe, max_seconds=1)
    started = time.monotonic()
    result = sim.run()
    assert result.exit_reason == "time-limit" and result.exit_code == 124
    assert time.monotonic() - started < 2


def test_an_interrupt_ends_a_run_waiting_for_console_input(tmp_path, silent_pipe):
    elf = write_elf(tmp_path, semihosting_program(SYS_READ, (3, 0x20000400, 4), open_mode=0))
    sim = mcusim.Simulator(elf, BOARD, stdin=silent_pipe)
    threading.Timer(0.3, sim.interrupt, (signal.SIGTERM,)).start()
    started = time.monotonic()
    result = sim.run()
    assert result.exit_reason == "interrupted" and result.exit_code == 143
    assert time.monotonic() - started < 1.5


def test_console_input_that_arrives_is_read_as_before(tmp_path):
    read_end, write_end = os.pipe()
    os.write(write_end, b"abcdef")
    elf = write_elf(tmp_path, semihosting_program(SYS_READ, (3, 0x20000400, 4), open_mode=0))
    with os.fdopen(read_end, "rb", buffering=0) as stdin:
        sim = mcusim.Simulator(elf, BOARD, stdin=stdin, max_seconds=5)
        assert sim.run().exit_code == 0  # (all 4 bytes read: none left over)
    assert sim.machine.read_memory(0x20000400, 4) == b"abcd"
    os.close(write_end)


@pytest.mark.parametrize("stop", ["time-limit", "interrupted"])
def test_sys_system_of_a_sleeping_program_gives_way_and_the_program_is_killed(tmp_path, stop):
    root = tmp_path / "root"
    root.mkdir()
    (root / "nap.sh").write_text("#!/bin/sh\necho $$ > pid\nexec sleep 30\n")
    (root / "nap.sh").chmod(0o755)
    elf = write_elf(tmp_path, semihosting_program(SYS_SYSTEM, (CONFIG + 48, 6, 0), text=b"nap.sh\0"))
    sim = mcusim.Simulator(elf, BOARD, semihosting_root=root, semihosting_system=True,
                           max_seconds=1 if stop == "time-limit" else None)
    sim.machine.semihosting.host.system_timeout = 5  # (code that ignores the limits fails in 5 s, not 60)
    if stop == "interrupted":
        threading.Timer(0.5, sim.interrupt).start()
    started = time.monotonic()
    result = sim.run()
    assert result.exit_reason == stop and time.monotonic() - started < 2
    with pytest.raises(ProcessLookupError):
        os.kill(int((root / "pid").read_text()), 0)


@pytest.mark.slow
def test_a_reader_that_stops_reading_holds_the_run_only_until_its_time_limit(tmp_path):
    """`mcusim run flood.elf --max-seconds 1 | sleep 100`: stdout fills, the limit still ends the run."""
    elf = write_elf(tmp_path, semihosting_program(SYS_WRITE, (3, 0x20000000, 0x10000), repeat=True))
    with open(tmp_path / "stderr", "wb") as stderr:
        process = subprocess.Popen([sys.executable, "-m", "mcusim.cli", "run", str(elf), "--board", BOARD,
                                    "--max-seconds", "1"], stdout=subprocess.PIPE, stderr=stderr,
                                   env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
        try:
            assert process.wait(timeout=20) == 124  # (the pipe is never read)
        finally:
            process.kill()
            process.stdout.close()
    assert "reached the time limit (1 s of host time)" in (tmp_path / "stderr").read_text()


# C. signals before the run and after it -------------------------------------------

def _catches_sigterm(pid: int) -> bool:
    """Whether the process has a handler for SIGTERM (Python has none until mcusim installs one)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGTERM - 1)))
    return False


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads /proc")
@pytest.mark.parametrize("entry", [["-m", "mcusim.cli"], ["-c", "from mcusim.launch import main; main()"]])
@pytest.mark.parametrize("signum,delay", [(signal.SIGINT, 0.0), (signal.SIGINT, 0.05), (signal.SIGINT, 0.3),
                                          (signal.SIGTERM, 0.6)])
def test_a_signal_while_mcusim_starts_exits_without_a_traceback(tmp_path, entry, signum, delay):
    """mcusim takes the signals first, before its imports (earlier, the interpreter itself is
    starting); `delay` seconds after that, a signal ends it with one line."""
    elf = write_elf(tmp_path, program("count"))
    out = tmp_path / "out"
    process = subprocess.Popen([sys.executable, *entry, "run", str(elf), "--board", BOARD, "--out", str(out),
                                "--max-seconds", "20"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    give_up = time.monotonic() + 10
    while not _catches_sigterm(process.pid) and time.monotonic() < give_up:
        time.sleep(0.001)
    imported = Path(f"/proc/{process.pid}/maps").read_text()
    time.sleep(delay)
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=30)
    assert "unicorn" not in imported, "the signals were taken only after the imports"
    stderr = stderr.decode()
    assert "Traceback" not in stderr and "Aborted" not in stderr
    assert process.returncode == 128 + signum, stderr
    if "interrupted before the run started" in stderr:
        assert stderr.strip() == "mcusim: interrupted before the run started"
        assert not (out / "run.json").exists()
    else:  # (the run had started: it ends as interrupted, with its bundle)
        assert json.loads((out / "run.json").read_text())["exit"]["reason"] == "interrupted"


def test_a_signal_while_the_bundle_is_written_keeps_the_bundle_and_sets_the_exit_status(tmp_path, monkeypatch):
    write = RunResult.write_bundle

    def signalled_while_writing(self, directory, on_removed=None):
        handler = signal.getsignal(signal.SIGTERM)  # (called as a delivered SIGTERM would call it)
        assert callable(handler), "SIGTERM is not handled while the bundle is written: it would be lost"
        handler(signal.SIGTERM, None)
        return write(self, directory, on_removed)

    monkeypatch.setattr(RunResult, "write_bundle", signalled_while_writing)
    out = tmp_path / "out"
    done = run_cli("run", write_elf(tmp_path, program("exit7")), "--board", BOARD, "--out", out)
    assert done.returncode == 143
    assert json.loads((out / "run.json").read_text())["exit"]["code"] == 7
    assert "bundle:" in done.stderr


# D. --out -------------------------------------------------------------------------

def test_an_empty_out_is_a_usage_error(tmp_path):
    done = run_cli("run", write_elf(tmp_path, program("exit7")), "--board", BOARD, "--out", "")
    assert done.returncode == 2 and "--out" in done.stderr


def test_firmware_that_cannot_run_leaves_no_out_folder(tmp_path):
    done = run_cli("run", tmp_path / "missing.elf", "--board", BOARD, "--out", tmp_path / "out")
    assert done.returncode == 3
    assert not (tmp_path / "out").exists()
