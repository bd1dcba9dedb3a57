"""Answers gdb's remote serial protocol on the run-control layer (run_control.py), so a debugged
run is measured exactly as one without gdb: breakpoints and steps pause between instructions
without splitting blocks, watchpoints stop between blocks, and looking at registers or memory
has no side effect (peripheral registers read as stored).

What the session ends with is returned by serve(): "exit" (the firmware ended), "detach" (gdb
detached: the run goes on to its end without it), "disconnect" (gdb went away without a word:
the same), or "kill" (gdb's kill: the run ends where it stands).
"""
from __future__ import annotations

import contextlib
import socket
import threading

import numpy as np

from ..machine import results
from ..power.energy import RunEnergy
from ..run_control import FP_REGISTERS
from . import target
from .packets import INTERRUPT, MAX_PACKET, Connection

SIGINT, SIGTRAP, SIGSEGV = 2, 5, 11
WATCH_KINDS = {"2": "write", "3": "read", "4": "access"}
WATCH_REPLY = {"write": "watch", "read": "rwatch", "access": "awatch"}
POLL_SECONDS = 0.05  # how often a running target looks for gdb's Ctrl-C
MONITOR_HELP = """mcusim monitor commands:
  monitor cycles       cycles, instructions and simulated time at this stop
  monitor energy       energy so far, per rail (boards with a power model)
  monitor profile [N]  the N functions with the most cycles so far (default 10)
  monitor reset        start the run again from reset: a new run, counters at zero
  monitor help         this list
"""


class Session:
    """One gdb connection driving one Simulator."""

    def __init__(self, sim, conn: Connection, log=None):
        self.sim = sim
        self.conn = conn
        self.log = log or (lambda message: None)
        self.regs = target.registers(sim.machine.fpu_present)
        self.xml = target.description(self.regs).encode()
        self.hardware_breakpoints: set[int] = set()
        self.last_stop = f"S{SIGTRAP:02x}"
        self.ended = False  # the firmware has ended (a W packet was sent)
        self.outcome: str | None = None

    # the loop -------------------------------------------------------------------------------
    def serve(self) -> str:
        while self.outcome is None:
            packet = self.conn.read()
            if packet is None:
                return "exit" if self.ended else "disconnect"
            if packet == INTERRUPT:  # (already stopped)
                self.conn.send(self.last_stop)
                continue
            try:
                reply = self.answer(packet.decode("latin-1"))
            except (ValueError, IndexError) as exc:  # a malformed packet: an error reply, never a crash
                self.log(f"malformed packet {packet[:60]!r}: {exc}")
                reply = "E01"
            if reply is not None:
                self.conn.send(reply)
        return self.outcome

    def answer(self, packet: str) -> str | None:
        if not packet:
            return ""
        head = packet[:1]
        if packet.startswith("qSupported"):
            return (f"PacketSize={MAX_PACKET:x};qXfer:features:read+;QStartNoAckMode+;swbreak+;hwbreak+;"
                    f"vContSupported+")
        if packet == "QStartNoAckMode":
            self.conn.send("OK")
            self.conn.acks = False
            return None
        if packet.startswith("qXfer:features:read:target.xml:"):
            offset, length = (int(x, 16) for x in packet.rsplit(":", 1)[1].split(","))
            chunk = self.xml[offset:offset + length]
            return ("l" if offset + length >= len(self.xml) else "m") + chunk.decode()
        if packet.startswith("qRcmd,"):
            return self.monitor(bytes.fromhex(packet[6:]).decode(errors="replace"))
        simple = {"?": self.last_stop, "qAttached": "1", "qC": "QC1", "qfThreadInfo": "m1", "qsThreadInfo": "l",
                  "!": "OK", "vCont?": "vCont;c;C;s;S;t", "qSymbol::": "OK"}
        if packet in simple:
            return simple[packet]
        if head == "H" or packet.startswith("T"):
            return "OK"
        if head == "g":
            return "".join(target.encode(target.read(self.sim.machine.uc, reg), reg) for reg in self.regs)
        if head == "G":
            return self.write_all_registers(packet[1:])
        if head == "p":
            number = int(packet[1:], 16)
            if number >= len(self.regs):
                return "E00"
            reg = self.regs[number]
            return target.encode(target.read(self.sim.machine.uc, reg), reg)
        if head == "P":
            number, value = packet[1:].split("=")
            number = int(number, 16)
            if number >= len(self.regs):
                return "E00"
            reg = self.regs[number]
            if target.decode(value, reg) != target.read(self.sim.machine.uc, reg):  # (only a change: gdb's
                self.write_register(reg, target.decode(value, reg))              # `load` sets the PC it has)
            return "OK"
        if head == "m":
            address, length = (int(x, 16) for x in packet[1:].split(","))
            try:
                return self.sim.read_memory(address, min(length, MAX_PACKET // 2)).hex()
            except ValueError:
                return "E14"  # (EFAULT)
        if head in "MX":
            where, data = packet[1:].split(":", 1)
            address, length = (int(x, 16) for x in where.split(","))
            data = bytes.fromhex(data) if head == "M" else data.encode("latin-1")
            return self.write_memory(address, data[:length])
        if head in "Zz":
            return self.point(head == "Z", packet[1], packet[3:])
        if head in "cCsS":
            return self.resume(step=head in "sS", address=self._resume_address(packet))
        if packet.startswith("vCont;"):
            actions = [action.split(":")[0] for action in packet[6:].split(";")]
            if actions and all(action == "t" for action in actions):
                return "OK"
            return self.resume(step=any(action[:1] in "sS" for action in actions))
        if head == "D":
            self.outcome = "detach"
            return "OK"
        if head == "k" or packet.startswith("vKill"):
            self.outcome = "kill"
            return "OK" if packet.startswith("vKill") else None
        return ""  # not supported: the empty reply

    # execution --------------------------------------------------------------------------------
    @staticmethod
    def _resume_address(packet: str) -> int | None:
        """c[ADDR], s[ADDR], Csig[;ADDR], Ssig[;ADDR]: where to resume, if given."""
        rest = packet[1:].partition(";")[2] if packet[0] in "CS" else packet[1:]
        return int(rest, 16) if rest else None

    def resume(self, step: bool, address: int | None = None) -> str | None:
        if self.ended:
            return self.last_stop
        if address is not None:
            self.sim.set_register("pc", address)
        done = threading.Event()
        gone = threading.Event()
        watcher = threading.Thread(target=self._watch_for_interrupt, args=(done, gone), daemon=True,
                                   name="mcusim-gdb-interrupt")
        watcher.start()
        try:
            stop = self.sim.step(1) if step else self.sim.run_until()
        finally:
            done.set()
            watcher.join()
        if gone.is_set():
            self.outcome = "disconnect"
            return None
        self.last_stop = self.stop_reply(stop)
        if stop.reason in ("fault", "watchpoint") or stop.reason == "exit":
            self.console(self.sim.describe(stop))
        return self.last_stop

    def _watch_for_interrupt(self, done: threading.Event, gone: threading.Event) -> None:
        while not done.is_set():
            got = self.conn.poll_interrupt(POLL_SECONDS)
            if got is None:  # gdb went away: pause, and the session ends
                gone.set()
                self.sim.pause_soon()
                return
            if got:
                self.sim.pause_soon()

    def stop_reply(self, stop) -> str:
        if stop.reason == "exit":
            self.ended = True
            return f"W{stop.exit_code & 0xFF:02x}"
        signal = {"interrupt": SIGINT, "fault": SIGSEGV}.get(stop.reason, SIGTRAP)
        extra = ""
        if stop.reason == "breakpoint":
            extra = "hwbreak:;" if stop.pc in self.hardware_breakpoints else "swbreak:;"
        elif stop.reason == "watchpoint" and stop.watch is not None:
            extra = f"{WATCH_REPLY[stop.watch.kind]}:{stop.watch.watched:x};"
        return f"T{signal:02x}{extra}"

    def point(self, insert: bool, kind: str, rest: str) -> str:
        """Z/z: breakpoints (0 software, 1 hardware: both are run control's, no code is patched)
        and watchpoints (2 write, 3 read, 4 access)."""
        fields = rest.split(";")[0].split(",")
        address, length = int(fields[0], 16), int(fields[1], 16)
        try:
            if kind in "01":
                if insert:
                    self.sim.add_breakpoint(address)
                    if kind == "1":
                        self.hardware_breakpoints.add(address & ~1)
                else:
                    self.sim.remove_breakpoint(address)
                    self.hardware_breakpoints.discard(address & ~1)
                return "OK"
            if kind in WATCH_KINDS:
                if insert:
                    self.sim.add_watchpoint(address, length, WATCH_KINDS[kind])
                else:
                    self.sim.remove_watchpoint(address, length, WATCH_KINDS[kind])
                return "OK"
        except ValueError as exc:
            self.console(f"mcusim: {exc}")
            self.log(str(exc))
            return "E16"  # (EINVAL)
        return ""

    # registers and memory -------------------------------------------------------------------------
    def write_register(self, reg: target.Register, value: int) -> None:
        if reg.feature == target.VFP and reg.name != "fpscr":  # d<n>: its two single-precision halves
            n = int(reg.name[1:])
            self.sim.set_register(f"s{2 * n}", value & 0xFFFFFFFF)
            self.sim.set_register(f"s{2 * n + 1}", value >> 32)
        elif reg.name == "fpscr" or reg.name in FP_REGISTERS or reg.feature != target.VFP:
            self.sim.set_register(reg.name, value)

    def write_all_registers(self, text: str) -> str:
        at = 0
        for reg in self.regs:
            chunk = text[at:at + 2 * reg.size]
            if len(chunk) < 2 * reg.size:
                break
            if target.decode(chunk, reg) != target.read(self.sim.machine.uc, reg):  # (only what gdb changed)
                self.write_register(reg, target.decode(chunk, reg))
            at += 2 * reg.size
        return "OK"

    def write_memory(self, address: int, data: bytes) -> str:
        """RAM is written; elsewhere only what is already there (gdb's `load` of the image that
        runs), since flash takes no plain stores and a peripheral write would act on the model."""
        if not data:
            return "OK"
        try:
            if self.sim.read_memory(address, len(data)) == data:
                return "OK"
            self.sim.write_memory(address, data)
        except ValueError as exc:
            self.console(f"mcusim: {exc}")
            return "E0e"
        return "OK"

    # monitor commands ----------------------------------------------------------------------------
    def console(self, text: str) -> None:
        """Text for gdb's console ('O' packets, in pieces a packet holds)."""
        data = (text.rstrip("\n") + "\n").encode()
        for start in range(0, len(data), MAX_PACKET // 4):
            self.conn.send("O" + data[start:start + MAX_PACKET // 4].hex())

    def monitor(self, command: str) -> str:
        words = command.split()
        name = words[0] if words else "help"
        m = self.sim.machine
        if name == "cycles":
            cycles, instructions = m.state.count_at(m.uc.reg_read(target.A.UC_ARM_REG_PC))
            seconds = m.simulated_seconds_at(int(cycles))
            self.console(f"{int(cycles):,} cycles, {int(instructions):,} instructions, {seconds * 1e6:,.3f} us "
                         f"simulated at {m.clock_hz / 1e6:g} MHz")
        elif name == "energy":
            self.console(self._energy_text())
        elif name == "profile":
            self.console(self._profile_text(int(words[1]) if len(words) > 1 and words[1].isdigit() else 10))
        elif name == "reset":  # ("reset halt", "reset init": the run always stops at reset)
            self.sim.reset()
            self.ended = False
            self.last_stop = f"S{SIGTRAP:02x}"
            self.console("reset: a new run from the reset vector, counters at zero (gdb: `flushregs` if it "
                         "shows old registers)")
        elif name in ("halt", "init"):
            self.console("halted")
        elif name == "help":
            self.console(MONITOR_HELP)
        else:
            self.console(f"unknown monitor command {name!r}\n{MONITOR_HELP}")
        return "OK"

    def _energy_text(self) -> str:
        m = self.sim.machine
        if m.power is None:
            return "no energy: this board has no power model (or the run is untimed)"
        with _unchanged(m.state.buffer):
            totals = RunEnergy(m.power, m.cycles, m.simulated_seconds()).totals()
        lines = [f"energy so far: {sum(totals.values()) * 1e6:,.3f} uJ over {m.simulated_seconds() * 1e6:,.3f} us"]
        lines += [f"  {rail:<10} {joules * 1e6:,.3f} uJ" for rail, joules in totals.items()]
        return "\n".join(lines)

    def _profile_text(self, count: int) -> str:
        m = self.sim.machine
        if m.profile is None:
            return "no profile: this run does not keep one"
        with _unchanged(m.state.buffer):
            rows = results.function_profile(m)
        rows = sorted(rows, key=lambda row: -row["exclusive_cycles"])[:count]
        lines = [f"{'cycles':>14} {'share':>7} {'calls':>8}  function"]
        lines += [f"{row['exclusive_cycles']:>14,} {row['share']:>7.1%} {row['calls']:>8,}  {row['function']}"
                  for row in rows]
        return "\n".join(lines)


@contextlib.contextmanager
def _unchanged(buffer: np.ndarray):
    """Whatever a report computes from the native state (a power snapshot, an unpacked count)
    is undone, so asking mid-run changes nothing the run goes on to measure."""
    kept = buffer.copy()
    try:
        yield
    finally:
        buffer[:] = kept


def parse_address(text: str) -> tuple[str, int]:
    """`--gdb [HOST:]PORT` → (host, port); loopback unless a host is given."""
    host, _, port = text.rpartition(":")
    if not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{text!r}: give PORT or HOST:PORT, PORT from 0 to 65535")
    return (host.strip("[]") or "127.0.0.1"), int(port)


def listen(host: str, port: int) -> socket.socket:
    """A listening socket; OSError when the port is taken or the host is not this machine's."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    listener = socket.socket(family, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
        listener.listen(1)
    except OSError:
        listener.close()
        raise
    return listener


def accept(listener: socket.socket, give_up) -> socket.socket | None:
    """Wait for gdb; None when `give_up()` turns true first (an interrupt, the time limit)."""
    listener.settimeout(0.1)
    while not give_up():
        try:
            sock, _ = listener.accept()
        except socket.timeout:
            continue
        sock.settimeout(None)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    return None
