"""M-profile exception model: NVIC state, priorities, stacking, EXC_RETURN and tail-chaining.

Unicorn does not vector M-profile exceptions, so entry and return are done here, between
emulation runs, on the registers and memory Unicorn holds (ARMv7-M ARM, B1.5 "Exception model").
"""
from __future__ import annotations

from dataclasses import dataclass

from unicorn import UcError
from unicorn import arm_const as A

RESET, NMI, HARDFAULT, MEMMANAGE, BUSFAULT, USAGEFAULT = 1, 2, 3, 4, 5, 6
SVCALL, DEBUGMONITOR, PENDSV, SYSTICK = 11, 12, 14, 15
FIRST_IRQ = 16
FPCCR_ASPEN, FPCCR_LSPEN = 1 << 31, 1 << 30  # ARMv7-M ARM B3.2.20

NAMES = {NMI: "NMI", HARDFAULT: "HardFault", MEMMANAGE: "MemManage", BUSFAULT: "BusFault",
         USAGEFAULT: "UsageFault", SVCALL: "SVCall", DEBUGMONITOR: "DebugMonitor", PENDSV: "PendSV",
         SYSTICK: "SysTick"}

# CFSR bits (ARMv7-M ARM B3.2.15).
IACCVIOL, DACCVIOL, MMARVALID = 1 << 0, 1 << 1, 1 << 7
IBUSERR, PRECISERR, STKERR, BFARVALID = 1 << 8, 1 << 9, 1 << 12, 1 << 15
UNDEFINSTR, INVSTATE, INVPC, NOCP, UNALIGNED, DIVBYZERO = (1 << 16, 1 << 17, 1 << 18, 1 << 19,
                                                          1 << 24, 1 << 25)
# HFSR bits (B3.2.16).
HFSR_VECTTBL, HFSR_FORCED = 1 << 1, 1 << 30
# SHCSR enable bits (B3.2.13).
SHCSR_MEMFAULTENA, SHCSR_BUSFAULTENA, SHCSR_USGFAULTENA = 1 << 16, 1 << 17, 1 << 18

_BASIC_FRAME = [A.UC_ARM_REG_R0, A.UC_ARM_REG_R1, A.UC_ARM_REG_R2, A.UC_ARM_REG_R3,
                A.UC_ARM_REG_R12, A.UC_ARM_REG_LR]
_FP_REGS = [getattr(A, f"UC_ARM_REG_S{i}") for i in range(16)]


def exception_name(number: int) -> str:
    return NAMES.get(number, f"IRQ{number - FIRST_IRQ}" if number >= FIRST_IRQ else f"exception {number}")


class Lockup(Exception):
    """The core locked up (a fault at priority -1 or below, or unusable vector/stack)."""


@dataclass
class FaultInfo:
    exception: int
    status_bit: int
    pc: int
    address: int | None
    description: str


class ExceptionUnit:
    def __init__(self, machine, irq_count: int, priority_bits: int):
        self.machine = machine
        self.uc = machine.uc
        self.count = FIRST_IRQ + irq_count
        self.priority_bits = priority_bits
        self.priority_mask = (0xFF << (8 - priority_bits)) & 0xFF
        self.reset()

    def reset(self) -> None:
        self.pending = [False] * self.count
        self.enabled = [False] * self.count  # IRQs: ISER; system exceptions always "enabled" here
        self.priority = [0] * self.count      # raw 8-bit priority registers (masked)
        self.active: list[int] = []           # nesting order, innermost last
        self.prigroup = 0
        self.shcsr = 0
        self.cfsr = 0
        self.hfsr = 0
        self.mmfar = 0
        self.bfar = 0
        self.vtor = 0
        self.ccr = 0x200  # STKALIGN set at reset on ARMv7-M r2+ parts (ARMv7-M ARM B3.2.8)
        self.fpccr = 0xC0000000  # ASPEN | LSPEN at reset (ARMv7-M ARM B3.2.20)
        self.fpcar = 0
        self.last_fault: FaultInfo | None = None
        self.event_register = False

    # priorities -------------------------------------------------------------------
    def set_priority(self, number: int, value: int) -> None:
        if number >= 4:
            self.priority[number] = value & self.priority_mask

    def group_priority(self, number: int) -> int:
        if number == RESET:
            return -3
        if number == NMI:
            return -2
        if number == HARDFAULT:
            return -1
        group_mask = ~((2 << self.prigroup) - 1) & 0xFF
        return self.priority[number] & group_mask

    def execution_priority(self, active: list[int] | None = None, with_primask: bool = True) -> int:
        active = self.active if active is None else active
        priority = 256
        for number in active:
            priority = min(priority, self.group_priority(number))
        basepri = self.uc.reg_read(A.UC_ARM_REG_BASEPRI) & self.priority_mask
        if basepri:
            group_mask = ~((2 << self.prigroup) - 1) & 0xFF
            priority = min(priority, basepri & group_mask)
        if with_primask and self.uc.reg_read(A.UC_ARM_REG_PRIMASK) & 1:
            priority = min(priority, 0)
        if self.uc.reg_read(A.UC_ARM_REG_FAULTMASK) & 1:
            priority = min(priority, -1)
        return priority

    def is_enabled(self, number: int) -> bool:
        if number >= FIRST_IRQ:
            return self.enabled[number]
        return True

    def best_pending(self) -> int | None:
        if True not in self.pending:  # (none, mostly: asked at every stop)
            return None
        best = None
        for number in range(1, self.count):
            if self.pending[number] and self.is_enabled(number):
                key = (self.group_priority(number), self.priority[number], number)
                if best is None or key < best[0]:
                    best = (key, number)
        return None if best is None else best[1]

    def preempting(self, active: list[int] | None = None) -> int | None:
        """The pending exception that would be taken now, if any."""
        number = self.best_pending()
        if number is not None and self.group_priority(number) < self.execution_priority(active):
            return number
        return None

    def any_pending_ignoring_primask(self) -> bool:
        """WFI wake-up condition: a pending exception that would preempt were PRIMASK clear."""
        number = self.best_pending()
        return number is not None and self.group_priority(number) < self.execution_priority(with_primask=False)

    def set_pending(self, number: int) -> None:
        if 0 < number < self.count:
            self.pending[number] = True
            self.event_register = True
            self.machine.request_stop()

    # faults -------------------------------------------------------------------------
    def raise_fault(self, exception: int, status_bit: int, pc: int, address: int | None, description: str) -> None:
        """Record a synchronous fault and make it (or its escalation) pending, to be taken now."""
        self.last_fault = FaultInfo(exception, status_bit, pc, address, description)
        enabled = {MEMMANAGE: SHCSR_MEMFAULTENA, BUSFAULT: SHCSR_BUSFAULTENA,
                   USAGEFAULT: SHCSR_USGFAULTENA}.get(exception, 0)
        if exception in (MEMMANAGE, BUSFAULT, USAGEFAULT):
            self.cfsr |= status_bit
            if exception == MEMMANAGE and address is not None:
                self.mmfar = address
                self.cfsr |= MMARVALID
            if exception == BUSFAULT and address is not None:
                self.bfar = address
                self.cfsr |= BFARVALID
        target = exception
        current = self.execution_priority()
        if exception != HARDFAULT and (not self.shcsr & enabled or self.group_priority(exception) >= current):
            target = HARDFAULT
            self.hfsr |= HFSR_FORCED
        if target == HARDFAULT and current <= -1:
            raise Lockup(f"{description} while executing at priority {current}")
        if exception == HARDFAULT:
            self.hfsr |= status_bit
        self.pending[target] = True

    # entry and return -----------------------------------------------------------------
    def _read_word(self, address: int) -> int:
        return int.from_bytes(self.machine.read_memory(address, 4), "little")

    def _write_word(self, address: int, value: int) -> None:
        self.uc.mem_write(address, (value & 0xFFFFFFFF).to_bytes(4, "little"))

    def vector(self, number: int) -> int:
        try:
            handler = self._read_word(self.vtor + 4 * number)
        except UcError as exc:
            raise Lockup(f"cannot read the vector of {exception_name(number)} at "
                         f"0x{self.vtor + 4 * number:08x} (VTOR=0x{self.vtor:08x})") from exc
        if handler in (0, 0xFFFFFFFF) or not handler & 1:
            raise Lockup(f"no handler for {exception_name(number)}: vector table entry "
                         f"0x{self.vtor + 4 * number:08x} holds 0x{handler:08x}")
        return handler & ~1

    def enter(self, number: int, return_address: int, tail_chain_lr: int | None = None) -> None:
        """Take exception `number`; `return_address` is what the frame stacks as PC."""
        uc = self.uc
        handler = self.vector(number)
        fp_frame = False
        if tail_chain_lr is None:
            fp_frame = self._push_frame(return_address, number)
        else:
            uc.reg_write(A.UC_ARM_REG_LR, tail_chain_lr)
            uc.reg_write(A.UC_ARM_REG_IPSR, number)
        self.pending[number] = False
        self.active.append(number)
        control = uc.reg_read(A.UC_ARM_REG_CONTROL)
        uc.reg_write(A.UC_ARM_REG_CONTROL, control & ~0b110)  # handler mode uses MSP; FPCA clear
        uc.reg_write(A.UC_ARM_REG_PC, handler)
        self.entered_from = return_address if tail_chain_lr is None else None  # (the branch trace)
        self.machine.on_exception_entry(number, tail_chain_lr is not None, fp_frame=fp_frame,
                                        lazy_fp=bool(self.fpccr & FPCCR_LSPEN))

    def _push_frame(self, return_address: int, number: int) -> bool:
        """Stack the context and enter Handler mode (IPSR = number); True for an FP frame.

        The FP registers are stored at once even when FPCCR.LSPEN asks for lazy stacking:
        until the handler's first FP instruction they hold the same values, so only the timing
        differs (the machine charges it)."""
        uc = self.uc
        in_thread = uc.reg_read(A.UC_ARM_REG_IPSR) == 0
        control = uc.reg_read(A.UC_ARM_REG_CONTROL)
        use_psp = in_thread and control & 0b10
        # FPCCR.ASPEN clear: the core does not mark FP context (CONTROL.FPCA) by itself
        fp_frame = bool(control & 0b100) and self.machine.fpu_present and bool(self.fpccr & FPCCR_ASPEN)
        xpsr = uc.reg_read(A.UC_ARM_REG_XPSR)
        # Handler mode first: Unicorn hides the banked stack pointers from unprivileged Thread mode.
        uc.reg_write(A.UC_ARM_REG_IPSR, number)
        sp = uc.reg_read(A.UC_ARM_REG_PSP if use_psp else A.UC_ARM_REG_MSP)
        frame_size = 0x68 if fp_frame else 0x20
        aligned = (sp - frame_size) & ~7
        realigned = (sp - frame_size) != aligned
        values = [uc.reg_read(r) for r in _BASIC_FRAME]
        xpsr = (xpsr & ~(1 << 9)) | (int(realigned) << 9)
        values += [return_address & ~1, xpsr | (1 << 24)]
        try:
            for i, value in enumerate(values):
                self._write_word(aligned + 4 * i, value)
            if fp_frame:
                for i, reg in enumerate(_FP_REGS):
                    self._write_word(aligned + 0x20 + 4 * i, uc.reg_read(reg))
                self._write_word(aligned + 0x60, uc.reg_read(A.UC_ARM_REG_FPSCR))
                self.fpcar = aligned + 0x20
        except UcError as exc:
            raise Lockup(f"exception stacking failed: stack pointer 0x{sp:08x} is outside memory") from exc
        uc.reg_write(A.UC_ARM_REG_PSP if use_psp else A.UC_ARM_REG_MSP, aligned)
        if use_psp:  # (the handler's blocks see the main stack only: the frame is the process stack's low point)
            self.machine.note_process_sp(aligned, return_address & ~1)
        uc.reg_write(A.UC_ARM_REG_EPSR, 1 << 24)  # the handler starts outside any IT block (ARMv7-M ARM B1.5.6)
        exc_return = (0xFFFFFFF1 if not fp_frame else 0xFFFFFFE1)
        if in_thread:
            exc_return |= 0b1000
            if use_psp:
                exc_return |= 0b0100
        uc.reg_write(A.UC_ARM_REG_LR, exc_return)
        return fp_frame

    def exception_return(self, exc_return: int) -> None:
        """Handle a branch to EXC_RETURN (bit 0 already cleared by Unicorn)."""
        uc = self.uc
        exc_return |= 1
        returning = uc.reg_read(A.UC_ARM_REG_IPSR)
        low = exc_return & 0xF
        valid = (exc_return >> 5) == (0xFFFFFFFF >> 5) and low in (0x1, 0x9, 0xD)
        if not valid or not self.active or self.active[-1] != returning:
            self.raise_fault(USAGEFAULT, INVPC, exc_return, None,
                             f"invalid EXC_RETURN 0x{exc_return:08x} from {exception_name(returning)}")
            uc.reg_write(A.UC_ARM_REG_PC, exc_return & ~1)
            self.take_pending(fault_return_address=exc_return & ~1 & 0xFFFFFFFF)
            return
        remaining = self.active[:-1]
        to_thread = low != 0x1
        if to_thread and remaining:
            # returning to Thread mode with other exceptions active (no NONBASETHRDENA)
            self.raise_fault(USAGEFAULT, INVPC, exc_return, None,
                             "EXC_RETURN to Thread mode with exceptions still active")
            self.take_pending(fault_return_address=exc_return & ~1)
            return
        next_number = self.preempting(remaining)
        self.active.pop()
        if next_number is not None:  # tail-chain: keep the frame, go straight to the next handler
            self.machine.on_exception_return(returning, tail_chain=True)
            self.enter(next_number, 0, tail_chain_lr=exc_return)
            return
        self._pop_frame(exc_return)
        self.machine.on_exception_return(returning, tail_chain=False, fp_frame=not exc_return & 0x10)
        self.event_register = True

    def _pop_frame(self, exc_return: int) -> None:
        uc = self.uc
        low = exc_return & 0xF
        use_psp = low == 0xD
        fp_frame = not exc_return & 0x10
        sp = uc.reg_read(A.UC_ARM_REG_PSP if use_psp else A.UC_ARM_REG_MSP)
        try:
            words = [self._read_word(sp + 4 * i) for i in range(8)]
            fp_words = [self._read_word(sp + 0x20 + 4 * i) for i in range(17)] if fp_frame else []
        except UcError as exc:
            raise Lockup(f"exception unstacking failed: stack pointer 0x{sp:08x} is outside memory") from exc
        for reg, value in zip(_BASIC_FRAME, words[:6]):
            uc.reg_write(reg, value)
        xpsr = words[7]
        frame_size = 0x68 if fp_frame else 0x20
        if xpsr & (1 << 9):
            frame_size += 4
        if fp_frame:
            for reg, value in zip(_FP_REGS, fp_words[:16]):
                uc.reg_write(reg, value)
            uc.reg_write(A.UC_ARM_REG_FPSCR, fp_words[16])
        # CONTROL and the banked stack pointer while still in Handler mode (privileged), xPSR last:
        # it sets the mode through IPSR.
        control = uc.reg_read(A.UC_ARM_REG_CONTROL) & ~0b110
        if use_psp:
            control |= 0b10
        if fp_frame:
            control |= 0b100
        uc.reg_write(A.UC_ARM_REG_CONTROL, control)
        uc.reg_write(A.UC_ARM_REG_PSP if use_psp else A.UC_ARM_REG_MSP, sp + frame_size)
        # NZCVQG: the GE flags too (plain XPSR leaves them out); IT bits resume an interrupted IT block
        uc.reg_write(A.UC_ARM_REG_XPSR_NZCVQG, (xpsr & ~(1 << 9)) | (1 << 24))
        uc.reg_write(A.UC_ARM_REG_PC, words[6] & ~1)

    def take_pending(self, fault_return_address: int | None = None) -> bool:
        """Take the highest-priority pending exception if it preempts; True if one was taken."""
        number = self.preempting()
        if number is None:
            return False
        pc = self.uc.reg_read(A.UC_ARM_REG_PC) if fault_return_address is None else fault_return_address
        self.enter(number, pc)
        return True
