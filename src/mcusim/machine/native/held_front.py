"""The block hook's front: the function Unicorn calls for every block. It counts a held repeat
(held_repeats.py) itself and jumps to the block hook numba compiled (its address in the state's
HOOK_TARGET) for every other block.

Written in LLVM IR because numba's hook cannot be this short: numba wraps it in a second
function (its calling convention and error checks), and the hook saves six registers and makes a
frame before its first check, since the rest of it needs them. A held repeat cost about 3 ns more
than an empty hook's call that way, most of a tight loop's time over plain Unicorn
(docs/performance.md, "Forty-third pass"). Here it is a dozen instructions with no frame; any
other block pays two loads, a test and a jump.

The IR is compiled by llvmlite (no numba) the first time, and its object code kept in the object
store like numba's hooks, so that a later run loads it without LLVM's code generator. Where it
cannot be had, the block hook is registered alone and holds nothing (register_block_hook)."""
from __future__ import annotations

import hashlib

from .held_repeats import KEY_SHIFT
from .layout import CODE_PC, DEADLINE, HELD_COST, HELD_KEY, HELD_ROOM, HELD_RUNS, HOOK_TARGET
from .object_store import STORE

SYMBOL = "mcusim_held_front"

# Unicorn's block hook: void (uc_engine *uc, uint64_t address, uint32_t size, void *user_data),
# user_data the state. A held repeat is the held block (HELD_KEY: held_repeats.held_key, address <<
# KEY_SHIFT | size) with room left before a limit and no stop asked (DEADLINE 0, written from any
# thread: read each time). The call to the hook is a tail call, a jump where the target allows
# (x86-64, AArch64; `musttail`, which would insist, aborts the process where it cannot), so the
# hook returns to Unicorn itself.
IR = f"""
define void @{SYMBOL}(i8* %uc, i64 %address, i32 %size, i8* %user) {{
entry:
  %st = bitcast i8* %user to i64*
  %held_at = getelementptr i64, i64* %st, i64 {HELD_KEY}
  %held = load i64, i64* %held_at
  %none = icmp eq i64 %held, 0
  br i1 %none, label %hook, label %same
same:
  %shifted = shl i64 %address, {KEY_SHIFT}
  %wide = zext i32 %size to i64
  %key = or i64 %shifted, %wide
  %is_held = icmp eq i64 %held, %key
  br i1 %is_held, label %room, label %hook
room:
  %room_at = getelementptr i64, i64* %st, i64 {HELD_ROOM}
  %left = load i64, i64* %room_at
  %has_room = icmp sgt i64 %left, 0
  br i1 %has_room, label %deadline, label %hook
deadline:
  %deadline_at = getelementptr i64, i64* %st, i64 {DEADLINE}
  %until = load volatile i64, i64* %deadline_at
  %running = icmp ne i64 %until, 0
  br i1 %running, label %count, label %hook
count:
  %cost_at = getelementptr i64, i64* %st, i64 {HELD_COST}
  %cost = load i64, i64* %cost_at
  %less = sub i64 %left, %cost
  store i64 %less, i64* %room_at
  %runs_at = getelementptr i64, i64* %st, i64 {HELD_RUNS}
  %runs = load i64, i64* %runs_at
  %more = add i64 %runs, 1
  store i64 %more, i64* %runs_at
  %pc_at = getelementptr i64, i64* %st, i64 {CODE_PC}
  store i64 -1, i64* %pc_at
  ret void
hook:
  %target_at = getelementptr i64, i64* %st, i64 {HOOK_TARGET}
  %target = load i64, i64* %target_at
  %function = inttoptr i64 %target to void (i8*, i64, i32, i8*)*
  tail call void %function(i8* %uc, i64 %address, i32 %size, i8* %user)
  ret void
}}
"""
KEY = f"held front {hashlib.sha256(IR.encode()).hexdigest()}"


class _Front:
    """The front's address in this process (`address`, as a numba hook's): from the object
    store, else compiled and stored; None when neither works. `compiled_here` says whether this
    process compiled it (tests)."""

    def __init__(self):
        self._address: int | None = None
        self._tried = False
        self.compiled_here = False

    @property
    def address(self) -> int | None:
        if not self._tried:
            self._tried = True
            try:
                self._address = STORE.function_address(KEY)
                if self._address is None:
                    object_code = _compile()
                    self.compiled_here = True
                    STORE.save(KEY, dict(symbol=SYMBOL), object_code)
                    self._address = STORE.function_address(KEY) or STORE.load_object(object_code, SYMBOL)
            except Exception:  # (llvmlite or the store amiss: the block hook runs alone)
                self._address = None
        return self._address


HELD_FRONT = _Front()


def _compile() -> bytes:
    """The IR's object code for this host."""
    import llvmlite.binding as ll

    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    module = ll.parse_assembly(IR)
    module.verify()
    machine = ll.Target.from_triple(ll.get_process_triple()).create_target_machine(opt=2)
    return machine.emit_object(module)
