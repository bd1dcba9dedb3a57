"""The linker script of a model build whose placement puts the arena in DTCM or SRAM, or the code
of the layers and kernels in ITCM (boards with tightly coupled memories, such as mcu-d). It is
the board's own script (firmware/boards/<board>/linker.ld, its MEMORY and common/sections.ld)
with the arena carved out of the board's RAM region, at its bottom (DTCM) or its top (SRAM),
and an ITCM region whose code the firmware copies there from flash before the inference."""
from __future__ import annotations

import re
from pathlib import Path

from .placement import Placement

RAM_LINE = re.compile(r"^(\s*)RAM\s*\(([rwx]+)\)\s*:\s*ORIGIN\s*=\s*(0x[0-9A-Fa-f]+|\d+)\s*,\s*"
                      r"LENGTH\s*=\s*(0x[0-9A-Fa-f]+|\d+)\s*([KM]?)\s*$", re.M)
UNITS = {"": 1, "K": 1024, "M": 1024 * 1024}
ARENA_SECTION = ".tfl_arena"
ITCM_SECTION_PREFIX = ".itcm_text"
# The code starts this far into ITCM so that no function sits at address 0, where a call through a
# null pointer would run it instead of faulting.
ITCM_SKIP = 32


class LinkError(ValueError):
    """This placement cannot be linked for this board, with the reason."""


def _memory(board, name: str):
    return next((m for m in board.memory if m.name == name), None)


def needs_script(placement: Placement) -> bool:
    return placement.arena != "ram" or placement.code != "flash"


def linker_script(board, board_script: Path, placement: Placement, arena_bytes: int) -> str:
    """The board's linker script with the arena and code placed as `placement` asks."""
    text = board_script.read_text()
    found = RAM_LINE.search(text)
    if found is None:
        raise LinkError(f"{board_script}: no `RAM (rwx) : ORIGIN = ..., LENGTH = ...` line to place the arena in")
    indent, mode = found.group(1), found.group(2)
    ram_origin = int(found.group(3), 0)
    ram_end = ram_origin + int(found.group(4), 0) * UNITS[found.group(5)]
    regions = []
    size = -(-max(arena_bytes, 4) // 16) * 16
    if placement.arena == "dtcm":
        dtcm = _memory(board, "dtcm")
        if dtcm is None:
            raise LinkError(f"{board.name} has no DTCM")
        if dtcm.base != ram_origin:
            raise LinkError(f"{board.name}'s linker script does not start its RAM at the DTCM ({dtcm.base:#x})")
        if size > dtcm.size_bytes:
            raise LinkError(f"the arena ({arena_bytes:,} bytes) does not fit {board.name}'s DTCM "
                            f"({dtcm.size_bytes:,} bytes); try arena = \"sram\"")
        regions.append(("ARENA", dtcm.base, size))
        ram_origin += size
    elif placement.arena == "sram":
        if _memory(board, "dtcm") is None:
            raise LinkError(f"arena = \"sram\" chooses SRAM over DTCM, and {board.name} has no DTCM "
                            "(its arena is in SRAM already)")
        srams = [m for m in board.memory if m.name.startswith("sram") and ram_origin <= m.base < ram_end]
        lowest = min((m.base for m in srams), default=ram_end)
        if ram_end - size < lowest:
            raise LinkError(f"the arena ({arena_bytes:,} bytes) does not fit {board.name}'s SRAM "
                            f"({ram_end - lowest:,} bytes)")
        regions.append(("ARENA", ram_end - size, size))
        ram_end -= size
    if placement.code == "itcm":
        itcm = _memory(board, "itcm_ram")
        if itcm is None:
            raise LinkError(f"{board.name} has no ITCM")
        regions.append(("ITCM", itcm.base + ITCM_SKIP, itcm.size_bytes - ITCM_SKIP))
    lines = [f"{indent}RAM ({mode}) : ORIGIN = {ram_origin:#010x}, LENGTH = {ram_end - ram_origin}"]
    lines += [f"{indent}{name} (rwx) : ORIGIN = {origin:#010x}, LENGTH = {length}" for name, origin, length in regions]
    sections = []
    if placement.arena != "ram":
        sections.append(f"    {ARENA_SECTION} (NOLOAD) : {{ . = ALIGN(16); *({ARENA_SECTION}) }} > ARENA")
    if placement.code == "itcm":
        sections += [f"    {ITCM_SECTION_PREFIX} :",
                     "    {",
                     "        . = ALIGN(4);",
                     "        _sitcm_text = .;",
                     f"        *({ITCM_SECTION_PREFIX} {ITCM_SECTION_PREFIX}.*)",
                     "        . = ALIGN(4);",
                     "        _eitcm_text = .;",
                     "    } > ITCM AT > FLASH",
                     f"    _litcm_text = LOADADDR({ITCM_SECTION_PREFIX});"]
    head = f"/* {board_script.name} of {board.name}, with the model's placement: {placement.as_dict()} */\n"
    return (head + text[:found.start()] + "\n".join(lines) + text[found.end():]
            + "\nSECTIONS\n{\n" + "\n".join(sections) + "\n}\n")


def itcm_renames(section_names) -> list[str]:
    """objcopy arguments moving an object's code (.text, .text.*) into the ITCM output section."""
    arguments = []
    for name in section_names:
        if name == ".text" or name.startswith(".text."):
            arguments += ["--rename-section", f"{name}={ITCM_SECTION_PREFIX}{name[len('.text'):]}"]
    return arguments
