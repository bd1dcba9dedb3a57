"""Routes MMIO accesses of the peripheral spaces to peripheral models (or plain storage)."""
from __future__ import annotations

import bisect

from .base import StoragePeripheral


class Bus:
    """One MMIO range mapped in Unicorn; accesses are dispatched by address."""

    def __init__(self, chip, base: int, size_bytes: int, name: str):
        self.chip = chip
        self.access = chip.mmio  # the access being served, for the chip's clock (chip.py)
        self.base = base
        self.size_bytes = size_bytes
        self.name = name
        self.devices: list = []
        self._starts: list[int] = []
        self._anonymous: dict[int, StoragePeripheral] = {}

    def attach(self, device) -> None:
        index = bisect.bisect(self._starts, device.base)
        self.devices.insert(index, device)
        self._starts.insert(index, device.base)

    def device_at(self, address: int):
        index = bisect.bisect_right(self._starts, address) - 1
        if index >= 0:
            device = self.devices[index]
            if address < device.base + device.size_bytes:
                return device
        page = address & ~0x3FF
        device = self._anonymous.get(page)
        if device is None:
            device = StoragePeripheral(f"{self.name}@0x{page:08x}", page, 0x400, self.chip)
            self._anonymous[page] = device
        return device

    def debug_word(self, address: int) -> int:
        """The word a debugger sees at `address`: what the firmware would read (Peripheral.peek:
        no side effect, nothing reported), and 0 in space nothing has touched (no storage made)."""
        index = bisect.bisect_right(self._starts, address) - 1
        device = self.devices[index] if index >= 0 else None
        if device is None or address >= device.base + device.size_bytes:
            device = self._anonymous.get(address & ~0x3FF)
        return 0 if device is None else device.peek((address - device.base) & ~3)

    def read(self, uc, offset: int, size: int, start: int | None) -> int:
        """The access at `offset` from `start`, the first address of the mapping Unicorn calls for
        (None: the bus's base)."""
        self.chip.refuse_held()
        address = (self.base if start is None else start) + offset
        device = self.device_at(address)
        access = self.access
        access.address = address
        access.is_write = False
        access.pc = None
        try:
            return device.read(address - device.base, size)
        except Exception as exc:  # never let a model error unwind through Unicorn
            self.chip.internal_error(exc)
            return 0
        finally:
            access.address = None

    def write(self, uc, offset: int, size: int, value: int, start: int | None) -> None:
        self.chip.refuse_held()
        address = (self.base if start is None else start) + offset
        device = self.device_at(address)
        access = self.access
        access.address = address
        access.is_write = True
        access.pc = None
        try:
            device.write(address - device.base, size, value)
        except Exception as exc:
            self.chip.internal_error(exc)
        finally:
            access.address = None

    def map(self, uc, skip: tuple[int, int] | None = None) -> None:
        """Map the range with Python callbacks; `skip`: (address, bytes) of a page another
        mapping serves (machine/console_uart.py), which then calls read and write for the
        words it does not serve itself."""
        pieces = [(self.base, self.base + self.size_bytes)]
        if skip is not None:
            pieces = [(self.base, skip[0]), (skip[0] + skip[1], self.base + self.size_bytes)]
        for start, end in pieces:
            if end > start:
                uc.mmio_map(start, end - start, self.read, start, self.write, start)
