"""The Cortex-M7 decode rows made in native code (machine/native/m7_rows.py: the in-sequence
schedule, each row from its encoding's descriptor in timing/m7_descriptors.py, the block-start
corrections) equal the Python model's, made afresh from capstone's own instructions, on
ranges decoded one after the other, so the pipeline carries from one into the next: every kind
of instruction the schedule tells apart, IT blocks, literal loads, a branch to itself and
undecodable bytes; and the pipeline a native decode leaves is the one the Python model leaves."""
import random

import numpy as np
import pytest

from mcusim.machine import native as N
from mcusim.timing import decoder as decoder_module
from mcusim.timing.decoder import Decoder
from test_m4_native_rows import BASE, rows
from test_m4_native_rows import decoders as decoders_for
from test_m7_native_schedule import KINDS

IT_EQ, IT_NE_T, MOV_R0_R1, LDR_LITERAL, B_SELF, UNDECODABLE = "08bf", "1cbf", "0846", "0148", "fee7", "ffffffff"
EXTRA = [IT_EQ + MOV_R0_R1, IT_NE_T + MOV_R0_R1 + "0130", LDR_LITERAL, B_SELF, UNDECODABLE]


def decoders(code: bytes) -> list[Decoder]:
    """The memoised decoder (native rows) and the plain one (the Python model, nothing memoised)."""
    return decoders_for(code, "cortex-m7")


def decoded_in_ranges(rng: random.Random, instructions: int, cuts: int) -> tuple[bytes, Decoder, Decoder, int]:
    """Random code of `instructions` of every kind, decoded by both decoders in `cuts` + 1 ranges
    one after the other: (the code, the memoised decoder, the plain one, how many ranges)."""
    code = bytes.fromhex("".join(rng.choice(KINDS + EXTRA) for _ in range(instructions)))
    fast, plain = decoders(code)
    ends = sorted(rng.sample(range(2, len(code), 2), cuts)) + [len(code)]
    for decoder in (fast, plain):
        start = 0
        for end in ends:
            decoder.decode(BASE + start, BASE + end)
            start = end
    return code, fast, plain, len(ends)


@pytest.mark.parametrize("seed", range(4))
def test_native_rows_equal_the_python_model(seed, monkeypatch):
    calls = []
    native = decoder_module.m7_rows
    monkeypatch.setattr(decoder_module, "m7_rows", lambda *args: calls.append(args) or native(*args))
    code, fast, plain, ranges = decoded_in_ranges(random.Random(seed), 600, 12)
    assert np.array_equal(rows(fast), rows(plain)), seed
    assert fast.fp_instruction_addresses == plain.fp_instruction_addresses
    assert fast.divides == plain.divides
    assert len(calls) == ranges, "every range was decoded in native code"
    assert np.count_nonzero(rows(fast)[:, N.KIND] == N.KIND_SELF_LOOP) > 0


def test_the_pipeline_a_native_decode_leaves_is_the_python_models():
    """The state the next piece of code carries on from: a load's result still on its way, a
    pair issued in the last cycle, a word load's no-bypass, written-at cycles."""
    # ldr r0, [r1]; ldr r2, [r1], #4; add r1, r0; mul r0, r1, r2; ldr r3, [r0, r2]; adds r0, #1
    code = bytes.fromhex("0868" "51f8042b" "0144" "01fb02f0" "8358" "0130")
    fast, plain = decoders(code)
    for decoder in (fast, plain):
        decoder.decode(BASE, BASE + len(code))
    last = BASE + len(code) - 2
    assert fast.timing.last_address == plain.timing.last_address == last
    exported = fast.timing.export_state(last)
    assert exported == plain.timing.export_state(last) and exported[2], "registers still on their way"


@pytest.mark.parametrize("seed", range(3))
def test_the_pipeline_kept_as_the_native_array_reads_as_the_python_pipeline_made_of_it(seed):
    """After a native decode the timing model keeps m7_rows' array: the next range starts from a
    copy of it, and its state is exported from it. Both must be what the _Pipeline made of the
    array gives (CortexM7Timing._from_array), range after range."""
    rng = random.Random(seed)
    code = bytes.fromhex("".join(rng.choice(KINDS + EXTRA) for _ in range(400)))
    fast, _ = decoders(code)
    timing, checked = fast.timing, 0
    for start in range(0, len(code) - 40, 40):
        fast.decode(BASE + start, BASE + start + 40)
        last = timing.last_address
        if timing._native is None:  # (a range the native rows could not take)
            continue
        kept = timing._native.copy()
        previous = type("Previous", (), {"address": last})()
        from_array = (timing.export_state(last), timing.pipeline_before(previous))
        made = timing._from_array(kept)
        timing.restore_state(made, last)
        assert timing._native is None
        assert timing.export_state(last) == from_array[0]
        assert np.array_equal(timing.pipeline_before(previous), from_array[1])
        timing.restore_state(kept, last)  # (the next range carries on from the array again)
        checked += 1
    assert checked > 5


@pytest.mark.parametrize("seed", range(3))
def test_encodings_renamed_from_their_register_pattern_give_the_python_models_rows(seed, monkeypatch):
    """Random halfwords (every encoding capstone knows, register fields often over r0-r3):
    most new encodings are renamed from the first of their register pattern (the same operation
    on other registers), not described from capstone's detail, and the rows stay the model's."""
    from mcusim.timing import m7_descriptors
    renamed = []
    rename = m7_descriptors.Descriptors._rename
    monkeypatch.setattr(m7_descriptors.Descriptors, "_rename",
                        lambda self, *args: renamed.append(rename(self, *args)) or renamed[-1])
    rng = random.Random(seed)
    halfwords = [rng.getrandbits(16) & (~0b0000_0100_0010_0100 if rng.random() < 0.5 else 0xFFFF)
                 for _ in range(8000)]
    code = b"".join(h.to_bytes(2, "little") for h in halfwords)
    fast, plain = decoders(code)
    for decoder in (fast, plain):
        for start in range(0, len(code), 256):
            decoder.decode(BASE + start, BASE + min(len(code), start + 256))
    assert np.array_equal(rows(fast), rows(plain)), seed
    assert fast.fp_instruction_addresses == plain.fp_instruction_addresses
    assert sum(entry is not None for entry in renamed) > 1000


def test_the_pipeline_left_after_a_renamed_encoding_is_the_python_models():
    """A renamed encoding keeps no _Insn: a pipeline left after one issued alone says what
    pairing reads of it (CortexM7Timing._issued, from its encoded row), as the decode store
    keeps it with the range's rows; it must be what the Python model leaves."""
    rng = random.Random(5)
    code = b"".join((rng.getrandbits(16) & ~0b0000_0100_0010_0100).to_bytes(2, "little") for _ in range(6000))
    fast, plain = decoders(code)
    ends_after_renamed = 0
    for start in range(0, len(code), 24):
        for decoder in (fast, plain):
            decoder.decode(BASE + start, BASE + start + 24)
        last = fast.timing.last_address
        assert last == plain.timing.last_address
        assert fast.timing.export_state(last) == plain.timing.export_state(last), hex(last)
        issued = fast.timing._pipeline.issued
        ends_after_renamed += len(issued) == 1 and issued[0].name == "(restored)"
    assert ends_after_renamed > 20


def test_a_shifted_constant_is_not_renamed_from_a_byte_constant():
    """AND r4, r5, #0xff0000 (a rotated constant: the early shifter) has the register pattern of
    AND r1, r2, #0xff (a byte: no shifter): after a shifted-register ADD, which holds the
    shifter, the first cannot dual-issue and the second can."""
    add_shifted, and_byte, and_rotated = "00eb8103", "02f0ff01", "05f47f04"
    code = bytes.fromhex(add_shifted + and_byte + add_shifted + and_rotated)
    fast, plain = decoders(code)
    for decoder in (fast, plain):
        decoder.decode(BASE, BASE + 8)
        decoder.decode(BASE + 8, BASE + 16)
    assert np.array_equal(rows(fast), rows(plain))
    cycles = fast._costs[0][:, N.F_CYCLES]
    assert cycles[2] == 0 and cycles[6] == 1, "the byte constant pairs, the rotated one does not"


def test_ranges_the_native_rows_cannot_take_are_scheduled_in_python_and_the_pipeline_carries(monkeypatch):
    """A range with an instruction m7_schedule's arrays cannot hold (here: every range with a
    multiply, as if it named too many registers) is scheduled by the Python model, and the
    ranges before and after it continue its pipeline as they continue the native one."""
    from mcusim.timing import m7_descriptors
    row_of = m7_descriptors.Descriptors.row_of
    monkeypatch.setattr(m7_descriptors.Descriptors, "row_of",
                        lambda self, code, address, mnemonic, *rest: None if mnemonic.startswith(("mul", "mla"))
                        else row_of(self, code, address, mnemonic, *rest))
    calls = []
    native = decoder_module.m7_rows
    monkeypatch.setattr(decoder_module, "m7_rows", lambda *args: calls.append(args) or native(*args))
    rng = random.Random(7)
    code = bytes.fromhex("".join(rng.choice(KINDS) for _ in range(900)))
    fast, plain = decoders(code)
    cuts = list(range(40, len(code), 40)) + [len(code)]
    for decoder in (fast, plain):
        start = 0
        for cut in cuts:
            decoder.decode(BASE + start, BASE + cut)
            start = cut
    assert np.array_equal(rows(fast), rows(plain))
    assert 0 < len(calls) < len(cuts), "some ranges natively, some in Python"


@pytest.mark.parametrize("seed", range(3))
def test_a_block_start_is_scheduled_natively_as_the_python_model_at_any_halfword(seed, monkeypatch):
    """Decoder.start_prefix (a block entered, or stopped in, between `block` and `pc`) from the
    idents m7_rows kept (native_start_prefix) gives the Python model's schedule of capstone's
    instructions from `block`, for `block` and `pc` at any halfword: a 32-bit instruction's second
    halfword, in an IT block, past the start window, past the range decoded, and after the code's
    bytes changed (the kept idents then unused)."""
    native = decoder_module.native_start_prefix
    used = []
    monkeypatch.setattr(decoder_module, "native_start_prefix", lambda *args: used.append(native(*args)) or used[-1])
    rng = random.Random(seed)
    code, fast, plain, _ = decoded_in_ranges(rng, 160, 6)
    pairs = [(block, block + rng.randrange(2, 48, 2)) for block in range(BASE, BASE + len(code), 2)]
    for block, pc in pairs:
        assert fast.start_prefix(block, pc) == plain.start_prefix(block, pc), (seed, hex(block), hex(pc))
    assert sum(used) > len(pairs) / 4 and not all(used), (sum(used), len(pairs))  # (a second halfword: Python)
    changed = bytearray(code)
    for at in rng.sample(range(0, len(code) - 4, 2), 40):
        changed[at: at + 2] = bytes.fromhex(rng.choice(KINDS)[:4])
    changed = bytes(changed)

    def read(address, size):
        if address < BASE or address - BASE + size > len(changed):
            raise ValueError("unmapped")
        return changed[address - BASE: address - BASE + size]

    fast.read_memory = plain.read_memory = read
    for block, pc in pairs:
        assert fast.start_prefix(block, pc) == plain.start_prefix(block, pc), (seed, hex(block), hex(pc), "changed")
