"""What a peripheral model may do to the chip it is part of: the whole interface between the
peripheral models (and the buses that route MMIO to them) and the machine that runs them.

A model keeps the `Chip` it was built with as `self.chip` and uses nothing else of the
machine. Machine gives its models a MachineChip (machine/chip.py), each member the machine's
own; a test gives them a stand-in with these members only
(tests/unit/test_peripheral_interface.py, which also checks that the models use no others).

Timed at the instruction making the access: inside an MMIO access `cycles_now`, `current_pc`
and `counter_total` answer for the instruction that makes it (the bus records the access in
`mmio`), between runs for now.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:  # (types only: peripherals import nothing of the machine at run time)
    from ..config import BoardSpec
    from ..machine.exceptions import ExceptionUnit
    from ..machine.flash_timing import FlashTiming


class MmioAccess:
    """The MMIO access a bus is serving (`address` None between accesses), and the instruction
    the machine found making it (`pc`, once found; see Chip.current_pc)."""

    __slots__ = ("address", "is_write", "pc")

    def __init__(self):
        self.address: int | None = None
        self.is_write = False
        self.pc: int | None = None


class Chip(Protocol):
    # the board's description (read-only data: oscillators, CPUID, memories, caches) --------
    board: BoardSpec

    # time ------------------------------------------------------------------------------------
    mmio: MmioAccess  # set by the bus around each access

    def refuse_held(self) -> None:
        """Before the bus serves an access: add the repeats the block hook holds to the counters
        (machine/native/held_repeats.py), so the access sees and changes the state as it is."""

    def cycles_now(self) -> int:
        """The cycle count at the instruction making the current access (between runs: now)."""

    def current_pc(self) -> int:
        """The address of the instruction making the current access."""

    def counter_total(self, register: int) -> int:
        """The unwrapped total of a DWT counter's events (peripherals/core/dwt.py CYCCNT...)."""

    # the clock -------------------------------------------------------------------------------
    def set_clock(self, hz: int, source: str) -> None:
        """The firmware switched the core clock to `hz` (`source`: the register block, e.g. "RCC")."""

    # run control -----------------------------------------------------------------------------
    def request_stop(self) -> None:
        """Stop emulation at the next block boundary so the machine acts on a change (a timer's
        next event, an interrupt enabled or reprioritised)."""

    def request_reset(self, why: str) -> None:
        """Reset the core at the next block boundary (AIRCR.SYSRESETREQ)."""

    # exceptions and interrupts ---------------------------------------------------------------
    exceptions: ExceptionUnit  # the core's exception state: NVIC and SCB registers are views of it

    def raise_interrupt(self, number: int) -> None:
        """Set exception `number` pending (an external interrupt is FIRST_IRQ + its line)."""

    def clear_interrupt(self, number: int) -> None:
        """Clear exception `number`'s pending state."""

    # core configuration written through the SCB ----------------------------------------------
    def set_fpu_enabled(self, enabled: bool) -> None:
        """CPACR allows (or denies) the FPU."""

    def divide_trap_changed(self) -> None:
        """CCR.DIV_0_TRP may have changed."""

    # flash, caches and power -----------------------------------------------------------------
    flash_timing: FlashTiming | None  # the main flash port's timing model (None: zero-wait memories)
    flash_ports: list[FlashTiming]    # every flash port (the main one first); L1 caches are a port's

    def voltage_scaling_changed(self, register_value: int) -> None:
        """The firmware selected a core voltage range (the power model's operating point)."""

    # output ----------------------------------------------------------------------------------
    def uart_write(self, name: str, data: bytes) -> None:
        """UART `name` transmitted `data`."""

    def itm_write(self, port: int, data: bytes) -> None:
        """The firmware wrote `data` to ITM stimulus port `port`."""

    def region_marker(self, begin: bool, name_address: int) -> None:
        """A region begins (or ends): firmware/include/mcusim.h, ITM ports 30 and 31."""

    def pin_changed(self, pin: str, level: int | None) -> None:
        """A GPIO pin's driven level changed (None: no longer driven)."""

    # memory ----------------------------------------------------------------------------------
    def read_memory(self, address: int, size: int) -> bytes:
        """Read memory as a DMA master does (UARTE EasyDMA)."""

    # reports ---------------------------------------------------------------------------------
    def warn_once(self, key: str, message: str) -> None:
        """Warn, once per `key`."""

    def report_unmodelled(self, register: str, address: int, kind: str) -> None:
        """The firmware accessed (`kind` "read" or "write") a register nothing models."""

    def internal_error(self, exc: BaseException) -> None:
        """A model raised: the run ends with it at the next block boundary (never unwinding through Unicorn)."""


CHIP_MEMBERS = frozenset(name for name in (*Chip.__dict__, *Chip.__annotations__) if not name.startswith("_"))
