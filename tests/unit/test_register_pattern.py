"""An encoding described from another of its register pattern (timing/register_pattern.py,
m4_descriptors.add_renamed) has the rows capstone's own detail and the Cortex-M4 model give it:
on a spread of 16-bit encodings, 32-bit encodings of the kinds compiled code uses with their
register fields varied, and IT blocks around them."""
import random

import numpy as np
import pytest

from mcusim.timing import m4_descriptors, m7_descriptors
from mcusim.timing.register_pattern import register_pattern
from test_m4_native_rows import BASE, decoders, rows

# 32-bit encodings of the kinds compiled code uses (loads and stores of every addressing form,
# data processing with shifts and modified immediates, multiplies and MACs, DSP, LDRD/STRD,
# LDM/STM, FP arithmetic, MACs, loads and moves, branches and calls)
WIDE = ["d1f80430", "41f82430", "51f8043b", "41f8043d", "d1e90023", "c1e90023", "b1e8f000", "2de9f041",
        "01eb8302", "a1eb0302", "01f1ff33", "11f0010f", "4ff00000", "40f20000", "03fb0421", "23fb0421",
        "a3fb0421", "21fa03f2", "b1fa81f2", "30ee810a", "00ee810a", "20ee200a", "91ed000a", "81ed000a",
        "b7ee000a", "10ee100a", "00f000f8", "00f000b8", "40f00080", "f4ee400a", "b4ee400a", "80ee010a"]


def _narrow(rng: random.Random) -> bytes:
    halfword = rng.randrange(0xE800)
    while halfword & 0xFF00 == 0xBF00 and halfword & 0xF:  # (an IT: placed below, with its block)
        halfword = rng.randrange(0xE800)
    return halfword.to_bytes(2, "little")


def _wide(rng: random.Random) -> bytes:
    """One of WIDE with its register fields (hw1[3:0], hw2[15:12], [11:8], [3:0]) and the FP
    registers' extra bits varied."""
    code = bytes.fromhex(rng.choice(WIDE))
    first, second = int.from_bytes(code[:2], "little"), int.from_bytes(code[2:], "little")
    first ^= rng.choice([0, 0xF, 0x4F]) & rng.randrange(0x10000)
    second ^= rng.choice([0xF000, 0x0F00, 0x000F, 0xFF0F, 0xF0AF]) & rng.randrange(0x10000)
    return first.to_bytes(2, "little") + second.to_bytes(2, "little")


def _code(seed: int, count: int) -> bytes:
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        if rng.random() < 0.1:  # an IT block
            mask = rng.randrange(1, 16)
            out.append((0xBF00 | rng.randrange(14) << 4 | mask).to_bytes(2, "little"))
            out += [_wide(rng) if rng.random() < 0.5 else _narrow(rng)
                    for _ in range(4 - ((mask & -mask).bit_length() - 1))]
        out.append(_wide(rng) if rng.random() < 0.5 else _narrow(rng))
    return b"".join(out)


@pytest.mark.parametrize("seed", [1, 2])
def test_renamed_rows_equal_capstones_own(seed, monkeypatch):
    renamed = []
    add_renamed = m4_descriptors.Descriptors.add_renamed
    monkeypatch.setattr(m4_descriptors.Descriptors, "add_renamed",
                        lambda self, *args: renamed.append(add_renamed(self, *args)) or renamed[-1])
    code = _code(seed, 3000)
    for at in range(0, len(code), 128):  # (ranges of their own: an encoding's pattern met in one serves the next)
        piece = code[at: at + 128]
        fast, plain = decoders(piece)
        for decoder in (fast, plain):
            decoder.decode(BASE, BASE + len(piece))
        assert np.array_equal(rows(fast), rows(plain)), piece.hex()
    assert sum(entry is not None for entry in renamed) > 1000, "encodings were described from their pattern"


def test_a_pattern_numbers_registers_and_keeps_what_the_model_reads():
    load = bytes.fromhex("d1f80430")
    same, names = register_pattern(load, "ldr.w", "r3, [r1, #4]")
    assert names == ("r3", "r1")
    assert register_pattern(load, "ldr.w", "r0, [r7, #0x40]") == (same, ("r0", "r7"))
    assert register_pattern(load, "ldr.w", "r3, [r3, #4]")[0] != same  # a register read where it is written
    assert register_pattern(load, "ldr.w", "r3, [sp, #4]")[0] != same  # SP, LR and PC are kept
    assert register_pattern(load, "ldreq.w", "r3, [r1, #4]")[0] != same  # a condition (out of an IT block)
    equal = register_pattern(load, "ldreq.w", "r3, [r1, #4]", (0xBF08, 1))[0]  # it eq: its slot 1 is eq
    assert equal != same and register_pattern(load, "ldrne.w", "r0, [r7, #4]", (0xBF18, 1))[0] == equal
    assert register_pattern(load, "ldrne.w", "r0, [r7, #4]", (0xBF0C, 2))[0] == equal  # ite eq: slot 2 is ne
    assert register_pattern(load, "ldr.w", "r3, [r1, #4]", (0xBFE8, 1))[0] == same  # it al: no condition printed
    assert register_pattern(b"\x01\x68", "ldr", "r1, [r0]")[0] != same  # the form (16-bit here)
    shifted = register_pattern(bytes.fromhex("01eb8302"), "add.w", "r2, r1, r3, lsl #2")[0]
    assert register_pattern(bytes.fromhex("01eb8302"), "add.w", "r2, r1, r3, lsl #3")[0] == shifted  # (not read)
    assert register_pattern(bytes.fromhex("01eb8302"), "add.w", "r2, r1, r3, lsr #2")[0] != shifted
    assert register_pattern(b"\x04\x00", "vadd.f32", "s0, s1, s2")[1] == ("s0", "s1", "s2")
    core = bytes.fromhex("10ee109a")  # vmov r9, s0: capstone names r9 sb, a core register, not an FP one
    assert register_pattern(core, "vmov", "sb, s0")[0] == register_pattern(core, "vmov", "r3, s0")[0]
    assert register_pattern(core, "vmov", "sb, s0")[0] != register_pattern(core, "vmov", "s1, s0")[0]
    assert register_pattern(b"\x04\x00", "push", "{r4-r7, lr}") is None  # a count of registers in the names
    assert register_pattern(bytes.fromhex("91fbf1f0"), "sdiv", "r0, r1, r1") is None  # registers in the row


@pytest.mark.parametrize("core", ["cortex-m4", "cortex-m7"])
def test_an_it_block_encoding_is_renamed_from_one_under_another_condition(core, monkeypatch):
    """Both models read only whether an instruction is conditional, so an encoding in an IT
    block is renamed from one of its register pattern met under another condition (without
    capstone's detail), and the rows are the model's."""
    details = []
    descriptors = m4_descriptors if core == "cortex-m4" else m7_descriptors
    detail_of = descriptors.detail_of
    monkeypatch.setattr(descriptors, "detail_of", lambda *args: details.append(args) or detail_of(*args))
    monkeypatch.setattr(m4_descriptors, "_shared", {})  # (no encodings met by earlier tests)
    first = bytes.fromhex("04bf" + "0120" + "d1f80430" + "7047")  # itt eq; moveq r0, #1; ldreq.w r3, [r1, #4]; bx lr
    then = bytes.fromhex("c9bf" + "0123" + "0222" + "d4f80470" + "d2f80830")  # itett gt; movgt r3, #1;
    #                     movle r2, #2; ldrgt.w r7, [r4, #4]; ldrgt.w r3, [r2, #8]
    fast, plain = decoders(first + then, core)
    for decoder in (plain, fast):
        decoder.decode(BASE, BASE + len(first))
        details.clear()
        decoder.decode(BASE + len(first), BASE + len(first) + len(then))
    assert np.array_equal(rows(fast), rows(plain))
    described = [items[place][2] for items, place, *_ in details]
    assert described == ["itett"], f"described from capstone's detail: {described}"  # (the IT alone: new)


def test_encodings_printed_alike_in_other_forms_are_told_apart():
    """In an IT block capstone prints a conditional B.W (T3) and an unconditional one (T4) alike;
    the model times them apart (its register access differs), so the form bits keep their
    patterns apart."""
    code = bytes.fromhex("08bf" + "00f00080" + "7047" + "08bf" + "00f000b8" + "7047")
    fast, plain = decoders(code)
    for decoder in (fast, plain):
        decoder.decode(BASE, BASE + 8)
        decoder.decode(BASE + 8, BASE + len(code))
    assert np.array_equal(rows(fast), rows(plain))


KNOWN = bytes.fromhex("0868" + "c218" + "4250" + "d1f80430" + "7047")


def _cheap_passes_after_known(code: bytes, monkeypatch) -> list[tuple]:
    """Decode KNOWN, then code[len(KNOWN):], with and without memos: (the bytes, start, end) of
    each cheap pass the memoised decoder made for the second range (its rows equal the model's)."""
    from mcusim.timing import decoder as decoder_module

    read = []
    lite_runs = decoder_module.lite_runs
    monkeypatch.setattr(decoder_module, "lite_runs", lambda code, *a: read.append((code, *a)) or lite_runs(code, *a))
    fast, plain = decoders(code)
    for decoder in (plain, fast):
        decoder.decode(BASE, BASE + len(KNOWN))
        read.clear()
        decoder.decode(BASE + len(KNOWN), BASE + len(code))
    assert np.array_equal(rows(fast), rows(plain))
    return read


def test_capstone_reads_the_new_encodings_outside_an_it_block_alone(monkeypatch):
    """A range whose encodings are known but one: capstone's cheap pass reads that one, not the
    rest of the range after it, and the rows are the model's."""
    code = KNOWN + bytes.fromhex("0868" + "d4f80c70" + "c218" + "4250" + "7047")  # (one new: ldr.w r7, [r4, #12])
    read = _cheap_passes_after_known(code, monkeypatch)
    assert [bytes(given) for given, _, _ in read] == [bytes.fromhex("d4f80c70")], "the memoised decoder's cheap pass"


def test_capstone_reads_a_new_encoding_in_an_it_block_from_its_it_to_the_block_end(monkeypatch):
    """A new encoding in an IT block: capstone's cheap pass reads the block from its IT (its
    condition shows in the text), not the rest of the range, and the rows are the model's."""
    from mcusim.timing.decoder import IT_WINDOW

    block = bytes.fromhex("0cbf" + "d4f80c70" + "0868")  # ite eq; ldreq.w r7, [r4, #12] (new); ldrne r0, [r1]
    read = _cheap_passes_after_known(KNOWN + block + KNOWN * 8, monkeypatch)
    it = BASE + len(KNOWN)
    assert all(start >= it and end <= it + IT_WINDOW for _, start, end in read) and \
        any(start == it for _, start, _ in read), "the memoised decoder's cheap pass over the IT block"
