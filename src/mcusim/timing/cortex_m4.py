"""Cortex-M4 core timing: per-instruction cycles from the TRM tables plus the in-order
pipeline's neighbour rules (load pipelining, address interlock, IT folding).

Costs are static, per instruction, assuming the instruction before it in memory ran just
before it; `start_adjust` corrects the first instruction of a block, where that neighbour
did not run. Taken-branch refills and divide early termination are dynamic and added by
the native hooks. Every number comes from cores/cortex-m4.toml, where its source is given.
"""
from __future__ import annotations

from dataclasses import dataclass

from capstone import arm as cs_arm

DSP_PREFIXES = ("smla", "smul", "smus", "smua", "smls", "smmu", "smml", "umaal", "qadd", "qsub", "qdadd", "qdsub",
                "qasx", "qsax", "sadd", "ssub", "sasx", "ssax", "uadd", "usub", "uasx", "usax", "shadd", "shsub",
                "uhadd", "uhsub", "uqadd", "uqsub", "shasx", "shsax", "uhasx", "uhsax", "uqasx", "uqsax", "usad",
                "sel", "pkh", "sxtab", "uxtab", "sxtb16", "uxtb16", "ssat16", "usat16")
MULTIPLY = ("mul", "mla", "mls", "smull", "umull", "smlal", "umlal")
LOADS = ("ldr", "ldrb", "ldrh", "ldrsb", "ldrsh", "ldrt", "ldrbt", "ldrht", "ldrsbt", "ldrsht")
STORES = ("str", "strb", "strh", "strt", "strbt", "strht")
MULTIPLES = ("ldm", "ldmia", "ldmdb", "ldmfd", "stm", "stmia", "stmdb", "stmea", "push", "pop")
BRANCHES = ("b", "bl", "bx", "blx", "cbz", "cbnz")
REFILL_IF_TAKEN = -1   # conditional: taken when the next block is not the fall-through
REFILL_ALWAYS = -2     # unconditional: always taken, even to the next instruction


@dataclass(frozen=True)
class Cost:
    cycles: int          # in sequence (the previous instruction in memory ran just before)
    start_adjust: int    # added when the instruction starts a block
    lsu: int             # extra load/store cycles (DWT LSUCNT)
    cpi: int             # other extra cycles (DWT CPICNT)
    folded: int          # 1 for an IT folded away (DWT FOLDCNT)
    stall_refill: int = 0     # of `cycles`: pipeline reload after a load into PC or TBB/TBH
    stall_interlock: int = 0  # of `cycles`: address interlock (taken back at a block start)
    stall_divide: int = 0     # of `cycles`: divide cycles beyond the first
    refill: int = 0      # REFILL_ALWAYS / REFILL_IF_TAKEN: a branch whose target refills the
    #                       pipeline (P depends on the target); 0: none


def base_mnemonic(insn) -> str:
    """`ldr.w` -> `ldr`, `addeq` -> `add`, `bls` -> `b`, `movs` -> `mov`: the operation alone."""
    name = insn.mnemonic.split(".")[0]
    if name.startswith("it"):
        return name
    if insn.cc not in (cs_arm.ARM_CC_AL, cs_arm.ARM_CC_INVALID) and len(name) > 2:
        name = name[:-2]
    if getattr(insn, "update_flags", False) and name.endswith("s") and name not in ("mls", "smulls"):
        name = name[:-1]
    return name


class CortexM4Timing:
    def __init__(self, table: dict):
        self.t = table

    def _registers(self, insn):
        try:
            read, written = insn.regs_access()
        except Exception:
            return set(), set()
        return {insn.reg_name(r) for r in read}, {insn.reg_name(r) for r in written}

    @staticmethod
    def _address_registers(insn) -> set[str]:
        for op in insn.operands:
            if op.type == cs_arm.ARM_OP_MEM:
                regs = {insn.reg_name(op.mem.base)} if op.mem.base else set()
                if op.mem.index:
                    regs.add(insn.reg_name(op.mem.index))
                return regs
        return set()

    def cost(self, insn, previous) -> Cost:
        """Cost of capstone instruction `insn` (detail mode) after `previous` (or None)."""
        t = self.t
        name = base_mnemonic(insn)
        reads, writes = self._registers(insn)
        writes_pc = "pc" in writes
        operands = insn.op_str
        extra_lsu = extra_cpi = folded = 0
        refill = stall_refill = stall_divide = 0
        pipelinable_load = False

        if name.startswith("it"):
            if previous is not None and previous.size == 2:
                return Cost(t["it_folded"], 1 - t["it_folded"], 0, 0, 1)
            return Cost(1, 0, 0, 0, 0)
        if name.startswith("v"):
            cycles = self._fp_cost(name, insn)
            extra_lsu = cycles - 1 if name.startswith(("vldr", "vstr", "vldm", "vstm", "vpush", "vpop")) else 0
            extra_cpi = cycles - 1 - extra_lsu
        elif name in ("tbb", "tbh"):
            cycles = t["table_branch"]
            extra_lsu, extra_cpi = 1, cycles - 2
            stall_refill = t["pc_load_refill"]
        elif name in LOADS or name in STORES or name in ("ldrd", "strd", "ldrex", "strex", "ldrexb", "ldrexh",
                                                        "strexb", "strexh"):
            cycles, pipelinable_load = self._load_store(name, insn, previous)
            extra_lsu = cycles - 1
            if writes_pc:
                cycles += t["pc_load_refill"]
                extra_cpi = stall_refill = t["pc_load_refill"]
        elif name in MULTIPLES:
            registers = [op for op in insn.operands if op.type == cs_arm.ARM_OP_REG]
            count = len(registers) - (0 if name in ("push", "pop") else 1)
            cycles = t["multiple_base"] + count
            extra_lsu = cycles - 1
            if writes_pc:
                cycles += t["pc_load_refill"]
                extra_cpi = stall_refill = t["pc_load_refill"]
        elif name in BRANCHES:
            cycles = t["branch"]
            refill = REFILL_IF_TAKEN if self._conditional(insn, name) else REFILL_ALWAYS
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
        if writes_pc and refill == 0 and not (name in MULTIPLES or name in LOADS or name in ("tbb", "tbh")):
            # mov pc, add pc...: 1 + P
            refill = REFILL_IF_TAKEN if self._conditional(insn, name) else REFILL_ALWAYS
        # address interlock: no forwarding from the previous instruction's result into address generation
        interlock = 0
        if previous is not None and (name in LOADS or name in STORES or name in ("ldrd", "strd")):
            _, previous_writes = self._registers(previous)
            previous_name = base_mnemonic(previous)
            previous_is_memory = previous_name in LOADS or previous_name in STORES or previous_name in MULTIPLES
            if not previous_is_memory and previous_writes & self._address_registers(insn):
                interlock = t["address_dependency"]
        cycles += interlock
        extra_lsu += interlock
        start_adjust = 0
        if pipelinable_load:  # at a block start there is no preceding load to pipeline with
            start_adjust += t["load"] - t["load_pipelined"]
        start_adjust -= interlock
        return Cost(cycles, start_adjust, extra_lsu, extra_cpi, folded, stall_refill, interlock, stall_divide, refill)

    @staticmethod
    def _conditional(insn, name: str) -> bool:
        return name in ("cbz", "cbnz") or insn.cc not in (cs_arm.ARM_CC_AL, cs_arm.ARM_CC_INVALID)

    def _load_store(self, name: str, insn, previous) -> tuple[int, bool]:
        """(cycles, True if a pipelining discount was applied)."""
        t = self.t
        if name in ("ldrd", "strd"):
            return t["load_store_double"], False
        if name.startswith(("ldrex", "strex")):
            return t["exclusive"], False
        is_store = name in STORES
        memory = [op for op in insn.operands if op.type == cs_arm.ARM_OP_MEM]
        register_offset = bool(memory and memory[0].mem.index)
        if is_store and not register_offset:
            return t["store_immediate"], False
        full = t["store"] if is_store else t["load"]
        if previous is not None and self._pipelines_after(previous, insn):
            return full - (t["load"] - t["load_pipelined"]), True
        return full, False

    def _pipelines_after(self, previous, insn) -> bool:
        """TRM 3.3.2: a load/store right after a load (not after a store) saves a cycle unless
        it uses the loaded register for its address."""
        previous_name = base_mnemonic(previous)
        if previous_name not in LOADS:
            return False
        _, loaded = self._registers(previous)
        if "pc" in loaded:
            return False
        return not (loaded & self._address_registers(insn))

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
