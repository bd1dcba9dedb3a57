"""The registers gdb sees, in `g` packet order, and the target description that names them.

GDB's Arm target code expects the core registers in the feature org.gnu.gdb.arm.m-profile (r0-r12,
sp, lr, pc, xpsr), the banked stack pointers in org.gnu.gdb.arm.m-system and, with an FPU,
d0-d15 and fpscr in org.gnu.gdb.arm.vfp (it makes s0-s31 from them); PRIMASK, BASEPRI,
FAULTMASK and CONTROL, which no standard feature holds, go in one of mcusim's own, so gdb shows
them as $primask and so on (GDB manual, "Standard Target Features": ARM Features).
"""
from __future__ import annotations

from dataclasses import dataclass

from unicorn import arm_const as A

from ..run_control import CORE_REGISTERS


@dataclass(frozen=True)
class Register:
    name: str
    bits: int
    feature: str
    type: str = "int"

    @property
    def size(self) -> int:
        return self.bits // 8


M_PROFILE, M_SYSTEM, SPECIAL, VFP = ("org.gnu.gdb.arm.m-profile", "org.gnu.gdb.arm.m-system",
                                     "org.mcusim.arm.m-special", "org.gnu.gdb.arm.vfp")


def registers(fpu: bool) -> list[Register]:
    core = [Register(f"r{i}", 32, M_PROFILE) for i in range(13)]
    core += [Register("sp", 32, M_PROFILE, "data_ptr"), Register("lr", 32, M_PROFILE),
             Register("pc", 32, M_PROFILE, "code_ptr"), Register("xpsr", 32, M_PROFILE)]
    core += [Register("msp", 32, M_SYSTEM, "data_ptr"), Register("psp", 32, M_SYSTEM, "data_ptr")]
    core += [Register(name, 32, SPECIAL) for name in ("primask", "basepri", "faultmask", "control")]
    if fpu:
        core += [Register(f"d{i}", 64, VFP, "ieee_double") for i in range(16)] + [Register("fpscr", 32, VFP)]
    return core


def description(regs: list[Register]) -> str:
    """The target description XML (architecture armv7e-m; one <feature> per group, in order)."""
    lines = ['<?xml version="1.0"?>', '<!DOCTYPE target SYSTEM "gdb-target.dtd">', "<target>",
             "  <architecture>arm</architecture>"]
    feature = None
    for number, reg in enumerate(regs):
        if reg.feature != feature:
            if feature is not None:
                lines.append("  </feature>")
            feature = reg.feature
            lines.append(f'  <feature name="{feature}">')
        lines.append(f'    <reg name="{reg.name}" bitsize="{reg.bits}" regnum="{number}" type="{reg.type}"/>')
    lines += ["  </feature>", "</target>"]
    return "\n".join(lines) + "\n"


def read(uc, reg: Register) -> int:
    if reg.name.startswith("d") and reg.name[1:].isdigit():
        return uc.reg_read(getattr(A, f"UC_ARM_REG_D{reg.name[1:]}"))
    if reg.name == "fpscr":
        return uc.reg_read(A.UC_ARM_REG_FPSCR)
    if reg.name == "xpsr":  # (the T bit: an M-profile core is always in Thumb state; Unicorn leaves it out)
        return uc.reg_read(A.UC_ARM_REG_XPSR) | 1 << 24
    return uc.reg_read(CORE_REGISTERS[reg.name])


def encode(value: int, reg: Register) -> str:
    """Target byte order (little-endian) hex, as `g` and `p` send it."""
    return (value & ((1 << reg.bits) - 1)).to_bytes(reg.size, "little").hex()


def decode(text: str, reg: Register) -> int:
    return int.from_bytes(bytes.fromhex(text), "little")
