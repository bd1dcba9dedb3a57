"""Answers gdb's remote serial protocol on the run-control layer (run_control.py), so a debugged
run is measured exactly as one without gdb: breakpoints and steps pause between instructions
without splitting blocks, watchpoints stop between blocks, and looking at registers or memory
has no side effect (peripheral registers read as the firmware would, without read side effects).

What the session ends with is returned by serve(): "exit" (the firmware ended), "detach" (gdb
detached: the run goes on to its end without it), "disconnect" (gdb went away without a word:
the same), or "kill" (gdb's kill: the run ends where it stands).
"""
from __future__ import annotations

import contextlib
import os
import select
import socket
import threading

from ..machine import results
from ..power.energy import RunEnergy
from ..run_control import FP_REGISTERS
from . import target
from .packets import INTERRUPT, MAX_PACKET, Connection

SIGINT, SIGTRAP, SIGSEGV = 2, 5, 11
WATCH_KINDS = {"2": "write", "3": "read", "4": "access"}
WATCH_REPLY = {"write": "watch", "read": "rwatch", "access": "awatch"}
MONITOR_HELP = """mcusim monitor commands:
  monitor cycles       cycles, instructions and simulated time at this stop
  monitor energy       energy so far, per rail (boards with a power model)
  monitor profile [N]  the N functions with the most cycles so far (default 10)
  monitor reset        start the run again from reset: a new run, counters at zero
  monitor catch-faults [on|off]  stop as a fault handler is entered (on by default)
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
        self.extended = False  # extended mode ("!"): kill and run start the run again, the session goes on
        self.outcome: str | None = None

    # the loop -------------------------------------------------------------------------------
    def serve(self) -> str:
        while self.outcome is None:
            packet = self.conn.read()
            if packet is None and self.sim.machine.interrupted() and not self.conn.closed:
                self.conn.send(self._ended_by_signal())  # (mcusim itself was asked to stop: gdb hears so)
                return "interrupted"
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
                  "vCont?": "vCont;c;C;s;S;t", "qSymbol::": "OK"}
        if packet in simple:
            return simple[packet]
        if packet == "!":
            self.extended = True
            return "OK"
        if packet.startswith("vRun"):  # (extended mode's `run`: the run from reset)
            self.restart()
            return self.last_stop
        if head == "H" or packet.startswith("T"):
            return "OK"
        if head == "g":
            return "".join(target.encode(target.read(self.sim.machine.uc, reg), reg) for reg in self.regs)
        if head == "G":
            return self.write_all_registers(packet[1:])
        if head == "p":
            number = _hex(packet[1:])
            if number >= len(self.regs):
                return "E00"
            reg = self.regs[number]
            return target.encode(target.read(self.sim.machine.uc, reg), reg)
        if head == "P":
            number, value = packet[1:].split("=")
            number = _hex(number)
            if number >= len(self.regs):
                return "E00"
            reg = self.regs[number]
            if len(value) != 2 * reg.size:
                return "E01"
            if target.decode(value, reg) != target.read(self.sim.machine.uc, reg):  # (only a change: gdb's
                self.write_register(reg, target.decode(value, reg))              # `load` sets the PC it has)
            return "OK"
        if head == "m":
            address, length = (_hex(x) for x in packet[1:].split(","))
            try:  # (as much as can be read: gdb asks again from where the reply stopped)
                return self.sim.machine.debug_read(address, min(length, MAX_PACKET // 2), partial=True).hex()
            except ValueError:
                return "E14"  # (EFAULT)
        if head in "MX":
            where, data = packet[1:].split(":", 1)
            address, length = (_hex(x) for x in where.split(","))
            data = bytes.fromhex(data) if head == "M" else data.encode("latin-1")
            if len(data) != length:
                return "E01"
            return self.write_memory(address, data)
        if head in "Zz":
            return self.point(head == "Z", packet[1], packet[3:])
        if head in "cCsS":
            return self.resume(step=head in "sS", address=self._resume_address(packet))
        if packet.startswith("vCont;"):
            actions = [action.split(":")[0] for action in packet[6:].split(";")]
            if not all(action in ("c", "s", "t") or (action[:1] in "CS" and len(action) == 3) for action in actions):
                return "E01"
            if all(action == "t" for action in actions):
                return "OK"
            return self.resume(step=any(action[:1] in "sS" for action in actions))
        if head == "D":
            self.outcome = "detach"
            return "OK"
        if head == "k" or packet.startswith("vKill"):
            if self.extended:  # the process is killed, the connection stays: a new run waits
                self.restart()
                return "OK" if packet.startswith("vKill") else None
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
        if step:  # (one instruction: over at once, nothing to watch for)
            stop = self.sim.step(1)
        else:
            stop = self._continue()
            if stop is None:
                self.outcome = "disconnect"
                return None
        if stop.reason == "exit" and self.sim.machine.interrupted():
            self.last_stop = self._ended_by_signal()
            return self.last_stop
        self.last_stop = self.stop_reply(stop)
        if stop.reason in ("fault", "watchpoint", "exit"):
            self.console(self.sim.describe(stop))
        return self.last_stop

    def _continue(self):
        """run_until() while a thread listens for gdb's Ctrl-C (a pause at the next block
        boundary) and for gdb going away (the same, and None)."""
        wake_read, wake_write = os.pipe()
        gone = threading.Event()

        def listen():
            while True:
                got = self.conn.poll_interrupt(wake_read)
                if got is None:  # gdb went away: pause, and the session ends
                    gone.set()
                    self.sim.pause_soon()
                    return
                if got:
                    self.sim.pause_soon()
                elif select.select([wake_read], [], [], 0)[0]:
                    return

        watcher = threading.Thread(target=listen, daemon=True, name="mcusim-gdb-interrupt")
        watcher.start()
        try:
            stop = self.sim.run_until()
        finally:
            os.write(wake_write, b"x")
            watcher.join()
            os.close(wake_read)
            os.close(wake_write)
            self.sim.machine.cancel_pause()  # (a Ctrl-C that came as the run stopped anyway)
        return None if gone.is_set() else stop

    def _ended_by_signal(self) -> str:
        """X: the run was ended by a signal to mcusim (SIGINT, SIGTERM)."""
        self.ended = True
        return f"X{(self.sim.machine.interrupting_signal() or SIGINT) & 0xFF:02x}"

    def restart(self) -> None:
        """A new run from reset (monitor reset, extended mode's kill and run)."""
        self.sim.reset()
        self.ended = False
        self.last_stop = f"S{SIGTRAP:02x}"

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
        address, length = _hex(fields[0]), _hex(fields[1])
        if kind in "01" and length not in (2, 3, 4):  # (a Thumb breakpoint's kind: its size)
            return "E01"
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
        except ValueError as exc:  # (no console packet here: gdb takes only a reply to Z)
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
        if len(text) % 2 or any(c not in "0123456789abcdefABCDEF" for c in text) or len(text) < 2 * 17 * 4:
            return "E01"  # (r0-r12, sp, lr, pc and xpsr at least, in hex)
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
        except ValueError as exc:  # (no console packet here: gdb takes only a reply to M and X)
            self.log(str(exc))
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
        elif name == "reset":  # ("reset halt", "reset init"; "reset run" too: gdb resumes it with continue)
            self.restart()
            self.console("reset: a new run, stopped at the reset vector, counters at zero (gdb: `maintenance flush "
                         "register-cache` if it shows old registers)"
                         + ("; `continue` runs it" if words[1:2] == ["run"] else ""))
        elif name == "catch-faults":
            if words[1:2] in (["on"], ["off"]):
                self.sim.catch_faults = words[1] == "on"
            self.console(f"stopping at fault handlers: {'on' if self.sim.catch_faults else 'off'}")
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
        cycles = int(m.state.count_at(m.uc.reg_read(target.A.UC_ARM_REG_PC))[0])  # (at the stop, as `cycles`)
        seconds = m.simulated_seconds_at(cycles)
        with _unchanged(m.state):
            totals = RunEnergy(m.power, cycles, seconds).totals()
        lines = [f"energy so far: {sum(totals.values()) * 1e6:,.3f} uJ over {seconds * 1e6:,.3f} us"]
        lines += [f"  {rail:<12} {joules * 1e6:,.3f} uJ" for rail, joules in totals.items()]
        return "\n".join(lines)

    def _profile_text(self, count: int) -> str:
        m = self.sim.machine
        if m.profile is None:
            return "no profile: this run does not keep one"
        with _unchanged(m.state):
            rows = results.function_profile(m)
        rows = sorted(rows, key=lambda row: -row["exclusive_cycles"])[:count]
        lines = [f"{'cycles':>14} {'share':>7} {'calls':>8}  function"]
        lines += [f"{row['exclusive_cycles']:>14,} {row['share']:>7.1%} {row['calls']:>8,}  {row['function']}"
                  for row in rows]
        return "\n".join(lines)


def _hex(text: str) -> int:
    """A protocol number: hexadecimal digits only (no sign, no spaces); ValueError otherwise."""
    if not text or any(c not in "0123456789abcdefABCDEF" for c in text):
        raise ValueError(f"not a hex number: {text!r}")
    return int(text, 16)


@contextlib.contextmanager
def _unchanged(state):
    """Whatever a report computes from the native state (a power snapshot, an unpacked count)
    is undone, so asking mid-run changes nothing the run goes on to measure (the slots in use:
    the rest of the buffer is room never written)."""
    used = state.buffer[: state.next_free]
    kept = used.copy()
    try:
        yield
    finally:
        used[:] = kept


def parse_address(text: str) -> tuple[str, int]:
    """`--gdb [HOST:]PORT` → (host, port); loopback unless a host is given."""
    host, _, port = text.rpartition(":")
    if not (port.isascii() and port.isdigit()) or not 0 <= int(port) <= 65535:
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
