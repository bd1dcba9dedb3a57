"""Compiled code other than the firmware run (code_files): its Thumb code found by the mapping
symbols of objects, ar archives and executables, damaged files refused; and `mcusim prepare`
describing its register patterns (Decoder.learn_patterns), which a later process renames."""
import subprocess
import sys

import capstone
import pytest
from click.testing import CliRunner

from mcusim import examples
from mcusim.api import Simulator
from mcusim.cli import main
from mcusim.code_files import NotCode, thumb_code, toolchain_libraries
from mcusim.prepare import describe_patterns
from mcusim.timing import instruction, m4_descriptors, m7_descriptors

from conftest import require_tool

# Compiled code of several kinds (lists, a matrix, a state machine, a CRC), and a word of data
# in the code section, which the assembler marks with $d.
SOURCE = r"""
struct node { struct node *next; int key, value; };
int sum_list(const struct node *n, int key) {
    int total = 0;
    for (; n; n = n->next) total += n->key == key ? n->value * 3 : n->value >> 1;
    return total;
}
void multiply(int n, const short *a, const short *b, int *c) {
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            int s = 0;
            for (int k = 0; k < n; k++) s += a[i * n + k] * b[k * n + j];
            c[i * n + j] = s;
        }
}
int scan(const unsigned char *text, int length, int *counts) {
    int state = 0;
    for (int i = 0; i < length; i++) {
        unsigned char ch = text[i];
        switch (state) {
        case 0: state = ch >= '0' && ch <= '9' ? 1 : ch == '-' ? 2 : 3; break;
        case 1: state = ch == '.' ? 2 : ch >= '0' && ch <= '9' ? 1 : 3; break;
        case 2: state = ch >= '0' && ch <= '9' ? 2 : 3; break;
        default: counts[ch & 7]++; break;
        }
        counts[state + 8]++;
    }
    return state;
}
unsigned crc16(const unsigned char *data, int length, unsigned crc) {
    while (length--) {
        crc ^= *data++;
        for (int bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >> 1) ^ 0xA001u : crc >> 1;
    }
    return crc & 0xFFFF;
}
__attribute__((naked)) void with_data(void) {
    __asm__ volatile("bx lr\n.align 2\n.word 0xDEADBEEF\n.thumb\nnop\nbx lr\n");
}
"""
DATA_WORD = (0xDEADBEEF).to_bytes(4, "little")
CPU = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]


@pytest.fixture(scope="module")
def compiled(tmp_path_factory):
    """(an object file of SOURCE, an object of one more function, an archive of the two)."""
    folder = tmp_path_factory.mktemp("learned")
    gcc, ar = require_tool("arm-none-eabi-gcc"), require_tool("arm-none-eabi-ar")
    (folder / "code.c").write_text(SOURCE)
    (folder / "more.c").write_text("int twice(int x) { return x * 2 + 1; }\n")
    for name in ("code", "more"):
        subprocess.run([gcc, *CPU, "-O2", "-c", str(folder / f"{name}.c"), "-o", str(folder / f"{name}.o")],
                       check=True)
    subprocess.run([ar, "rcs", str(folder / "code.a"), str(folder / "code.o"), str(folder / "more.o")], check=True)
    return folder / "code.o", folder / "more.o", folder / "code.a"


def test_an_object_s_code_is_read_without_the_data_in_it(compiled):
    obj, _, _ = compiled
    pieces = thumb_code(obj)
    assert len(pieces) == 2 and not any(DATA_WORD in piece for piece in pieces)  # (the code before the data, after it)
    disassembler = capstone.Cs(capstone.CS_ARCH_ARM, capstone.CS_MODE_THUMB | capstone.CS_MODE_MCLASS)
    for piece in pieces:  # (each piece is whole instructions, all of them code)
        assert sum(size for _, size, _, _ in disassembler.disasm_lite(piece, 0)) == len(piece)
    text = b"".join(pieces)
    assert text.count(bytes.fromhex("7047")) >= 6  # (bx lr: five functions, and the one after the data)


def test_an_archive_gives_its_members_code(compiled):
    obj, more, archive = compiled
    assert thumb_code(archive) == thumb_code(obj) + thumb_code(more)


def test_damaged_or_foreign_files_are_refused_or_give_no_code(compiled, tmp_path):
    _, _, archive = compiled
    data = archive.read_bytes()
    (tmp_path / "cut.a").write_bytes(data[: len(data) // 2])
    with pytest.raises(NotCode, match="damaged ar archive"):
        thumb_code(tmp_path / "cut.a")
    (tmp_path / "text.o").write_text("not an object\n")
    with pytest.raises(NotCode, match="neither an ELF file nor an ar archive"):
        thumb_code(tmp_path / "text.o")
    assert thumb_code(sys.executable) == []  # (an ELF of the host's machine: no Arm code)


def test_prepare_refuses_a_file_it_cannot_learn_from_before_compiling(tmp_path, monkeypatch):
    import mcusim.prepare

    monkeypatch.setattr(mcusim.prepare, "prepare", lambda *args, **kwargs: pytest.fail("prepare ran"))
    (tmp_path / "notes.txt").write_text("not code\n")
    result = CliRunner().invoke(main, ["prepare", "--learn", str(tmp_path / "notes.txt")])
    assert result.exit_code == 2 and "--learn" in result.output and "neither an ELF file" in result.output


def test_the_toolchain_s_libraries_are_found_for_each_core():
    require_tool("arm-none-eabi-gcc")
    for core in ("cortex-m4", "cortex-m7"):
        names = [path.name for path in toolchain_libraries(core)]
        assert {"libc.a", "libm.a", "libgcc.a"} <= set(names)


@pytest.mark.parametrize("board, model, description, insn_at", [
    ("mcu-m", m4_descriptors.Descriptors, "add", 1),        # (key, insn, length)
    ("mcu-d", m7_descriptors.Descriptors, "_describe", 0),  # (insn)
])
def test_prepare_learns_a_library_s_patterns_for_a_later_process(compiled, tmp_path, monkeypatch, board, model,
                                                                 description, insn_at):
    """A process that has not learned the library describes many of its encodings from
    capstone's detail; after `mcusim prepare` learned it, a later process renames them from
    the patterns kept, hardly any described."""
    _, _, archive = compiled
    monkeypatch.setenv("MCUSIM_DECODE_CACHE", str(tmp_path))
    counted = {"described": 0}
    describe = getattr(model, description)

    def described(self, *args):
        counted["described"] += args[insn_at] is not None  # (not an encoding capstone cannot decode)
        return describe(self, *args)

    def as_in_a_new_process():
        """What a process keeps of the encodings it met forgotten: the Cortex-M4's descriptors, the
        Instructions capstone's detail gave (one of an encoding's shape stands for the next) and the
        Cortex-M7 encodings met (what its table of them would keep)."""
        for module, name in ((m4_descriptors, "_shared"), (instruction, "_known"), (instruction, "_alike")):
            monkeypatch.setattr(module, name, {})
        monkeypatch.setattr(m7_descriptors, "_met", set())

    def described_by_a_new_process() -> int:
        as_in_a_new_process()
        decoder = Simulator(examples.path("hello", board), board).machine.decoder
        counted["described"] = 0
        monkeypatch.setattr(model, description, described)
        assert decoder.learn_patterns(thumb_code(archive)) > 100
        monkeypatch.setattr(model, description, describe)
        return counted["described"]

    said = []
    as_in_a_new_process()
    describe_patterns(said.append, programs=["hello"], toolchain=False)
    before = described_by_a_new_process()
    as_in_a_new_process()
    describe_patterns(said.append, programs=["hello"], learn=[archive], toolchain=False)
    assert any(str(archive) in line for line in said)
    after = described_by_a_new_process()
    assert before > 5 and after * 5 < before, (before, after)
