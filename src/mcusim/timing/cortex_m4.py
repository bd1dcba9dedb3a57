"""Cortex-M4 core timing: per-instruction cycles from the TRM tables plus the in-order
pipeline's neighbour rules (load pipelining, address interlock, IT folding).

Costs are static, per instruction, assuming the instruction before it in memory ran just
before it; `start_adjust` corrects the first instruction of a block, where that neighbour
did not run. Taken-branch refills and divide early termination are dynamic and added by
the native hooks. Every number comes from cores/cortex-m4.toml, where its source is given.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from .lazy_capstone import arm as cs_arm


DSP_PREFIXES = ("smla", "smul", "smus", "smua", "smls", "smmu", "smml", "umaal", "qadd", "qsub", "qdadd", "qdsub",
                "qasx", "qsax", "sadd", "ssub", "sasx", "ssax", "uadd", "usub", "uasx", "usax", "shadd", "shsub",
                "uhadd", "uhsub", "uqadd", "uqsub", "shasx", "shsax", "uhasx", "uhsax", "uqasx", "uqsax", "usad",
                "sel", "pkh", "sxtab", "uxtab", "sxtb16", "uxtb16", "ssat16", "usat16")
MULTIPLY = ("mul", "mla", "mls", "smull", "umull", "smlal", "umlal")
LOADS = ("ldr", "ldrb", "ldrh", "ldrsb", "ldrsh", "ldrt", "ldrbt", "ldrht", "ldrsbt", "ldrsht")
STORES = ("str", "strb", "strh", "strt", "strbt", "strht")
MULTIPLES = ("ldm", "ldmia", "ldmdb", "ldmfd", "stm", "stmia", "stmdb", "stmea", "push", "pop")
BRANCHES = ("b", "bl", "bx", "blx", "cbz", "cbnz")
REFILL_IF_TAKEN = 1    # conditional: taken when the next block is not the fall-through
REFILL_ALWAYS = 2      # unconditional: always taken, even to the next instruction


@dataclass(frozen=True)
class Cost:
    cycles: int          # in sequence (the previous instruction in memory ran just before)
    start_adjust: int    # added to the cycles when the instruction starts a block
    lsu: int             # extra load/store cycles (DWT LSUCNT)
    cpi: int             # other extra cycles (DWT CPICNT)
    folded: int          # 1 for an IT folded away (DWT FOLDCNT)
    stall_refill: int = 0     # of `cycles`: pipeline reload after a load into PC or TBB/TBH
    stall_interlock: int = 0  # of `cycles`: address or FP-result interlock (taken back at a block start)
    stall_divide: int = 0     # of `cycles`: divide cycles beyond the first
    refill: int = 0      # a branch here: REFILL_IF_TAKEN or REFILL_ALWAYS, plus (cycles << 2) when the
    #                       refill is a fixed reload rather than the branch rule P; 0: none
    start_fold: int = 0  # 1: folded in sequence, so not folded when it starts a block


def base_mnemonic(insn) -> str:
    """`ldr.w` -> `ldr`, `addeq` -> `add`, `bls` -> `b`, `movs` -> `mov`: the operation alone."""
    name = insn.mnemonic.split(".")[0]
    if name.startswith("it"):
        return name
    if insn.cc not in (cs_arm.ARM_CC_AL, cs_arm.ARM_CC_INVALID) and len(name) > 2:
        name = name[:-2]
    if getattr(insn, "update_flags", False) and name.endswith("s") and name not in ("mls", "smulls", "vmrs"):
        name = name[:-1]
    return name


MEMORY = LOADS + STORES + MULTIPLES + ("ldrd", "strd", "ldrex", "strex", "ldrexb", "ldrexh", "strexb", "strexh",
                                       "tbb", "tbh")
FP_MEMORY = ("vldr", "vstr", "vldm", "vldmia", "vldmdb", "vstm", "vstmia", "vstmdb", "vpush", "vpop")
FP_MAC = ("vmla", "vmls", "vnmla", "vnmls", "vfma", "vfms", "vfnma", "vfnms")


def is_load(name: str) -> bool:
    """A load the next load or store may pipeline with (TRM 3.3.2: LDR and LDREX)."""
    return name in LOADS or name.startswith("ldrex")


def is_memory(name: str) -> bool:
    """A memory access: its address interlock is LSU time (LDM, VLDR, PUSH... included)."""
    return name in MEMORY or name.startswith(FP_MEMORY)


def makes_fp_result(name: str) -> bool:
    """An FP operation whose result the next instruction waits a cycle for (TRM 7.2.3)."""
    return name.startswith("v") and not name.startswith(FP_MEMORY + ("vmov", "vmrs", "vmsr")) \
        and name not in ("vdiv", "vsqrt")


FP_REGISTER = re.compile(r"[sd]\d+")  # s0-s31, d0-d31 (not sb, sl or sp: core registers)


def fp_named(registers) -> set[str]:
    """The FP registers among `registers` (those an FP result is written to)."""
    return {r for r in registers if FP_REGISTER.fullmatch(r)}


def is_load_store(name: str) -> bool:
    """An operation _cost times as a single load or store (_load_store): not FP, TBB/TBH or LDM/STM."""
    return not name.startswith("v") and name not in ("tbb", "tbh") \
        and (name in LOADS or name in STORES or name in MEMORY and name not in MULTIPLES)


def pipelines_after_load(insn, name: str) -> bool:
    """Of the single loads and stores: one that saves a cycle right after a load it does not
    wait for (TRM 3.3.2): loads, LDREX/STREX ("pipelined exactly as LDR") and stores with a
    register offset; not LDRD/STRD, nor a store with an immediate offset (always one cycle)."""
    if name in ("ldrd", "strd"):
        return False
    if name.startswith(("ldrex", "strex")):
        return True
    memory = [op for op in insn.operands if op.type == cs_arm.ARM_OP_MEM]
    return name not in STORES or bool(memory and memory[0].mem.index)


class CortexM4Timing:
    pairwise = True  # a cost depends on the instruction and the one before it alone (decoder._decode_m4)

    def __init__(self, table: dict):
        self.t = table
        self._recent: dict[int, tuple] = {}  # address -> (name, reads, writes): the last few instructions
        self._described: dict[int, tuple] = {}  # Instruction.shape -> (name, reads, writes)
        self._neighbour_of: dict[int, tuple] = {}  # Instruction.shape -> what _neighbour reads of it as a neighbour
        self._needs: dict[int, tuple] = {}  # Instruction.shape -> what _neighbour reads of its neighbour
        self._costs: dict[tuple, Cost] = {}  # (Instruction.shape, _neighbour or None) -> Cost
        self._pairs: dict[tuple, Cost] = {}  # (Instruction.shape, the previous one's or None) -> Cost

    def _describe(self, insn) -> tuple[str, set[str], set[str]]:
        """(operation, registers read, registers written), remembered for the next instruction
        (and for good, by encoding, for instructions from timing/instruction.py)."""
        key = getattr(insn, "shape", None)
        if key is not None:
            known = self._described.get(key)
            if known is None:
                try:
                    read, written = insn.regs_access()
                    reads, writes = {insn.reg_name(r) for r in read}, {insn.reg_name(r) for r in written}
                except Exception:  # noqa: BLE001 - as below
                    reads, writes = set(), set()
                if len(self._described) >= 1 << 16:
                    self._described.clear()
                known = self._described[key] = (base_mnemonic(insn), frozenset(reads), frozenset(writes))
            return known
        known = self._recent.get(insn.address)
        if known is not None and known[3] == insn.mnemonic:
            return known[:3]
        try:
            read, written = insn.regs_access()
            reads, writes = {insn.reg_name(r) for r in read}, {insn.reg_name(r) for r in written}
        except Exception:
            reads, writes = set(), set()
        if len(self._recent) > 8:
            self._recent.clear()
        self._recent[insn.address] = (base_mnemonic(insn), reads, writes, insn.mnemonic)
        return self._recent[insn.address][:3]

    def _registers(self, insn):
        _, reads, writes = self._describe(insn)
        return reads, set(writes)

    @staticmethod
    def _address_registers(insn, name: str) -> set[str]:
        """Registers that form the address of a load/store (its base and index)."""
        if name in ("push", "pop", "vpush", "vpop"):
            return {"sp"}
        for op in insn.operands:
            if op.type == cs_arm.ARM_OP_MEM:
                regs = {insn.reg_name(op.mem.base)} if op.mem.base else set()
                if op.mem.index:
                    regs.add(insn.reg_name(op.mem.index))
                return regs
        if name in MULTIPLES or name.startswith(("vldm", "vstm")):
            first = next((op for op in insn.operands if op.type == cs_arm.ARM_OP_REG), None)
            return {insn.reg_name(first.reg)} if first else set()
        return set()

    def cost(self, insn, previous) -> Cost:
        """Cost of capstone instruction `insn` (detail mode) after `previous`: the instruction that
        ran just before it (the decoder passes the one before a folded IT), or None. For
        instructions from timing/instruction.py each encoding class is costed once per kind of
        neighbour, the neighbour reduced to what _cost reads of it for this instruction
        (_neighbour: most instructions cost the same after most others), and the cost is then
        found by the pair of shapes."""
        key = getattr(insn, "shape", None)
        if key is None:
            return self._cost(insn, previous)
        previous_key = None
        if previous is not None:
            previous_key = getattr(previous, "shape", None)
            if previous_key is None:
                return self._cost(insn, previous)
        cost = self._pairs.get((key, previous_key))
        if cost is None:
            if len(self._costs) >= 1 << 16 or len(self._pairs) >= 1 << 18:
                self._costs.clear()
                self._pairs.clear()
                self._neighbour_of.clear()
                self._needs.clear()
            neighbour = None if previous is None else self._neighbour(insn, key, previous, previous_key)
            cost = self._costs.get((key, neighbour))
            if cost is None:
                cost = self._costs[(key, neighbour)] = self._cost(insn, previous)
            self._pairs[(key, previous_key)] = cost
        return cost

    def _neighbour(self, insn, key: int, previous, previous_key: int) -> tuple:
        """What _cost reads of `previous` when it costs `insn`: the kind of operation (a load,
        a memory access, an FP result, a write to PC), the registers it writes among those `insn`
        reads or addresses with, and its size where `insn` is an IT (which folds after a 16-bit
        one). Equal values cost alike (tests/integration/test_instruction_shapes.py checks this
        against costing afresh on the kit's builds)."""
        needs = self._needs.get(key)
        if needs is None:
            name, reads, _ = self._describe(insn)
            needs = self._needs[key] = (reads | self._address_registers(insn, name), name.startswith("it"))
        described = self._neighbour_of.get(previous_key)
        if described is None:
            name, _, writes = self._describe(previous)
            kind = (is_load(name), is_memory(name), makes_fp_result(name), "pc" in writes)
            described = self._neighbour_of[previous_key] = (kind, writes)
        registers, folds = needs
        return described[0], described[1] & registers, previous.size if folds else None

    def _cost(self, insn, previous) -> Cost:
        t = self.t
        name, reads, writes = self._describe(insn)
        writes_pc = "pc" in writes
        conditional = self._conditional(insn, name)
        extra_lsu = extra_cpi = 0
        refill = stall_refill = stall_divide = 0
        pipelinable_load = False

        if name.startswith("it"):
            if previous is not None and previous.size == 2:
                return Cost(t["it_folded"], 1 - t["it_folded"], 0, 0, 1, start_fold=1)
            return Cost(1, 0, 0, 0, 0)
        pc_reload = 0
        if name.startswith("v"):
            cycles = self._fp_cost(name, insn)
            extra_lsu = cycles - 1 if name.startswith(FP_MEMORY) else 0
            extra_cpi = cycles - 1 - extra_lsu
        elif name in ("tbb", "tbh"):
            cycles = t["table_branch"]
            extra_lsu, extra_cpi = 1, cycles - 2
            stall_refill = t["pc_load_refill"]
        elif is_load_store(name):
            cycles, pipelinable_load = self._load_store(name, insn, previous)
            extra_lsu = cycles - 1
            pc_reload = t["pc_load_refill"] if writes_pc else 0
        elif name in MULTIPLES:
            registers = [op for op in insn.operands if op.type == cs_arm.ARM_OP_REG]
            count = len(registers) - (0 if name in ("push", "pop") else 1)
            cycles = t["multiple_base"] + count
            extra_lsu = cycles - 1
            pc_reload = t["pc_load_refill"] if writes_pc else 0
        elif name in BRANCHES:
            cycles = t["branch"]
            refill = REFILL_IF_TAKEN if conditional else REFILL_ALWAYS
        elif name in ("sdiv", "udiv"):
            cycles = t["divide_min"]
            extra_cpi = stall_divide = cycles - 1
        elif name in MULTIPLY:
            cycles = t["multiply"]
        elif name.startswith(DSP_PREFIXES):
            cycles = t["dsp"]
        elif name == "isb":
            cycles = t["isb"]
            extra_cpi = cycles - 1
        elif name in ("dmb", "dsb"):
            cycles = t["barrier"]
        elif name in ("mrs", "msr", "cpsie", "cpsid", "nop", "sev", "wfi", "wfe", "yield", "svc", "bkpt"):
            cycles = t["system"]
        else:
            cycles = t["alu"]
        if pc_reload:
            if conditional:  # a conditional return (`it ne; popne {..., pc}`): reload only when it runs
                refill = REFILL_IF_TAKEN | pc_reload << 2
            else:
                cycles += pc_reload
                extra_cpi += pc_reload
                stall_refill = pc_reload
        elif writes_pc and refill == 0 and name not in ("tbb", "tbh"):
            refill = REFILL_IF_TAKEN if conditional else REFILL_ALWAYS  # mov pc, add pc...: 1 + P
        interlock = self._interlock(insn, name, reads, previous)
        cycles += interlock
        if is_memory(name):
            extra_lsu += interlock
        else:
            extra_cpi += interlock
        start_adjust = 0
        if pipelinable_load:  # at a block start there is no preceding load to pipeline with
            start_adjust += t["load"] - t["load_pipelined"]
        start_adjust -= interlock
        return Cost(cycles, start_adjust, extra_lsu, extra_cpi, 0, stall_refill, interlock, stall_divide, refill)

    def _interlock(self, insn, name: str, reads: set[str], previous) -> int:
        """TRM 3.3.2: a load/store whose address the previous data-processing instruction
        computed waits a cycle; TRM 7.2.3: an FP result used by the next instruction waits a
        cycle (except a multiply-accumulate's addend, read late)."""
        if previous is None:
            return 0
        previous_name, _, previous_writes = self._describe(previous)
        previous_writes = previous_writes - {"pc"}  # a branch computes no address (a literal load's base is PC)
        if is_memory(name):
            if not is_memory(previous_name) and previous_writes & self._address_registers(insn, name):
                return self.t["address_dependency"]
        if makes_fp_result(previous_name) and self.fp_reads(insn, name, reads) & fp_named(previous_writes):
            return self.t["fp_result_dependency"]
        return 0

    @staticmethod
    def fp_reads(insn, name: str, reads) -> set[str]:
        """The registers read that an FP result can hold `insn` up for: the s/d-named ones, less a
        multiply-accumulate's addend (TRM 7.2.3: read a cycle late)."""
        used = fp_named(reads)
        if name in FP_MAC and insn.operands:
            used.discard(insn.reg_name(insn.operands[0].reg))
        return used

    @staticmethod
    def _conditional(insn, name: str) -> bool:
        return name in ("cbz", "cbnz") or insn.cc not in (cs_arm.ARM_CC_AL, cs_arm.ARM_CC_INVALID)

    def _load_store(self, name: str, insn, previous) -> tuple[int, bool]:
        """(cycles, True if a pipelining discount was applied)."""
        t = self.t
        pipelines = pipelines_after_load(insn, name)
        if name in ("ldrd", "strd"):
            full = t["load_store_double"]
        elif name.startswith(("ldrex", "strex")):
            full = t["exclusive"]
        elif name in STORES:
            full = t["store"] if pipelines else t["store_immediate"]  # (a register offset, or always one cycle)
        else:
            full = t["load"]
        if pipelines and previous is not None and self._pipelines_after(previous, insn):
            return full - (t["load"] - t["load_pipelined"]), True
        return full, False

    def _pipelines_after(self, previous, insn) -> bool:
        """TRM 3.3.2: a load/store right after a load (not after a store) saves a cycle unless
        it uses the loaded register for its address."""
        previous_name, _, loaded = self._describe(previous)
        if not is_load(previous_name):
            return False
        if "pc" in loaded:
            return False
        return not (loaded & self._address_registers(insn, self._describe(insn)[0]))

    def _fp_cost(self, name: str, insn) -> int:
        t = self.t
        double = ".f64" in insn.mnemonic or any(insn.reg_name(op.reg).startswith("d")
                                                 for op in insn.operands if op.type == cs_arm.ARM_OP_REG)
        if name in ("vdiv", "vsqrt"):
            return t["fp_divide"]
        if name in ("vmla", "vmls", "vnmla", "vnmls", "vfma", "vfms", "vfnma", "vfnms"):
            return t["fp_mac"]
        if name == "vldr":
            return t["fp_load_double"] if double else t["fp_load"]
        if name == "vstr":
            return t["fp_store_double"] if double else t["fp_store"]
        if name.startswith(("vldm", "vstm", "vpush", "vpop")):
            registers = [op for op in insn.operands if op.type == cs_arm.ARM_OP_REG]
            count = len(registers) - (0 if name in ("vpush", "vpop") else 1)
            return t["fp_multiple_base"] + count * (2 if double else 1)
        if name == "vmov":
            core = [op for op in insn.operands if op.type == cs_arm.ARM_OP_REG
                    and insn.reg_name(op.reg).startswith(("r", "sb", "sl", "fp", "ip", "lr"))]
            if len(core) >= 2:
                return t["fp_move_core_pair"]
            if core:
                return t["fp_move_core"]
        return t["fp_alu"]
