"""Random Thumb-2 instruction sequences for the differential tests (docs/testing.md).

`generate(seeds, functions, length)` writes an assembly file of `functions` functions per seed,
`void rand_sS_K(uint32_t state[10])`, and their table `rand_functions`: each loads r0-r8 and the APSR (NZCVQ and GE) from
`state`, runs `length` random instructions and stores r0-r8 and the APSR back. The mix is what
breaks a simulator that stops or restarts inside an instruction or an IT block: loads and stores
of every width and addressing mode (offset, register offset, pre- and post-indexed writeback,
LDRD/STRD, LDM/STM, literal pools) from RAM and from a constant table in flash, IT blocks of one
to four instructions (conditional loads and stores, a compare in mid-block, a branch last),
forward conditional branches, CBZ/CBNZ, bounded loops, and the DSP instructions that set Q and GE.

Registers: r0-r8 hold data; r9 counts loops (or indexes, outside loops); r10 is the address
register; r11 points at `rand_ram` (1 KB + 16, 8-byte aligned), r12 at `diff_table` (the 1 KB
flash table of firmware/diff). No address ever reaches r0-r8, so the results do not depend on
the memory layout: the same sequence gives the same state on every board and on QEMU.
"""
from __future__ import annotations

import random

DATA = [f"r{i}" for i in range(9)]
LOW = [f"r{i}" for i in range(8)]
CONDITIONS = ["eq", "ne", "cs", "cc", "mi", "pl", "vs", "vc", "hi", "ls", "ge", "lt", "gt", "le"]
INVERSE = {"eq": "ne", "ne": "eq", "cs": "cc", "cc": "cs", "mi": "pl", "pl": "mi", "vs": "vc", "vc": "vs",
           "hi": "ls", "ls": "hi", "ge": "lt", "lt": "ge", "gt": "le", "le": "gt"}
LOAD_WIDTHS = {"ldrb": 1, "ldrsb": 1, "ldrh": 2, "ldrsh": 2, "ldr": 4}
STORE_WIDTHS = {"strb": 1, "strh": 2, "str": 4}
TABLE_BYTES = 1024


class Generator:
    def __init__(self, seed: int):
        self.seed = seed
        self.rng = random.Random(seed)
        self.labels = 0
        self.lines: list[str] = []

    def label(self) -> str:
        self.labels += 1
        return f".Ls{self.seed}_{self.labels}"

    def reg(self, exclude=()) -> str:
        return self.rng.choice([r for r in DATA if r not in exclude])

    def emit(self, text: str) -> None:
        self.lines.append("    " + text)

    # -- single instructions (cond: "" or a condition inside an IT block) ------------------------
    def alu(self, cond: str = "", flags: bool = True) -> str:
        r = self.rng
        d, n, m, a = self.reg(), self.reg(), self.reg(), self.reg()
        s = "s" if flags and not cond and r.random() < 0.5 else ""
        choices = [
            lambda: f"{r.choice(['add', 'sub', 'adc', 'sbc', 'and', 'orr', 'eor', 'bic', 'orn'])}{s}{cond} {d}, {n}, {m}",
            lambda: f"{r.choice(['add', 'sub', 'rsb'])}{s}{cond}.w {d}, {n}, #{r.choice([1, 7, 255, 0x3f00, 0xff00ff])}",
            lambda: f"{r.choice(['lsl', 'lsr', 'asr', 'ror'])}{s}{cond}.w {d}, {n}, #{r.randint(1, 31)}",
            lambda: f"{r.choice(['lsl', 'lsr', 'asr', 'ror'])}{s}{cond}.w {d}, {n}, {m}",
            lambda: f"{r.choice(['add', 'eor', 'sub'])}{s}{cond}.w {d}, {n}, {m}, {r.choice(['lsl', 'lsr', 'asr', 'ror'])} #{r.randint(1, 31)}",
            lambda: f"mul{cond} {d}, {n}, {m}",
            lambda: f"{r.choice(['mla', 'mls'])}{cond} {d}, {n}, {m}, {a}",
            lambda: self._long_multiply(cond),
            lambda: f"{r.choice(['sdiv', 'udiv'])}{cond} {d}, {n}, {m}",
            lambda: f"{r.choice(['clz', 'rbit', 'rev', 'rev16', 'revsh'])}{cond} {d}, {n}",
            lambda: f"{r.choice(['uxtb', 'uxth', 'sxtb', 'sxth'])}{cond}.w {d}, {n}, ror #{r.choice([8, 16, 24])}",
            lambda: f"{r.choice(['uxtab', 'sxtah'])}{cond} {d}, {n}, {m}",
            lambda: self._bitfield(cond, d, n),
            lambda: f"{r.choice(['ssat', 'usat'])}{cond} {d}, #{r.randint(1, 31)}, {n}",
            lambda: f"{r.choice(['qadd', 'qsub', 'qdadd', 'qdsub'])}{cond} {d}, {n}, {m}",
            lambda: f"{r.choice(['sadd8', 'uadd8', 'ssub8', 'usub8', 'sadd16', 'uadd16', 'ssub16', 'usub16', 'sasx', 'usax'])}{cond} {d}, {n}, {m}",
            lambda: f"sel{cond} {d}, {n}, {m}",
            lambda: f"{r.choice(['uqadd8', 'shadd8', 'uhsub16', 'qadd16', 'usad8', 'smuad', 'smusd', 'smulbb', 'smultt'])}{cond} {d}, {n}, {m}",
            lambda: f"{r.choice(['smlad', 'smlsd', 'smlabb', 'smlatb', 'usada8'])}{cond} {d}, {n}, {m}, {a}",
            lambda: f"movw{cond} {d}, #{r.randint(0, 0xffff)}",
            lambda: f"movt{cond} {d}, #{r.randint(0, 0xffff)}",
            lambda: f"mvn{s}{cond}.w {d}, {n}",
            lambda: f"ldr{cond} {d}, =0x{r.getrandbits(32):08x}",
        ]
        return r.choice(choices)()

    def _long_multiply(self, cond: str) -> str:
        lo, hi = self.rng.sample(DATA, 2)
        return f"{self.rng.choice(['umull', 'smull', 'umlal', 'smlal'])}{cond} {lo}, {hi}, {self.reg()}, {self.reg()}"

    def _bitfield(self, cond: str, d: str, n: str) -> str:
        lsb = self.rng.randint(0, 30)
        width = self.rng.randint(1, 32 - lsb)
        return self.rng.choice([f"bfi{cond} {d}, {n}, #{lsb}, #{width}", f"bfc{cond} {d}, #{lsb}, #{width}",
                                f"ubfx{cond} {d}, {n}, #{lsb}, #{width}", f"sbfx{cond} {d}, {n}, #{lsb}, #{width}"])

    def compare(self, cond: str = "") -> str:
        r = self.rng
        op = r.choice(["cmp", "cmn", "tst", "teq"])
        return f"{op}{cond}.w {self.reg()}, {self.reg()}" if r.random() < 0.6 else \
            f"{op}{cond}.w {self.reg()}, #{r.choice([0, 1, 128, 255, 0x10000])}"

    def address(self, flash: bool) -> None:
        """r10 = a 16-byte aligned spot in the flash table or in rand_ram, picked by data."""
        self.emit(f"and r10, {self.reg()}, #0x3f0")
        self.emit(f"add r10, r10, {'r12' if flash else 'r11'}")

    def access(self, cond: str = "", in_loop: bool = False) -> list[str]:
        """One load or store (after the caller set r10), in one of the addressing modes."""
        r = self.rng
        kind = r.random()
        if kind < 0.45:
            op = r.choice(list(LOAD_WIDTHS))
            width = LOAD_WIDTHS[op]
            offset = r.randint(0, 12 - width)
            mode = r.random()
            if mode < 0.5 or in_loop:
                return [f"{op}{cond}.w {self.reg()}, [r10, #{offset}]"]
            if mode < 0.7:
                return [f"{op}{cond} {self.reg()}, [r10, #{offset}]!"]
            if mode < 0.85:
                return [f"{op}{cond} {self.reg()}, [r10], #{r.choice([-4, 2, 4])}"]
            return [f"and{cond} r9, {self.reg()}, #6", f"{op}{cond}.w {self.reg()}, [r10, r9, lsl #1]"] \
                if not cond else [f"{op}{cond}.w {self.reg()}, [r10, #{offset}]"]
        if kind < 0.6:
            t, t2 = r.sample(DATA, 2)
            return [f"ldrd{cond} {t}, {t2}, [r10, #{r.choice([0, 4, 8])}]"]
        if kind < 0.7:
            regs = sorted(r.sample(DATA, r.randint(1, 4)), key=lambda x: int(x[1:]))
            return [f"ldm{cond}.w r10, {{{', '.join(regs)}}}"]
        return ["STORE"]  # (resolved by the caller: stores only go to RAM)

    def store(self, cond: str = "") -> str:
        r = self.rng
        kind = r.random()
        if kind < 0.6:
            op = r.choice(list(STORE_WIDTHS))
            return f"{op}{cond}.w {self.reg()}, [r10, #{r.randint(0, 12 - STORE_WIDTHS[op])}]"
        if kind < 0.75:
            return f"str{cond} {self.reg()}, [r10, #{r.choice([4, 8])}]!"
        if kind < 0.9:
            t, t2 = r.sample(DATA, 2)
            return f"strd{cond} {t}, {t2}, [r10, #{r.choice([0, 4, 8])}]"
        regs = sorted(r.sample(DATA, r.randint(1, 4)), key=lambda x: int(x[1:]))
        return f"stm{cond}.w r10, {{{', '.join(regs)}}}"

    def memory(self, cond: str = "", in_loop: bool = False) -> None:
        flash = self.rng.random() < 0.5
        if not cond:
            self.address(flash)
        ops = self.access(cond, in_loop)
        if ops == ["STORE"]:
            if flash:
                self.address(False)
            ops = [self.store(cond)]
        for op in ops:
            self.emit(op)

    # -- structures --------------------------------------------------------------------------------
    def it_block(self, in_loop: bool) -> None:
        r = self.rng
        count = r.randint(1, 4)
        cond = r.choice(CONDITIONS)
        pattern = "".join(r.choice("te") for _ in range(count - 1))
        conditions = [cond] + [cond if p == "t" else INVERSE[cond] for p in pattern]
        flash = r.random() < 0.5
        self.address(flash)  # r10 ready for the conditional accesses (stores only when it is RAM)
        self.emit(f"it{pattern} {cond}")
        skip = None
        for k, c in enumerate(conditions):
            last = k == count - 1
            pick = r.random()
            if last and not in_loop and pick < 0.15:
                skip = self.label()
                self.emit(f"b{c}.w {skip}")
            elif pick < 0.45:
                op = self.access(c, in_loop=True)
                self.emit(op[0] if op != ["STORE"] else f"ldr{c}.w {self.reg()}, [r10, #4]")
            elif pick < 0.55 and not last:
                self.emit(self.compare(c))  # changes the flags the rest of the block tests
            elif pick < 0.65:
                self.emit(f"{'ldr' if flash or r.random() < 0.5 else 'str'}{c}.w {self.reg()}, "
                          f"[r10, #{r.choice([0, 4, 8])}]")
            else:
                self.emit(self.alu(c))
        if skip:
            self.body(r.randint(1, 3), in_loop=True, structured=False)
            self.lines.append(f"{skip}:")

    def forward_branch(self) -> None:
        r = self.rng
        target = self.label()
        if r.random() < 0.3:  # (CBZ reaches 126 bytes forward: a few plain instructions)
            self.emit(f"{r.choice(['cbz', 'cbnz'])} {r.choice(LOW)}, {target}")
            for _ in range(r.randint(1, 4)):
                self.emit(self.alu())
        else:
            self.emit(self.compare())
            self.emit(f"b{r.choice(CONDITIONS)}.w {target}")
            self.body(r.randint(1, 6), in_loop=False, structured=False)
        self.lines.append(f"{target}:")

    def loop(self) -> None:
        r = self.rng
        top = self.label()
        self.emit(f"movs r9, #{r.randint(2, 5)}")
        self.lines.append(f"{top}:")
        self.body(r.randint(3, 12), in_loop=True, structured=False)
        self.emit("subs r9, r9, #1")
        self.emit(f"bne.w {top}")

    def body(self, count: int, in_loop: bool, structured: bool = True) -> None:
        r = self.rng
        for _ in range(count):
            pick = r.random()
            if pick < 0.35:
                self.emit(self.alu())
            elif pick < 0.45:
                self.emit(self.compare())
            elif pick < 0.75:
                self.memory(in_loop=in_loop)
            elif pick < 0.9 or not structured:
                self.it_block(in_loop)
            elif pick < 0.95:
                self.forward_branch()
            else:
                self.loop()

    def function(self, index: int, length: int) -> str:
        name = f"rand_s{self.seed}_{index}"
        self.lines += [f"    .global {name}", f"    .type {name}, %function", "    .p2align 2", f"{name}:"]
        self.emit("push {r4-r11, lr}")
        self.emit("push {r0}")
        self.emit("ldr r11, =rand_ram")
        self.emit("ldr r12, =diff_table")
        self.emit("ldr r1, [r0, #36]")
        self.emit("msr APSR_nzcvqg, r1")
        self.emit("ldm r0, {r0-r8}")
        self.body(length, in_loop=False)
        self.emit("ldr r10, [sp]")
        self.emit("stm r10, {r0-r8}")
        self.emit("mrs r0, apsr")
        self.emit("str r0, [r10, #36]")
        self.emit("add sp, sp, #4")
        self.emit("pop {r4-r11, pc}")
        self.emit(".ltorg")
        self.lines.append(f"    .size {name}, . - {name}")
        return name


def generate(seeds, functions: int = 8, length: int = 120) -> str:
    """The assembly source of `functions` random functions per seed, `length` instructions or
    structures each, and their table `rand_functions` (firmware/diff/random.c runs them)."""
    lines = [f"@ generated by tests/integration/randprog.py, seeds {list(seeds)}", "    .syntax unified",
             "    .thumb", "    .text"]
    names = []
    for seed in seeds:
        gen = Generator(seed)
        names += [gen.function(k, length) for k in range(functions)]
        lines += gen.lines
    lines += ["    .section .rodata", "    .p2align 2", "    .global rand_functions", "rand_functions:"]
    lines += [f"    .word {name} + 1" for name in names]
    lines += ["    .global rand_function_count", "rand_function_count:", f"    .word {len(names)}"]
    return "\n".join(lines) + "\n"
