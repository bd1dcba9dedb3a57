"""capstone's C library called for Cortex-M Thumb code, without capstone's Python package.

The package imports a module for every architecture it supports before it disassembles
anything: some 13 to 18 ms of each process that decodes new code or locates an MMIO access,
beside loading the library itself (1.5 ms warm; docs/performance.md, "Thirty-fifth pass").
mcusim reads Thumb alone, so it loads the library the package ships (the wheel's
capstone/lib/libcapstone.so, found without importing the package) and calls it through the
structures of capstone 5's C headers (capstone.h: cs_insn, cs_detail; arm.h: cs_arm, cs_arm_op),
written here. Where that file is not there or does not load (a capstone built against a system
library, LIBCAPSTONE_PATH), the library the package loaded is used instead; a library whose major
version is not 5, or without capstone's functions, is refused.
tests/unit/test_capstone_library.py holds the structures to the package's and the output to its.
"""
from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
import threading
from ctypes import POINTER, byref, c_bool, c_char, c_char_p, c_double, c_int, c_int8, c_int32, c_size_t, c_uint, \
    c_uint8, c_uint16, c_uint64

# capstone.h, capstone 5
CS_ARCH_ARM = 0
CS_MODE_THUMB = 1 << 4
CS_MODE_MCLASS = 1 << 5
CS_OPT_DETAIL = 2
CS_OPT_ON = 3
CS_ERR_OK = 0
MAJOR_VERSION = 5
# arm.h, capstone 5: what the timing models compare operands and conditions with
ARM_CC_INVALID, ARM_CC_AL = 0, 15
ARM_OP_REG, ARM_OP_IMM, ARM_OP_MEM = 1, 2, 3
ARM_SFT_INVALID = 0
MAX_OPERANDS = 36
REGISTER_LIST = 64  # cs_regs_access's register arrays (cs_regs)


class Memory(ctypes.Structure):  # arm_op_mem
    _fields_ = (("base", c_uint), ("index", c_uint), ("scale", c_int), ("disp", c_int), ("lshift", c_int))


class Shift(ctypes.Structure):
    _fields_ = (("type", c_uint), ("value", c_uint))


class _Value(ctypes.Union):
    _fields_ = (("reg", c_uint), ("imm", c_int32), ("fp", c_double), ("mem", Memory), ("setend", c_int))


class Operand(ctypes.Structure):  # cs_arm_op
    _fields_ = (("vector_index", c_int), ("shift", Shift), ("type", c_uint), ("value", _Value),
                ("subtracted", c_bool), ("access", c_uint8), ("neon_lane", c_int8))

    @property
    def reg(self) -> int:
        return self.value.reg

    @property
    def imm(self) -> int:
        return self.value.imm

    @property
    def mem(self) -> Memory:
        return self.value.mem


class Arm(ctypes.Structure):  # cs_arm
    _fields_ = (("usermode", c_bool), ("vector_size", c_int), ("vector_data", c_int), ("cps_mode", c_int),
                ("cps_flag", c_int), ("cc", c_uint), ("update_flags", c_bool), ("writeback", c_bool),
                ("post_index", c_bool), ("mem_barrier", c_int), ("op_count", c_uint8),
                ("operands", Operand * MAX_OPERANDS))


class _Architecture(ctypes.Union):  # cs_detail's union of every architecture's detail: only Arm is read
    _fields_ = (("arm", Arm),)


class Detail(ctypes.Structure):  # cs_detail
    _fields_ = (("regs_read", c_uint16 * 20), ("regs_read_count", c_uint8), ("regs_write", c_uint16 * 20),
                ("regs_write_count", c_uint8), ("groups", c_uint8 * 8), ("groups_count", c_uint8),
                ("writeback", c_bool), ("arch", _Architecture))


class Insn(ctypes.Structure):  # cs_insn
    _fields_ = (("id", c_uint), ("address", c_uint64), ("size", c_uint16), ("bytes", ctypes.c_ubyte * 24),
                ("mnemonic", c_char * 32), ("op_str", c_char * 160), ("detail", POINTER(Detail)))


_Registers = c_uint16 * REGISTER_LIST


def _shipped_library_path() -> str | None:
    """The library file of the installed capstone wheel, found without importing the package."""
    spec = importlib.util.find_spec("capstone")
    if spec is None or not spec.submodule_search_locations or os.environ.get("LIBCAPSTONE_PATH"):
        return None  # (LIBCAPSTONE_PATH: the package would load that one; so does load_library, through it)
    path = os.path.join(spec.submodule_search_locations[0], "lib", "libcapstone.so")
    return path if sys.platform.startswith("linux") and os.path.isfile(path) else None


def load_library():
    """capstone's C library with the prototypes used here: the wheel's file, else (missing or not
    loadable) the package's, importing it. Raises ImportError for a library that lacks one of
    these functions or whose major version is not 5."""
    library = None
    path = _shipped_library_path()
    if path is not None:
        try:
            library = ctypes.CDLL(path, mode=getattr(os, "RTLD_DEEPBIND", 0))  # (as the package loads it)
        except OSError:  # (a damaged file: the package tries its other places)
            library = None
    if library is None:
        import capstone

        library = capstone._cs
    prototypes = {
        "cs_version": (c_int, POINTER(c_int), POINTER(c_int)),
        "cs_open": (c_int, c_uint, c_uint, POINTER(c_size_t)),
        "cs_close": (c_int, POINTER(c_size_t)),
        "cs_option": (c_int, c_size_t, c_int, c_size_t),
        "cs_disasm": (c_size_t, c_size_t, c_char_p, c_size_t, c_uint64, c_size_t, POINTER(POINTER(Insn))),
        "cs_free": (None, POINTER(Insn), c_size_t),
        "cs_errno": (c_int, c_size_t),
        "cs_reg_name": (c_char_p, c_size_t, c_uint),
        "cs_regs_access": (c_int, c_size_t, POINTER(Insn), POINTER(_Registers), POINTER(c_uint8), POINTER(_Registers),
                           POINTER(c_uint8)),
    }
    functions = {}
    for name, (result, *arguments) in prototypes.items():
        try:  # (own prototypes: the package's untouched)
            functions[name] = ctypes.CFUNCTYPE(result, *arguments)((name, library))
        except AttributeError:
            raise ImportError(f"{getattr(library, '_name', library)} is not capstone's library (no {name})") from None
    major, minor = c_int(), c_int()
    functions["cs_version"](byref(major), byref(minor))
    if major.value != MAJOR_VERSION:
        raise ImportError(f"capstone's library is version {major.value}.{minor.value}; mcusim reads capstone "
                          f"{MAJOR_VERSION}'s structures")
    return functions


class CapstoneError(RuntimeError):
    pass


class Decoded:
    """One instruction with capstone's detail, copied out of the library's memory (what
    machine/access_locator.py reads: its operands as cs_arm_op copies)."""

    __slots__ = ("address", "size", "bytes", "mnemonic", "op_str", "cc", "update_flags", "writeback", "post_index",
                 "operands", "_names")

    def __init__(self, raw: Insn, names):
        self.address, self.size = raw.address, raw.size
        self.bytes = bytes(raw.bytes[: raw.size])
        self.mnemonic, self.op_str = raw.mnemonic.decode("ascii"), raw.op_str.decode("ascii")
        arm = raw.detail.contents.arch.arm
        self.cc, self.update_flags, self.writeback, self.post_index = arm.cc, arm.update_flags, arm.writeback, \
            arm.post_index
        self.operands = tuple(Operand.from_buffer_copy(arm.operands[i]) for i in range(arm.op_count))
        self._names = names

    def reg_name(self, register: int) -> str:
        return self._names(register)


class Thumb:
    """A capstone handle for Cortex-M Thumb code (ARMv7E-M), with detail or without: the calls
    of capstone's Cs the decoder makes (disasm_lite, reg_name) and the raw ones it reads detail
    through (raw_disasm, free, regs_access)."""

    def __init__(self, functions, detail: bool = False):
        self._f = functions
        handle = c_size_t()
        status = functions["cs_open"](CS_ARCH_ARM, CS_MODE_THUMB | CS_MODE_MCLASS, byref(handle))
        if status != CS_ERR_OK:
            raise CapstoneError(f"capstone's cs_open failed ({status})")
        self.handle = handle.value
        self.detail = detail
        if detail:
            functions["cs_option"](self.handle, CS_OPT_DETAIL, CS_OPT_ON)
        self._per_thread = threading.local()

    def __del__(self):
        handle = getattr(self, "handle", None)
        if handle:  # (as capstone's Cs does: the handle's memory goes back to the library)
            self.handle = None
            self._f["cs_close"](ctypes.pointer(c_size_t(handle)))

    def raw_disasm(self, code: bytes, address: int, count: int = 0):
        """(the library's cs_insn array, how many) for code at `address`: hand it to free()."""
        found = POINTER(Insn)()
        count = self._f["cs_disasm"](self.handle, bytes(code), len(code), address, count, byref(found))
        return found, count

    def free(self, found, count: int) -> None:
        if count:
            self._f["cs_free"](found, count)

    def disasm_lite(self, code: bytes, address: int, count: int = 0):
        """(address, size, mnemonic, operand text) of each instruction, as capstone's Cs.disasm_lite."""
        found, count = self.raw_disasm(code, address, count)
        if not count:
            self._check()
            return
        try:
            for i in range(count):
                insn = found[i]
                yield insn.address, insn.size, insn.mnemonic.decode("ascii"), insn.op_str.decode("ascii")
        finally:
            self.free(found, count)

    def disasm(self, code: bytes, address: int, count: int = 0) -> list[Decoded]:
        """Each instruction with its detail (a handle made with detail), copied out."""
        found, count = self.raw_disasm(code, address, count)
        if not count:
            self._check()
        try:
            return [Decoded(found[i], self.reg_name) for i in range(count)]
        finally:
            self.free(found, count)

    def regs_access(self, raw: Insn):
        """(registers read, registers written) of a cs_insn with detail, or None on an error."""
        buffers = getattr(self._per_thread, "registers", None)
        if buffers is None:  # (capstone fills them; each thread its own)
            buffers = self._per_thread.registers = (_Registers(), c_uint8(), _Registers(), c_uint8())
        read, read_count, written, written_count = buffers
        status = self._f["cs_regs_access"](self.handle, byref(raw), byref(read), byref(read_count), byref(written),
                                           byref(written_count))
        if status != CS_ERR_OK:
            return None
        return tuple(read[: read_count.value]), tuple(written[: written_count.value])

    def reg_name(self, register: int) -> str:
        name = self._f["cs_reg_name"](self.handle, register)
        return name.decode("ascii") if name is not None else ""

    def _check(self) -> None:
        status = self._f["cs_errno"](self.handle)
        if status != CS_ERR_OK:
            raise CapstoneError(f"capstone failed ({status})")
