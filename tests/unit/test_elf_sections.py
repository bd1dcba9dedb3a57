"""The ELF image's sections read from its headers with struct (mcusim.elf.section_table), not
pyelftools, whose import alone cost every run tens of milliseconds: the section names, more
sections than e_shnum holds (the count in section 0), the names' table given in section 0
(SHN_XINDEX), the sections of each segment; a damaged table or symbol table is a corrupt ELF;
and a run imports no pyelftools (only source lines from DWARF do)."""
import os
import struct
import subprocess
import sys
from pathlib import Path

import pytest

import mcusim
from mcusim.elf import ElfError, ElfImage, section_table
from test_elf_fuzz import BASE, SECTION_TABLE

NAMES = ["", ".text", ".data", ".bss", ".symtab", ".strtab", ".shstrtab"]
E_SHNUM, E_SHSTRNDX = 48, 50  # in the ELF32 file header
SH_SIZE, SH_LINK = 20, 24  # in a section header
SYMTAB = SECTION_TABLE + 4 * 40


def changed(*edits) -> bytes:
    raw = bytearray(BASE)
    for layout, offset, value in edits:
        struct.pack_into(layout, raw, offset, value)
    return bytes(raw)


def load(raw: bytes, tmp_path) -> ElfImage:
    path = tmp_path / "firmware.elf"
    path.write_bytes(raw)
    return ElfImage.load(path)


def test_the_sections_have_their_names_and_segments(tmp_path):
    assert [s.name for s in section_table(BASE)] == NAMES
    image = load(BASE, tmp_path)
    assert [s.sections for s in image.segments] == [(".text",), (".data", ".bss")]
    text = struct.unpack_from("<I", BASE, SECTION_TABLE + 40 + SH_SIZE)[0]
    assert [(s.name, s.size) for s in image.sections] == [(".text", text), (".data", 16), (".bss", 64)]


def test_more_sections_than_e_shnum_holds_are_counted_in_section_0(tmp_path):
    raw = changed(("<H", E_SHNUM, 0), ("<I", SECTION_TABLE + SH_SIZE, len(NAMES)))
    assert [s.name for s in section_table(raw)] == NAMES
    assert [s.sections for s in load(raw, tmp_path).segments] == [(".text",), (".data", ".bss")]


def test_the_names_table_can_be_given_in_section_0(tmp_path):
    raw = changed(("<H", E_SHSTRNDX, 0xFFFF), ("<I", SECTION_TABLE + SH_LINK, NAMES.index(".shstrtab")))
    assert [s.name for s in section_table(raw)] == NAMES
    assert load(raw, tmp_path).symbol("main") == 0x40


def test_sections_without_a_names_table_have_no_names(tmp_path):
    raw = changed(("<H", E_SHSTRNDX, 0))
    assert [s.name for s in section_table(raw)] == [""] * len(NAMES)
    image = load(raw, tmp_path)  # (no .symtab by name: no symbols, but it runs)
    assert image.symbols == [] and image.entry == BASE_ENTRY


BASE_ENTRY = struct.unpack_from("<I", BASE, 24)[0]


@pytest.mark.parametrize("edit, message", [
    (("<H", E_SHSTRNDX, len(NAMES) + 2), "the section names are in section 9"),
    (("<I", SYMTAB + SH_LINK, NAMES.index(".text")), "not a string table"),
    (("<I", SYMTAB + SH_SIZE, 5 * 16 - 4), "not a whole number of entries"),
])
def test_a_damaged_table_is_a_corrupt_elf(tmp_path, edit, message):
    with pytest.raises(ElfError, match=f"truncated or corrupt ELF \\(.*{message}"):
        load(changed(edit), tmp_path)


def test_a_run_does_not_import_pyelftools(tmp_path):
    path = tmp_path / "firmware.elf"
    path.write_bytes(BASE)
    script = ("import sys; from mcusim.launch import main; sys.argv = ['mcusim', 'run', sys.argv[1], '--board', "
              "'mps2-an386', '--max-cycles', '1000']\ntry: main()\nexcept SystemExit: pass\n"
              "print('pyelftools imported' if 'elftools' in sys.modules else 'no pyelftools')")
    source = str(Path(mcusim.__file__).parents[1])
    done = subprocess.run([sys.executable, "-c", script, str(path)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [source,
                                                                                         os.environ.get("PYTHONPATH")]))})
    assert done.stdout.splitlines()[-1] == "no pyelftools", done.stderr[-2000:]
