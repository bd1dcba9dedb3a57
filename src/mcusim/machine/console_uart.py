"""The console UART's page served natively (native/console_uart.py): what a polled printf costs
per character is then two native callbacks, not two Python ones.

The Python model stays the authority. A UART model that allows this has
`fast_registers()`: the offsets of the status word the firmware polls and of the data word it
writes, the status value and whether a write transmits, all functions of its other registers.
Those are copied into the page's slots before every run and after every write Python serves
(the only way the registers they depend on change, since every register the board names for
the UART lies in the page), and the bytes transmitted natively are handed to the model's chip
(`uart_write`) whenever emulation returns to Python and before any other output or warning,
so the console, run.json and `on_output` get the same bytes in the same order.
"""
from __future__ import annotations

import ctypes

import numpy as np

from .native.console_uart import READ_FALLBACK, WRITE_FALLBACK, console_page_read, console_page_write
from .native.hooks import map_native_mmio
from .native.layout import (
    CONSOLE_PAGE, U_BYTES, U_CAPACITY, U_DATA, U_LENGTH, U_READ_FALLBACK, U_STATE, U_STATUS, U_STATUS_VALUE,
    U_STOP_AT, U_TX_ON, U_WRITE_FALLBACK)

CAPACITY = 64 << 10  # transmitted bytes held natively ...
STOP_AT = 16 << 10   # ... and the count at which emulation stops at the next block to hand them over


class ConsoleUartPage:
    """The page of `device` (on `bus`; `page_bytes`: Unicorn's page, the smallest MMIO mapping)
    mapped with native callbacks; `chip.uart_write` gets its output. Use `page_of` first: None
    when the model does not allow it."""

    def __init__(self, uc, state, bus, device, chip, page_bytes: int):
        self.bus, self.device, self.chip, self.state = bus, device, chip, state
        self.base = device.base & ~(page_bytes - 1)
        self.out = np.zeros(CAPACITY, dtype=np.uint8)
        self.page = np.zeros(CONSOLE_PAGE, dtype=np.int64)
        self._read = READ_FALLBACK(self._python_read)  # (kept: the native callbacks call them)
        self._write = WRITE_FALLBACK(self._python_write)
        page = self.page
        page[U_READ_FALLBACK] = _address(self._read)
        page[U_WRITE_FALLBACK] = _address(self._write)
        page[U_BYTES] = self.out.ctypes.data
        page[U_CAPACITY] = CAPACITY
        page[U_STOP_AT] = STOP_AT
        self.moved()
        self.refresh()
        map_native_mmio(uc, self.base, page_bytes, console_page_read, console_page_write, page)

    @staticmethod
    def page_of(device, bus, page_bytes: int) -> int | None:
        """The page of `bus` holding every register the board names for `device`, when the model
        has fast registers; else None (it stays with the Python bus)."""
        if getattr(device, "fast_registers", None) is None:
            return None
        base = device.base & ~(page_bytes - 1)
        if any((device.base + offset) & ~(page_bytes - 1) != base for offset in device.registers.values()):
            return None
        return base if bus.base <= base and base + page_bytes <= bus.base + bus.size_bytes else None

    def moved(self) -> None:
        """The shared buffer moved: the write callback finds its DEADLINE at the new address."""
        self.page[U_STATE] = self.state.address

    def refresh(self) -> None:
        """Copy the model's status value and transmit enable (and the registers' offsets)."""
        status, value, data, transmits = self.device.fast_registers()
        page, shift = self.page, self.device.base - self.base
        page[U_STATUS], page[U_STATUS_VALUE] = shift + status, value & 0xFFFFFFFF
        page[U_DATA], page[U_TX_ON] = shift + data, int(bool(transmits))

    def drain(self) -> None:
        """Hand the bytes transmitted natively to the chip (the first thing any output does)."""
        length = int(self.page[U_LENGTH])
        if length:
            data = self.out[:length].tobytes()
            self.page[U_LENGTH] = 0  # (first: the console output they become drains again)
            self.chip.uart_write(self.device.name, data)

    def _python_read(self, _uc, offset, size, _user_data) -> int:
        try:  # (nothing may unwind through Unicorn: run() raises it when emulation stops)
            return self.bus.read(None, offset, size, self.base)
        except BaseException as exc:
            self.chip.internal_error(exc)
            return 0

    def _python_write(self, _uc, offset, size, value, _user_data) -> None:
        try:
            self.bus.write(None, offset, size, value, self.base)
            self.refresh()
        except BaseException as exc:
            self.chip.internal_error(exc)


def _address(callback) -> int:
    return ctypes.cast(callback, ctypes.c_void_p).value
