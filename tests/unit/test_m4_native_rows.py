"""The Cortex-M4 decode rows made in native code from each encoding's descriptor
(machine/native/m4_rows.py, timing/m4_descriptors.py) equal the Python model's, made afresh
from capstone's own instructions, on code that exercises every neighbour rule: load
pipelining, address and FP-result interlocks (a MAC's addend excepted), IT folding after a
16-bit and a 32-bit instruction, literal loads, a branch to itself, undecodable bytes, code
read from inside an IT block, an IT inside an IT block (which capstone reads its own way) and
an encoding capstone reads as taking no IT slot."""
import random

import numpy as np
import pytest

from mcusim.config.loader import core_timing_table, load_core
from mcusim.machine import native as N
from mcusim.timing import decoder as decoder_module
from mcusim.timing.cortex_m4 import CortexM4Timing
from mcusim.timing.cortex_m7 import CortexM7Timing
from mcusim.timing.decode_store import DecodeStore
from mcusim.timing.decoder import Decoder

BASE = 0x1000
LDR_R0_R1, LDR_R2_R0, LDR_R3_R1_4, ADDS_R1_1 = "0868", "0268", "4b68", "0131"
IT_EQ, IT_NE, MOV_R0_R1, B_SELF, LDR_LITERAL = "08bf", "18bf", "0846", "fee7", "0148"
VADD_S0, VMLA_S0, VMUL_S0_S0, MOVW_R0, POP_R4, BX_LR = "30ee810a", "00ee810a", "20ee200a", "4ff00000", "5df8044b", "7047"
UNDECODABLE, UDF = "ffffffff", "00de"
UNDECODABLE_16 = "8147"  # (0x4781: capstone decodes no instruction from it)
UNDECODABLE_16_BYTES = bytes.fromhex(UNDECODABLE_16)
IT_VS, NOP, B_BACK, VMAXNM = "68bf", "00bf", "58e7", "c7fe0ffb"

CASES = {
    "loads pipeline, and wait for an address just loaded or computed":
        [LDR_R0_R1, LDR_R3_R1_4, LDR_R2_R0, ADDS_R1_1, LDR_R0_R1, POP_R4, LDR_R0_R1, BX_LR],
    "FP results: the next reads them a cycle late, a MAC's addend on time":
        [VADD_S0, VMLA_S0, VMUL_S0_S0, VADD_S0, VMUL_S0_S0, LDR_R0_R1, BX_LR],
    "IT folds after a 16-bit instruction, not after a 32-bit one":
        [ADDS_R1_1, IT_EQ, MOV_R0_R1, MOVW_R0, IT_NE, MOV_R0_R1, LDR_R0_R1, IT_EQ, LDR_R2_R0, BX_LR],
    "literal loads and a branch to itself": [LDR_LITERAL, LDR_R0_R1, LDR_LITERAL, B_SELF, BX_LR],
    "undecodable bytes, also inside an IT block": [IT_EQ, UNDECODABLE, MOV_R0_R1, UDF, LDR_R0_R1, BX_LR],
    "an IT inside an IT block": [IT_NE, IT_EQ, MOV_R0_R1, ADDS_R1_1, BX_LR],
    "an ARMv8 FP encoding (data read as code) leaves its IT slot to the next, as capstone reads it":
        [IT_VS, NOP, B_BACK, IT_VS, VMAXNM, B_BACK, BX_LR],
    "... which lengthens the block past four instructions, the last of them new":  # (iteee vs; ldrdvs; vminnm;
        ["6fbf", "d4e90ea3", "c3fe457a", "1cf0f01c", "f7f2edf5", "dadf", BX_LR],    # andsvc; blvc; svcvc)
}


def decoders(code: bytes, core_name: str = "cortex-m4"):
    """The memoised decoder (native rows) and the plain one (the Python model, nothing memoised),
    on states of their own."""
    core = load_core(core_name)
    table = core_timing_table(core)

    def timing(memoise: bool):
        return CortexM7Timing(table, memoise=memoise) if core.timing_model == "cortex-m7" else CortexM4Timing(table)

    def read(address, size):
        offset = address - BASE
        if offset < 0 or offset + size > len(code):
            raise ValueError("unmapped")
        return code[offset: offset + size]

    return [Decoder(N.NativeState(), read, core.default_instruction_cycles, timing=timing(memoise),
                    memoise=memoise) for memoise in (True, False)]


def rows(decoder) -> np.ndarray:
    """Every window's tables as the hooks read them and each instruction's own row, by address."""
    windows = sorted(decoder._costs, key=lambda index: decoder.state.windows[index][0])
    return np.concatenate([table for index in windows for table in (decoder.state.rows(index), decoder._costs[index])])


@pytest.mark.parametrize("case", CASES)
def test_native_rows_equal_the_python_model(case, monkeypatch):
    calls = []
    native = decoder_module.m4_rows
    monkeypatch.setattr(decoder_module, "m4_rows", lambda *args: calls.append(args) or native(*args))
    code = bytes.fromhex("".join(CASES[case]))
    fast, plain = decoders(code)
    for decoder in (fast, plain):
        decoder.decode(BASE, BASE + len(code))
    assert np.array_equal(rows(fast), rows(plain)), case
    assert fast.fp_instruction_addresses == plain.fp_instruction_addresses
    if case != "an IT inside an IT block":
        assert calls, "the range was decoded in native code"
    else:
        assert not calls, "capstone's own reading of nested IT blocks is kept"


@pytest.mark.parametrize("split", [2, 4, 6])
def test_a_range_decoded_after_its_neighbour_pairs_with_it(split):
    """The range after a decoded one pairs its first instruction with the last one before it
    (a load after a load pipelines; an IT after a 16-bit instruction folds), also where the
    range starts inside an IT block."""
    code = bytes.fromhex(LDR_R0_R1 + LDR_R3_R1_4 + ADDS_R1_1 + IT_EQ + MOV_R0_R1 + LDR_R0_R1 + BX_LR)
    fast, plain = decoders(code)
    for decoder in (fast, plain):
        decoder.decode(BASE, BASE + split)
        decoder.decode(BASE + split, BASE + len(code))
    assert np.array_equal(rows(fast), rows(plain))


@pytest.mark.parametrize("seed", range(3))
def test_a_range_after_one_decoded_before_pairs_with_it_through_the_decode_store(seed):
    """With a decode store, the instruction before a range is not disassembled where the run
    knows its encoding: its entry's descriptor stands for it (Decoder._row_before). Ranges
    decoded in a random order, each after its neighbour or not, give the Python model's rows."""
    from test_m7_native_schedule import KINDS

    rng = random.Random(seed)
    pieces = [rng.choice(KINDS + [LDR_LITERAL, B_SELF, IT_EQ + MOV_R0_R1, UNDECODABLE, VADD_S0, VMLA_S0])
              for _ in range(300)]
    code = bytes.fromhex("".join(pieces))
    ends = [0]
    for piece in pieces:
        ends.append(ends[-1] + len(piece) // 2)
    cuts = sorted(rng.sample(ends[1:-1], 40))
    ranges = list(zip([0] + cuts, cuts + [len(code)]))
    rng.shuffle(ranges)
    fast, plain = decoders(code)
    fast.store = DecodeStore(None)
    looked_up = []
    row_before = fast._row_before
    fast._row_before = lambda descriptors, previous: looked_up.append(previous) or row_before(descriptors, previous)
    for decoder in (fast, plain):
        for start, end in ranges:
            decoder.decode(BASE + start, BASE + end)
    assert np.array_equal(rows(fast), rows(plain))
    known = [p for p in looked_up if p.before is not None and (p.before[1], None) in fast._m4.by_key]
    assert len(known) > 5, "instructions before ranges found by their encoding"


def test_an_undecodable_instruction_before_a_range_is_none_to_pair_with():
    """16-bit bytes capstone cannot decode before a range, known to the run as undecodable: the
    Python model has no instruction before, so an IT after them does not fold."""
    code = bytes.fromhex(LDR_R0_R1 + UNDECODABLE_16 + IT_EQ + MOV_R0_R1 + BX_LR)
    fast, plain = decoders(code)
    fast.store = DecodeStore(None)
    for decoder in (fast, plain):
        decoder.decode(BASE, BASE + 4)
        decoder.decode(BASE + 4, BASE + len(code))
    assert (UNDECODABLE_16_BYTES, None) in fast._m4.by_key
    assert np.array_equal(rows(fast), rows(plain))
    assert fast._costs[0][2, N.F_CYCLES] > 0, "the IT does not fold"


def test_the_rules_change_the_rows():
    """The cases above are not alike by chance: a load after a load costs less than after an
    add, and an IT after a 16-bit instruction folds (no cycles, FOLDCNT)."""
    code = bytes.fromhex(LDR_R0_R1 + LDR_R3_R1_4 + ADDS_R1_1 + LDR_R3_R1_4 + ADDS_R1_1 + IT_EQ + MOV_R0_R1)
    fast, _ = decoders(code)
    fast.decode(BASE, BASE + len(code))
    table = fast._costs[0]
    pipelined, after_add = table[1, N.F_CYCLES], table[3, N.F_CYCLES]
    assert pipelined < after_add
    assert table[5, N.F_CYCLES] == 0 and table[5, N.F_COUNTS] >> (2 * N.LANE) == 1


def test_a_decoder_that_met_every_fp_register_name_still_decodes_natively(monkeypatch):
    """Code read from data can name all 64 FP registers, more than a 63-bit mask holds: the
    descriptors start afresh between ranges before that, rather than leave native code."""
    calls = []
    native = decoder_module.m4_rows
    monkeypatch.setattr(decoder_module, "m4_rows", lambda *args: calls.append(args) or native(*args))
    code = bytes.fromhex("".join(CASES["FP results: the next reads them a cycle late, a MAC's addend on time"]))
    fast, plain = decoders(code)
    others = [f"s{n}" for n in range(4, 32)] + [f"d{n}" for n in range(32)] + ["q0", "q1", "q2"]  # (not s0-s3)
    fast._m4._clear()  # (the process's descriptors, whatever earlier tests left)
    fast._m4._mask(others, fast._m4._fp_bits)  # (63 bits taken: one name more would not fit)
    for decoder in (fast, plain):
        decoder.decode(BASE, BASE + len(code))
    assert calls and np.array_equal(rows(fast), rows(plain))


def test_code_decoded_again_empties_the_block_summaries():
    """Rows written over rows (code in RAM rewritten, decoded again at its ISB) make every block
    summary stale: the decoder empties them (a summary of code decoded the first time stays
    right, and is kept)."""
    code = bytes.fromhex(LDR_R0_R1 + ADDS_R1_1 + LDR_R0_R1 + BX_LR)
    decoder, _ = decoders(code)
    state = decoder.state
    summary = N.BLOCK_CACHE + N.E_ADDRESS
    decoder.decode(BASE, BASE + 4)
    state.buffer[summary] = BASE  # (a summary the block hook would have made)
    decoder.decode(BASE + 4, BASE + len(code))
    assert state.buffer[summary] == BASE
    decoder.decode(BASE, BASE + len(code))
    assert state.buffer[summary] == 0
