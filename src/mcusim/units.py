"""How mcusim writes quantities for people: clocks, durations, energies."""
from __future__ import annotations


def mhz(hz: float) -> str:
    return f"{hz / 1e6:g} MHz"


def seconds(s: float) -> str:
    if s < 1e-3:
        return f"{s * 1e6:.3f} us"
    if s < 1:
        return f"{s * 1e3:.3f} ms"
    return f"{s:.3f} s"


def joules(j: float) -> str:
    for scale, unit in ((1e3, "kJ"), (1, "J"), (1e-3, "mJ"), (1e-6, "uJ")):
        if abs(j) >= scale:
            return f"{j / scale:.3f} {unit}"
    return f"{j / 1e-9:.3f} nJ"
