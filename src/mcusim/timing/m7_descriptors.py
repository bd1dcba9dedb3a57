"""Each instruction shape's descriptor for the Cortex-M7 rows made in native code
(machine/native/m7_rows.py).

A Cortex-M7 row depends on the instruction and on the pipeline the in-sequence schedule left
before it (cortex_m7.py), so it cannot be looked up by encoding as the Cortex-M4's is. What
the schedule reads of an instruction is its encoded row (CortexM7Timing._encode, by ident);
what the row adds besides the schedule's cycles is the decoder's static row, the branch bits
and a literal read or a branch to itself. Those are described once per instruction shape
(timing/instruction.py), and one native call schedules a whole range and makes its rows.
"""
from __future__ import annotations

import numpy as np
from capstone import arm as cs_arm

from ..machine.native import STATIC_CYCLES_MASK, STATIC_SHIFT, STATIC_TAKEN
from ..machine.native import m7_rows as R
from ..machine.native.m7_schedule import REGISTERS
from .cortex_m4 import REFILL_ALWAYS, REFILL_IF_TAKEN, base_mnemonic
from .cortex_m7 import _register_number
from .literal_loads import LITERAL_LOADS, literal_read

MAX_DESCRIPTORS = 1 << 16  # rows (code running away through data must not grow them without end)


class Descriptors:
    """The descriptors of one Cortex-M7 timing model's instruction shapes, as rows of an int64 table."""

    def __init__(self, timing, instruction_cycles: int, static_row):
        """`static_row(insn)`: the decoder's (row, watched) of an instruction alone."""
        self.timing = timing
        self.static_row = static_row
        self.constants = timing.constants(instruction_cycles)
        self._clear()

    def _clear(self) -> None:
        self.table = np.zeros((256, R.DESCRIPTOR), np.int64)
        self.count = 0
        # Instruction.shape -> (row, literal loads may read, a B (a branch to itself?), watched), None: not encodable
        self._by_shape: dict[int, tuple | None] = {}
        self._own: dict[tuple, int] = {}  # (shape row, literal, branch to itself) -> its own row

    def make_room(self) -> None:
        """Start afresh if the table is full (between ranges: a range's rows stay valid)."""
        if self.count >= MAX_DESCRIPTORS:
            self._clear()

    def row_of(self, insn) -> tuple[int, bool] | None:
        """(the descriptor row of capstone Instruction `insn`, whether the machine watches it), or
        None where its schedule does not encode (too many operands or registers)."""
        shape = self._by_shape.get(insn.shape, False)
        if shape is False:
            shape = self._by_shape[insn.shape] = self._describe(insn)
        if shape is None:
            return None
        row, literal, jump, watched = shape
        literal = literal_read(insn.bytes) if literal else 0
        self_loop = jump and insn.op_str == f"#{insn.address:#x}"
        if literal or self_loop:
            own = self._own.get((row, literal, self_loop))
            if own is None:
                own = self._own[(row, literal, self_loop)] = self._append()
                self.table[own] = self.table[row]
                self.table[own, R.D_LITERAL], self.table[own, R.D_SELF_LOOP] = literal, int(self_loop)
            row = own
        return row, watched

    def _describe(self, insn) -> tuple | None:
        timing = self.timing
        info = timing.describe(insn)
        decided = -1 if info.decided_by is None else _register_number(info.decided_by)
        if not timing.encodable(info) or decided >= REGISTERS:
            return None
        static, watched = self.static_row(insn)
        refill = 0
        if info.branch:  # (CortexM7Timing._as_cost and cost)
            conditional = info.name in ("cbz", "cbnz") or insn.cc not in (cs_arm.ARM_CC_AL, cs_arm.ARM_CC_INVALID)
            refill = REFILL_IF_TAKEN if conditional else REFILL_ALWAYS
            if info.direct and info.decided_by is None:
                refill |= STATIC_TAKEN | min(STATIC_CYCLES_MASK, timing.t["branch_static_taken"]) << STATIC_SHIFT
        row = self._append()
        d = self.table[row]
        d[R.D_IDENT], d[R.D_SIZE], d[R.D_BRANCH], d[R.D_DIRECT] = info.ident, insn.size, info.branch, info.direct
        d[R.D_DECIDED], d[R.D_REFILL] = decided, refill
        d[R.D_STATIC:] = static
        literal = insn.cc in (cs_arm.ARM_CC_AL, cs_arm.ARM_CC_INVALID) and base_mnemonic(insn) in LITERAL_LOADS
        return row, literal, insn.mnemonic in ("b", "b.w"), watched

    def _append(self) -> int:
        if self.count == len(self.table):
            self.table = np.concatenate([self.table, np.zeros_like(self.table)])
        self.count += 1
        return self.count - 1
