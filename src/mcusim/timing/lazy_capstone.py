"""capstone, imported when something is first disassembled rather than when mcusim is imported.

Importing capstone is one of the dearest imports of a start (its package imports every
architecture it supports: docs/performance.md, "Twenty-eighth pass"), and much of what mcusim
does disassembles nothing: the commands that run no firmware, a run up to its first instruction
when the decode store holds the image (issue 15's warm start, 0.5 s), and the whole of such a
run when no MMIO access needs its instruction found (machine/access_locator.py). `capstone` and
`arm` stand for the modules and import capstone at their first attribute read; `disassembler()`
makes a Cortex-M Thumb disassembler, and `thumb()` is the decoder's shared one, made on first use."""
from __future__ import annotations

import functools
import importlib


class _Module:
    """Stands for module `name`: the first attribute read imports it, and every attribute read is
    kept on this object (later reads are plain attribute reads)."""

    def __init__(self, name: str):
        self._name = name

    def __getattr__(self, attribute: str):
        value = getattr(importlib.import_module(self._name), attribute)
        setattr(self, attribute, value)
        return value


capstone = _Module("capstone")
arm = _Module("capstone.arm")


def disassembler(detail: bool = False):
    """A new capstone disassembler of Cortex-M Thumb code, with capstone's detail or without."""
    made = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    made.detail = detail
    return made


thumb = functools.cache(disassembler)  # (the decoder's: one with detail, one without)
