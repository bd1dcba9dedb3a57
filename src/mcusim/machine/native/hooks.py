"""The native Unicorn hooks (numba @cfunc: block, divide, flash read, RAM access, exact PC)
and their registration. The block hook runs at the start of every translated block, before
the block executes: it checks the deadline, looks up the block's cost and adds it. When it
stops emulation (deadline, undecoded code, a self-loop, FP with the FPU disabled, a block
that would pass the cycle limit) the block has not executed and is not counted."""
from __future__ import annotations

import ctypes
import sys
from typing import NamedTuple

import llvmlite.binding
import numpy as np
from unicorn.arm_const import UC_ARM_REG_CONTROL, UC_ARM_REG_EPSR, UC_ARM_REG_LR, UC_ARM_REG_R0, UC_ARM_REG_SP
from unicorn.unicorn_py3.unicorn import uclib

from .jit import NUMBA_NAME, cfunc, njit
from .layout import (
    ALIAS_TABLE, AL_BEGIN, AL_END, AT_COUNT, AT_ENTRIES, AT_FILLS, AT_PLAIN_COUNT, AT_PLAIN_ENTRIES, AT_SCRATCH,
    CODE_ALIAS, CODE_ALIAS_OFFSET, BLOCK_ADDRESS, BLOCK_ADJUSTED, BLOCK_CACHE, BLOCK_SIZE, CACHE_ENTRIES,
    CACHE_ENTRY, CODE_PC, COUNTER_EVENTS, CPI_TOTAL, CYCLES, CYCLE_LIMIT, DATA_START, DEADLINE, DIVIDE_BASE,
    DIVIDE_BITS_PER_CYCLE, DIVIDE_MIN, DIVIDE_SHORT, DIVIDE_TOTAL, DIVIDE_ZERO, ENDS_IN_BRANCH, E_ADDRESS, E_AGAIN,
    E_AGAIN_DELTAS, E_COUNTS, E_CYCLES, E_FP, E_INSTRUCTIONS, E_ISB, E_LAST_INSN, E_LITERALS,
    E_REFILL, E_SELF_LOOP, E_SIZE, E_SP_WRITE, E_STALLS, E_START_ADJUST, E_START_FLAGS, E_UNMASK, E_WIDE_FIRST,
    FL_BLOCK_LINES, FL_BLOCK_LITERALS, FL_BLOCK_START, FL_LITERAL_RANGE_COUNT, FL_PORT_COUNT, FPU_ENABLED, F_CYCLES,
    F_DIVIDE, F_LITERAL, INSTRUCTIONS, LAZY_FP_AT, LAZY_FP_PENDING, PENDING_MASKED, PREVIOUS_BRANCH_AT,
    PREVIOUS_END, PREVIOUS_ISB, PREVIOUS_SP_WRITE, PREVIOUS_UNMASK, PROFILE_TABLE, PSP_HIGHEST, PSP_LOWEST,
    PSP_LOWEST_AT, P_ENABLED, PORT_UNKNOWN, RUN_BASE, RUN_BYTES, RUN_PORT, RUN_PORT_OFFSET, RUN_STATE, RUN_TIMED,
    DATA_RUN, ON_PROCESS_STACK, PAID_FROM, PAID_TO, PREDICTOR_SETS, SP_SELECT, SAMPLE_BLOCK_START, SAMPLE_NEXT,
    SAMPLE_TABLE, SCRATCH, SP_FLOOR, SP_LOWEST, SP_LOWEST_AT, STEP_LIMIT, STOP_ADDRESS, STOP_REASON, STOP_SIZE,
    TOTAL_LENGTH, TRACE_HELD, TRACE_TABLE, TRAFFIC_BANK, TRAFFIC_BYTES, TRAFFIC_COUNTER, TRAFFIC_END, TRAFFIC_RANGE,
    TRAFFIC_RANGE_COUNT, TRAFFIC_RANGES, TRAFFIC_READ, TRAFFIC_START, TRAFFIC_WRITTEN, WATCH_ISB)
from .layout import AGAIN_COUNTERS, BTAC_ENTRY, BT_BRANCH, BT_COUNTER, BT_LAST_USE, BT_TARGET, PREDICTED, PREDICTOR_WAYS
from .layout import (
    MISS_STALE, P_FLASH_READS, PLAIN_ALIAS_OFFSET, RUN_SAMPLED, SAMPLED_FETCH, SAMPLED_READS, SAMPLED_WAIT, SAMPLING,
    ESTIMATING, LEARNING, FL_CURRENT, FL_FETCH_TOTAL, FL_CONTENTION_TOTAL)
from .layout import (
    AT_RAM_COUNT, AT_RAM_ENTRIES, RAM_ALIAS, RAM_ALIAS_OFFSET, RA_BEGIN, RA_END, RA_RUN, RA_TIMED, RAM_RUN, RR_BASE,
    RR_BYTES, RR_PAGE_SHIFT, RR_PORT, RR_STATE)
from .data_sampling import estimated_record, sample_block
from .held_repeats import HOLD_AFTER, SHORT_RETRY, held_key, hold, refuse_held, release_held
from .layout import HELD_KEY, HELD_SEEN, HOLD_REPEATS, HOOK_TARGET
from .held_front import HELD_FRONT
from .encoding import (
    LITERAL_INDEX_SHIFT, STOP_DEADLINE, STOP_DECODE, STOP_FPU_DISABLED, STOP_ISB, STOP_LIMIT, STOP_SELF_LOOP,
    STOP_UNMASKED)
from .tables import _range_sum, _value_at
from .core_timing import (
    AGAIN_ADJUSTED, AGAIN_FOLDED, AGAIN_FP, AGAIN_KIND, AGAIN_PREDICTED, AGAIN_SHIFT, AGAIN_SHORT, _lazy_fp_store,
    _refill_after_branch, _start_adjust, add_static)
from .profile import _profile
from .sampling import _take_samples
from .branch_trace import _trace
from .dwt_events import counter_events
from .power import _count_power
from .block_cache import _summarize
from .memory_model import (
    _fetch, _flash_data_access, add_data_wait, flash_data_read, flash_offset, flash_port, in_ranges, ram_access,
    time_literals, transfers)
from .state import NativeState


# numba's carray, the _pointer intrinsic and Unicorn's C functions (called by symbol name, not
# through a ctypes pointer, so the hooks' code can be cached): numba_names.py's, put here by
# jit.load_numba() before numba compiles anything (a run loading the store never imports numba).
carray = _pointer = _uc_emu_stop = _uc_reg_read = _uc_reg_write = _uc_remove_cache = NUMBA_NAME
llvmlite.binding.load_library_permanently(uclib._name)  # (the symbols the compiled hooks call)

SP_REGISTER = np.int32(UC_ARM_REG_SP)
CONTROL_REGISTER = np.int32(UC_ARM_REG_CONTROL)
BLOCK_HOOK_SIGNATURE = "void(voidptr, uint64, uint32, voidptr)"
LITTLE_ENDIAN_HOST = sys.byteorder == "little"


class Features(NamedTuple):
    """What a block hook variant can do beyond core timing: each is compiled in only when the run
    has it, so a run compiles, and every block pays for, only what it uses. A variant still
    checks each capture's state slot at run time, so the captures share one flag: at most eight
    variants per core kind, with a branch predictor or without (block_hook_for), each a numba
    compile of several seconds the first time it is used."""
    captures: bool = False  # branch trace, SWO counter events, exact profile, PC samples (their tables)
    power: bool = False     # energy accounting (P_ENABLED)
    fetch: bool = False     # instruction fetch from flash ports (FL_PORT_COUNT)


ALL_FEATURES = Features(*[True] * len(Features._fields))
_variants: dict[str, object] = {}


def block_hook_for(features: Features, predictor: bool = False):
    """The block hook compiled with `features`, for a core with a branch predictor or without
    (numba caches each variant on its own)."""
    key = "block_hook" + "".join(f" {name}={on}" for name, on in features._asdict().items()) + f" predictor={predictor}"
    if key not in _variants:
        _variants[key] = cfunc(BLOCK_HOOK_SIGNATURE, key)(_block_hook_variant(*features, predictor))
    return _variants[key]


def _block_hook_variant(captures, power, fetch, predictor):
    """numba prunes the branches of the features that are off (closure constants), callees included.

    A block run again right after its own run (a tight loop) is counted first, in a few additions,
    before the rest of the hook (a numba hook of its own in front, calling this one for every other
    block, was no quicker on repeats and slower on the rest; held_front.py's front is LLVM IR that
    jumps here, with no frame of its own). What the rest reads of the block before a
    repeat is the block's own entry, the same every time: its checks for unmasking, ISB and SP
    writes are ruled out by E_AGAIN (core_timing.again_deltas), and the state it would write holds
    those values already; a block with FP instructions repeats so while the FPU is on and no lazy FP
    state is pending (what its own FP checks read, which Python may change in an MMIO write).
    Python, whenever it moves the PC or touches that state, sets PREVIOUS_END, or PREVIOUS_SP_WRITE
    (before every emu_start), so that the block after it is no repeat. A repeat that may stop
    (deadline, cycle limit, run control) or needs more (captures, a branch mispredicted) takes the
    rest of the hook. Without a branch predictor the refill's cycles are the entry's; with one, a
    repeat whose branch the predictor predicts costs none. From a loop's HOLD_AFTER-th repeat on,
    its repeats are held (held_repeats.py): the front Unicorn calls (held_front.py) only counts them
    and calls this hook for every other block, which releases them first. The rest is `counted`,
    inlined twice: after a release (a call of its own) and without one, so that the code blocks
    without a hold run is laid out as it was before holds (with the call in it, the state's
    pointer was kept on the stack: 3 to 7 % slower on coremark-like and dhrystone-like)."""
    kind = AGAIN_PREDICTED if predictor else AGAIN_FOLDED

    def block_hook(uc, address_u64, size_u32, user_data):
        header = carray(user_data, (DATA_START,), np.int64)
        held = header[HELD_KEY]
        if held != 0:  # (held_front.py counted the block if it was a held repeat: this one ends the hold)
            release_held(header, held != held_key(np.int64(address_u64), np.int64(size_u32)))
            counted(uc, address_u64, size_u32, user_data)
            return
        counted(uc, address_u64, size_u32, user_data)

    @njit
    def counted(uc, address_u64, size_u32, user_data):
        """Everything but a held repeat."""
        address = np.int64(address_u64)  # int64 throughout: uint64 mixed with int64 becomes float in numba
        size = np.int64(size_u32)
        header = carray(user_data, (DATA_START,), np.int64)
        st = carray(user_data, (header[TOTAL_LENGTH],), np.int64)
        entry = BLOCK_CACHE + ((address >> 1) & (CACHE_ENTRIES - 1)) * CACHE_ENTRY
        again = st[entry + E_AGAIN]
        refill = 0 if predictor else again >> AGAIN_SHIFT
        if (st[BLOCK_ADDRESS] == address and st[PREVIOUS_END] == address + size and st[PREVIOUS_SP_WRITE] == 0
                and st[entry + E_ADDRESS] == address and st[entry + E_SIZE] == size and again & AGAIN_KIND == kind
                and address != st[PAID_FROM] and st[CYCLES] < st[DEADLINE] and st[INSTRUCTIONS] < st[STEP_LIMIT]
                and st[CYCLES] + refill + st[entry + E_CYCLES] <= st[CYCLE_LIMIT]
                and ((again >> AGAIN_FP) & 1 == 0 or st[FPU_ENABLED] != 0 and st[LAZY_FP_PENDING] == 0)
                and not (captures and (st[TRACE_TABLE] != 0 or st[COUNTER_EVENTS] != 0 or st[PROFILE_TABLE] != 0
                                       or st[SAMPLE_TABLE] != 0))):
            slot = -1
            if predictor and st[ENDS_IN_BRANCH] & 3 != 0:  # (its branch, taken again: what _predict does
                base = again >> AGAIN_SHIFT                  # when it predicted that, costing nothing)
                for way in range(st[PREDICTOR_WAYS]):
                    if st[base + BTAC_ENTRY * way + BT_BRANCH] == st[PREVIOUS_BRANCH_AT] + 1:
                        slot = base + BTAC_ENTRY * way
                        break
            if not predictor or st[ENDS_IN_BRANCH] & 3 == 0 or (
                    slot >= 0 and st[slot + BT_COUNTER] >= 2 and st[slot + BT_TARGET] == address):
                if slot >= 0:
                    st[slot + BT_COUNTER] = 3
                    st[PREDICTED] += 1
                    st[slot + BT_LAST_USE] = st[PREDICTED]
                st[CYCLES] += refill
                st[FL_BLOCK_START] = st[CYCLES]
                st[CODE_PC] = -1
                st[LAZY_FP_AT] = -1  # (its last run may have stored the lazy FP context)
                if power and st[P_ENABLED] != 0:
                    _count_power(st, entry)
                st[INSTRUCTIONS] += st[entry + E_INSTRUCTIONS]
                for k in range(len(AGAIN_COUNTERS)):
                    st[AGAIN_COUNTERS[k]] += st[entry + E_AGAIN_DELTAS + k]
                st[BLOCK_ADJUSTED] = (again >> AGAIN_ADJUSTED) & 1
                st[FL_BLOCK_LINES] = 0
                st[FL_BLOCK_LITERALS] = 0
                fetching = fetch and st[FL_PORT_COUNT] != 0
                if fetching:
                    _fetch_part(uc, header, st, entry, address, size, st[FL_BLOCK_START], True)
                seen = st[HELD_SEEN] + 1
                st[HELD_SEEN] = seen
                if seen < HOLD_AFTER or (again >> AGAIN_SHORT) & 1 and seen < SHORT_RETRY:  # (a loop of a few
                    return                                                   # runs: a hold costs more than it saves)
                if not fetching:
                    hold(st, entry, held_key(address, size), refill, slot, power, -1)
                elif st[entry + E_LITERALS] == 0 or st[FL_LITERAL_RANGE_COUNT] == 0:  # (no literal timed)
                    record = estimated_record(st, address)
                    if record >= 0:
                        hold(st, entry, held_key(address, size), refill, slot, power, record)
                return
        st[HELD_SEEN] = 0
        if address == st[PAID_FROM]:  # the rest of a block run control paused in: charged already, and
            st[PAID_FROM] = address + size if address + size < st[PAID_TO] else -1  # still the executing block
            st[CODE_PC] = -1
            return
        if captures and st[TRACE_TABLE] != 0 and address != st[TRACE_HELD]:  # before any stop: Python may move the PC
            _trace(st, address, address != st[PREVIOUS_END])
            st[TRACE_HELD] = address
        if captures and st[COUNTER_EVENTS] != 0:  # DWT counter wraps in the block that ran last (before any stop)
            counter_events(st)
        if st[CYCLES] >= st[DEADLINE] or st[INSTRUCTIONS] >= st[STEP_LIMIT]:
            st[STOP_REASON] = STOP_DEADLINE
            st[STOP_ADDRESS] = address
            _uc_emu_stop(uc)
            return
        if st[BLOCK_SIZE] != 0 and (st[PENDING_MASKED] != 0 and st[PREVIOUS_UNMASK] > 0
                                    or st[WATCH_ISB] != 0 and st[PREVIOUS_ISB] > 0):
            st[STOP_REASON] = STOP_UNMASKED if st[PENDING_MASKED] != 0 and st[PREVIOUS_UNMASK] > 0 else STOP_ISB
            st[STOP_ADDRESS] = address
            _uc_emu_stop(uc)
            return
        if st[entry + E_SIZE] != size or st[entry + E_ADDRESS] != address:
            if not _summarize(st, address, size, entry):
                st[STOP_REASON] = STOP_DECODE
                st[STOP_ADDRESS] = address
                st[STOP_SIZE] = size
                _uc_emu_stop(uc)
                return
        if st[FPU_ENABLED] == 0 and st[entry + E_FP] > 0:
            st[STOP_REASON] = STOP_FPU_DISABLED
            st[STOP_ADDRESS] = address
            st[STOP_SIZE] = size
            _uc_emu_stop(uc)
            return
        if st[entry + E_SELF_LOOP] != 0:
            st[STOP_REASON] = STOP_SELF_LOOP
            st[STOP_ADDRESS] = address
            _uc_emu_stop(uc)
            return
        if (st[CYCLES] + st[entry + E_CYCLES] > st[CYCLE_LIMIT] and st[entry + E_INSTRUCTIONS] > 1
                and st[CYCLES] + st[entry + E_CYCLES] - _range_sum(st, st[entry + E_LAST_INSN], address + size, F_CYCLES)
                >= st[CYCLE_LIMIT]):
            st[STOP_REASON] = STOP_LIMIT
            st[STOP_ADDRESS] = address
            st[STOP_SIZE] = size
            _uc_emu_stop(uc)
            return
        out_of_sequence = address != st[PREVIOUS_END]
        if st[PREVIOUS_SP_WRITE] != 0:  # the stacks' high-water marks (analysis/memory.py)
            if st[PREVIOUS_SP_WRITE] >= SP_SELECT:  # CONTROL may have switched stacks
                st[ON_PROCESS_STACK] = _read_register(uc, header, CONTROL_REGISTER) & 2
            sp = _read_register(uc, header, SP_REGISTER)
            if st[ON_PROCESS_STACK] != 0:  # SPSEL: SP is the process stack
                if sp < st[PSP_LOWEST]:
                    st[PSP_LOWEST] = sp
                    st[PSP_LOWEST_AT] = address
                if sp > st[PSP_HIGHEST]:
                    st[PSP_HIGHEST] = sp
            elif sp < st[SP_LOWEST] and sp >= st[SP_FLOOR]:
                st[SP_LOWEST] = sp
                st[SP_LOWEST_AT] = address
        if captures and st[PROFILE_TABLE] != 0:  # what ran so far belongs to the blocks before this one
            _profile(st, entry, address, size)
        if captures:
            st[TRACE_HELD] = -1
        if captures and st[SAMPLE_TABLE] != 0:
            if st[CYCLES] > st[SAMPLE_NEXT] and st[BLOCK_SIZE] != 0:
                _take_samples(st)
            st[SAMPLE_BLOCK_START] = st[CYCLES]
        st[LAZY_FP_AT] = -1
        if st[LAZY_FP_PENDING] != 0 and st[entry + E_FP] > 0:
            _lazy_fp_store(st, address, size)
        _refill_after_branch(st, address, st[entry + E_WIDE_FIRST] != 0)
        start = st[CYCLES]
        st[FL_BLOCK_START] = start
        st[ENDS_IN_BRANCH] = st[entry + E_REFILL]
        st[PREVIOUS_BRANCH_AT] = st[entry + E_LAST_INSN]
        st[PREVIOUS_END] = address + size
        st[PREVIOUS_UNMASK] = st[entry + E_UNMASK]
        st[PREVIOUS_ISB] = st[entry + E_ISB]
        st[PREVIOUS_SP_WRITE] = st[entry + E_SP_WRITE]
        st[BLOCK_ADDRESS] = address
        st[BLOCK_SIZE] = size
        st[CODE_PC] = -1
        counts = st[entry + E_COUNTS]
        stalls = st[entry + E_STALLS]
        if power and st[P_ENABLED] != 0:
            _count_power(st, entry)
        add_static(st, st[entry + E_CYCLES], st[entry + E_INSTRUCTIONS], counts, stalls, 1)
        st[BLOCK_ADJUSTED] = 0
        if out_of_sequence and (st[entry + E_START_ADJUST] != 0 or st[entry + E_START_FLAGS] != 0):
            _start_adjust(st, st[entry + E_START_ADJUST], st[entry + E_START_FLAGS], 1)
            st[BLOCK_ADJUSTED] = 1
        st[FL_BLOCK_LINES] = 0
        st[FL_BLOCK_LITERALS] = 0
        if fetch and st[FL_PORT_COUNT] != 0:
            _fetch_part(uc, header, st, entry, address, size, start, out_of_sequence)

    return block_hook


@njit
def _fetch_part(uc, header, st, entry, address, size, start, out_of_sequence):
    """The block hook's last part on a board with flash ports: the block's instruction fetches
    and literal loads, timed or estimated."""
    sampling = st[SAMPLING]
    if sampling == ESTIMATING:  # between windows the fetch model rests (its wait is in the estimate)
        sample_block(st, address, st[entry + E_CYCLES])
        st[FL_CURRENT] = -1
    elif sampling == LEARNING:
        sample_block(st, address, st[entry + E_CYCLES])
        _learn_fetch(st, entry, address, size, start, out_of_sequence)
    else:
        _fetch(st, entry, address, size, start, out_of_sequence)
    if st[entry + E_LITERALS] != 0 and st[FL_LITERAL_RANGE_COUNT] != 0:
        add_data_wait(st, time_literals(st, address, size, _table_index(uc, header, st, address)))


@njit
def _learn_fetch(st, entry, address, size, start, out_of_sequence):
    """_fetch in a window of sampled timing: its wait and flash reads are what the block's record learns."""
    waited = st[FL_FETCH_TOTAL] + st[FL_CONTENTION_TOTAL]
    reads = st[P_FLASH_READS]
    _fetch(st, entry, address, size, start, out_of_sequence)
    st[SAMPLED_FETCH] += st[FL_FETCH_TOTAL] + st[FL_CONTENTION_TOTAL] - waited
    st[SAMPLED_READS] += st[P_FLASH_READS] - reads


@njit
def _significant_bits(value):
    bits = 0
    while value:
        value >>= 1
        bits += 1
    return bits


@njit
def _table_index(uc, header, st, address):
    """The index register's value if the instruction at `address` is a table branch (TBB/TBH)
    (its index register: R0-R12 or LR), else -1."""
    index = (_value_at(st, address, F_LITERAL) >> LITERAL_INDEX_SHIFT) & 15
    if index == 0:
        return np.int64(-1)
    register = np.int32(UC_ARM_REG_LR) if index == 15 else np.int32(UC_ARM_REG_R0 + index - 1)
    return _read_register(uc, header, register)


@njit
def _read_register(uc, header, register):
    header[SCRATCH] = 0
    _uc_reg_read(uc, register, header.ctypes.data + 8 * SCRATCH)
    return header[SCRATCH] & 0xFFFFFFFF


@cfunc(BLOCK_HOOK_SIGNATURE)
def divide_hook(uc, address, size, user_data):
    """Before a divide: its early-termination cost from the operand values.

    F_DIVIDE packs the Unicorn register ids: dividend | divisor << 10 | signed << 20, plus 1 << 21.
    """
    header = carray(user_data, (DATA_START,), np.int64)
    st = carray(user_data, (header[TOTAL_LENGTH],), np.int64)
    refuse_held(st)
    info = _value_at(st, np.int64(address), F_DIVIDE)
    if info == 0:
        return
    dividend = _read_register(uc, header, np.int32(info & 0x3FF))
    divisor = _read_register(uc, header, np.int32((info >> 10) & 0x3FF))
    if (info >> 20) & 1:
        if dividend & 0x80000000:
            dividend = (0x100000000 - dividend) & 0xFFFFFFFF
        if divisor & 0x80000000:
            divisor = (0x100000000 - divisor) & 0xFFFFFFFF
    if dividend == 0 or divisor == 0:
        cycles = st[DIVIDE_ZERO]
    else:
        a = _significant_bits(dividend)
        b = _significant_bits(divisor)
        if a < b:
            cycles = st[DIVIDE_SHORT]
        else:
            cycles = st[DIVIDE_BASE] + (a - b) // st[DIVIDE_BITS_PER_CYCLE]
    extra = cycles - st[DIVIDE_MIN]
    st[CYCLES] += extra
    st[CPI_TOTAL] += extra
    st[DIVIDE_TOTAL] += extra


UC_MEM_WRITE = 17  # unicorn.UC_MEM_WRITE: the `access` argument of a memory hook for a write
MEMORY_HOOK_SIGNATURE = "void(voidptr, int32, uint64, int32, int64, voidptr)"


EPSR_THUMB_ONLY = 1 << 24


@njit
def _restore_it_state(uc, header, scratch=SCRATCH):
    """Clear the IT bits Unicorn set before calling a memory hook or a TLB fill: it restores
    the accessing instruction's state (cpu_restore_state), while QEMU expects them zero in
    mid-block and writes them only at a block's end inside an IT block (docs/machine.md).
    `scratch`: a slot of `header` uc_reg_write may read."""
    header[scratch] = EPSR_THUMB_ONLY
    _uc_reg_write(uc, UC_ARM_REG_EPSR, header.ctypes.data + 8 * scratch)


@cfunc(MEMORY_HOOK_SIGNATURE)
def flash_read_hook(uc, access, address_u64, size, value, user_data):
    """A data read from flash, timed as the reads of 32 bits at most that flash_data_page_read
    sees for it: registered, while data reads wait, only on flash code pages beyond the room of
    the literal range table (Machine._register_memory_hooks), which are then timed exactly."""
    header = carray(user_data, (DATA_START,), np.int64)
    st = carray(user_data, (header[TOTAL_LENGTH],), np.int64)
    refuse_held(st)
    wait = np.int64(0)
    first, step, count = transfers(np.int64(address_u64), np.int64(size))
    for k in range(count):
        wait += flash_data_read(st, first + step * k)
    _restore_it_state(uc, header)
    add_data_wait(st, wait)


MMIO_READ_SIGNATURE = "uint64(voidptr, uint64, uint32, voidptr)"
MMIO_WRITE_SIGNATURE = "void(voidptr, uint64, uint32, uint64, voidptr)"


@cfunc(MMIO_READ_SIGNATURE)
def flash_data_page_read(uc, offset_u64, size_u32, user_data):
    """A data read of a flash page that holds no code (machine/flash_data_pages.py): the bytes
    from the flash's storage, and while the port times data reads, the wait flash_read_hook
    would add. Unicorn calls an MMIO callback without re-deriving the PC (a memory hook costs
    that search on every access) and with the IT bits as QEMU keeps them."""
    run = carray(user_data, (DATA_RUN,), np.int64)
    offset = np.int64(offset_u64)
    value = _load_le(run[RUN_BYTES] + offset, np.int64(size_u32))
    if run[RUN_TIMED] != 0:
        header = carray(_pointer(run[RUN_STATE]), (DATA_START,), np.int64)
        st = carray(_pointer(run[RUN_STATE]), (header[TOTAL_LENGTH],), np.int64)
        refuse_held(st)
        reads = st[P_FLASH_READS]
        g = _run_port(st, run)
        wait = outcome = 0
        if g >= 0:
            wait, outcome = _flash_data_access(st, g, run[RUN_PORT_OFFSET] + offset)
        add_data_wait(st, wait)
        # a window does not learn a miss of a cache for code and data that replaced a line not used in it
        if run[RUN_SAMPLED] != 0 and not (outcome > 0 and st[MISS_STALE] != 0):  # (data_sampling.py)
            st[SAMPLED_WAIT] += wait
            st[SAMPLED_READS] += st[P_FLASH_READS] - reads
    return value


@njit
def _run_port(st, run):
    """The block of the port that reads the flash data run (-1: none), looked up at its first
    timed read and kept: a run lies in one memory region, so one port range."""
    if run[RUN_PORT] == PORT_UNKNOWN:
        g = flash_port(st, run[RUN_BASE])
        run[RUN_PORT_OFFSET] = flash_offset(st, g, run[RUN_BASE]) if g >= 0 else 0
        run[RUN_PORT] = g
    return run[RUN_PORT]


@njit
def _load_le(host_address, size):
    """The `size` bytes at `host_address` as a little-endian value (what an MMIO read returns):
    a read of 2 or 4 bytes, QEMU's usual, is one load of the host where it is little-endian."""
    if LITTLE_ENDIAN_HOST and size == 4:
        return np.uint64(carray(_pointer(host_address), (1,), np.uint32)[0])
    if LITTLE_ENDIAN_HOST and size == 2:
        return np.uint64(carray(_pointer(host_address), (1,), np.uint16)[0])
    data = carray(_pointer(host_address), (size,), np.uint8)
    value = np.uint64(0)
    for i in range(size):
        value |= np.uint64(data[i]) << np.uint64(8 * i)
    return value


def map_flash_data_run(uc, run: np.ndarray, size: int, at: int | None = None) -> None:
    """Map `size` bytes at `at` (default run[RUN_BASE]) as MMIO read by flash_data_page_read
    (read-only: a store faults as one to flash does); `run` must outlive the mapping."""
    map_native_mmio(uc, int(run[RUN_BASE]) if at is None else at, size, flash_data_page_read, None, run)


def map_native_mmio(uc, address: int, size: int, read, write, user_data: np.ndarray) -> None:
    """Map `size` bytes at `address` as MMIO served by the @cfunc `read` and `write` (None: no
    callback), both given `user_data`'s address; `user_data` must outlive the mapping."""
    from unicorn import UcError

    data = ctypes.c_void_p(user_data.ctypes.data)
    status = uclib.uc_mmio_map(uc._uch, ctypes.c_uint64(address), ctypes.c_uint64(size),
                               ctypes.c_void_p(read.address), data,
                               None if write is None else ctypes.c_void_p(write.address), None if write is None else data)
    if status != 0:
        raise UcError(status)


UC_MEM_READ, UC_MEM_FETCH = 16, 18  # unicorn.UC_MEM_READ / UC_MEM_FETCH: the access a TLB fill is for
UC_PROT_READ, UC_PROT_WRITE, UC_PROT_EXEC, UC_PROT_ALL = 1, 2, 4, 7
TLB_FILL_SIGNATURE = "boolean(voidptr, uint64, int32, voidptr, voidptr)"


@cfunc(TLB_FILL_SIGNATURE)
def code_page_tlb_fill(uc, vaddr_u64, access, entry_pointer, user_data):
    """Unicorn's TLB fill (virtual TLB mode, while the table has entries): every page maps to
    itself with all rights, except that a data read of a listed flash code page goes to that
    page's MMIO alias, whose callback times it as one of a data page. The TLB keeps one entry
    per page, so an entry for such a page allows either reads (the alias) or instruction fetch
    (the page): Unicorn fills it again when the other is needed. A data read of a data page run
    listed as read plain (sampled data timing between its windows) goes to the page's plain
    alias. Stores map to the page itself, where they fault as before. Unicorn restores the
    accessing instruction's state before the fill, IT bits included, so a data access's fill
    clears them as a memory hook does.

    A data access's entry has no execute right (a fetch from its page fills it again): Unicorn
    clears a RAM page's TLB_NOTDIRTY flag at its first store only then, and with the flag kept,
    stores missed in the victim TLB after every collision with a code page, and QEMU's count of
    entries in use went wrong at each such refill until the TLB doubled at every flush
    (machine.outside_ram, docs/performance.md "Twelfth pass")."""
    table = carray(user_data, (ALIAS_TABLE,), np.int64)
    entry = carray(entry_pointer, (2,), np.int64)  # uc_tlb_entry: uint64 paddr, uc_prot perms (+ padding)
    vaddr = np.int64(vaddr_u64)
    paddr = vaddr
    perms = UC_PROT_ALL if access == UC_MEM_FETCH else UC_PROT_READ | UC_PROT_WRITE  # (see below)
    aliased = False
    for i in range(table[AT_COUNT]):
        at = AT_ENTRIES + CODE_ALIAS * i
        if table[at + AL_BEGIN] <= vaddr < table[at + AL_END]:
            aliased = True
            if access == UC_MEM_READ:
                paddr = vaddr + CODE_ALIAS_OFFSET
                perms = UC_PROT_READ
                table[AT_FILLS] += 1
            elif access == UC_MEM_FETCH:
                perms = UC_PROT_EXEC
            else:
                perms = UC_PROT_WRITE
            break
    for i in range(table[AT_RAM_COUNT] if not aliased else 0):  # RAM behind a data cache (cached_ram.py)
        at = AT_RAM_ENTRIES + RAM_ALIAS * i
        begin = table[at + RA_BEGIN]
        if begin <= vaddr < table[at + RA_END]:
            aliased = True
            if access == UC_MEM_FETCH:  # (its stores then drop the translated code: cached_ram_write)
                shift = carray(_pointer(table[at + RA_RUN]), (RAM_RUN,), np.int64)[RR_PAGE_SHIFT]
                page = (vaddr - begin) >> shift
                carray(_pointer(table[at + RA_RUN]), (RAM_RUN + page + 1,), np.int64)[RAM_RUN + page] = 1
                if table[at + RA_TIMED] != 0:
                    perms = UC_PROT_EXEC  # (a load or store fills the entry again: the alias)
            elif table[at + RA_TIMED] != 0:
                paddr = vaddr + RAM_ALIAS_OFFSET
            break
    if not aliased and access == UC_MEM_READ and in_ranges(  # a data page run read plain now (sampled data timing)
            table, AT_PLAIN_ENTRIES, table[AT_PLAIN_COUNT], CODE_ALIAS, vaddr):
        paddr = vaddr + PLAIN_ALIAS_OFFSET  # (its stores and fetches still go to the MMIO page, and fault)
        perms = UC_PROT_READ
    entry[0] = paddr
    entry[1] = perms
    if access != UC_MEM_FETCH:  # (a fill for a data access, as a load or store runs)
        _restore_it_state(uc, table, AT_SCRATCH)
    return True


def register_tlb_fill_hook(uc, table: np.ndarray) -> int:
    """Register code_page_tlb_fill with `table` (it must outlive the hook); returns the handle.
    Unicorn calls it only in its virtual TLB mode."""
    from unicorn import UC_HOOK_TLB_FILL, UcError

    handle = ctypes.c_size_t()
    status = uclib.uc_hook_add(uc._uch, ctypes.byref(handle), UC_HOOK_TLB_FILL,
                               ctypes.c_void_p(code_page_tlb_fill.address), ctypes.c_void_p(table.ctypes.data),
                               ctypes.c_uint64(1), ctypes.c_uint64(0))
    if status != 0:
        raise UcError(status)
    return handle.value


@cfunc(MMIO_READ_SIGNATURE)
def cached_ram_read(uc, offset_u64, size_u32, user_data):
    """A load from RAM behind a data cache, through its MMIO alias (machine/cached_ram.py): the
    bytes from the RAM's storage, and the wait the data cache model gives it."""
    run = carray(user_data, (RAM_RUN,), np.int64)
    offset = np.int64(offset_u64)
    value = _load_le(run[RR_BYTES] + offset, np.int64(size_u32))
    _time_ram_access(run, offset, False)
    return value


@cfunc(MMIO_WRITE_SIGNATURE)
def cached_ram_write(uc, offset_u64, size_u32, value_u64, user_data):
    """A store to RAM behind a data cache, through its MMIO alias: the bytes written to the RAM's
    storage and the line allocated. On a page code was fetched from, the translated code of the
    bytes written is dropped, as Unicorn does for a store to RAM it maps itself."""
    run = carray(user_data, (RAM_RUN,), np.int64)
    offset = np.int64(offset_u64)
    size = np.int64(size_u32)
    data = carray(_pointer(run[RR_BYTES] + offset), (size,), np.uint8)
    for i in range(size):
        data[i] = np.uint8((value_u64 >> np.uint64(8 * i)) & np.uint64(0xFF))
    _time_ram_access(run, offset, True)
    page = offset >> run[RR_PAGE_SHIFT]
    if carray(user_data, (RAM_RUN + page + 1,), np.int64)[RAM_RUN + page] != 0:
        address = np.uint64(run[RR_BASE] + offset)
        _uc_remove_cache(uc, address, address + np.uint64(size))


@njit
def _time_ram_access(run, offset, write):
    """The data cache model's wait for an access at `offset` into the run's range, added as a
    memory hook added it (data wait, and the sampled wait windows learn from)."""
    header = carray(_pointer(run[RR_STATE]), (DATA_START,), np.int64)
    st = carray(_pointer(run[RR_STATE]), (header[TOTAL_LENGTH],), np.int64)
    refuse_held(st)
    wait = ram_access(st, run[RR_PORT], run[RR_BASE] + offset, write)
    add_data_wait(st, wait)
    st[SAMPLED_WAIT] += wait


@cfunc(MEMORY_HOOK_SIGNATURE)
def traffic_hook(uc, access, address_u64, size, value, user_data):
    """A data read or write of a memory bank, counted in bytes (registered on the banks' ranges
    only with --memory-traffic); it adds no cycles."""
    header = carray(user_data, (DATA_START,), np.int64)
    address = np.int64(address_u64)
    for i in range(header[TRAFFIC_RANGE_COUNT]):
        at = TRAFFIC_RANGES + TRAFFIC_RANGE * i
        if header[at + TRAFFIC_START] <= address < header[at + TRAFFIC_END]:
            counter = TRAFFIC_BYTES + TRAFFIC_COUNTER * header[at + TRAFFIC_BANK]
            written = access == UC_MEM_WRITE
            header[counter + (TRAFFIC_WRITTEN if written else TRAFFIC_READ)] += size
            break
    _restore_it_state(uc, header)


@cfunc(BLOCK_HOOK_SIGNATURE)
def exact_pc_hook(uc, address, size, user_data):
    """Per-instruction hook, installed only on blocks that read time-dependent registers."""
    header = carray(user_data, (DATA_START,), np.int64)
    header[CODE_PC] = np.int64(address)


def unregister_hook(uc, handle: int) -> None:
    uclib.uc_hook_del(uc._uch, ctypes.c_size_t(handle))


def _register(uc, kind: int, address: int, state: NativeState, begin: int, end: int) -> int:
    """Register the C function at `address` as a hook of `kind` on [begin, end], with the state."""
    from unicorn import UcError

    handle = ctypes.c_size_t()
    status = uclib.uc_hook_add(uc._uch, ctypes.byref(handle), kind, ctypes.c_void_p(address),
                               ctypes.c_void_p(state.address), ctypes.c_uint64(begin), ctypes.c_uint64(end))
    if status != 0:
        raise UcError(status)
    return handle.value


def register_block_hook(uc, state: NativeState, features: Features = ALL_FEATURES) -> int:
    """Register the block hook variant with `features`, behind its front (held_front.py; without
    it, and without held repeats, where the front cannot be had), on every address; returns the
    hook handle."""
    from unicorn import UC_HOOK_BLOCK

    predictor = bool(state.buffer[PREDICTOR_SETS] > 0)
    hook = block_hook_for(features, predictor).address
    front = HELD_FRONT.address
    if front is None:  # (no front: the hook alone, whose first path then counts every repeat)
        state.buffer[HOLD_REPEATS] = 0
        return _register(uc, UC_HOOK_BLOCK, hook, state, 1, 0)
    state.buffer[HOOK_TARGET] = hook
    return _register(uc, UC_HOOK_BLOCK, front, state, 1, 0)


def register_flash_read_hook(uc, state: NativeState, begin: int, end: int) -> int:
    """Time the data reads from flash in [begin, end] (inclusive)."""
    from unicorn import UC_HOOK_MEM_READ

    return _register(uc, UC_HOOK_MEM_READ, flash_read_hook.address, state, begin, end)


def register_traffic_hook(uc, state: NativeState, begin: int, end: int) -> int:
    """Count the bytes of data reads and writes in [begin, end] (inclusive) by bank (TRAFFIC_RANGES)."""
    from unicorn import UC_HOOK_MEM_READ, UC_HOOK_MEM_WRITE

    return _register(uc, UC_HOOK_MEM_READ | UC_HOOK_MEM_WRITE, traffic_hook.address, state, begin, end)


def register_divide_hook(uc, state: NativeState, address: int) -> int:
    """Time the divide at `address` from its operands."""
    from unicorn import UC_HOOK_CODE

    return _register(uc, UC_HOOK_CODE, divide_hook.address, state, address, address)


def register_exact_pc_hook(uc, state: NativeState, begin: int, end: int) -> int:
    """Track the executing instruction's address in [begin, end] (inclusive)."""
    from unicorn import UC_HOOK_CODE

    return _register(uc, UC_HOOK_CODE, exact_pc_hook.address, state, begin, end)
