"""Tiny test programs from assembly source, with the cross toolchain (a CI failure if absent)."""
import subprocess
from pathlib import Path

from conftest import require_tool

# A Cortex-M4 image's start: the vector table's initial SP ({stack}) and reset vector, then
# `reset:` setting DEMCR.TRCENA (the DWT and ITM on); a test's source carries on after it.
RESET = """
    .syntax unified
    .cpu cortex-m4
    .thumb
    .text
    .word {stack}
    .word reset
    .global reset
    .thumb_func
    .type reset, %function
reset:
    ldr r2, =0xE000EDFC      @ DEMCR.TRCENA
    mov r1, #0x01000000
    str r1, [r2]
"""


def build_elf(tmp_path: Path, name: str, source: str, text_address: int = 0x08000000) -> Path:
    """Assemble `source` and link it at `text_address` with entry `reset`; returns the ELF."""
    assembler, linker = require_tool("arm-none-eabi-as"), require_tool("arm-none-eabi-ld")
    path, obj, elf = tmp_path / f"{name}.s", tmp_path / f"{name}.o", tmp_path / f"{name}.elf"
    path.write_text(source)
    subprocess.run([assembler, "-o", str(obj), str(path)], check=True)
    subprocess.run([linker, f"-Ttext=0x{text_address:08x}", "-e", "reset", "-o", str(elf), str(obj)], check=True)
    return elf
