"""The symbol table read as one NumPy array (elf._symbol_table) gives what pyelftools' per-symbol
reading gives, and a corrupt one is refused as a corrupt ELF."""
import io
import struct

import pytest
from elftools.elf.elffile import ELFFile

from mcusim.elf import ElfError, ElfImage


def pyelftools_symbols(path):
    """The reading elf.py did before, symbol by symbol with pyelftools (the oracle)."""
    elf = ELFFile(io.BytesIO(path.read_bytes()))
    symbols, mapping, functions = [], [], []
    for sym in elf.get_section_by_name(".symtab").iter_symbols():
        name, value, kind = sym.name, sym["st_value"], sym["st_info"]["type"]
        if name.startswith(("$t", "$a", "$d")):
            mapping.append((value, name[:2]))
        elif name and kind in ("STT_FUNC", "STT_OBJECT") and sym["st_shndx"] != "SHN_UNDEF":
            entry = (value & ~1 if kind == "STT_FUNC" else value, sym["st_size"], name)
            symbols.append(entry)
            if kind == "STT_FUNC":
                functions.append(entry)
    return sorted(symbols), sorted(mapping), sorted(set(functions))


@pytest.mark.parametrize("elf", ["mps2-an386/large-startup.elf", "mcu-d/person_detection-opt.elf",
                                 "mcu-s/printf-uart.elf", "mcu-b/hello.elf"])
def test_the_symbol_table_is_read_as_pyelftools_reads_it(firmware_build, elf):
    image = ElfImage.load(firmware_build / elf)
    symbols, mapping, functions = pyelftools_symbols(firmware_build / elf)
    assert len(symbols) > 100 and len(mapping) > 100
    assert (image.symbols, image.mapping_symbols, image.functions) == (symbols, mapping, functions)


def test_a_symbol_table_with_entries_of_another_size_is_a_corrupt_elf(firmware_build, tmp_path):
    raw = bytearray((firmware_build / "mcu-m" / "hello.elf").read_bytes())
    shoff, = struct.unpack_from("<I", raw, 0x20)
    shentsize, shnum = struct.unpack_from("<HH", raw, 0x2E)
    for index in range(shnum):
        header = shoff + index * shentsize
        if struct.unpack_from("<I", raw, header + 4)[0] == 2:  # SHT_SYMTAB
            struct.pack_into("<I", raw, header + 36, 8)  # sh_entsize (pyelftools only checks the size divides)
    path = tmp_path / "corrupt.elf"
    path.write_bytes(bytes(raw))
    with pytest.raises(ElfError, match=r"corrupt\.elf: truncated or corrupt ELF \(symbol table entries of 8 bytes"):
        ElfImage.load(path)
