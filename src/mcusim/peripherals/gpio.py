"""What the GPIO models share: a port works out which pins it drives, at which level, after
every register write, and reports each change (chip.pin_changed: the machine records it for
signals.vcd when asked to, Machine(vcd=True))."""
from __future__ import annotations

from .base import RegisterFile


class GpioPort(RegisterFile):
    """Subclasses give `driven_levels()`: {pin name: 0 or 1} for the pins configured as
    outputs. A pin that stops being an output is reported with level None (undriven)."""

    def reset(self):
        # a core reset puts the registers back (the machine did) and so releases the pins
        self.driven = getattr(self, "driven", {})
        self.update()

    def driven_levels(self) -> dict[str, int]:
        raise NotImplementedError

    def update(self) -> None:
        now = self.driven_levels()
        for pin in sorted(self.driven.keys() | now.keys()):
            if self.driven.get(pin) != now.get(pin):
                self.chip.pin_changed(pin, now.get(pin))
        self.driven = now
