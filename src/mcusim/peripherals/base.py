"""Peripheral base: register storage with sub-word access, and once-per-register reports."""
from __future__ import annotations


class Peripheral:
    """A memory-mapped block. Subclasses override on_read/on_write for the registers they model.

    Every register also behaves as plain storage, so a register nothing models keeps what the
    firmware wrote; the first access to such a register is reported by name.
    """

    modelled_offsets: frozenset[int] = frozenset()

    def __init__(self, name: str, base: int, size_bytes: int, chip, registers: dict[str, int] | None = None,
                 irq: int | None = None, reset_values: dict[str, int] | None = None):
        self.name = name
        self.base = base
        self.size_bytes = size_bytes
        self.chip = chip  # all a model may do to the machine: chip.py
        self.registers = dict(registers or {})
        self.register_names = {offset: reg for reg, offset in self.registers.items()}
        self.irq = irq
        self.reset_values = dict(reset_values or {})
        self.storage: dict[int, int] = {}
        for reg, value in self.reset_values.items():
            self.storage[self.registers[reg]] = value
        self.reset()

    @classmethod
    def from_spec(cls, spec, chip) -> "Peripheral":
        return cls(spec.name, spec.base, spec.size_bytes, chip, spec.registers, spec.irq, spec.reset)

    def offset_of(self, register: str) -> int:
        return self.registers[register]

    def reset(self) -> None:
        """Set reset values (subclasses)."""

    # storage helpers --------------------------------------------------------------
    def get(self, offset: int) -> int:
        return self.storage.get(offset, 0)

    def set(self, offset: int, value: int) -> None:
        self.storage[offset] = value & 0xFFFFFFFF

    # bus interface -----------------------------------------------------------------
    def read(self, offset: int, size: int) -> int:
        word = offset & ~3
        value = self.on_read(word)
        if value is None:
            value = self.get(word)
            self._report_unmodelled(word, "read")
        shift = (offset & 3) * 8
        return (value >> shift) & ((1 << (8 * size)) - 1)

    def write(self, offset: int, size: int, value: int) -> None:
        word = offset & ~3
        shift = (offset & 3) * 8
        mask = ((1 << (8 * size)) - 1) << shift
        current = self.get(word)
        if size < 4:  # a byte or halfword write keeps the other bytes of the register as it reads
            modelled = self.on_read(word)
            current = current if modelled is None else modelled
        merged = (current & ~mask) | ((value << shift) & mask)
        if not self.on_write(word, merged & 0xFFFFFFFF, offset, size, value):
            self.set(word, merged)
            self._report_unmodelled(word, "write")

    def on_read(self, offset: int) -> int | None:
        """Value of a modelled register, or None for plain storage."""
        return None

    def peek(self, offset: int) -> int:
        """The word a debugger reads at `offset`: what the firmware would read, without any
        side effect of reading and without a report (on_read has none in the models, but those
        that do, such as SysTick's COUNTFLAG, override this)."""
        value = self.on_read(offset)
        return self.get(offset) if value is None else value & 0xFFFFFFFF

    def on_write(self, offset: int, value: int, raw_offset: int, size: int, raw_value: int) -> bool:
        """Handle a write to a modelled register (value merged into the word); False for storage."""
        return False

    def register_name(self, offset: int) -> str:
        name = self.register_names.get(offset)
        return f"{self.name}.{name}" if name else f"{self.name}+0x{offset:03x}"

    def _report_unmodelled(self, offset: int, kind: str) -> None:
        self.chip.report_unmodelled(self.register_name(offset), self.base + offset, kind)


class StoragePeripheral(Peripheral):
    """A peripheral (or an unnamed stretch of peripheral space) nothing models: storage, reported."""


class PlainStorage(Peripheral):
    """A peripheral whose registers are modelled as plain storage on purpose (no reports)."""

    def on_read(self, offset):
        return self.get(offset)

    def on_write(self, offset, value, raw_offset, size, raw_value):
        self.set(offset, value)
        return True


class RegisterFile(Peripheral):
    """Registers the board data names are modelled as storage; subclasses add behaviour on top."""

    def on_read(self, offset):
        return self.get(offset) if offset in self.register_names else None

    def on_write(self, offset, value, raw_offset, size, raw_value):
        if offset in self.register_names:
            self.set(offset, value)
            return True
        return False
