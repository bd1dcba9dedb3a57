"""Power accounting: instruction classes, data words and flash reads counted per block and
turned into energy with the power model's coefficients (power/accounting.py sets them
and reads the totals)."""
from __future__ import annotations

from .jit import njit
from .layout import (
    CYCLES, E_CLASSES, E_ENERGY_CORE, E_ENERGY_SRAM, P_COEFFICIENTS, P_COEF_WORD, P_COUNTS, P_ENERGY_CORE,
    P_ENERGY_FLASH, P_ENERGY_SRAM, P_PACKED, P_PACKED_BLOCKS, P_SNAPSHOT_CAPACITY, P_SNAPSHOT_COUNT,
    P_SNAPSHOT_DROPPED, P_SNAPSHOT_NEXT, P_SNAPSHOT_PERIOD, P_SNAPSHOT_TABLE, SNAPSHOT, SN_CORE, SN_CYCLE,
    SN_FLASH, SN_SRAM, UNPACK_BLOCKS)
from .encoding import LANE, LANE_MASK


@njit
def _block_energy(st, entry):
    """A block's dynamic energy from its class counts and the power model's coefficients."""
    core = 0
    for k in range(7):
        core += _class_count(st, entry, k) * st[P_COEFFICIENTS + k]
    st[entry + E_ENERGY_CORE] = core
    st[entry + E_ENERGY_SRAM] = _class_count(st, entry, 7) * st[P_COEF_WORD]


@njit
def _class_count(st, entry, k):
    """Lane k of the block's packed class counts (CLASS_NAMES, then data words)."""
    return (st[entry + E_CLASSES + k // 3] >> (LANE * (k % 3))) & LANE_MASK


@njit
def power_unpack(st):
    """Move the packed class sums into the counters."""
    for k in range(8):
        st[P_COUNTS + k] += (st[P_PACKED + k // 3] >> (LANE * (k % 3))) & LANE_MASK
    st[P_PACKED] = 0
    st[P_PACKED + 1] = 0
    st[P_PACKED + 2] = 0
    st[P_PACKED_BLOCKS] = 0


@njit
def _count_power(st, entry):
    """This block's events and energy; a due snapshot first keeps the energies before it, at
    the cycle it starts."""
    if st[P_SNAPSHOT_TABLE] != 0 and st[CYCLES] >= st[P_SNAPSHOT_NEXT]:
        power_snapshot(st)
    st[P_PACKED] += st[entry + E_CLASSES]
    st[P_PACKED + 1] += st[entry + E_CLASSES + 1]
    st[P_PACKED + 2] += st[entry + E_CLASSES + 2]
    st[P_PACKED_BLOCKS] += 1
    if st[P_PACKED_BLOCKS] >= UNPACK_BLOCKS:
        power_unpack(st)
    st[P_ENERGY_CORE] += st[entry + E_ENERGY_CORE]
    st[P_ENERGY_SRAM] += st[entry + E_ENERGY_SRAM]


@njit
def power_snapshot(st):
    """Keep the energies so far at this cycle (the power trace interpolates between them). A
    full table keeps every other snapshot and takes them half as often from then on (bounded
    memory, coarser trace)."""
    if st[P_SNAPSHOT_COUNT] >= st[P_SNAPSHOT_CAPACITY]:
        table = st[P_SNAPSHOT_TABLE]
        kept = st[P_SNAPSHOT_COUNT] // 2
        for i in range(kept):
            for k in range(SNAPSHOT):
                st[table + SNAPSHOT * i + k] = st[table + SNAPSHOT * (2 * i + 1) + k]
        st[P_SNAPSHOT_COUNT] = kept
        st[P_SNAPSHOT_PERIOD] *= 2
        st[P_SNAPSHOT_DROPPED] += 1  # (counts the halvings)
    slot = st[P_SNAPSHOT_TABLE] + SNAPSHOT * st[P_SNAPSHOT_COUNT]
    st[slot + SN_CYCLE] = st[CYCLES]
    st[slot + SN_CORE] = st[P_ENERGY_CORE]
    st[slot + SN_SRAM] = st[P_ENERGY_SRAM]
    st[slot + SN_FLASH] = st[P_ENERGY_FLASH]
    st[P_SNAPSHOT_COUNT] += 1
    st[P_SNAPSHOT_NEXT] = st[CYCLES] + st[P_SNAPSHOT_PERIOD]
