"""Run control for the Python API (and, later, a GDB server on the same layer): breakpoints by
symbol or address, running until one, stepping instructions, and reading the registers and
memory where the run paused.

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

from .machine.registers import UNICORN_REGISTERS

CORE_REGISTERS = {**{name: UNICORN_REGISTERS[name] for name in [f"r{i}" for i in range(13)] + ["sp", "lr"]},
                  "pc": A.UC_ARM_REG_PC, "xpsr": A.UC_ARM_REG_XPSR,
                  "msp": A.UC_ARM_REG_MSP, "psp": A.UC_ARM_REG_PSP, "primask": A.UC_ARM_REG_PRIMASK,
                  "basepri": A.UC_ARM_REG_BASEPRI, "faultmask": A.UC_ARM_REG_FAULTMASK,
                  "control": A.UC_ARM_REG_CONTROL}
FP_REGISTERS = {**{f"s{i}": getattr(A, f"UC_ARM_REG_S{i}") for i in range(32)}, "fpscr": A.UC_ARM_REG_FPSCR}


@dataclass(frozen=True)
class Stop:
    """Where run_until or step left the run: `reason` is "breakpoint", "step" or "exit" (the
    firmware ended: `exit_code`; run() then gives its result)."""

    reason: str
    pc: int
    symbol: str
    cycles: int
    instructions: int
    exit_code: int | None = None


class RunControl:
    """The run-control half of api.Simulator (it holds `machine` and `image`)."""

    def address_of(self, where: str | int) -> int:
        """An address, or a symbol's (a function's without its Thumb bit); ValueError for a name
        the image lacks."""
        if isinstance(where, int):
            return where & ~1
        address = self.image.symbol(where)
        if address is None:
            raise ValueError(f"{where!r}: no such symbol in {self.image.path}")
        return address & ~1

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

    def _stop(self) -> Stop:
        m = self.machine
        pc = m.uc.reg_read(A.UC_ARM_REG_PC)
        reason = m.paused[0] if m.paused else "exit"
        cycles, instructions = m.state.count_at(pc)  # (before the paused instruction, inside its block)
        return Stop(reason, pc, self.image.symbolize(pc), int(cycles), int(instructions),
                    m.exit.code if m.exit is not None else None)

    def registers(self) -> dict[str, int]:
        """The core registers (r0-r12, sp, lr, pc, xpsr, msp, psp, primask, basepri, faultmask,
        control) and, on a core with an FPU, s0-s31 and fpscr, by name, where the run paused."""
        uc = self.machine.uc
        names = {**CORE_REGISTERS, **(FP_REGISTERS if self.machine.fpu_present else {})}
        return {name: uc.reg_read(register) for name, register in names.items()}

    def read_memory(self, address: int, size: int) -> bytes:
        """`size` bytes of memory (or memory-mapped registers' backing) from `address`;
        ValueError where nothing is mapped."""
        try:
            return self.machine.read_memory(address, size)
        except UcError as exc:
            raise ValueError(f"cannot read {size} bytes at 0x{address:08x}: {exc}") from None

    def write_memory(self, address: int, data: bytes) -> None:
        """Write `data` into RAM at `address` (as a debugger does); code written there is decoded
        again before it runs. ValueError outside the board's RAM."""
        m = self.machine
        if m.debug_span(address, write=True) < len(data):
            raise ValueError(f"0x{address:08x}..0x{address + len(data):08x} is not all RAM: only RAM can be written")
        m.uc.mem_write(address, bytes(data))
        m.uc.ctl_remove_cache(address, address + len(data))
        m.decoder.forget_changed_code()
