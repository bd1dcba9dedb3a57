"""Cortex-M7 core timing: an in-order, dual-issue schedule of the decoded instruction stream.

Each instruction is scheduled after the one before it in memory (the decoder walks code in
order): it issues in the same cycle as its predecessor when the pairing rules allow and its
operands are ready, otherwise in a later cycle. Its cost is the distance in cycles from the
previous instruction's issue (0 when dual-issued, counted as folded for the DWT). A block
entered out of sequence starts from an empty pipeline: `start_adjustments` gives, for every
instruction, what a schedule starting there costs compared with the in-sequence one.
Branches are timed by the native branch predictor (machine/native._predict); what a wrong
prediction of each one costs, and whether the static predictor takes it, is decided here and
kept in its F_REFILL. Every number comes from cores/cortex-m7.toml, where its source is given
(and marked where it is an estimate); docs/timing.md describes the rules.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..machine.native import REFILL_CYCLES_MASK, STATIC_CYCLES_MASK, STATIC_SHIFT, STATIC_TAKEN
from ..machine.native import m7_schedule as S
from .cortex_m4 import (BRANCHES, DSP_PREFIXES, FP_MAC, MULTIPLES, MULTIPLY, REFILL_ALWAYS, REFILL_IF_TAKEN, STORES,
                        Cost, base_mnemonic, is_load, is_memory)
from .growing import with_room
from .lazy_capstone import arm as cs_arm

FLAGS = "apsr"      # the condition flags, tracked from the instruction itself (capstone's register lists omit them)
CORE_REGISTERS = {f"r{i}" for i in range(13)} | {"sb", "sl", "fp", "ip", "sp", "lr", "pc"}
SETS_FLAGS = ("cmp", "cmn", "tst", "teq")
READS_CARRY = ("adc", "sbc", "rrx")
STOPS_WINDOW = ("svc", "bkpt", "udf")  # control leaves the block (and comes back as a new one)
SINGLE_ISSUE = MULTIPLES + ("ldrd", "strd", "strex", "strexb", "strexh", "tbb", "tbh", "vmrs", "vmsr", "mrs", "msr",
                            "svc", "bkpt", "dmb", "dsb", "isb", "nop", "yield", "wfi", "wfe", "sev", "clrex",
                            "udf", "cpsie", "cpsid", "sdiv", "udiv")
FIRST_SLOT_ONLY = ("ldrex", "ldrexb", "ldrexh", "bfc", "bfi", "clz", "sxtb", "sxth", "uxtb", "uxth", "ssat", "usat",
                   "rev", "rev16", "revsh", "rbit", "sbfx", "ubfx", "usad8", "usada8")
NARROW_LOADS = ("ldrb", "ldrh", "ldrsb", "ldrsh", "ldrbt", "ldrht", "ldrsbt", "ldrsht", "ldrexb", "ldrexh")
# Bitfield, extend, reverse and pack instructions use the early shifter (jnk0le; LLVM's ShSIMD classes):
# one of them or a shifted-operand instruction a cycle. These read all their sources early ...
EARLY_SOURCES = ("sbfx", "ubfx", "rev", "rev16", "revsh", "rbit", "ssat", "usat")
# ... these the one they extract or shift (their last register operand) ...
EARLY_LAST_SOURCE = ("bfi", "pkhbt", "pkhtb", "sxtab", "sxtah", "sxtab16", "uxtab", "uxtah", "uxtab16")
# ... and these none.
SHIFTER = EARLY_SOURCES + EARLY_LAST_SOURCE + ("bfc", "sxtb", "sxth", "sxtb16", "uxtb", "uxth", "uxtb16")
# ADD, SUB and MOV (register or unshifted immediate) may run in the early ALU when issued as the
# older instruction of a cycle with their sources available early (jnk0le; TRM table 3-3: ACTLR.DISDYNADD
# turns this dynamic allocation of ADD and SUB off).
EARLY_ALU = ("add", "sub", "mov", "movw")
# 32-bit data processing with a modified immediate: one that is not an 8-bit value or a repeated-byte
# pattern is a shifted constant, and uses the shifter (jnk0le's operand2 table).
MODIFIED_IMMEDIATE = ("and", "bic", "orr", "orn", "eor", "add", "adc", "sbc", "sub", "rsb", "cmp", "cmn", "tst",
                      "teq", "mov", "mvn")


FORGOTTEN_CYCLES = 64  # far longer than any latency or resolve window of cores/cortex-m7.toml


@dataclass(slots=True)
class _Insn:
    """What scheduling needs to know of one instruction. (Slots: one object for the garbage
    collector to walk, of the thousands a large image's decode keeps.) The register fields are
    sets where describe builds them, tuples where m7_descriptors renames them (read alike)."""

    name: str
    reads: set[str]
    writes: set[str]
    early: set[str] = field(default_factory=set)   # read a cycle early (address, shifted operand)
    late: dict[str, int] = field(default_factory=dict)  # read late: register -> cycles
    latency: int = 1
    fast: set[str] = field(default_factory=set)  # written back by the address unit (a written-back base)
    index: str | None = None   # a load's or store's offset register
    word_load: bool = False    # a word load: its result cannot bypass into some readers (word_load_no_bypass)
    occupancy: int = 1         # cycles before the next instruction can issue (LDM, divide...)
    single: bool = False       # issues alone
    first_only: bool = False   # only as the older instruction of a pair
    memory: bool = False
    load: bool = False
    store: bool = False
    mac: bool = False
    branch: bool = False
    fp: bool = False
    shifted: bool = False      # a shifted register operand
    shifter: bool = False      # uses the early shifter: a shifted operand or constant, bitfield, extend, REV...
    early_stage: bool = False  # reads some operand in the early stage (a word load cannot bypass into the others)
    early_alu: bool = False    # may execute in the early ALU (EARLY_ALU)
    decided_by: str | None = None  # a conditional branch: what decides it (the flags, or CBZ/CBNZ's register)
    direct: bool = False          # a branch to an address in the instruction (B, BL, CBZ/CBNZ)
    ident: int = -1               # equal for instructions that schedule alike (set by CortexM7Timing.describe)

    def content(self) -> tuple:
        """Everything scheduling reads of it, hashable: equal contents schedule alike. Sorted
        tuples, not frozensets: the garbage collector stops tracking a tuple of strings, and
        CortexM7Timing keeps one content per ident."""
        return (self.name, tuple(sorted(self.reads)), tuple(sorted(self.writes)), tuple(sorted(self.early)),
                tuple(sorted(self.late.items())), self.latency, tuple(sorted(self.fast)), self.index, self.word_load,
                self.occupancy, self.single, self.first_only, self.memory, self.load, self.store, self.mac,
                self.branch, self.fp, self.shifted, self.shifter, self.early_stage, self.early_alu,
                self.decided_by, self.direct)


@dataclass
class _Pipeline:
    """Scheduling state after the last instruction issued."""

    cycle: int = 0                  # issue cycle of the last instruction
    issued: list = field(default_factory=list)  # the instructions issued in `cycle`
    free: int = 1                   # first cycle the next instruction may issue alone
    ready: dict = field(default_factory=dict)   # register -> first cycle a normal read sees it
    written_at: dict = field(default_factory=dict)  # register -> issue cycle of the instruction that wrote it
    early: dict = field(default_factory=dict)   # register -> first cycle an early read sees it, where that is
    #                                             not `ready` + early_operand (a written-back base, an early
    #                                             ALU result)
    word_loaded: set = field(default_factory=set)  # registers a word load wrote last

    def copy(self) -> "_Pipeline":
        return _Pipeline(self.cycle, list(self.issued), self.free, dict(self.ready), dict(self.written_at),
                         dict(self.early), set(self.word_loaded))


PAIRING = ("single", "occupancy", "store", "mac", "branch", "fp", "shifter")  # what _pairs reads of the older


def _empty_pipeline() -> np.ndarray:
    """A new m7_schedule array of an empty pipeline (_Pipeline())."""
    return S.EMPTY_PIPELINE.copy()


def _held(pipeline: np.ndarray, after: int) -> zip:
    """(place, value) of each entry of m7_schedule's array `pipeline` past P_READY that holds a
    cycle after `after` (S.ABSENT: every cycle it holds) in the ready, early-read and written-at
    tables, or marks a register in the word-load table; a place is the table's number (ready,
    early, word loaded, written at) times REGISTERS plus the register's."""
    registers = pipeline[S.P_READY:]
    kept = registers > after  # (never an ABSENT one)
    word = slice(S.P_WORD_LOADED - S.P_READY, S.P_WRITTEN_AT - S.P_READY)
    kept[word] = registers[word] != 0
    places = np.flatnonzero(kept)
    return zip(places.tolist(), registers[places].tolist())


def _pairing_values(p: "_Pipeline") -> list | None:
    """What _pairs reads of the instructions issued in the last cycle: the older one's
    PAIRING attributes when it issued alone (a second may join it), else None (none can)."""
    return [getattr(p.issued[0], name) for name in PAIRING] if len(p.issued) == 1 else None


def _pairing_insn(values: list) -> "_Insn":
    """An instruction with the PAIRING attributes `values` alone (what a pipeline needs of an
    instruction issued in its last cycle)."""
    return _Insn(name="(restored)", reads=set(), writes=set(), **dict(zip(PAIRING, values)))


class CortexM7Timing:
    def __init__(self, table: dict, memoise: bool = True):
        """`memoise=False` schedules everything afresh (the reference for tests)."""
        self.t = table
        self.memoise = memoise
        self._early_operand = table["early_operand"]
        self._base_update_latency = table["base_update_latency"]
        self._alu_latency = table["alu_latency"]
        self._costs: dict[tuple, Cost] = {}  # (ident, delta, waited, mispredict cycles) -> Cost
        self._last_address: int | None = None
        self._kept: _Pipeline | None = _Pipeline()  # the pipeline after _last_address (_pipeline) ...
        self._native: np.ndarray | None = None  # ... or m7_schedule's array of it, as m7_rows left it
        self._pairings: dict[int, list] = {}  # ident -> _pairing_values of a pipeline that issued it alone
        self._run_starts: dict[int, _Pipeline] = {}  # first address of a costed run -> the state before it
        self._starting = False
        self._run: list[tuple[int, int, int]] = []  # (address, delta, waited) of each instruction costed in the run
        self._described: dict[int, _Insn] = {}  # Instruction.shape -> describe()
        self._idents: dict[tuple, int] = {}  # _Insn.content() -> its ident
        self._by_ident: list = []  # each ident's _Insn (None: renamed's, made from its row if asked for: _issued)
        # start_adjustments in native code: each ident's _encode row (by ident), and whether it fits
        self._encoded = np.zeros((64, S.ROW), S.ROW_TYPE)
        self._fits: dict[int, bool] = {}

    def state_key(self, previous) -> tuple:
        """What cost() takes from before `previous`'s successor besides the instructions: the
        pipeline it continues, in cycles relative to the last issue (entries older than
        FORGOTTEN_CYCLES act as never written), or none. Equal keys schedule alike."""
        if previous is None or previous.address != self._last_address:
            return ()
        p = self._pipeline

        def relative(cycles: dict) -> tuple:
            return tuple(sorted((r, c - p.cycle) for r, c in cycles.items() if c > p.cycle - FORGOTTEN_CYCLES))
        return (p.free - p.cycle, tuple(info.ident for info in p.issued), relative(p.ready),
                relative(p.written_at), relative(p.early), tuple(sorted(p.word_loaded)))

    @property
    def _pipeline(self) -> _Pipeline:
        """The pipeline after _last_address, made from m7_rows' array the first time Python
        reads it after a native decode (the decoder's next range reads the array itself:
        pipeline_before)."""
        if self._kept is None:
            self._kept, self._native = self._from_array(self._native), None
        return self._kept

    @_pipeline.setter
    def _pipeline(self, pipeline: _Pipeline) -> None:
        self._kept, self._native = pipeline, None

    def saved_state(self) -> _Pipeline | np.ndarray:
        return self._native.copy() if self._native is not None else self._pipeline.copy()

    def restore_state(self, pipeline: _Pipeline | np.ndarray, last_address: int) -> None:
        """Carry on as after costing up to the instruction at `last_address` (a decode copied)."""
        if isinstance(pipeline, np.ndarray):
            self._kept, self._native = None, pipeline.copy()
        else:
            self._pipeline = pipeline.copy()
        self._last_address = last_address

    def forget_state(self) -> None:
        """Carry on from no instruction: the next decode schedules after an empty pipeline."""
        self._last_address = None

    @property
    def last_address(self) -> int | None:
        """The instruction cost() scheduled last (its successor continues its pipeline)."""
        return self._last_address

    def export_state(self, previous_address: int | None):
        """What scheduling the successor of the instruction at `previous_address` reads of the
        pipeline (None: an empty one), as plain values: ready times relative to the last issue
        (older than FORGOTTEN_CYCLES: as never written) and what pairing reads of the last issue
        cycle (_pairing_values). Equal values schedule alike: the tests compare the pipelines
        the Python schedule and m7_rows leave by them."""
        if previous_address is None or previous_address != self._last_address:
            return None
        if self._native is not None:
            return self._exported_array(self._native)
        p = self._pipeline

        def relative(cycles: dict) -> list:
            return sorted([r, c - p.cycle] for r, c in cycles.items() if c > p.cycle - FORGOTTEN_CYCLES)
        return [p.free - p.cycle, _pairing_values(p), relative(p.ready), relative(p.written_at), relative(p.early),
                sorted(p.word_loaded)]

    def _exported_array(self, pipeline: np.ndarray) -> list:
        """export_state's values of m7_schedule's array `pipeline` (as of the _Pipeline
        _from_array makes of it)."""
        cycle = int(pipeline[S.P_CYCLE])
        names = _REGISTER_NAMES
        tables = ([], [], [], [])  # ready, early, word loaded, written at
        for place, value in _held(pipeline, cycle - FORGOTTEN_CYCLES):
            tables[place // S.REGISTERS].append([names[place % S.REGISTERS], value - cycle])
        ready, early, loaded, written_at = tables
        pairing = self._pairing_of(int(pipeline[S.P_OLDER])) if pipeline[S.P_ISSUED] == 1 else None
        return [int(pipeline[S.P_FREE]) - cycle, pairing, sorted(ready), sorted(written_at), sorted(early),
                sorted(name for name, _ in loaded)]

    def _pairing_of(self, ident: int) -> list:
        """_pairing_values of a pipeline whose last cycle issued `ident` alone."""
        values = self._pairings.get(ident)
        if values is None:
            info = self._issued(ident)
            values = self._pairings[ident] = [getattr(info, name) for name in PAIRING]
        return list(values)

    def known(self, info: "_Insn") -> "_Insn":
        """`info` with the ident of equal contents in this process."""
        content = info.content()
        info.ident = self._idents.get(content, -1)
        if info.ident < 0:
            info.ident = self._idents[content] = len(self._by_ident)
            self._by_ident.append(info)
        return info

    def _issued(self, ident: int) -> "_Insn":
        """The _Insn of `ident` as a pipeline keeps those issued in its last cycle: one `renamed`
        or `add_idents` made has none, so it gets what pairing reads of it (PAIRING), from its
        encoded row (which it has: _encodable need not make one)."""
        info = self._by_ident[ident]
        if info is None:
            row = self._encoded[ident]
            flags = int(row[S.C_FLAGS])
            info = self._by_ident[ident] = _pairing_insn([int(row[S.C_OCCUPANCY]) if name == "occupancy"
                                                          else bool(flags & _PAIRING_BITS[name]) for name in PAIRING])
            info.ident = ident
            self._fits[ident] = True
        return info

    def begin_run(self) -> None:
        """The decoder starts a run of instructions in memory order (see start_adjustments)."""
        self._starting = True
        self._run = []

    # classification ---------------------------------------------------------------
    def describe(self, insn) -> _Insn:
        """What scheduling needs of `insn`: made once per encoding for instructions from
        timing/instruction.py (the result is shared, and never changed after)."""
        key = getattr(insn, "shape", None) if self.memoise else None
        info = self._described.get(key) if key is not None else None
        if info is None:
            info = self.known(self._describe(insn))
            if key is not None:
                if len(self._described) >= 1 << 16:
                    self._described.clear()
                self._described[key] = info
        return info

    def _describe(self, insn) -> _Insn:
        t = self.t
        name = base_mnemonic(insn)
        try:
            read, written = insn.regs_access()
            reads = {self._reg(insn, r) for r in read} - {None}
            writes = {self._reg(insn, r) for r in written} - {None}
        except Exception:
            reads, writes = set(), set()
        reads.discard(FLAGS)
        writes.discard(FLAGS)
        conditional = insn.cc not in (cs_arm.ARM_CC_AL, cs_arm.ARM_CC_INVALID)
        if conditional and not name.startswith("it") or name in READS_CARRY:
            reads.add(FLAGS)
        if getattr(insn, "update_flags", False) or name in SETS_FLAGS:
            writes.add(FLAGS)
        info = _Insn(name, reads, writes)
        info.single = name in SINGLE_ISSUE or name.startswith(("vldm", "vstm", "vpush", "vpop"))
        info.first_only = name in FIRST_SLOT_ONLY or name.startswith(DSP_PREFIXES)
        info.fp = name.startswith("v")
        info.branch = name in BRANCHES or name in ("tbb", "tbh") or "pc" in writes
        memory_operand = next((op for op in insn.operands if op.type == cs_arm.ARM_OP_MEM), None)
        info.memory = is_memory(name)
        if memory_operand is not None:
            info.early = {self._reg(insn, memory_operand.mem.base)} if memory_operand.mem.base else set()
            if memory_operand.mem.index:
                info.index = self._reg(insn, memory_operand.mem.index)
                info.early.add(info.index)
        elif name in ("push", "pop", "vpush", "vpop"):
            info.early = {"sp"}
            info.fast = {"sp"}
        elif name.startswith(("ldm", "stm", "vldm", "vstm")):
            base = next((op for op in insn.operands if op.type == cs_arm.ARM_OP_REG), None)
            if base is not None:
                info.early = {self._reg(insn, base.reg)}
                if getattr(insn, "writeback", False):
                    info.fast = set(info.early)
        if getattr(insn, "writeback", False):  # the base register is written back by the address unit
            info.fast |= {r for r in writes if r in info.early}
        info.shifted = any(op.type == cs_arm.ARM_OP_REG and op.shift.type not in (0, cs_arm.ARM_SFT_INVALID)
                           and op.shift.value != 0 for op in insn.operands) and not info.memory
        if info.shifted:
            shifted_regs = {self._reg(insn, op.reg) for op in insn.operands
                            if op.type == cs_arm.ARM_OP_REG and op.shift.type not in (0, cs_arm.ARM_SFT_INVALID)}
            info.early |= shifted_regs & reads
        if name in EARLY_SOURCES:
            info.early |= reads - {FLAGS}
        elif name in EARLY_LAST_SOURCE:
            sources = [self._reg(insn, op.reg) for op in insn.operands if op.type == cs_arm.ARM_OP_REG]
            info.early |= {sources[-1]} & reads if sources else set()
        info.shifter = info.shifted or name in SHIFTER or self._shifted_constant(insn, name)
        info.early_stage = info.shifted or name in EARLY_SOURCES or name in EARLY_LAST_SOURCE
        info.early_alu = (name in EARLY_ALU and not info.shifter and not conditional and not info.memory
                          and "pc" not in writes and "pc" not in reads)
        info.latency = t["alu_latency"]
        if is_load(name) or name == "ldrd":
            info.load = True
            info.latency = t["load_narrow_latency"] if name in NARROW_LOADS else t["load_latency"]
            info.word_load = name in ("ldr", "ldrt", "ldrd")
        elif name in STORES or name.startswith("strex") or name == "strd":
            info.store = True
            data = [self._reg(insn, op.reg) for op in insn.operands if op.type == cs_arm.ARM_OP_REG]
            info.late = {r: t["store_data_late"] for r in data[:2 if name == "strd" else 1]}
        elif name in MULTIPLES:
            registers = [op for op in insn.operands if op.type == cs_arm.ARM_OP_REG]
            count = len(registers) - (0 if name in ("push", "pop") else 1)
            per_cycle = t["multiple_registers_per_cycle"]
            info.occupancy = max(1, -(-count // per_cycle))
            info.load = name.startswith("ldm") or name == "pop"
            info.store = not info.load
            info.latency = t["load_latency"] + info.occupancy - 1 if info.load else 1
        elif name in ("sdiv", "udiv"):
            info.occupancy = t["divide_min"]
            info.latency = t["divide_min"]
        elif name in MULTIPLY or name.startswith(("smla", "smul", "smua", "smus", "smls", "smmu", "smml", "umaal")):
            info.mac = True
            info.latency = t["multiply_latency"]
            if name in ("mla", "mls") or name.startswith(("smla", "smls", "smmla", "smmls", "umaal")):
                accumulators = self._accumulators(insn, name)
                info.late = {r: t["accumulator_advance"] for r in accumulators}
        elif info.fp:
            self._describe_fp(insn, name, info)
        if name in ("tbb", "tbh"):
            info.load = True
        if info.branch and FLAGS in reads:  # TRM 1.2.3: flag forwarding resolves branches early
            info.late[FLAGS] = t["flags_to_branch_advance"]
        if info.branch:
            info.direct = name in ("b", "bl", "cbz", "cbnz")
            if name in ("cbz", "cbnz"):
                info.decided_by = self._reg(insn, insn.operands[0].reg)
            elif conditional:
                info.decided_by = FLAGS
        return info

    @staticmethod
    def _shifted_constant(insn, name: str) -> bool:
        """A 32-bit data-processing instruction whose immediate is a shifted constant (is_rotated)."""
        if insn.size != 4 or name not in MODIFIED_IMMEDIATE:
            return False
        return next((is_rotated(op.imm) for op in insn.operands if op.type == cs_arm.ARM_OP_IMM), False)

    @staticmethod
    def _reg(insn, reg) -> str | None:
        name = insn.reg_name(reg)
        if name in ("cpsr", "apsr", "apsr_nzcv"):
            return FLAGS
        return None if name == "itstate" else name

    def _accumulators(self, insn, name: str) -> set[str]:
        regs = [self._reg(insn, op.reg) for op in insn.operands if op.type == cs_arm.ARM_OP_REG]
        if name.startswith(("smlal", "umlal", "smlsld", "umaal")):
            return set(regs[:2])   # RdLo, RdHi accumulate
        return {regs[-1]} if regs else set()  # MLA Rd, Rn, Rm, Ra

    def _describe_fp(self, insn, name: str, info: _Insn) -> None:
        t = self.t
        regs = [self._reg(insn, op.reg) for op in insn.operands if op.type == cs_arm.ARM_OP_REG]
        double = ".f64" in insn.mnemonic or any(r.startswith("d") for r in regs)
        if double:
            info.first_only = True  # LLVM ARMScheduleM7.td: double-precision FP issues in the older slot
        if name in ("vdiv", "vsqrt"):
            info.latency = t["fp_divide_latency"]
        elif name in FP_MAC:
            fused = name.startswith(("vfma", "vfms", "vfnma", "vfnms"))
            info.latency = t["fp_fused_latency"] if fused else t["fp_mac_latency"]
            if regs:
                info.late = {regs[0]: t["fp_fused_advance"] if fused else t["fp_mac_advance"]}
        elif name.startswith(("vldr", "vldm", "vpop")):
            info.load = True
            info.latency = t["fp_load_latency"]
            if name.startswith(("vldm", "vpop")):
                info.occupancy = max(1, -(-(len(regs) - (0 if name == "vpop" else 1)) // 2))
            if name == "vldr" and double:
                info.single = True
        elif name.startswith(("vstr", "vstm", "vpush")):
            info.store = True
            if name.startswith(("vstm", "vpush")):
                info.occupancy = max(1, -(-(len(regs) - (0 if name == "vpush" else 1)) // 2))
            if name == "vstr" and double:
                info.single = True
        elif name == "vmov" and any(r in CORE_REGISTERS for r in regs):
            info.latency = t["fp_move_latency"]
            info.single = sum(r in CORE_REGISTERS for r in regs) >= 2
        elif name in ("vmrs", "vmsr"):
            info.latency = t["fp_move_latency"]
            info.single = True
            if name == "vmrs" and "apsr_nzcv" in insn.op_str:
                info.writes.add(FLAGS)
        else:
            info.latency = t["fp_latency"]

    # scheduling ---------------------------------------------------------------------
    def _pairs(self, p: _Pipeline, info: _Insn) -> bool:
        """Can `info` issue in the cycle of the instruction just issued (TRM dual issue; the
        pairing rules of cores/cortex-m7.toml)?"""
        if len(p.issued) != 1 or info.single or info.first_only:
            return False
        older = p.issued[0]
        if older.single or p.free > p.cycle + 1 or older.occupancy > 1:
            return False
        return not (older.store and info.store or older.mac and info.mac or older.branch and info.branch
                    or older.fp and info.fp or older.shifter and info.shifter
                    or older.mac and info.store or older.store and info.mac)

    def _operands_ready(self, p: _Pipeline, info: _Insn) -> int:
        """First cycle the operands of `info` allow it to issue."""
        t = self.t
        earliest = 0
        for register in info.reads:
            ready = p.ready.get(register)
            if ready is None:
                continue
            if register in info.early:
                ready = p.early.get(register, ready + t["early_operand"])
            if register in p.word_loaded and (register == info.index or (info.mac or info.name in ("sdiv", "udiv")
                                                                           or info.early_stage)
                                              and register not in info.early and register not in info.late):
                ready += t["word_load_no_bypass"]
            ready -= info.late.get(register, 0)
            earliest = max(earliest, ready)
        return earliest

    def _issue(self, p: _Pipeline, info: _Insn) -> tuple[int, int]:
        """Issue `info` after the pipeline state `p` (updated); returns (cycles since the
        previous issue, of which waiting for operands)."""
        operands = self._operands_ready(p, info)
        cycle = p.cycle
        if operands <= cycle and self._pairs(p, info):
            p.issued.append(info)
            when = cycle
            waited = 0
            older = False
        else:
            alone = max(cycle + 1, p.free)
            when = max(alone, operands)
            waited = when - alone
            p.issued = [info]
            older = True
        p.cycle = when
        p.free = max(p.free, when + info.occupancy)
        if not info.writes:
            return when - cycle, waited
        ready, early = p.ready, p.early
        # the early ALU: its result reaches the younger instruction of the same cycle, and an
        # early read (an address, a shifted operand) the next cycle; its flags come as usual
        early_operand = self._early_operand
        early_alu = info.early_alu and older and all(
            early.get(r, ready[r] + early_operand) <= when for r in info.reads if r in ready and r != FLAGS)
        for register in info.writes:
            if register != "pc":
                p.written_at[register] = when
                early.pop(register, None)
                if register in info.fast:
                    ready[register] = when + self._base_update_latency
                    early[register] = when + self._base_update_latency + early_operand
                elif early_alu and register != FLAGS:
                    ready[register] = when
                    early[register] = when + self._alu_latency
                else:
                    ready[register] = when + info.latency
                if info.word_load and register not in info.fast:
                    p.word_loaded.add(register)
                else:
                    p.word_loaded.discard(register)
        return when - cycle, waited

    def cost(self, insn, previous) -> Cost:
        """Cost of `insn` scheduled right after `previous` (the instruction before it in memory
        that the decoder costed last, or None: then from an empty pipeline)."""
        if previous is None or previous.address != self._last_address:
            self._pipeline = _Pipeline()
        if self._starting:
            self._run_starts[insn.address] = self._pipeline.copy()
            self._starting = False
        info = self.describe(insn)
        pipeline = self._pipeline
        decided_at = pipeline.written_at.get(info.decided_by) if info.decided_by else None
        delta, waited = self._issue(pipeline, info)
        self._last_address = insn.address
        self._run.append((insn.address, delta, waited))
        mispredict = 0
        if info.branch:
            mispredict = self._mispredict_cycles(info, None if decided_at is None else pipeline.cycle - decided_at)
        key = (info.ident, delta, waited, mispredict)
        cost = self._costs.get(key) if self.memoise else None
        if cost is None:
            cost = self._as_cost(insn, info, delta, waited)
            if info.branch:
                refill = cost.refill | mispredict << 2
                if info.direct and info.decided_by is None:
                    refill |= STATIC_TAKEN | min(STATIC_CYCLES_MASK, self.t["branch_static_taken"]) << STATIC_SHIFT
                cost = Cost(cost.cycles, cost.start_adjust, cost.lsu, cost.cpi, cost.folded, cost.stall_refill,
                            cost.stall_interlock, cost.stall_divide, refill, cost.start_fold)
            if len(self._costs) >= 1 << 16:
                self._costs.clear()
            self._costs[key] = cost
        return cost

    def _mispredict_cycles(self, info: _Insn, decided_before: int | None) -> int:
        """What a wrong prediction of branch `info` costs: a direct branch whose condition was
        set `decided_before` cycles before it issued (None: not in this run of code, so long
        before) is resolved early when that is at least `branch_early_resolve_cycles` (TRM
        1.2.3 flag forwarding; jnk0le: 6 cycles instead of 8)."""
        t = self.t
        if info.direct and (decided_before is None or decided_before >= t["branch_early_resolve_cycles"]):
            return min(REFILL_CYCLES_MASK, t["branch_mispredict_early"])
        return min(REFILL_CYCLES_MASK, t["branch_mispredict"])

    def _as_cost(self, insn, info: _Insn, delta: int, waited: int) -> Cost:
        folded = 1 if delta == 0 else 0
        extra = max(0, delta - 1)  # DWT CPICNT (a dual-issue core's waits are not split further)
        refill = 0
        if info.branch:
            conditional = info.name in ("cbz", "cbnz") or insn.cc not in (cs_arm.ARM_CC_AL, cs_arm.ARM_CC_INVALID)
            refill = REFILL_IF_TAKEN if conditional else REFILL_ALWAYS
        return Cost(delta, 0, 0, extra, folded, stall_interlock=min(waited, extra), refill=refill)

    def fresh_schedule(self, instructions: list) -> list[tuple[int, int]]:
        """(cycles since the previous issue, of which waiting) of each instruction, scheduled in
        order from an empty pipeline, as a block entered out of sequence runs them."""
        pipeline = _Pipeline()
        return [self._issue(pipeline, self.describe(insn)) for insn in instructions]

    def start_adjustments(self, instructions: list) -> list[tuple[int, int, int]]:
        """For each instruction of a decoded run (capstone instructions in memory order, each
        costed by `cost` after the one before it), what entering a block there changes:
        (cycles, interlock cycles taken back, dual issues lost), from a schedule of the block's
        first instructions (up to `start_window`, and not past a branch) on an empty pipeline.
        The memoised model schedules the windows in native code (_native_adjustments: the
        Python here, half of a decode's time, is the reference it is tested against)."""
        infos = [self.describe(insn) for insn in instructions]
        window = self.t["start_window"]
        # the in-sequence schedule `cost` made, from the state it started the run in
        sequence = self._run_starts.pop(instructions[0].address, _Pipeline()) if instructions else _Pipeline()
        if self.memoise and [address for address, _, _ in self._run] == [insn.address for insn in instructions]:
            in_sequence = [(delta, waited) for _, delta, waited in self._run]
        else:
            in_sequence = [self._issue(sequence, info) for info in infos]
        if self.memoise and infos and self._encodable(infos):
            return self._native_adjustments(infos, in_sequence)
        adjustments = []
        for i in range(len(infos)):
            stop = i
            while True:  # the window: up to `start_window` instructions, ending at a branch
                last = infos[stop]
                stop += 1
                if stop - i == window or stop == len(infos) or last.branch or last.name in STOPS_WINDOW:
                    break
            fresh = self._fresh_sums(infos[i: stop])
            sequence_cycles = sequence_waited = sequence_pairs = 0
            for delta, waited in in_sequence[i: stop]:
                sequence_cycles += delta
                sequence_waited += waited
                sequence_pairs += delta == 0
            adjustments.append((fresh[0] - sequence_cycles, min(15, max(0, sequence_waited - fresh[1])),
                                max(-8, min(7, sequence_pairs - fresh[2]))))
        return adjustments

    def _fresh_sums(self, infos: list) -> tuple[int, int, int]:
        """(cycles, waiting cycles, dual issues) of `infos` scheduled from an empty pipeline."""
        pipeline = _Pipeline()
        cycles = waited = pairs = 0
        for info in infos:
            delta, wait = self._issue(pipeline, info)
            cycles += delta
            waited += wait
            pairs += delta == 0
        return cycles, waited, pairs

    # the in-sequence schedule in native code (machine/native/m7_rows.py) -----------------
    def constants(self, instruction_cycles: int) -> np.ndarray:
        """The table's values m7_rows reads, in its K_ order."""
        t = self.t
        return np.array([t["early_operand"], t["base_update_latency"], t["alu_latency"], t["word_load_no_bypass"],
                         t["start_window"], t["branch_early_resolve_cycles"],
                         min(REFILL_CYCLES_MASK, t["branch_mispredict_early"]),
                         min(REFILL_CYCLES_MASK, t["branch_mispredict"]), instruction_cycles], np.int64)

    def pipeline_before(self, previous) -> np.ndarray | None:
        """The pipeline `cost` schedules the successor of `previous` after (the instruction before
        a range, or None), as m7_schedule's array; None where it does not fit one (a register
        numbered beyond m7_schedule.REGISTERS, an issued instruction that does not encode)."""
        if previous is None or previous.address != self._last_address:
            return _empty_pipeline()
        if self._native is not None:  # (m7_rows' own array: as made from _pipeline, had it been taken)
            return self._native.copy()
        pipeline = _empty_pipeline()
        p = self._pipeline
        if p.issued and not self._encodable(p.issued):
            return None
        pipeline[S.P_CYCLE], pipeline[S.P_FREE], pipeline[S.P_ISSUED] = p.cycle, p.free, len(p.issued)
        for slot, info in zip((S.P_OLDER, S.P_YOUNGER), p.issued):
            pipeline[slot] = info.ident
        for base, cycles in ((S.P_READY, p.ready), (S.P_EARLY, p.early), (S.P_WRITTEN_AT, p.written_at),
                             (S.P_WORD_LOADED, dict.fromkeys(p.word_loaded, 1))):
            for register, cycle in cycles.items():
                number = register_number(register)
                if number >= S.REGISTERS:
                    return None
                pipeline[base + number] = cycle
        return pipeline

    def take_pipeline(self, pipeline: np.ndarray, last_address: int) -> None:
        """Carry on after the instruction at `last_address`, scheduled by m7_rows into `pipeline`
        (kept as it is: read as a _Pipeline only if Python schedules next)."""
        self._kept, self._native = None, pipeline
        self._last_address = last_address

    def _from_array(self, pipeline: np.ndarray) -> _Pipeline:
        """The _Pipeline of m7_schedule's array `pipeline`."""
        names = _REGISTER_NAMES
        tables = ({}, {}, {}, {})  # ready, early, word loaded, written at
        for place, value in _held(pipeline, S.ABSENT):
            tables[place // S.REGISTERS][names[place % S.REGISTERS]] = value
        ready, early, word_loaded, written_at = tables
        issued = [self._issued(int(pipeline[slot])) for slot in (S.P_OLDER, S.P_YOUNGER)[: pipeline[S.P_ISSUED]]]
        return _Pipeline(int(pipeline[S.P_CYCLE]), issued, int(pipeline[S.P_FREE]), ready, written_at, early,
                         set(word_loaded))

    @property
    def encoded(self) -> np.ndarray:
        """Each ident's m7_schedule encoded row (those encodable has made)."""
        return self._encoded

    def encodable(self, info: _Insn) -> bool:
        """Whether `info` has an m7_schedule encoded row (made on first sight)."""
        return self._encodable([info])

    # start_adjustments in native code ---------------------------------------------------
    def _native_adjustments(self, infos: list, in_sequence: list) -> list[tuple[int, int, int]]:
        """start_adjustments' windows scheduled by native m7_schedule (the Python above is the
        reference it is tested against): every window from an empty pipeline, with no memo."""
        t = self.t
        idents = np.array([info.ident for info in infos], np.int64)
        sequence = np.array(in_sequence, np.int64)
        adjustments = np.empty((len(infos), 3), np.int64)
        S.start_adjustments(self._encoded, idents, sequence, adjustments, t["early_operand"],
                            t["base_update_latency"], t["alu_latency"], t["word_load_no_bypass"], t["start_window"])
        return list(map(tuple, adjustments.tolist()))

    def _encodable(self, infos: list) -> bool:
        """Whether every instruction of `infos` has an encoded row (made on first sight)."""
        fits = self._fits
        for info in infos:
            fit = fits.get(info.ident)
            if fit is None:
                fit = fits[info.ident] = self._encode(info)
            if not fit:
                return False
        return True

    def _encode(self, info: _Insn) -> bool:
        """Write `info`'s row of integers (m7_schedule's ROW layout) at its ident; False where it
        does not fit (too many operands, or registers beyond m7_schedule.REGISTERS)."""
        row = self._row(info, register_number)
        if row is None:
            return False
        self._ensure_row(info.ident)
        self._encoded[info.ident] = row
        return True

    def template(self, info: _Insn, names: tuple[str, ...]) -> tuple | None:
        """`info`'s encoded row with each register of `names` left as its place there, to be
        filled by `renamed` (an encoding of the same register pattern: the same row but for those
        registers): (the row, each place at TEMPLATE_PLACE - place, where the places are in it,
        which place each is); None where the row does not fit."""
        places = {name: place for place, name in enumerate(names)}
        row = self._row(info, lambda name: register_number(name) if name not in places
                        else TEMPLATE_PLACE - places[name])
        return None if row is None else template_of_row(row)

    def renamed(self, template: tuple, numbers: list[int]) -> int | None:
        """A new ident whose encoded row is `template`'s with its places filled by `numbers`
        (register_number of the registers, in place order); None where a register is numbered
        beyond m7_schedule.REGISTERS. It keeps no _Insn (_issued makes what a pipeline needs),
        and equal contents are not looked for (known): to native code an ident is only its
        encoded row, and an equal row under another ident schedules alike."""
        row, at, places = template
        filled = [numbers[place] for place in places]
        if filled and max(filled) >= S.REGISTERS:
            return None
        ident = len(self._by_ident)
        self._by_ident.append(None)
        self._ensure_row(ident)
        self._encoded[ident] = row
        self._encoded[ident, at] = filled
        return ident

    def add_idents(self, count: int) -> int:
        """`count` new idents, the first's returned, whose encoded rows (zeros) the caller fills
        (m7_table's, registers numbered in this process): like renamed's, they keep no _Insn."""
        first = len(self._by_ident)
        if count:
            self._by_ident.extend([None] * count)
            self._ensure_row(first + count - 1)
        return first

    def _ensure_row(self, ident: int) -> None:
        self._encoded = with_room(self._encoded, ident + 1)

    @staticmethod
    def _row(info: _Insn, number) -> np.ndarray | None:
        """`info`'s m7_schedule row, each register given by `number(name)`; None where it has too
        many operands, a register numbered beyond m7_schedule.REGISTERS or cycles a row cannot hold."""
        writes = [r for r in info.writes if r != "pc"]  # (_issue: a write to pc updates nothing)
        if len(info.reads) > S.MAX_OPERANDS or len(writes) > S.MAX_OPERANDS:
            return None
        if max(info.latency, info.occupancy, *info.late.values()) >= S.ROW_LIMIT:
            return None
        if max((number(r) for r in (*info.reads, *writes, info.index) if r is not None), default=0) >= S.REGISTERS:
            return None
        flags = 0
        for on, bit in ((info.single, S.SINGLE), (info.first_only, S.FIRST_ONLY), (info.store, S.STORE),
                        (info.mac, S.MAC), (info.branch, S.BRANCH), (info.fp, S.FP), (info.shifter, S.SHIFTER),
                        (info.early_stage, S.EARLY_STAGE), (info.early_alu, S.EARLY_ALU),
                        (info.word_load, S.WORD_LOAD), (info.name in ("sdiv", "udiv"), S.DIVIDE),
                        (info.name in STOPS_WINDOW, S.STOPS_WINDOW)):
            flags |= bit if on else 0
        head = [flags, info.latency, info.occupancy, -1 if info.index is None else number(info.index),
                len(info.reads), len(writes)]
        for r in info.reads:
            head += (number(r), (S.R_EARLY if r in info.early else 0) | (S.R_LATE if r in info.late else 0)
                     | (S.R_FLAGS if r == FLAGS else 0), info.late.get(r, 0))
        written = []
        for r in writes:
            written += (number(r), (S.W_FAST if r in info.fast else 0) | (S.W_FLAGS if r == FLAGS else 0))
        row = np.zeros(S.ROW, np.int64)
        row[: len(head)] = head
        row[S.C_WRITE: S.C_WRITE + len(written)] = written
        return row


TEMPLATE_PLACE = -(1 << 20)  # a template's row: a register left as a place, this - its place (no other field is as low)
_PAIRING_BITS = {"single": S.SINGLE, "store": S.STORE, "mac": S.MAC, "branch": S.BRANCH, "fp": S.FP, "shifter": S.SHIFTER}


def template_of_row(row: np.ndarray) -> tuple:
    """A template (CortexM7Timing.template) of an encoded row whose places are marked."""
    at = np.flatnonzero(row <= TEMPLATE_PLACE)
    return row, at, (TEMPLATE_PLACE - row[at]).tolist()


def is_rotated(immediate: int) -> bool:
    """Whether a modified immediate is a rotated 8-bit value (not an 8-bit value, 0x00XY00XY,
    0xXY00XY00 or 0xXYXYXYXY): a shifted constant, which takes the early shifter."""
    value = immediate & 0xFFFFFFFF
    byte = value & 0xFF or value >> 8 & 0xFF  # (XY: the low byte, or the next one in 0xXY00XY00)
    return not (value <= 0xFF or value in (byte * 0x00010001, byte * 0x01000100, byte * 0x01010101))


_REGISTER_NUMBERS: dict[str, int] = {}  # register name -> its number in native code (this process)
_REGISTER_NAMES: list[str] = []  # ... and back


def register_number(name: str) -> int:
    number = _REGISTER_NUMBERS.get(name)
    if number is None:
        number = _REGISTER_NUMBERS[name] = len(_REGISTER_NAMES)
        _REGISTER_NAMES.append(name)
    return number
