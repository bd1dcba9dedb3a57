"""The Cortex-M7 block-start corrections computed in native code (machine/native/m7_schedule.py,
the memoised model) equal those of the Python reference (CortexM7Timing(memoise=False)) on the
same instruction runs: the functions of bundled example images, random halfwords (every
encoding capstone knows) and random orders of instructions of every kind over a few registers."""
import random

import pytest

from mcusim import examples
from mcusim.config import load_core
from mcusim.config.loader import core_timing_table
from mcusim.elf import ElfImage
from mcusim.timing.cortex_m7 import CortexM7Timing
from mcusim.timing.instruction import disassemble

TABLE = core_timing_table(load_core("cortex-m7"))
IMAGES = ["isa", "pipeline", "bench-dsp", "bench-float", "odd_shapes-opt", "kws_dscnn_s-opt"]

# One of each kind the rules tell apart, over r0-r3 (s0-s7) so that they depend on each other in
# any order (assembled with arm-none-eabi-as -mcpu=cortex-m7 -mfpu=fpv5-d16; the source in each comment).
KINDS = [
    "0868",  # ldr r0, [r1]
    "4168",  # ldr r1, [r0, #4]
    "51f8042b",  # ldr r2, [r1], #4
    "8358",  # ldr r3, [r0, r2]
    "51f82200",  # ldr r0, [r1, r2, lsl #2]
    "1178",  # ldrb r1, [r2]
    "5a88",  # ldrh r2, [r3, #2]
    "d2e90001",  # ldrd r0, r1, [r2]
    "06c8",  # ldm r0!, {r1, r2}
    "93e80700",  # ldm r3, {r0, r1, r2}
    "03bc",  # pop {r0, r1}
    "0cb4",  # push {r2, r3}
    "0860",  # str r0, [r1]
    "42f8041b",  # str r1, [r2], #4
    "1a54",  # strb r2, [r3, r0]
    "c3e90201",  # strd r0, r1, [r3, #8]
    "03c2",  # stm r2!, {r0, r1}
    "0130",  # adds r0, #1
    "0144",  # add r1, r0
    "01f10402",  # add.w r2, r1, #4
    "a2eb0103",  # sub.w r3, r2, r1
    "1846",  # mov r0, r3
    "0521",  # movs r1, #5
    "40f2e832",  # movw r2, #1000
    "00eb8103",  # add.w r3, r0, r1, lsl #2
    "81f4fe50",  # eor r0, r1, #0x1fc0
    "02f0ff01",  # and r1, r2, #0xff
    "8842",  # cmp r0, r1
    "43eb0002",  # adc r2, r3, r0
    "01fb02f0",  # mul r0, r1, r2
    "02fb0311",  # mla r1, r2, r3, r1
    "c2fb0301",  # smlal r0, r1, r2, r3
    "20fb0122",  # smlad r2, r0, r1, r2
    "90fbf1f3",  # sdiv r3, r0, r1
    "b2fbf3f0",  # udiv r0, r2, r3
    "c0f30711",  # ubfx r1, r0, #4, #8
    "cab2",  # uxtb r2, r1
    "b2fa82f3",  # clz r3, r2
    "18ba",  # rev r0, r3
    "60f30b21",  # bfi r1, r0, #8, #4
    "c1ea0042",  # pkhbt r2, r1, r0, lsl #16
    "02f30703",  # ssat r3, #8, r2
    "90ed000a",  # vldr s0, [r0]
    "70ee010a",  # vadd.f32 s1, s0, s2
    "00ee201a",  # vmla.f32 s2, s0, s1
    "a0ee810a",  # vfma.f32 s0, s1, s2
    "10ee901a",  # vmov r1, s1
    "01ee902a",  # vmov s3, r2
    "20ee012b",  # vmul.f64 d2, d0, d1
    "c1ed010a",  # vstr s1, [r1, #4]
    "b4ee600a",  # vcmp.f32 s0, s1
    "f1ee10fa",  # vmrs APSR_nzcv, fpscr
    "c0ee811a",  # vdiv.f32 s3, s1, s2
    "2ded020a",  # vpush {s0, s1}
    "b0ec042a",  # vldmia r0!, {s4-s7}
    "00d1",  # bne .+4
    "00b1",  # cbz r0, .+4
    "7047",  # bx lr
    "00f002f8",  # bl .+8
    "00e0",  # b .+4
    "d0e801f0",  # tbb [r0, r1]
    "00bf",  # nop
    "bff35f8f",  # dmb
    "00df",  # svc #0
    "42e80010",  # strex r0, r1, [r2]
    "50e8003f",  # ldrex r3, [r0]
]


def adjustments(timing, runs: list) -> list:
    """start_adjustments of each run, costed in sequence as the decoder does (a run continues
    the pipeline of the one before it)."""
    found, previous = [], None
    for run in runs:
        timing.begin_run()
        for insn in run:
            timing.cost(insn, previous)
            previous = insn
        found.append(timing.start_adjustments(run))
    return found


def assert_native_equals_reference(runs: list) -> None:
    native, reference = CortexM7Timing(TABLE), CortexM7Timing(TABLE, memoise=False)
    got, expected = adjustments(native, runs), adjustments(reference, runs)
    assert native._fits and all(native._fits.values()), "every run was scheduled in native code"
    for run, mine, theirs in zip(runs, got, expected):
        for index, (a, b) in enumerate(zip(mine, theirs)):
            assert a == b, f"at {run[index].address:#x} ({run[index].mnemonic} {run[index].op_str}): {a} != {b}"
        assert len(mine) == len(theirs)


def runs_of(instructions: list, rng: random.Random) -> list:
    """`instructions` cut into runs of 1 to 60, as decodes of blocks and code ranges give."""
    runs, at = [], 0
    while at < len(instructions):
        size = rng.choice([1, 2, 3, 5, 8, 13, 30, 60])
        runs.append(instructions[at: at + size])
        at += size
    return runs


@pytest.mark.parametrize("name", IMAGES)
def test_the_functions_of_example_images(name):
    image = ElfImage.load(examples.path(name, "mcu-d"))
    code = next(s for s in image.segments if s.executable and s.data)
    rng = random.Random(name)
    instructions = []
    for address, size, _ in image.functions:
        start = (address & ~1) - code.vaddr
        if size and 0 <= start and start + size <= len(code.data):
            found = disassemble(code.data[start: start + size], address & ~1, (address & ~1) + size)
            instructions += [found[a] for a in sorted(found)]
    assert len(instructions) > 500
    assert_native_equals_reference(runs_of(instructions, rng))


@pytest.mark.parametrize("seed", range(6))
def test_random_instruction_streams(seed):
    """Random halfwords over a few registers (so instructions depend on each other): loads,
    stores, multiplies, FP, LDM/STM, branches, bitfields... in any order."""
    rng = random.Random(seed)
    halfwords = []
    for _ in range(6000):
        value = rng.getrandbits(16)
        if rng.random() < 0.5:  # Rd/Rn/Rm fields (bits 0-2, 3-5, 8-10) over r0-r3: more dependencies
            value &= ~0b0000_0100_0010_0100
        halfwords.append(value)
    code = b"".join(h.to_bytes(2, "little") for h in halfwords)
    found = disassemble(code, 0x1000, 0x1000 + len(code))
    instructions = [found[a] for a in sorted(found)]
    assert len(instructions) > 3000
    assert_native_equals_reference(runs_of(instructions, rng))


@pytest.mark.parametrize("seed", range(6))
def test_random_orders_of_every_kind(seed):
    rng = random.Random(seed)
    code = bytes.fromhex("".join(rng.choice(KINDS) for _ in range(4000)))
    found = disassemble(code, 0x1000, 0x1000 + len(code))
    instructions = [found[a] for a in sorted(found)]
    assert len(instructions) == 4000
    assert_native_equals_reference(runs_of(instructions, rng))


def test_cycles_beyond_an_encoded_row_are_scheduled_in_python():
    """An encoded row holds its cycles in int16 (m7_schedule.ROW_TYPE): a timing table whose
    latency reaches ROW_LIMIT (a user's table may) leaves those instructions to the Python
    schedule, which gives the reference's corrections, never a wrapped-around latency."""
    from mcusim.machine.native import m7_schedule
    table = dict(TABLE, fp_divide_latency=m7_schedule.ROW_LIMIT + 5)
    code = bytes.fromhex("c0ee811a" "70ee010a" "0868" "c0ee811a" "00ee201a")  # vdiv, vadd, ldr, vdiv, vmla
    found = disassemble(code, 0x1000, 0x1000 + len(code))
    run = [found[a] for a in sorted(found)]
    native, reference = CortexM7Timing(table), CortexM7Timing(table, memoise=False)
    got, expected = adjustments(native, [run]), adjustments(reference, [run])
    assert got == expected
    assert not all(native._fits.values()), "the divides were left to the Python schedule"
    assert any(a != (0, 0, 0) for a in expected[0]), "the long latency shows in the corrections"
