"""What ElfImage.load refuses, and what it reads: special files are refused before any read,
only the bytes the ELF's headers name are read, and images mcusim cannot run say why."""
import hashlib
import os
import struct
import threading
import tracemalloc

import pytest

from elfgen import PF_R, PF_W, PF_X, elf32_arm, program
from mcusim.elf import ElfError, ElfImage


def load_within(path, seconds=10):
    """ElfImage.load(path) in a thread: a load that blocks fails the test instead of hanging it."""
    outcome = {}

    def target():
        try:
            outcome["image"] = ElfImage.load(path)
        except Exception as exc:  # noqa: BLE001 (handed to the test)
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"loading {path} blocked"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["image"]


def test_fifo_is_refused_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "firmware.elf"
    os.mkfifo(fifo)
    with pytest.raises(ElfError, match="is a FIFO, not an ELF file"):
        load_within(fifo)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_device_is_refused_before_reading():
    with pytest.raises(ElfError, match="is a device, not an ELF file"):
        load_within("/dev/zero")


def test_directory_is_refused(tmp_path):
    with pytest.raises(ElfError, match="is a directory, not an ELF file"):
        ElfImage.load(tmp_path)


def test_only_the_bytes_the_headers_name_are_read(tmp_path):
    image = program("exit7")
    path = tmp_path / "padded.elf"
    path.write_bytes(image)
    os.truncate(path, 256 << 20)  # 256 MB, sparse: a valid ELF followed by zeros
    tracemalloc.start()
    try:
        loaded = ElfImage.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20, f"loading a {len(image)}-byte ELF in a 256 MB file took {peak:,} bytes"
    assert loaded.sha256 == hashlib.sha256(image).hexdigest()


def test_large_file_without_magic_is_refused_after_its_header(tmp_path):
    path = tmp_path / "sparse.bin"
    path.write_bytes(b"")
    os.truncate(path, 256 << 20)
    tracemalloc.start()
    try:
        with pytest.raises(ElfError, match="no ELF magic"):
            ElfImage.load(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 << 20


def with_section(image: bytes, offset: int, size: int) -> bytes:
    """`image` with a section header table (a null section and one PROGBITS at offset/size)."""
    shoff = len(image)
    sections = bytes(40) + struct.pack("<10I", 0, 1, 0, 0, offset, size, 0, 0, 1, 0)
    header = bytearray(image)
    struct.pack_into("<I", header, 32, shoff)                # e_shoff
    struct.pack_into("<HHH", header, 46, 40, 2, 0)           # e_shentsize, e_shnum, e_shstrndx
    return bytes(header) + sections


def test_section_past_the_end_of_the_file_is_truncated(tmp_path):
    path = tmp_path / "cut.elf"
    image = program("exit7")
    path.write_bytes(with_section(image, len(image) + 4000, 1000))  # e.g. a copy cut inside .debug_info
    with pytest.raises(ElfError, match=r"truncated ELF \(section 1 extends past the end of the file\)"):
        ElfImage.load(path)
    path.write_bytes(with_section(image, 0, 64))  # the same section inside the file loads
    assert ElfImage.load(path).entry == 0x40


def test_program_header_table_past_the_end_is_truncated(tmp_path):
    image = bytearray(program("exit7"))
    struct.pack_into("<I", image, 28, len(image) - 8)  # e_phoff: the table would end past the file
    path = tmp_path / "cut.elf"
    path.write_bytes(bytes(image))
    with pytest.raises(ElfError, match="program header table extends past the end of the file"):
        ElfImage.load(path)


def test_relocatable_object_is_refused_with_link_it_first(tmp_path):
    image = bytearray(program("exit7"))
    struct.pack_into("<H", image, 16, 1)  # e_type = ET_REL, as in a .o
    path = tmp_path / "main.o"
    path.write_bytes(bytes(image))
    with pytest.raises(ElfError, match=r"relocatable object file \(ET_REL.*link it first"):
        ElfImage.load(path)


def test_segment_with_more_file_bytes_than_memory_is_refused(tmp_path):
    image = bytearray(elf32_arm([(0x0, bytes(64), PF_R | PF_X), (0x20000000, bytes(32), PF_R | PF_W)]))
    struct.pack_into("<I", image, 52 + 32 + 20, 16)  # segment 1: p_memsz 16 < p_filesz 32
    path = tmp_path / "odd.elf"
    path.write_bytes(bytes(image))
    with pytest.raises(ElfError, match=r"segment 1 has more bytes in the file, 32, than in memory, 16"):
        ElfImage.load(path)
