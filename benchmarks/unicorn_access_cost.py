"""What a data load costs in Unicorn 2.1 under each way mcusim could time memory, side by side.

    python benchmarks/unicorn_access_cost.py [--loads 2000000] [--repeat 3]

Runs one loop of five Thumb instructions with one load (ldr r2,[r0,r1]; adds; and; subs; bne)
in plain Unicorn, four ways: RAM with no memory hook; RAM while a native read hook is held on
another range (the hook is never called, but Unicorn then translates every load and store to its
slow path); RAM inside a hooked range (a native hook called on every load); and an MMIO page
with a native read callback (only accesses to that page leave the fast path). Prints the
medians in host ns per loop iteration and the ratio to the first.
"""
from __future__ import annotations

import argparse
import ctypes
import statistics
import time

import numpy as np
from numba import carray, cfunc, types
from unicorn import UC_ARCH_ARM, UC_HOOK_MEM_READ, UC_MODE_MCLASS, UC_MODE_THUMB, UC_PROT_ALL, Uc
from unicorn.arm_const import UC_ARM_REG_R0, UC_ARM_REG_R3
from unicorn.unicorn_py3.unicorn import uclib

# ldr r2,[r0,r1]; adds r1,#4; and r1,r1,#0x3fc; subs r3,#1; bne loop; b .
LOOP = bytes.fromhex("4258" "0431" "01f47f71" "013b" "f9d1" "fee7")
LOOP_END = 0xC
RAM, OTHER, MMIO = 0x20000000, 0x30000000, 0x40000000


@cfunc(types.void(types.voidptr, types.int32, types.uint64, types.int32, types.int64, types.voidptr))
def count_hook(uc, access, address, size, value, user):
    counter = carray(user, (1,), np.int64)
    counter[0] += 1


@cfunc(types.uint64(types.voidptr, types.uint64, types.uint32, types.voidptr))
def mmio_read(uc, offset, size, user):
    counter = carray(user, (1,), np.int64)
    counter[0] += 1
    return np.uint64(offset & 0xFF)


def machine(way: str, counter: np.ndarray) -> Uc:
    uc = Uc(UC_ARCH_ARM, UC_MODE_THUMB | UC_MODE_MCLASS)
    uc.mem_map(0, 0x10000, UC_PROT_ALL)
    uc.mem_map(RAM, 0x10000, UC_PROT_ALL)
    uc.mem_write(0, LOOP)
    base = RAM
    handle = ctypes.c_size_t()
    user = ctypes.c_void_p(counter.ctypes.data)
    if way in ("hook held elsewhere", "hooked range"):
        begin = OTHER if way == "hook held elsewhere" else RAM
        status = uclib.uc_hook_add(uc._uch, ctypes.byref(handle), UC_HOOK_MEM_READ, ctypes.c_void_p(count_hook.address),
                                   user, ctypes.c_uint64(begin), ctypes.c_uint64(begin + 0xFFFF))
        assert status == 0, status
    elif way == "MMIO page":
        base = MMIO
        status = uclib.uc_mmio_map(uc._uch, ctypes.c_uint64(MMIO), ctypes.c_size_t(0x1000),
                                   ctypes.c_void_p(mmio_read.address), user, None, None)
        assert status == 0, status
    uc.reg_write(UC_ARM_REG_R0, base)
    return uc


WAYS = ("no hook", "hook held elsewhere", "hooked range", "MMIO page")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=2_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    seconds = {way: [] for way in WAYS}
    for _ in range(args.repeat):
        for way in WAYS:
            counter = np.zeros(1, np.int64)
            uc = machine(way, counter)
            uc.reg_write(UC_ARM_REG_R3, args.loads)
            started = time.perf_counter()
            uc.emu_start(1, LOOP_END)
            seconds[way].append(time.perf_counter() - started)
            calls = counter[0]
            expected = args.loads if way in ("hooked range", "MMIO page") else 0
            assert calls == expected, f"{way}: {calls} calls, expected {expected}"
    base = statistics.median(seconds["no hook"])
    print("| way | ns per iteration (5 instructions, 1 load) | / no hook |\n|---|---|---|")
    for way in WAYS:
        median = statistics.median(seconds[way])
        print(f"| {way} | {1e9 * median / args.loads:.1f} | {median / base:.2f}x |")


if __name__ == "__main__":
    main()
