"""capstone, loaded when something is first disassembled rather than when mcusim is imported.

Loading capstone is one of the dearest steps of a start (docs/performance.md, "Twenty-eighth
pass"), and much of what mcusim does disassembles nothing: the commands that run no firmware, a
run up to its first instruction when the decode store holds the image (issue 15's warm start,
0.5 s), and the whole of such a run when no MMIO access needs its instruction found
(machine/access_locator.py). `thumb()` is the decoder's shared Thumb disassembler, made on first
use, and `disassembler()` a new one: both call capstone's C library without its Python package
(timing/capstone_library.py). `arm` holds the arm.h constants the timing models compare with.
`package_disassembler()` is capstone's own Cs, for the reference paths that keep capstone's
instruction objects (memoise=False: the tests' model to compare with), and `capstone` stands for
the package, imported at its first attribute read."""
from __future__ import annotations

import functools
import importlib

from . import capstone_library as arm  # (the arm.h constants: ARM_OP_REG, ARM_CC_AL, ...)


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


@functools.cache
def _library():
    return arm.load_library()


def disassembler(detail: bool = False) -> arm.Thumb:
    """A new Cortex-M Thumb disassembler, with capstone's detail or without."""
    return arm.Thumb(_library(), detail)


thumb = functools.cache(disassembler)  # (the decoder's: one with detail, one without)


@functools.cache
def package_disassembler(detail: bool = False):
    """capstone's own Cs for Cortex-M Thumb code (importing the package), giving its CsInsn objects
    (one with detail, one without, shared)."""
    made = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    made.detail = detail
    return made
