"""nRF52840 GPIO ports P0 and P1 (nRF52840 PS v1.7 6.8 "GPIO"). The two ports' register
blocks interleave (P0 at 0x50000000, P1 at 0x50000300, registers from +0x504), so one model
serves both; the board data names each port's registers P0_* and P1_*."""
from __future__ import annotations

from ..gpio import GpioPort

PORTS = {"P0": 32, "P1": 16}  # PS 6.8: P0.00-P0.31, P1.00-P1.15
PIN_CNF_RESET = 0x00000002    # PS 6.8.2 PIN_CNF[n]: DIR input, INPUT disconnected
CNF_DIR = 1 << 0              # PIN_CNF.DIR is the pin's DIR bit (the same register bit)
CNF_PULL_SHIFT, PULL_UP = 2, 3  # PIN_CNF.PULL [3:2] = 3: pull-up


class NrfGpio(GpioPort):
    """A pin whose DIR bit is set drives its OUT bit; IN reads that level for outputs and the
    pull-up level for the others. OUTSET/OUTCLR and DIRSET/DIRCLR read back OUT and DIR.
    Not modelled: drive strengths (open-drain modes show as driving both levels), SENSE and
    LATCH."""

    def _reg(self, port: str, name: str) -> int:
        return self.offset_of(f"{port}_{name}")

    def _ports(self):
        return [port for port in PORTS if f"{port}_OUT" in self.registers]

    def _cnf(self, port: str, pin: int) -> int:
        return self.storage.get(self._reg(port, "PIN_CNF") + 4 * pin, PIN_CNF_RESET)

    def _mask(self, port: str) -> int:
        return (1 << PORTS[port]) - 1

    def driven_levels(self):
        levels = {}
        for port in self._ports():
            out, direction = self.get(self._reg(port, "OUT")), self.get(self._reg(port, "DIR"))
            for n in range(PORTS[port]):
                if direction >> n & 1:
                    levels[f"{port}.{n:02d}"] = out >> n & 1
        return levels

    def _input(self, port: str) -> int:
        out, direction = self.get(self._reg(port, "OUT")), self.get(self._reg(port, "DIR"))
        pulled = sum(1 << n for n in range(PORTS[port])
                     if (self._cnf(port, n) >> CNF_PULL_SHIFT) & 3 == PULL_UP)
        return (out & direction) | (pulled & ~direction & self._mask(port))

    def _pin_cnf(self, port: str, offset: int) -> int | None:
        """The pin whose PIN_CNF register is at `offset`, or None."""
        pin = (offset - self._reg(port, "PIN_CNF")) // 4
        return pin if 0 <= pin < PORTS[port] and offset >= self._reg(port, "PIN_CNF") else None

    def on_read(self, offset):
        for port in self._ports():
            if offset in (self._reg(port, "OUTSET"), self._reg(port, "OUTCLR")):
                return self.get(self._reg(port, "OUT"))
            if offset in (self._reg(port, "DIRSET"), self._reg(port, "DIRCLR")):
                return self.get(self._reg(port, "DIR"))
            if offset == self._reg(port, "IN"):
                return self._input(port)
            pin = self._pin_cnf(port, offset)
            if pin is not None:
                return (self._cnf(port, pin) & ~CNF_DIR) | (self.get(self._reg(port, "DIR")) >> pin & 1)
        return super().on_read(offset)

    def on_write(self, offset, value, raw_offset, size, raw_value):
        for port in self._ports():
            handled = self._write_port(port, offset, value)
            if handled:
                self.update()
                return True
        return super().on_write(offset, value, raw_offset, size, raw_value)

    def _write_port(self, port: str, offset: int, value: int) -> bool:
        mask = self._mask(port)
        out, direction = self._reg(port, "OUT"), self._reg(port, "DIR")
        if offset in (out, direction):
            self.set(offset, value & mask)
        elif offset == self._reg(port, "OUTSET"):
            self.set(out, self.get(out) | (value & mask))
        elif offset == self._reg(port, "OUTCLR"):
            self.set(out, self.get(out) & ~value)
        elif offset == self._reg(port, "DIRSET"):
            self.set(direction, self.get(direction) | (value & mask))
        elif offset == self._reg(port, "DIRCLR"):
            self.set(direction, self.get(direction) & ~value)
        elif offset == self._reg(port, "IN"):
            pass  # read-only
        else:
            pin = self._pin_cnf(port, offset)
            if pin is None:
                return False
            self.set(offset, value)
            self.set(direction, (self.get(direction) & ~(1 << pin)) | (value & CNF_DIR) << pin)
        return True
