"""`mcusim run --gdb`: gdb-multiarch drives the simulated board in batch mode (breakpoints, steps,
locals and globals, a watchpoint, monitor commands, a fault, the exit code), raw sockets check
the protocol's edges (no-ack mode, malformed packets, Ctrl-C, detach, kill, disconnect), and a
debugged run measures exactly what a run without gdb does."""
import json
import re
import socket
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow  # gdb sessions, headless Chromium, captured runs: seconds each

from conftest import require_tool
from mcusim.api import Simulator, run
from mcusim.config import load_board
from mcusim.gdb.packets import frame

PAPER = ["mcu-s", "mcu-m", "mcu-b", "mcu-d"]


class Server:
    """`mcusim run ELF --board B --gdb 127.0.0.1:0 --out DIR` in a process, its port read from stderr."""

    def __init__(self, elf, board, out, *extra):
        self.process = subprocess.Popen([sys.executable, "-m", "mcusim.cli", "run", str(elf), "--board", board,
                                         "--gdb", "127.0.0.1:0", "--out", str(out), *extra],
                                        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stderr.readline()
        found = re.search(r"waiting for gdb on 127\.0\.0\.1:(\d+)", line)
        assert found, f"no port announced: {line!r}"
        self.port = int(found.group(1))

    def finish(self, timeout=120):
        stdout, stderr = self.process.communicate(timeout=timeout)
        return self.process.returncode, stdout, stderr


def _gdb(elf, port, commands, timeout=120) -> str:
    script = ["set pagination off", "set confirm off", f"target remote 127.0.0.1:{port}", *commands]
    args = [require_tool("gdb-multiarch"), "-q", "-batch", "-nx"]
    for command in script:
        args += ["-ex", command]
    done = subprocess.run([*args, str(elf)], capture_output=True, text=True, timeout=timeout)
    return done.stdout + done.stderr


def _measured(document: dict) -> dict:
    keys = ("cycles", "instructions", "stdout", "exit", "stalls", "dwt", "icache", "dcache", "energy_j",
            "energy_by_rail_j", "peak_power_w", "functions")
    return {key: document[key] for key in keys}


@pytest.mark.parametrize("board", ["mcu-m", "mcu-d"])
def test_debugging_with_gdb_changes_nothing_measured(firmware_build, tmp_path, board):
    """Break in a function, step by source line, print a local and a global, watch a global as the
    loop writes it, ask the monitor for cycles and energy, continue to the exit code: the bundle
    then holds the cycles, counters, energy and output of the same run without gdb."""
    elf = firmware_build / board / "debug-demo.elf"
    server = Server(elf, board, tmp_path / "out")
    log = _gdb(elf, server.port, ["break sum_of_squares", "continue", "step", "next", "info locals",
                                  "print checksum", "set var *(int *)0x08000000 = 1", "print checksum",
                                  "x/wx 0xE000ED00", "watch counter", "continue", "continue", "print counter",
                                  "delete", "monitor cycles", "monitor energy", "monitor profile 3", "continue"])
    code, stdout, stderr = server.finish()
    assert "Breakpoint 1, sum_of_squares (limit=limit@entry=10)" in log, log
    assert re.search(r"^total = 0$", log, re.M) and re.search(r"^i = 1$", log, re.M), log
    assert "$1 = -1" in log  # checksum before main stores it
    # a refused write (flash) is an error, and gdb stays in step: the next print is right
    assert "Cannot access memory at address 0x8000000" in log and "$2 = -1" in log, log
    cpuid = load_board(board).cpuid
    assert f"0xe000ed00:\t0x{cpuid:08x}" in log.lower(), log  # SCB CPUID, as the firmware reads it
    assert "Old value = 0\nNew value = 1" in log and "Old value = 1\nNew value = 2" in log, log
    assert "$3 = 2" in log
    assert re.search(r"[\d,]+ cycles, [\d,]+ instructions, [\d.,]+ us simulated", log), log
    assert "energy so far:" in log and re.search(r"cycles +share +calls +function", log), log
    assert "[Inferior 1 (Remote target) exited normally]" in log, log
    assert code == 0, stderr
    assert stdout == "sum of squares 1..10 = 385\n"
    debugged = json.loads((tmp_path / "out" / "run.json").read_text())
    plain = run(elf, board, profile=True)
    assert _measured(debugged) == _measured(json.loads(json.dumps(plain.to_dict())))


def test_gdb_sees_a_fault_and_the_exit_code(firmware_build, tmp_path):
    """Cortex-Debug's launch for an external server (reset, load, reset), then a debugger sets
    make_fault; the undefined instruction's UsageFault, escalated to HardFault, stops gdb in the
    handler with SIGSEGV and a backtrace through the exception frame; continuing ends the run
    with the handler's exit code, 131."""
    elf = firmware_build / "mcu-s" / "debug-demo.elf"
    server = Server(elf, "mcu-s", tmp_path / "out")
    log = _gdb(elf, server.port, ["monitor reset halt", "load", "monitor reset halt", "break main", "continue",
                                  "set var make_fault = 1", "continue", "bt", "info registers xpsr", "continue"])
    assert "Start address" in log and "Breakpoint 1, main ()" in log, log
    code, _, _ = server.finish()
    assert "Program received signal SIGSEGV" in log and "entered HardFault handler" in log, log
    assert re.search(r"#\d+ +(0x[0-9a-f]+ in )?undefined_instruction \(\)", log), log
    assert "<signal handler called>" in log
    assert re.search(r"xpsr +0x[0-9a-f]*0003 ", log), log  # IPSR 3: HardFault
    assert "exited with code 0203" in log and code == 131


class Raw:
    """A hand-made gdb: packets over a socket, for what gdb itself never sends."""

    def __init__(self, port):
        self.sock = socket.create_connection(("127.0.0.1", port), timeout=60)
        self.acks = True

    def send_raw(self, data: bytes) -> None:
        self.sock.sendall(data)

    def receive(self) -> str:
        data = b""
        while True:
            data += self.sock.recv(1)
            if data in (b"+", b"-"):
                data = b""
                continue
            if len(data) >= 3 and data[-3:-2] == b"#":
                body = data[data.index(b"$") + 1:-3]
                if self.acks:
                    self.sock.sendall(b"+")
                if body.startswith(b"O") and body != b"OK":  # console output: the reply follows
                    data = b""
                    continue
                return body.decode("latin-1")

    def receive_console(self) -> str:
        """The hex of the next console ('O') packet."""
        data = b""
        while not (data.startswith(b"$O") and len(data) >= 3 and data[-3:-2] == b"#"):
            data += self.sock.recv(1)
            if data in (b"+", b"-"):
                data = b""
        if self.acks:
            self.sock.sendall(b"+")
        return data[2:-3].decode()

    def ask(self, payload: str) -> str:
        self.sock.sendall(frame(payload.encode("latin-1")))
        return self.receive()


def test_protocol_edges_interrupt_and_kill(firmware_build, tmp_path):
    elf = firmware_build / "mcu-d" / "dhrystone-like.elf"  # (seconds: Ctrl-C must find it running)
    server = Server(elf, "mcu-d", tmp_path / "out")
    gdb = Raw(server.port)
    assert "QStartNoAckMode+" in gdb.ask("qSupported:multiprocess+;swbreak+")
    xml = gdb.ask("qXfer:features:read:target.xml:0,4000")
    assert xml[0] == "l" and "org.gnu.gdb.arm.m-profile" in xml and "org.gnu.gdb.arm.vfp" in xml
    assert all(f'name="{name}"' in xml for name in ("xpsr", "msp", "psp", "primask", "basepri", "faultmask",
                                                     "control", "d15", "fpscr"))
    # a corrupt checksum is refused with '-', then the same packet intact is answered
    gdb.send_raw(b"$?#00")
    assert gdb.sock.recv(1) == b"-"
    assert gdb.ask("?") == "S05"
    gdb.send_raw(b"garbage before a packet")
    assert gdb.ask("vMustReplyEmpty") == ""
    assert gdb.ask("QStartNoAckMode") == "OK"
    gdb.acks = False
    registers = gdb.ask("g")
    assert len(registers) == 2 * (4 * 23 + 8 * 16 + 4)
    pc = int.from_bytes(bytes.fromhex(gdb.ask("p0f")), "little")
    assert pc & ~1 == Simulator(elf, "mcu-d").registers()["pc"] & ~1
    assert gdb.ask("mzz,4") == "E01"                      # malformed: an error, not a crash
    assert gdb.ask("m0,4") != "" and gdb.ask("mf0000000,4") == "E14"  # vectors; nothing mapped
    assert gdb.ask("Z2,f0000000,4") == "E16"              # watching unmapped memory
    assert gdb.ask("Z2,40011000,4") == "OK" and gdb.ask("z2,40011000,4") == "OK"  # a peripheral register
    assert gdb.ask("qNoSuchPacket") == ""
    # Ctrl-C while it runs: a stop with SIGINT, cycles on
    gdb.send_raw(frame(b"c"))
    time.sleep(0.3)
    gdb.send_raw(b"\x03")
    assert gdb.receive() == "T02"
    gdb.send_raw(frame(b"qRcmd," + b"cycles".hex().encode()))
    text = bytes.fromhex(gdb.receive_console()).decode()
    assert gdb.receive() == "OK"
    gdb.send_raw(frame(b"k"))
    code, _, stderr = server.finish()
    document = json.loads((tmp_path / "out" / "run.json").read_text())
    assert code == 137 and document["exit"]["reason"] == "killed", stderr
    assert text.startswith(f"{document['cycles']:,} cycles, {document['instructions']:,} instructions"), text


def test_extended_mode_runs_again_and_paused_time_is_not_run_time(firmware_build, tmp_path):
    """`target extended-remote`: kill and run start a new run and the session goes on. Time
    paused under gdb does not count against --max-seconds (2 s paused, a 1 s limit)."""
    elf = firmware_build / "mcu-m" / "debug-demo.elf"
    server = Server(elf, "mcu-m", tmp_path / "out", "--max-seconds", "1")
    gdb = Raw(server.port)
    assert gdb.ask("!") == "OK"
    time.sleep(2.0)
    assert gdb.ask("c") == "W00"
    assert gdb.ask("vKill;a410") == "OK"  # the process is gone, the connection stays
    assert gdb.ask("vRun;") == "S05"
    assert gdb.ask("p0f") != "" and gdb.ask("c") == "W00"
    gdb.send_raw(frame(b"D"))
    code, stdout, _ = server.finish()
    assert code == 0 and stdout.count("sum of squares") == 2  # two runs printed; the bundle is the second's


def test_mcusim_interrupted_tells_gdb(firmware_build, tmp_path):
    """SIGINT to mcusim while gdb waits on a running target: gdb gets X02 (ended by SIGINT), and
    mcusim ends as an interrupted run does, exit 130 with its bundle."""
    import signal

    server = Server(firmware_build / "mcu-d" / "dhrystone-like.elf", "mcu-d", tmp_path / "out")
    gdb = Raw(server.port)
    gdb.send_raw(frame(b"c"))
    time.sleep(0.3)  # (the run takes seconds: coremark-like, once used here, came to end within 1 s)
    server.process.send_signal(signal.SIGINT)
    assert gdb.receive() == "X02"
    code, _, _ = server.finish()
    assert code == 130 and json.loads((tmp_path / "out" / "run.json").read_text())["exit"]["reason"] == "interrupted"


def test_gdb_gone_mid_run_lets_the_run_finish(firmware_build, tmp_path):
    """gdb disconnecting while the target runs: the run goes on to its end, as without gdb."""
    elf = firmware_build / "mcu-s" / "debug-demo.elf"
    server = Server(elf, "mcu-s", tmp_path / "out")
    gdb = Raw(server.port)
    gdb.ask("Z0,%x,2" % (Simulator(elf, "mcu-s").image.symbol("main") & ~1))
    gdb.send_raw(frame(b"vCont;c"))
    gdb.sock.close()
    code, stdout, stderr = server.finish()
    assert code == 0 and stdout == "sum of squares 1..10 = 385\n"
    assert "disconnected: the run goes on to its end" in stderr


def test_gdb_address_errors(firmware_build):
    from clirun import run_cli

    elf = firmware_build / "mcu-d" / "debug-demo.elf"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        done = run_cli("run", elf, "--board", "mcu-d", "--gdb", f"127.0.0.1:{taken.getsockname()[1]}")
    assert done.returncode == 2 and "cannot listen on" in done.stderr
    done = run_cli("run", elf, "--board", "mcu-d", "--gdb", "not-a-port")
    assert done.returncode == 2 and "HOST:PORT" in done.stderr
