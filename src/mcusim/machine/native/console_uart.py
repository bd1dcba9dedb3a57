"""The console UART's page as native MMIO (machine/console_uart.py is the Python side).

A polled printf reads the UART's status word and writes its data word once per character: as
Python MMIO callbacks those two accesses took 38 % of printf-uart's run. Here the status read
returns the value the Python model last computed and a transmitted byte is appended to a
buffer that Python takes whenever emulation returns to it; every other access to the page goes
to the Python bus through a callback pointer, so what the firmware reads and what is
transmitted do not change.
"""
from __future__ import annotations

import ctypes

import numpy as np

from .hooks import MMIO_READ_SIGNATURE, MMIO_WRITE_SIGNATURE
from .held_repeats import refuse_held
from .jit import NUMBA_NAME, cfunc
from .layout import (
    CONSOLE_PAGE, DATA_START, DEADLINE, U_BYTES, U_CAPACITY, U_DATA, U_LENGTH, U_READ_FALLBACK, U_STATE, U_STATUS,
    U_STATUS_VALUE, U_STOP_AT, U_TX_ON, U_WRITE_FALLBACK)

READ_FALLBACK = ctypes.CFUNCTYPE(ctypes.c_uint64, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_void_p)
WRITE_FALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_uint64,
                                  ctypes.c_void_p)
# numba's carray and the intrinsics that call a callback and make a pointer (numba_names.py's,
# put here by jit.load_numba())
carray = _call_read = _call_write = _pointer = NUMBA_NAME


@cfunc(MMIO_READ_SIGNATURE)
def console_page_read(uc, offset_u64, size_u32, user_data):
    """The status word from its slot (any byte of it, any width, as Peripheral.read); the rest
    from Python."""
    page = carray(user_data, (CONSOLE_PAGE,), np.int64)
    offset = np.int64(offset_u64)
    if offset & ~np.int64(3) != page[U_STATUS]:
        return _call_read(page[U_READ_FALLBACK], uc, offset_u64, size_u32, user_data)
    value = np.uint64(page[U_STATUS_VALUE] & 0xFFFFFFFF) >> np.uint64(8 * (offset & 3))
    return value & ((np.uint64(1) << np.uint64(8 * np.int64(size_u32))) - np.uint64(1))


@cfunc(MMIO_WRITE_SIGNATURE)
def console_page_write(uc, offset_u64, size_u32, value_u64, user_data):
    """A write to the data word transmits its low byte while the model's enable bits are set
    (and is otherwise dropped, as the models drop it); the rest goes to Python. Past U_STOP_AT
    bytes emulation stops at the next block, so the buffer never fills: a block of at most a
    few hundred instructions cannot write the room left above it."""
    page = carray(user_data, (CONSOLE_PAGE,), np.int64)
    offset = np.int64(offset_u64)
    if offset & ~np.int64(3) != page[U_DATA]:
        _call_write(page[U_WRITE_FALLBACK], uc, offset_u64, size_u32, value_u64, user_data)
        return
    if page[U_TX_ON] == 0:
        return
    length = page[U_LENGTH]
    if length < page[U_CAPACITY]:
        out = carray(_pointer(page[U_BYTES]), (page[U_CAPACITY],), np.uint8)
        out[length] = np.uint8(value_u64 & np.uint64(0xFF))
        page[U_LENGTH] = length + 1
    if length + 1 >= page[U_STOP_AT]:
        header = carray(_pointer(page[U_STATE]), (DATA_START,), np.int64)
        refuse_held(header)  # (the held slots and the block cache are all in the header)
        header[DEADLINE] = 0

