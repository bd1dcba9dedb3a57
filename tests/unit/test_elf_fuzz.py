"""Fuzzing the ELF loader: any mutation or truncation of a small valid ELF either loads into a
Machine or is refused with ElfError (exit 3 on the command line), never another exception.

The base image has what a linked firmware's loader reads: program headers for code and data,
and section headers with .text, .data, .bss, .symtab (functions, objects, mapping symbols),
.strtab and .shstrtab. Mutated headers are loaded (ElfImage.load and the Machine that places
the segments and reads the vector table); mutated code and vectors are also run, briefly: any
instruction, jump or semihosting call ends in an ordinary exit status, never an exception.
"""
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from elfgen import CODE, ENTRY
from mcusim import Simulator
from mcusim.elf import ElfError, ElfImage

BOARD = "mps2-an386"
SHF_WRITE, SHF_ALLOC, SHF_EXECINSTR = 1, 2, 4


def linked_elf() -> bytes:
    """A little ELF laid out as ld lays one out: header, program headers, contents, then the
    section header table."""
    vectors = struct.pack("<16I", 0x20001000, (0x40 + ENTRY["exit7"]) | 1, *[0] * 14)
    text, data = vectors + CODE, b"\x01\x02\x03\x04" * 4
    strtab = b"\0main\0counter\0$t\0$d\0"
    symbols = b"".join(struct.pack("<IIIBBH", *fields) for fields in (
        (0, 0, 0, 0, 0, 0),
        (1, 0x41, 16, 0x12, 0, 1),            # main: global STT_FUNC in .text
        (6, 0x20000000, 4, 0x11, 0, 2),       # counter: global STT_OBJECT in .data
        (14, 0x40, 0, 0, 0, 1),               # $t
        (17, 0x00, 0, 0, 0, 1),               # $d
    ))
    shstrtab = b"\0.text\0.data\0.bss\0.symtab\0.strtab\0.shstrtab\0"
    header_size, ph_size = 52, 32
    offset = header_size + 2 * ph_size
    contents, placed = b"", {}
    for name, blob in (("text", text), ("data", data), ("symtab", symbols), ("strtab", strtab),
                       ("shstrtab", shstrtab)):
        placed[name] = offset + len(contents)
        contents += blob + bytes(-len(blob) % 4)
    programs = struct.pack("<8I", 1, placed["text"], 0, 0, len(text), len(text), 5, 4)
    programs += struct.pack("<8I", 1, placed["data"], 0x20000000, 0x20000000, len(data), len(data) + 64, 6, 4)
    shoff = offset + len(contents)
    sections = bytes(40) + b"".join(struct.pack("<10I", *fields) for fields in (
        (1, 1, SHF_ALLOC | SHF_EXECINSTR, 0, placed["text"], len(text), 0, 0, 4, 0),
        (7, 1, SHF_ALLOC | SHF_WRITE, 0x20000000, placed["data"], len(data), 0, 0, 4, 0),
        (13, 8, SHF_ALLOC | SHF_WRITE, 0x20000000 + len(data), placed["data"] + len(data), 64, 0, 0, 4, 0),
        (18, 2, 0, 0, placed["symtab"], len(symbols), 5, 3, 4, 16),
        (26, 3, 0, 0, placed["strtab"], len(strtab), 0, 0, 1, 0),
        (34, 3, 0, 0, placed["shstrtab"], len(shstrtab), 0, 0, 1, 0),
    ))
    ident = b"\x7fELF" + bytes([1, 1, 1]) + bytes(9)
    header = ident + struct.pack("<HHIIIIIHHHHHH", 2, 40, 1, 0x40 + ENTRY["exit7"] | 1, header_size, shoff,
                                 0x05000400, header_size, ph_size, 2, 40, 7, 6)
    return header + programs + contents + sections


BASE = linked_elf()
HEADERS_END = 52 + 2 * 32
SECTION_TABLE = len(BASE) - 7 * 40

# Mutations land mostly where the loader looks: the file header, the program headers and the
# section header table (values that are offsets, sizes, counts, types), less often elsewhere.
positions = st.one_of(st.integers(0, HEADERS_END - 1), st.integers(SECTION_TABLE, len(BASE) - 1),
                      st.integers(0, len(BASE) - 1))
values = st.one_of(st.integers(0, 255), st.sampled_from([0x00, 0x01, 0x7F, 0x80, 0xFF]))
mutations = st.lists(st.tuples(positions, values), min_size=1, max_size=6)
words = st.lists(st.tuples(st.sampled_from(range(0, len(BASE) - 3, 4)),
                           st.sampled_from([0, 1, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, len(BASE), len(BASE) + 1,
                                            0x20000000, 0x1000])), max_size=3)


@pytest.fixture(scope="module")
def scratch(tmp_path_factory):
    return tmp_path_factory.mktemp("fuzz") / "firmware.elf"


def load_into_machine(path) -> None:
    """What `mcusim run` does before the first instruction: only ElfError may come out, and an
    image that loads is one mcusim can place (no segment holds more bytes than its memory)."""
    try:
        image = ElfImage.load(path)
        assert all(len(s.data) <= s.memsz for s in image.segments)
        assert any(s.executable and s.data for s in image.segments)
        Simulator(path, BOARD, max_cycles=1000)
    except ElfError:
        pass


def test_base_image_loads_and_runs(scratch):
    scratch.write_bytes(BASE)
    image = ElfImage.load(scratch)
    assert image.symbol("main") == 0x40 and image.symbolize(0x20000002) == "counter+0x2"
    assert [s.sections for s in image.segments] == [(".text",), (".data", ".bss")]
    assert Simulator(scratch, BOARD, max_cycles=1000).run().exit_code == 7


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations=mutations, words=words, cut=st.one_of(st.none(), st.integers(0, len(BASE) - 1)))
def test_mutated_elf_loads_or_is_refused_cleanly(scratch, mutations, words, cut):
    data = bytearray(BASE)
    for position, value in mutations:
        data[position] = value
    for position, value in words:
        struct.pack_into("<I", data, position, value)
    scratch.write_bytes(bytes(data[:cut]))
    load_into_machine(scratch)


@settings(max_examples=60, deadline=None)
@given(cut=st.integers(0, len(BASE) - 1))
def test_truncated_elf_is_refused_cleanly(scratch, cut):
    scratch.write_bytes(BASE[:cut])
    load_into_machine(scratch)


TEXT_START = 52 + 2 * 32  # the vector table, then the code
TEXT_END = TEXT_START + 64 + len(CODE)
code_mutations = st.lists(st.tuples(st.integers(TEXT_START, TEXT_END - 1), st.integers(0, 255)), min_size=1,
                          max_size=8)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutations=code_mutations)
def test_mutated_code_runs_to_an_ordinary_end(scratch, mutations):
    data = bytearray(BASE)
    for position, value in mutations:
        data[position] = value
    scratch.write_bytes(bytes(data))
    try:
        simulator = Simulator(scratch, BOARD, max_cycles=5000, max_seconds=5)
    except ElfError:
        return  # (a vector table the loader refuses)
    result = simulator.run()
    assert result.exit_reason in ("semihosting-exit", "fault", "max-cycles"), result.exit_detail
    assert not any("inside mcusim" in warning for warning in result.warnings)


# Programs of random halfwords, rich in semihosting calls with odd operands: movs r0, #op;
# movs r1, #k; lsls r1, r1, #24 (a pointer far out of memory or into peripherals); bkpt 0xab.
SEMIHOSTING_OPS = [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09, 0x0A, 0x0C, 0x0D, 0x0E, 0x0F, 0x10, 0x12,
                   0x13, 0x15, 0x16, 0x30, 0x31]
halfwords = st.one_of(st.integers(0, 0xFFFF), st.just(0xBEAB), st.just(0x0609),
                      st.sampled_from(SEMIHOSTING_OPS).map(lambda op: 0x2000 | op),
                      st.integers(0, 255).map(lambda k: 0x2100 | k))
reset_targets = st.sampled_from([0x40, 0x00, 0x20000000])  # the code; the first halfword of flash, of SRAM


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program=st.lists(halfwords, min_size=1, max_size=len(CODE) // 2), reset=reset_targets)
def test_random_code_and_semihosting_calls_end_ordinarily(scratch, program, reset):
    data = bytearray(BASE)
    struct.pack_into(f"<{len(program)}H", data, TEXT_START + 0x40, *program)
    struct.pack_into("<I", data, TEXT_START + 4, reset | 1)
    scratch.write_bytes(bytes(data))
    result = Simulator(scratch, BOARD, max_cycles=5000, max_seconds=5).run()
    assert result.exit_reason in ("semihosting-exit", "fault", "max-cycles"), result.exit_detail
    assert not any("inside mcusim" in warning for warning in result.warnings)
