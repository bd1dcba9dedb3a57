"""Run control, shared by the Python API and the GDB server (gdb/): breakpoints by symbol or
address, data watchpoints, a vector catch on faults, running until one, stepping instructions,
and reading and writing the registers and memory where the run paused.

Stopping never changes what is measured. The native hook charges a translated block whole when
it begins; a breakpoint (a Python code hook on its instruction) or the end of a step (Unicorn's
instruction count) stops Unicorn inside that block, before the instruction, without splitting
it; and when the run goes on, the rest of the block runs "paid" (the hook's PAID_FROM: it charges
nothing for it). So the cycles, energy, counters and output of a run paused and stepped anywhere
equal those of a run straight through (tests/integration/test_run_control.py), and a pause shows
the exact cycle count at the paused instruction.
"""
from __future__ import annotations

from dataclasses import dataclass

from unicorn import UcError
from unicorn import arm_const as A

from .machine import native as N
from .machine.exceptions import exception_name
from .machine.machine import ExitStatus
from .machine.registers import UNICORN_REGISTERS
from .machine.watchpoints import Hit

CORE_REGISTERS = {**{name: UNICORN_REGISTERS[name] for name in [f"r{i}" for i in range(13)] + ["sp", "lr"]},
                  "pc": A.UC_ARM_REG_PC, "xpsr": A.UC_ARM_REG_XPSR,
                  "msp": A.UC_ARM_REG_MSP, "psp": A.UC_ARM_REG_PSP, "primask": A.UC_ARM_REG_PRIMASK,
                  "basepri": A.UC_ARM_REG_BASEPRI, "faultmask": A.UC_ARM_REG_FAULTMASK,
                  "control": A.UC_ARM_REG_CONTROL}
EXIT_KILLED = 137  # 128 + SIGKILL
EVENT_KINDS = ("region_begin", "region_end", "exception_entry", "exception_return", "itm")
FP_REGISTERS = {**{f"s{i}": getattr(A, f"UC_ARM_REG_S{i}") for i in range(32)}, "fpscr": A.UC_ARM_REG_FPSCR}


@dataclass(frozen=True)
class _Listener:
    """A callback for one kind of event (Machine.listeners gets every event)."""

    kind: str
    callback: object

    def __call__(self, event) -> bool:
        return event.kind == self.kind and bool(self.callback(event))


@dataclass(frozen=True)
class Stop:
    """Where run_until or step left the run: `reason` is "breakpoint", "step", "watchpoint"
    (`watch` says which access), "fault" (catch_faults: before the first instruction of the
    fault handler `exception`), "interrupt" (pause_soon), "event" (a callback of on() returned
    True) or "exit" (the run ended: `exit_code`; run() then gives its result; `watch` is a watched
    access made in the last block, before the stop it asked for could come, if there was one)."""

    reason: str
    pc: int
    symbol: str
    cycles: int
    instructions: int
    exit_code: int | None = None
    watch: Hit | None = None
    exception: int | None = None


class RunControl:
    """The run-control half of api.Simulator (it holds `machine` and `image`)."""

    def address_of(self, where: str | int, code: bool = True) -> int:
        """An address, or a symbol's (for `code`, without the Thumb bit); ValueError for a name
        the image lacks."""
        if isinstance(where, int):
            return where & ~1 if code else where
        address = self.image.symbol(where)
        if address is None:
            raise ValueError(f"{where!r}: no such symbol in {self.image.path}")
        return address & ~1 if code else address

    def add_breakpoint(self, where: str | int) -> int:
        """Pause before the instruction at `where` (a symbol or an address) whenever it runs; returns its address."""
        address = self.address_of(where)
        self.machine.set_breakpoints(self.machine.breakpoints | {address})
        return address

    def remove_breakpoint(self, where: str | int) -> None:
        self.machine.set_breakpoints(self.machine.breakpoints - {self.address_of(where)})

    @property
    def breakpoints(self) -> list[int]:
        return sorted(self.machine.breakpoints)

    def run_until(self, where: str | int | None = None) -> Stop:
        """Run to `where` (a symbol or address: a breakpoint only for this call), or to the next
        breakpoint, or to the end of the run (reason "exit"; run() then collects the result)."""
        m = self.machine
        kept = set(m.breakpoints)
        if where is not None:
            m.set_breakpoints(kept | {self.address_of(where)})
        try:
            m.run()
        finally:
            if where is not None:
                m.set_breakpoints(kept)
        return self._stop()

    def step(self, count: int = 1) -> Stop:
        """Run `count` instructions (fewer when a breakpoint or the end of the run comes first;
        an exception taken on the way is entered, its handler's instructions counting). An IT
        block runs whole with its IT instruction (Unicorn counts them as one), so a step never
        ends inside it; a semihosting call right after the last instruction is served too."""
        if count < 1:
            raise ValueError("step count must be at least 1")
        m = self.machine
        m.steps_left = count
        try:
            m.run()
        finally:
            m.steps_left = None
        return self._stop()

    def add_watchpoint(self, where: str | int, size: int | None = None, kind: str = "write") -> int:
        """Pause after an instruction that accesses [where, where + size) (kind "write", "read"
        or "access"; a symbol's size by default, else 4 bytes), at the latest at the end of its
        block (machine/watchpoints.py); RAM and peripheral registers alike. Returns the address."""
        address, size = self._watched(where, size)
        self.machine.watchpoints.add(address, size, kind)
        return address

    def remove_watchpoint(self, where: str | int, size: int | None = None, kind: str = "write") -> bool:
        return self.machine.watchpoints.remove(*self._watched(where, size), kind)

    def _watched(self, where: str | int, size: int | None) -> tuple[int, int]:
        """The range a watchpoint covers: `size` bytes, else a symbol's size, else 4."""
        if size is None:
            size = (self.image.symbol_size(where) if isinstance(where, str) else 0) or 4
        return self.address_of(where, code=False), size

    @property
    def watchpoints(self) -> list[tuple[int, int, str]]:
        """(address, size, kind) of each watchpoint."""
        return sorted(self.machine.watchpoints.hooks)

    @property
    def catch_faults(self) -> bool:
        """Pause (reason "fault") as a HardFault, MemManage, BusFault or UsageFault handler is
        entered, as a debug probe's vector catch does: the exception frame is on the stack."""
        return self.machine.catch_faults

    @catch_faults.setter
    def catch_faults(self, on: bool) -> None:
        self.machine.catch_faults = bool(on)

    def end(self, reason: str = "killed", detail: str = "ended by the debugger") -> None:
        """End the run where it paused (a debugger's kill): run() then gives what was measured up
        to here, with exit reason `reason` and exit code 137 (128 + SIGKILL, as a shell reports it)."""
        m = self.machine
        if m.exit is None:
            pc = m.uc.reg_read(A.UC_ARM_REG_PC)
            if m.state[N.PAID_FROM] == pc & ~1:  # paused inside a block: the rest of it never runs
                m.state[N.PAID_FROM] = -1
                m.state.settle_at(pc & ~1)
            m.exit = ExitStatus(reason, EXIT_KILLED, f"{detail} at cycle {int(m.cycles):,}")

    def on(self, kind: str, callback) -> None:
        """Call `callback(event)` (machine.Event: cycles, seconds, name, number, data) at each
        event of `kind`: "region_begin", "region_end" (the firmware's region markers),
        "exception_entry", "exception_return" or "itm" (a write to a stimulus port other than
        the markers'). A callback returning True pauses the run at the next block boundary (Stop
        reason "event"). Callbacks only look: the run measures the same with them."""
        if kind not in EVENT_KINDS:
            raise ValueError(f"event {kind!r}: use one of {', '.join(EVENT_KINDS)}")
        self.machine.listeners.append(_Listener(kind, callback))

    def off(self, kind: str, callback) -> None:
        """Stop calling `callback` at `kind` events."""
        self.machine.listeners[:] = [entry for entry in self.machine.listeners
                                     if (entry.kind, entry.callback) != (kind, callback)]

    def pause_soon(self) -> None:
        """Make a running run_until() return at the next block boundary (reason "interrupt");
        safe from another thread (gdb's Ctrl-C)."""
        self.machine.request_pause("interrupt")

    def _stop(self) -> Stop:
        m = self.machine
        pc = m.uc.reg_read(A.UC_ARM_REG_PC)
        reason = m.paused[0] if m.paused else "exit"
        cycles, instructions = m.state.count_at(pc)  # (before the paused instruction, inside its block)
        ipsr = m.uc.reg_read(A.UC_ARM_REG_XPSR) & 0x1FF
        return Stop(reason, pc, self.image.symbolize(pc), int(cycles), int(instructions),
                    m.exit.code if m.exit is not None else None,
                    m.watchpoints.hit if reason in ("watchpoint", "exit") else None,
                    ipsr if reason == "fault" else None)

    def describe(self, stop: Stop) -> str:
        """One line saying where and why the run stopped."""
        access = stop.watch and (f"{'wrote' if stop.watch.is_write else 'read'} 0x{stop.watch.address:08x} "
                                 f"(watching 0x{stop.watch.watched:08x})")
        if stop.reason == "exit":
            first = f"; a watchpoint was hit just before: {access}" if access else ""
            return f"the firmware ended ({self.machine.exit.detail}), exit code {stop.exit_code}{first}"
        why = {"fault": f"entered {exception_name(stop.exception or 0)} handler",
               "watchpoint": access and f"{access}, then stopped at the end of that block"}
        return (f"{why.get(stop.reason) or stop.reason}: at 0x{stop.pc:08x} {stop.symbol}, cycle {stop.cycles:,}, "
                f"instruction {stop.instructions:,}")

    def registers(self) -> dict[str, int]:
        """The core registers (r0-r12, sp, lr, pc, xpsr, msp, psp, primask, basepri, faultmask,
        control) and, on a core with an FPU, s0-s31 and fpscr, by name, where the run paused."""
        uc = self.machine.uc
        names = {**CORE_REGISTERS, **(FP_REGISTERS if self.machine.fpu_present else {})}
        return {name: uc.reg_read(register) for name, register in names.items()}

    def read_memory(self, address: int, size: int) -> bytes:
        """`size` bytes of memory from `address`; peripheral registers as the firmware would read
        them, without read side effects (Machine.debug_read). ValueError where nothing is mapped."""
        try:
            return self.machine.debug_read(address, size)
        except (UcError, ValueError) as exc:
            raise ValueError(f"cannot read {size} bytes at 0x{address:08x}: {exc}") from None

    def set_register(self, name: str, value: int) -> None:
        """Write a register by its registers() name, as a debugger does (it changes the run from
        here on). A new PC ends what was left of the paused block: code from there is charged."""
        names = {**CORE_REGISTERS, **(FP_REGISTERS if self.machine.fpu_present else {})}
        if name not in names:
            raise ValueError(f"no register {name!r}: use one of {', '.join(names)}")
        m = self.machine
        if name == "pc":
            value |= 1  # (Thumb state: an M-profile core has no other)
            m.state[N.PAID_FROM] = -1
            m.state.settle_at(value & ~1)
        m.uc.reg_write(names[name], value & 0xFFFFFFFF)

    def write_memory(self, address: int, data: bytes) -> None:
        """Write `data` into RAM at `address` (as a debugger does); code written there is decoded
        again before it runs. ValueError outside the board's RAM."""
        m = self.machine
        if m.debug_span(address, write=True) < len(data):
            raise ValueError(f"0x{address:08x}..0x{address + len(data):08x} is not all RAM: only RAM can be written")
        m.uc.mem_write(address, bytes(data))
        m.uc.ctl_remove_cache(address, address + len(data))
        m.decoder.forget_changed_code()
