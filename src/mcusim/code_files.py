"""The Thumb code of compiled files other than the firmware being run: ELF executables,
relocatable objects and ar archives of them (a toolchain's C library, a TFLM or vendor HAL
library build). `mcusim prepare` decodes it for its register patterns alone
(timing/register_pattern.py), so that the first run of firmware linked with such code renames
most of its encodings from patterns met before instead of describing each from capstone's detail.
Code is found by the Arm mapping symbols ($t up to the next $d), as in a firmware image
(timing/decoder.code_ranges); a file without them gives none.
"""
from __future__ import annotations

import shutil
import struct
import subprocess
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from .elf import ELF_HEADER, EM_ARM, ET_EXEC, MAPPING_PREFIXES, SECTION_HEADER, SHF_EXECINSTR, SYMBOL, section_table
from .timing.decoder import code_ranges

ARCHIVE_MAGIC = b"!<arch>\n"
MEMBER_HEADER = 60  # an ar member's header: name 16, dates and ids 28, size 10 (decimal text), "`\n"
ELF_MAGIC = b"\x7fELF"
COMPILER = "arm-none-eabi-gcc"
LIBRARIES = ("libc.a", "libc_nano.a", "libm.a", "libgcc.a")  # what firmware built with it links most
SHT_PROGBITS, SHT_SYMTAB = 1, 2


class NotCode(ValueError):
    """A file that is neither an ELF file nor an ar archive, or one that is damaged."""


def thumb_code(path: Path) -> list[bytes]:
    """The Thumb code ranges of an ELF file or of an ar archive's ELF members, each its bytes."""
    data = Path(path).read_bytes()
    if data.startswith(ARCHIVE_MAGIC):
        return [piece for member in _members(data, path) for piece in _elf_code(member, path)]
    if data.startswith(ELF_MAGIC):
        return _elf_code(data, path)
    raise NotCode(f"{path}: neither an ELF file nor an ar archive (.a)")


def toolchain_libraries(core: str) -> list[Path]:
    """The libraries of LIBRARIES that arm-none-eabi-gcc links for `core` with the kit's flags
    (tinyml.model_build.CPU_FLAGS: the multilib of that FPU), as the compiler finds them; none
    where it is not installed."""
    from .tinyml.model_build import CPU_FLAGS

    compiler = shutil.which(COMPILER)
    if compiler is None or core not in CPU_FLAGS:
        return []
    found = []
    for name in LIBRARIES:
        try:
            done = subprocess.run([compiler, *CPU_FLAGS[core], f"-print-file-name={name}"], capture_output=True,
                                  text=True, timeout=60)
        except (OSError, subprocess.SubprocessError):
            return found
        path = Path(done.stdout.strip())
        if done.returncode == 0 and path.is_absolute() and path.is_file():  # (else it prints the bare name)
            found.append(path.resolve())
    return found


def _members(data: bytes, path: Path):
    """The ELF members of an ar archive (not its symbol index or long-name table)."""
    offset = len(ARCHIVE_MAGIC)
    while offset + MEMBER_HEADER <= len(data):
        header = data[offset: offset + MEMBER_HEADER]
        try:
            size = int(header[48:58])
        except ValueError:
            size = -1
        if header[58:60] != b"`\n" or size < 0 or offset + MEMBER_HEADER + size > len(data):
            raise NotCode(f"{path}: a damaged ar archive (member at byte {offset})")
        body = data[offset + MEMBER_HEADER: offset + MEMBER_HEADER + size]
        if body.startswith(ELF_MAGIC):
            yield body
        offset += MEMBER_HEADER + size + size % 2  # (members start at even offsets)


def _elf_code(data: bytes, path: Path) -> list[bytes]:
    """The Thumb code ranges of a little-endian 32-bit Arm ELF file's executable sections, read
    from its section headers and .symtab directly (pyelftools makes a Python object of every
    section header and symbol: far slower over a library's thousands of small objects). In an
    object, mapping symbols give offsets in their section; in an executable, addresses."""
    try:
        _, e_type, machine, *_, shentsize, _, _ = ELF_HEADER.unpack_from(data)
        if data[4:6] != b"\x01\x01" or machine != EM_ARM or shentsize != SECTION_HEADER.size:
            return []  # (not 32-bit little-endian Arm code)
        sections = section_table(data)
        marks: dict[int, list[tuple[int, str]]] = {}  # section index -> its mapping symbols
        for symtab in sections:
            if symtab.type != SHT_SYMTAB or symtab.entry_size != SYMBOL.itemsize:
                continue
            strtab = sections[symtab.link]
            strings = data[strtab.offset: strtab.offset + strtab.size]
            table = np.frombuffer(data, SYMBOL, count=symtab.size // symtab.entry_size, offset=symtab.offset)
            for i in np.flatnonzero(np.frombuffer(strings + b"\0", np.uint8)[np.minimum(table["name"], len(strings))]
                                    == ord("$")):
                name = strings[table["name"][i]: table["name"][i] + 4].split(b"\0")[0].decode("ascii", "replace")
                if name[:2] in MAPPING_PREFIXES and name[2:3] in ("", "."):
                    marks.setdefault(int(table["shndx"][i]), []).append((int(table["value"][i]), name[:2]))
        pieces = []
        for index, section in enumerate(sections):
            if section.type != SHT_PROGBITS or not section.flags & SHF_EXECINSTR or index not in marks:
                continue
            base = section.address if e_type == ET_EXEC else 0
            code = data[section.offset: section.offset + section.size]
            if len(code) != section.size:
                raise ValueError(f"section {index} extends past the end of the file")
            whole = SimpleNamespace(executable=True, data=code, vaddr=base, paddr=base)
            pieces += [code[start - base: end - base] for start, end in code_ranges([whole], sorted(marks[index]))]
        return pieces
    except (struct.error, ValueError, IndexError) as error:
        raise NotCode(f"{path}: a damaged ELF file ({error})") from error
