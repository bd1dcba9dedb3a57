"""The firmware image: loadable segments, symbols, ARM mapping symbols and DWARF lines."""
from __future__ import annotations

import bisect
import hashlib
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .files import NotRegular, open_regular

PF_X = 0x1
SHF_ALLOC, SHF_EXECINSTR = 0x2, 0x4
PF_W = 0x2
PT_LOAD = 1
EM_ARM = 40
SHN_XINDEX = 0xFFFF
# e_machine values named in the error for firmware built for another processor (the ELF specification's names)
MACHINES = {2: "EM_SPARC", 3: "EM_386", 8: "EM_MIPS", 20: "EM_PPC", 21: "EM_PPC64", 40: "EM_ARM", 62: "EM_X86_64",
            83: "EM_AVR", 94: "EM_XTENSA", 105: "EM_MSP430", 183: "EM_AARCH64", 243: "EM_RISCV"}


class ElfError(ValueError):
    """The file is not firmware mcusim can run (exit code 3)."""


ET_REL, ET_EXEC, ET_DYN = 1, 2, 3
SHT_NULL, SHT_STRTAB, SHT_NOBITS = 0, 3, 8
ELF_HEADER = struct.Struct("<16sHHIIIIIHHHHHH")  # ELF32 file header
_PROGRAM_HEADER = struct.Struct("<8I")           # p_type, p_offset, p_vaddr, p_paddr, p_filesz, p_memsz, ...
SECTION_HEADER = struct.Struct("<10I")           # sh_name, sh_type, sh_flags, sh_addr, sh_offset, sh_size, ...
SYMBOL = np.dtype([("name", "<u4"), ("value", "<u4"), ("size", "<u4"), ("info", "u1"), ("other", "u1"),
                   ("shndx", "<u2")])  # Elf32_Sym
STT_OBJECT, STT_FUNC = 1, 2
MAPPING_PREFIXES = ("$t", "$a", "$d")  # Arm ELF mapping symbols: Thumb code, Arm code, data


def _read_elf(path: Path, memory_bytes: int | None = None) -> bytes:
    """The ELF's bytes, up to the last one its headers name: a device, a FIFO or a directory
    is refused before any read (a FIFO would block, /dev/zero never end), every table and
    segment is checked against the file's size, and the loadable segments against
    `memory_bytes` (all of the board's memory), before the file is read: a huge file, or
    a header claiming a huge segment, is refused unread."""
    try:
        f = open_regular(path)
    except NotRegular as exc:
        raise ElfError(f"{path}: is {exc.kind}, not an ELF file") from None
    except OSError as exc:
        raise ElfError(f"{path}: cannot read: {exc.strerror}") from exc
    with f:
        fd = f.fileno()
        size = os.fstat(fd).st_size
        try:
            head = f.read(ELF_HEADER.size)
            if head[:4] != b"\x7fELF":
                raise ElfError(f"{path}: not an ELF file (no ELF magic number)")
            if len(head) < ELF_HEADER.size:
                raise ElfError(f"{path}: truncated ELF ({len(head)} bytes, shorter than an ELF header)")
            if head[4] != 1:
                raise ElfError(f"{path}: a 64-bit ELF; mcusim runs 32-bit Arm Cortex-M firmware")
            if head[5] != 1:
                raise ElfError(f"{path}: a big-endian ELF; mcusim runs little-endian Arm Cortex-M firmware")
            extent = _extent(path, f, head, size, memory_bytes)
            f.seek(0)
            raw = f.read(extent)
        except OSError as exc:
            raise ElfError(f"{path}: cannot read: {exc.strerror}") from exc
        if len(raw) != extent:
            raise ElfError(f"{path}: truncated ELF (the file shrank while it was read)")
        return raw

def _extent(path: Path, f, head: bytes, size: int, memory_bytes: int | None) -> int:
    """Where the last byte any header names ends; ElfError when it is past the end of the file,
    or when the loadable segments hold more bytes than `memory_bytes`."""
    (_, e_type, _, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum, _) = ELF_HEADER.unpack(head)
    if e_type == ET_REL:
        raise ElfError(f"{path}: a relocatable object file (ET_REL, e.g. a .o), not an executable: link it first")
    if e_type not in (ET_EXEC, ET_DYN):
        raise ElfError(f"{path}: not an executable ELF (type {e_type}); mcusim runs linked firmware (ET_EXEC)")

    def table(what, offset, count, entry, layout):
        if count and entry != layout.size:
            raise ElfError(f"{path}: corrupt ELF ({what} entries of {entry} bytes, not {layout.size})")
        if offset + count * entry > size:
            raise ElfError(f"{path}: truncated ELF (the {what} table extends past the end of the file)")
        f.seek(offset)
        data = f.read(count * entry)
        return [layout.unpack_from(data, i * entry) for i in range(count)], offset + count * entry

    if shnum == 0 and shoff:  # more sections than e_shnum holds: the count is section 0's sh_size
        shnum = table("section header", shoff, 1, shentsize, SECTION_HEADER)[0][0][5]
    programs, end_programs = table("program header", phoff, phnum, phentsize, _PROGRAM_HEADER)
    sections, end_sections = table("section header", shoff, shnum, shentsize, SECTION_HEADER)
    extent = max(ELF_HEADER.size, end_programs, end_sections)
    for index, p in enumerate(programs):
        if p[1] + p[4] > size:
            raise ElfError(f"{path}: truncated ELF (segment {index} extends past the end of the file)")
        extent = max(extent, p[1] + p[4])
    loaded = sum(p[4] for p in programs if p[0] == PT_LOAD and p[5])
    if memory_bytes is not None and loaded > memory_bytes:
        raise ElfError(f"{path}: the loadable segments hold {loaded:,} bytes, more than the board's whole memory "
                       f"({memory_bytes:,} bytes): it does not fit the memory of this board")
    for index, s in enumerate(sections):
        if s[1] not in (SHT_NULL, SHT_NOBITS):
            if s[4] + s[5] > size:
                raise ElfError(f"{path}: truncated ELF (section {index} extends past the end of the file)")
            extent = max(extent, s[4] + s[5])
    return extent


@dataclass(frozen=True)
class Segment:
    index: int
    paddr: int
    vaddr: int
    data: bytes
    memsz: int
    executable: bool
    sections: tuple[str, ...]

    def describe(self) -> str:
        names = ", ".join(self.sections) or "no sections"
        return f"segment {self.index} ({names})"


@dataclass
class ElfImage:
    path: Path
    sha256: str
    entry: int
    segments: list[Segment]
    symbols: list[tuple[int, int, str]]  # (address, size, name), functions and objects, sorted
    mapping_symbols: list[tuple[int, str]]  # ($t / $a / $d, address), sorted
    has_dwarf: bool
    _symbol_addresses: list[int] = field(default_factory=list, repr=False)
    functions: list[tuple[int, int, str]] = field(default_factory=list)  # (address, size, name), STT_FUNC only
    data_ranges: list[tuple[int, int]] = field(default_factory=list)  # [start, end) load addresses of initialised
    #                            data: non-executable segments, and non-executable sections in executable ones
    sections: list[Section] = field(default_factory=list)  # the allocated sections that have a size, in file order
    _lines: list[tuple[int, str, int]] | None = field(default=None, repr=False)

    @classmethod
    def load(cls, path: str | Path, memory_bytes: int | None = None) -> "ElfImage":
        """The image at `path`; with `memory_bytes` (the board's), loadable segments larger than
        that are refused before the file is read."""
        path = Path(path)
        raw = _read_elf(path, memory_bytes)
        try:
            return cls._parse(path, raw)
        except ElfError:
            raise
        except (ValueError, KeyError, IndexError, struct.error) as exc:
            raise ElfError(f"{path}: truncated or corrupt ELF ({exc})") from exc

    @classmethod
    def _parse(cls, path: Path, raw: bytes) -> "ElfImage":
        """The image of `raw` (whose tables _read_elf checked against its size), read from its
        headers with struct and NumPy: pyelftools is imported only for DWARF lines (_read_lines),
        as importing it alone costs every run tens of milliseconds (docs/performance.md,
        "Twenty-fifth pass")."""
        header = ELF_HEADER.unpack_from(raw)
        machine, entry, phoff, phentsize, phnum = header[2], header[4], header[5], header[9], header[10]
        if machine != EM_ARM:
            raise ElfError(f"{path}: built for {MACHINES.get(machine, f'machine type {machine}')}, not for Arm (EM_ARM)")
        sections = section_table(raw)
        allocated = [s for s in sections if s.flags & SHF_ALLOC and s.size]
        segments, data_ranges = [], []
        for index in range(phnum):
            kind, offset, vaddr, paddr, filesz, memsz, flags, _ = _PROGRAM_HEADER.unpack_from(raw, phoff + index * phentsize)
            if kind != PT_LOAD or memsz == 0:
                continue
            data = raw[offset: offset + filesz]  # (checked by _extent)
            if filesz > memsz:
                raise ElfError(f"{path}: corrupt ELF (segment {index} has more bytes in the file, "
                               f"{filesz:,}, than in memory, {memsz:,})")
            inside = [s for s in allocated if _in_load_segment(s, offset, vaddr, filesz, memsz)]
            segments.append(Segment(index, paddr, vaddr, data, memsz, bool(flags & PF_X), tuple(s.name for s in inside)))
            if not flags & PF_X:
                data_ranges.append((paddr, paddr + filesz))
            else:  # e.g. .rodata linked into the code's segment
                data_ranges += [(paddr + s.address - vaddr, paddr + s.address - vaddr + s.size) for s in inside
                                if not s.flags & SHF_EXECINSTR and s.type != SHT_NOBITS]
        if not any(s.executable and s.data for s in segments):
            raise ElfError(f"{path}: no loadable code (no executable PT_LOAD segment with contents)")
        symbols, mapping, functions = _symbol_table(sections, raw)
        symbols.sort()
        mapping.sort()
        names = {s.name for s in sections}
        has_dwarf = bool(names & {".debug_info", ".zdebug_info", ".eh_frame"}) and ".debug_line" in names
        image = cls(path, hashlib.sha256(raw).hexdigest(), entry, segments, symbols, mapping, has_dwarf)
        image._symbol_addresses = [s[0] for s in symbols]
        image.functions = sorted(set(functions))
        image.data_ranges = sorted(r for r in data_ranges if r[1] > r[0])
        image.sections = allocated
        image._raw = raw
        return image

    def symbol(self, name: str) -> int | None:
        return next((addr for addr, _, n in self.symbols if n == name), None)

    def symbol_size(self, name: str) -> int:
        """The symbol's size in bytes (0 when the ELF gives none, or for a name it lacks)."""
        return next((size for _, size, n in self.symbols if n == name), 0)

    def symbolize(self, address: int) -> str:
        """`name+0xoff` for the function or object containing `address`, else hex."""
        i = bisect.bisect_right(self._symbol_addresses, address) - 1
        while i >= 0:
            start, size, name = self.symbols[i]
            if start <= address < start + max(size, 1):
                offset = address - start
                return f"{name}+0x{offset:x}" if offset else name
            if start < address and size == 0:
                break
            i -= 1
        return f"0x{address:08x}"

    def source_line(self, address: int) -> str | None:
        """`file:line` of `address` from DWARF, or None without line info."""
        if not self.has_dwarf:
            return None
        if self._lines is None:
            self._lines = self._read_lines()
        keys = [row[0] for row in self._lines]
        i = bisect.bisect_right(keys, address) - 1
        if i < 0 or self._lines[i][2] == 0:
            return None
        return f"{self._lines[i][1]}:{self._lines[i][2]}"

    @staticmethod
    def _file_name(entry, directories: list[str], version: int) -> str:
        """The file's path as the compiler saw it: its directory (unless the build folder) + name."""
        name = entry.name.decode(errors="replace")
        index = entry.dir_index if version >= 5 else entry.dir_index - 1
        if name.startswith("/") or index < (1 if version >= 5 else 0) or index >= len(directories):
            return name
        directory = directories[index]
        path = f"{directory}/{name}" if directory not in ("", ".") else name
        return path[2:] if path.startswith("./") else path

    def _read_lines(self) -> list[tuple[int, str, int]]:
        import io

        from elftools.elf.elffile import ELFFile

        rows = []
        elf = ELFFile(io.BytesIO(self._raw))
        dwarf = elf.get_dwarf_info()
        for cu in dwarf.iter_CUs():
            program = dwarf.line_program_for_CU(cu)
            if program is None:
                continue
            header = program.header
            files = header["file_entry"]
            directories = [d.decode(errors="replace") for d in header["include_directory"]]
            version = header["version"]
            names = {}
            for number, entry in enumerate(files, start=0 if version >= 5 else 1):
                names[number] = self._file_name(entry, directories, version)
            for entry in program.get_entries():
                state = entry.state
                if state is None:
                    continue
                if state.end_sequence:  # the addresses from here on have no line (until another sequence)
                    rows.append((state.address, "", 0))
                else:
                    rows.append((state.address, names.get(state.file, "?"), state.line))
        rows.sort(key=lambda row: (row[0], row[2] != 0))  # a sequence starting where one ends wins
        return rows

    def line_table(self) -> list[tuple[int, str, int]]:
        """(address, file, line) sorted by address: each row holds up to the next; a line of 0
        (file "") marks code with no line information."""
        if not self.has_dwarf:
            return []
        if self._lines is None:
            self._lines = self._read_lines()
        return self._lines


def _symbol_table(sections: list["Section"], raw: bytes) -> tuple[list, list, list]:
    """(symbols, mapping symbols, functions) of .symtab, read as one NumPy array: a Python object
    per symbol (as pyelftools makes) took 0.2 s for large-startup's 6,000 (a TFLM or RTOS image
    has as many), against about 5 ms so. Functions and objects defined in a section, their
    addresses without the Thumb bit; mapping symbols as (address, "$t" / "$a" / "$d")."""
    symtab = next((s for s in sections if s.name == ".symtab"), None)
    if symtab is None:
        return [], [], []
    if symtab.entry_size != SYMBOL.itemsize:
        # (load() makes this an ElfError that names the file)
        raise ValueError(f"symbol table entries of {symtab.entry_size} bytes, not {SYMBOL.itemsize}")
    if symtab.size % SYMBOL.itemsize:
        raise ValueError(f"a symbol table of {symtab.size} bytes, not a whole number of entries")
    strtab = sections[symtab.link]  # (the sections' extents were checked against the file)
    if strtab.type != SHT_STRTAB:
        raise ValueError(f"the symbol table's names are in section {symtab.link}, not a string table")
    strings = raw[strtab.offset: strtab.offset + strtab.size]
    table = np.frombuffer(raw, SYMBOL, count=symtab.size // SYMBOL.itemsize, offset=symtab.offset)
    first = np.frombuffer(strings + b"\0", np.uint8)[np.minimum(table["name"], len(strings))]

    def name_of(offset: int) -> str:
        end = strings.find(b"\0", offset)
        return strings[offset:end if end >= 0 else len(strings)].decode("utf-8", errors="replace")

    symbols, mapping, functions = [], [], []
    kind = table["info"] & 0xF
    defined = np.isin(kind, (STT_FUNC, STT_OBJECT)) & (table["shndx"] != 0)  # (not SHN_UNDEF)
    for i in np.flatnonzero((first != 0) & ((first == ord("$")) | defined)):
        name, value = name_of(int(table["name"][i])), int(table["value"][i])
        if name.startswith(MAPPING_PREFIXES):
            mapping.append((value, name[:2]))
        elif defined[i]:
            entry = (value & ~1 if kind[i] == STT_FUNC else value, int(table["size"][i]), name)
            symbols.append(entry)
            if kind[i] == STT_FUNC:
                functions.append(entry)
    return symbols, mapping, functions


@dataclass(frozen=True)
class Section:
    """One section header, its name read from the section name string table."""
    name: str
    type: int
    flags: int
    address: int
    offset: int
    size: int
    link: int
    entry_size: int


def section_table(raw: bytes) -> list[Section]:
    """The section headers of a 32-bit little-endian ELF file (whose table lies within `raw`):
    more than e_shnum holds are counted in section 0's sh_size, and the index of the names'
    table, if SHN_XINDEX, is in section 0's sh_link (0, SHN_UNDEF: the sections have no names).
    ValueError where that index is no section of the table; struct.error where a header lies
    beyond `raw`."""
    header = ELF_HEADER.unpack_from(raw)
    shoff, shentsize, shnum, shstrndx = header[6], header[11], header[12], header[13]
    if not shoff:
        return []
    if shnum == 0:
        shnum = SECTION_HEADER.unpack_from(raw, shoff)[5]
    headers = [SECTION_HEADER.unpack_from(raw, shoff + i * shentsize) for i in range(shnum)]
    if not headers:
        return []
    if shstrndx == SHN_XINDEX:
        shstrndx = headers[0][6]
    if shstrndx >= len(headers):
        raise ValueError(f"the section names are in section {shstrndx}, which the table does not hold")
    names = b""  # (SHN_UNDEF, 0: no names)
    if shstrndx:
        names = raw[headers[shstrndx][4]: headers[shstrndx][4] + headers[shstrndx][5]]

    def name_of(offset: int) -> str:
        end = names.find(b"\0", offset)
        return names[offset: end if end >= 0 else len(names)].decode("utf-8", errors="replace")
    return [Section(name_of(h[0]), h[1], h[2], h[3], h[4], h[5], h[6], h[9]) for h in headers]


def _in_load_segment(section: Section, offset: int, vaddr: int, filesz: int, memsz: int) -> bool:
    """Whether an allocated section lies in a PT_LOAD segment, by the strict rule of binutils'
    readelf (ELF_SECTION_IN_SEGMENT_STRICT, as pyelftools applies it too): its addresses lie
    wholly inside the segment's (an empty one not at the very end of a segment that is not
    empty), and so do its bytes in the file unless it has none (SHT_NOBITS)."""
    if not (section.address >= vaddr and section.address - vaddr + section.size <= memsz
            and (memsz == 0 or section.address - vaddr <= memsz - 1)):
        return False
    if section.type == SHT_NOBITS:
        return True
    return (section.offset >= offset and section.offset - offset + section.size <= filesz
            and (filesz == 0 or section.offset - offset <= filesz - 1))
