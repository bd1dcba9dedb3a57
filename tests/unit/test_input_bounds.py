"""Inputs that claim more than they hold, or are not what they claim: a firmware segment as
large as the file, bundle artifacts that are FIFOs or devices, option values out of range,
semihosting names with a trailing NUL, a fitted power model out of range. Each is refused
with a clear message, within a bounded memory and time, never with a traceback."""
import os
import struct
import time
import tracemalloc

import pytest

from elfgen import elf32_arm, program
from mcusim.api import Simulator
from mcusim.elf import ElfError, ElfImage


def sparse_elf(path, claim: int) -> None:
    """A bootable mcu-m image whose second segment claims `claim` file bytes for RAM at
    0x20000000: the file is made that long, sparse, so the headers are all true."""
    small = program("exit7", flash_base=0x08000000)
    offset = struct.unpack_from("<I", small, 28)[0]
    code_offset, code_size = struct.unpack_from("<8I", small, offset)[1], struct.unpack_from("<8I", small, offset)[4]
    image = bytearray(elf32_arm([(0x08000000, small[code_offset:code_offset + code_size], 5),
                                 (0x20000000, b"", 6)]))
    struct.pack_into("<8I", image, 52 + 32, 1, 0x10000, 0x20000000, 0x20000000, claim, claim, 6, 4)
    with open(path, "wb") as f:
        f.write(image)
        f.truncate(0x10000 + claim)


def test_a_segment_as_large_as_its_file_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "big.elf"
    sparse_elf(path, 512 << 20)
    started = time.perf_counter()
    tracemalloc.start()
    try:
        with pytest.raises(ElfError, match="does not fit the memory of board mcu-m"):
            Simulator(path, "mcu-m")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, f"refusing a 512 MB segment took {peak:,} bytes"
    assert time.perf_counter() - started < 5


def test_segments_are_the_files_bytes_and_the_hash_is_the_files(tmp_path):
    import hashlib

    image = program("exit7")
    path = tmp_path / "fw.elf"
    path.write_bytes(image)
    loaded = ElfImage.load(path)
    assert loaded.sha256 == hashlib.sha256(image).hexdigest()
    offset = struct.unpack_from("<I", image, 28)[0]
    p_offset, _, _, filesz = struct.unpack_from("<8I", image, offset)[1:5]
    assert bytes(loaded.segments[0].data) == image[p_offset:p_offset + filesz]
