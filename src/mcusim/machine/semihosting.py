"""Arm semihosting (BKPT 0xAB), as newlib's rdimon uses it.

Console handles (":tt") go to the firmware's stdout stream; host files are refused unless a
root folder was given, and then only paths inside it are opened, removed or renamed.
Operation numbers: Arm "Semihosting for AArch32 and AArch64" v3, chapter 2.

SYS_HEAPINFO and SYS_GET_CMDLINE answer what newlib's rdimon crt0 (libgloss/arm/crt0.S) builds
the C runtime from: it sets SP to the stack base (and only falls back to a `__stack` symbol,
which many linker scripts lack, when the answer is 0), bounds sbrk by the heap limit, and
splits the command line at spaces into argc/argv (honouring '...' and "..." quotes).
"""
from __future__ import annotations

import errno
import os
import shlex
import subprocess
import time
from pathlib import Path

SYS_OPEN, SYS_CLOSE, SYS_WRITEC, SYS_WRITE0, SYS_WRITE, SYS_READ = 0x01, 0x02, 0x03, 0x04, 0x05, 0x06
SYS_READC, SYS_ISERROR, SYS_ISTTY, SYS_SEEK, SYS_FLEN, SYS_TMPNAM = 0x07, 0x08, 0x09, 0x0A, 0x0C, 0x0D
SYS_REMOVE, SYS_RENAME, SYS_CLOCK, SYS_TIME, SYS_SYSTEM, SYS_ERRNO = 0x0E, 0x0F, 0x10, 0x11, 0x12, 0x13
SYS_GET_CMDLINE, SYS_HEAPINFO, SYS_EXIT, SYS_EXIT_EXTENDED = 0x15, 0x16, 0x18, 0x20
SYS_ELAPSED, SYS_TICKFREQ = 0x30, 0x31
ELAPSED_TICKS_PER_SECOND = 1_000_000  # SYS_ELAPSED counts simulated microseconds (SYS_TICKFREQ)

ADP_STOPPED_APPLICATION_EXIT = 0x20026
FEATURES_FILE = ":semihosting-features"
# Feature byte 0: bit 0 SH_EXT_EXIT_EXTENDED, bit 1 SH_EXT_STDOUT_STDERR (semihosting v3, 2.1.1).
FEATURES = b"SHFB\x03"
OPEN_MODES = ["rb", "rb", "rb+", "rb+", "wb", "wb", "wb+", "wb+", "ab", "ab", "ab+", "ab+"]


def ram_spans(board) -> list[list[tuple[int, int]]]:
    """The board's RAM regions (aliases included, by address) in runs of adjacent regions of
    distinct storage (the STM32L476's SRAM1 and the SRAM2 alias after it; the STM32F746's
    DTCM, SRAM1 and SRAM2). A mirror of storage already in a run starts a new run (the MPS2
    SSRAM mirrors): growing into it would overwrite the run's own bottom."""
    spans: list[tuple[list[tuple[int, int]], set[str]]] = []
    for region in sorted(board.memory, key=lambda r: r.base):
        storage = board.storage_region(region)
        if storage.kind != "ram":
            continue
        if spans and spans[-1][0][-1][1] == region.base and storage.name not in spans[-1][1]:
            spans[-1][0].append((region.base, region.end))
            spans[-1][1].add(storage.name)
        else:
            spans.append(([(region.base, region.end)], {storage.name}))
    return [regions for regions, _ in spans]


def heap_info(board, segments, initial_sp: int) -> tuple[int, int, int, int]:
    """SYS_HEAPINFO's heap base, heap limit, stack base and stack limit for this image.

    The heap starts right after the image's end in RAM (the highest end of its loaded RAM
    segments, .data/.bss), 8-byte aligned; the stack starts at the top of the RAM region that
    holds the initial SP of the vector table (the region below it when the SP is a region's
    end, as it usually is). When both lie in one run of adjacent RAM, heap below the stack,
    they share it as QEMU shares its one free RAM gap (semihosting/arm-compat-semi.c: heap
    limit = stack base, stack limit = heap base); otherwise each is bounded by its own region.
    """
    spans = ram_spans(board)
    regions = [region for span in spans for region in span]

    def region_of(address: int) -> tuple[int, int] | None:
        return next((r for r in regions if r[0] <= address < r[1]), None)

    image = [(region_of(s.vaddr), s.vaddr + s.memsz) for s in segments if s.memsz and region_of(s.vaddr)]
    top = max(image, key=lambda item: item[1], default=None)
    stack_region = region_of(initial_sp - 1) if initial_sp else None
    if stack_region is None:
        stack_region = top[0] if top else max(regions, key=lambda r: r[1] - r[0])
    heap_region = top[0] if top else stack_region

    def image_end(region: tuple[int, int]) -> int:
        return (max((end for r, end in image if r == region), default=region[0]) + 7) & ~7

    heap_base, stack_base = image_end(heap_region), stack_region[1]
    span_of = {region: k for k, span in enumerate(spans) for region in span}
    if span_of[heap_region] == span_of[stack_region] and heap_base < stack_base:
        return heap_base, stack_base, stack_base, heap_base
    return heap_base, heap_region[1], stack_base, image_end(stack_region)


class SemihostingExit(Exception):
    def __init__(self, code: int, reason: str):
        super().__init__(reason)
        self.code = code
        self.reason = reason


class Semihosting:
    def __init__(self, machine, root: str | Path | None = None, cmdline: str = ""):
        self.machine = machine
        self.root = Path(root).resolve() if root else None
        self.cmdline = cmdline
        self.errno = 0
        self.handles: dict[int, object] = {}
        self.next_handle = 3
        self.started_wall = time.time()
        self.refused: list[str] = []

    # memory helpers ----------------------------------------------------------------
    def _word(self, address: int) -> int:
        return int.from_bytes(self.machine.uc.mem_read(address, 4), "little")

    def _args(self, block: int, count: int) -> list[int]:
        return [self._word(block + 4 * i) for i in range(count)]

    def _string(self, address: int, length: int | None = None) -> str:
        if length is not None:
            return bytes(self.machine.uc.mem_read(address, length)).decode(errors="replace")
        out = bytearray()
        while True:
            chunk = bytes(self.machine.uc.mem_read(address + len(out), 64))
            end = chunk.find(0)
            if end >= 0:
                out += chunk[:end]
                return out.decode(errors="replace")
            out += chunk

    def _refuse(self, what: str) -> int:
        message = f"semihosting: refused {what} (host files are off; pass --semihosting-root DIR to allow a folder)"
        self.refused.append(message)
        self.machine.warn(message)
        self.errno = errno.EACCES
        return -1

    def _host_path(self, name: str) -> Path | None:
        if self.root is None:
            return None
        path = (self.root / name).resolve()
        if path != self.root and self.root not in path.parents:
            return None
        return path

    # dispatch -------------------------------------------------------------------------
    def call(self, operation: int, parameter: int) -> int:
        handler = {
            SYS_OPEN: self._open, SYS_CLOSE: self._close, SYS_WRITEC: self._writec, SYS_WRITE0: self._write0,
            SYS_WRITE: self._write, SYS_READ: self._read, SYS_READC: self._readc, SYS_ISERROR: self._iserror,
            SYS_ISTTY: self._istty, SYS_SEEK: self._seek, SYS_FLEN: self._flen, SYS_TMPNAM: self._tmpnam,
            SYS_REMOVE: self._remove, SYS_RENAME: self._rename, SYS_CLOCK: self._clock, SYS_TIME: self._time,
            SYS_SYSTEM: self._system, SYS_ERRNO: lambda p: self.errno, SYS_GET_CMDLINE: self._cmdline,
            SYS_HEAPINFO: self._heapinfo, SYS_EXIT: self._exit, SYS_EXIT_EXTENDED: self._exit_extended,
            SYS_ELAPSED: self._elapsed, SYS_TICKFREQ: lambda p: ELAPSED_TICKS_PER_SECOND,
        }.get(operation)
        if handler is None:
            self.machine.warn(f"semihosting: unsupported operation 0x{operation:02x}")
            self.errno = errno.ENOSYS
            return -1
        return handler(parameter)

    def _open(self, p):
        name_ptr, mode, length = self._args(p, 3)
        name = self._string(name_ptr, length)
        if name == ":tt":
            handle = {0: 0, 1: 0, 4: 1, 5: 1, 8: 2, 9: 2}.get(mode, 1)
            # newlib opens stdin, stdout, stderr in that order: give them 1, 2, 3
            self.handles[self.next_handle] = ("tt", handle)
            self.next_handle += 1
            return self.next_handle - 1
        if name == FEATURES_FILE:
            self.handles[self.next_handle] = ("features", 0)
            self.next_handle += 1
            return self.next_handle - 1
        path = self._host_path(name)
        if path is None:
            return self._refuse(f"SYS_OPEN of host file '{name}'")
        try:
            handle = open(path, OPEN_MODES[mode] if mode < len(OPEN_MODES) else "rb")
        except OSError as exc:
            self.errno = exc.errno or errno.EIO
            return -1
        self.handles[self.next_handle] = handle
        self.next_handle += 1
        return self.next_handle - 1

    def _close(self, p):
        handle = self.handles.pop(self._word(p), None)
        if handle is None:
            self.errno = errno.EBADF
            return -1
        if hasattr(handle, "close"):
            handle.close()
        return 0

    def _writec(self, p):
        self.machine.console_write(bytes(self.machine.uc.mem_read(p, 1)), "semihosting")
        return 0

    def _write0(self, p):
        self.machine.console_write(self._string(p).encode(), "semihosting")
        return 0

    def _write(self, p):
        fd, buffer, length = self._args(p, 3)
        handle = self.handles.get(fd)
        data = bytes(self.machine.uc.mem_read(buffer, length)) if length else b""
        if isinstance(handle, tuple) and handle[0] == "tt":
            self.machine.console_write(data, "semihosting", stderr=handle[1] == 2)
            return 0
        if handle is None or isinstance(handle, tuple):
            self.errno = errno.EBADF
            return length
        handle.write(data)
        return 0

    def _read(self, p):
        fd, buffer, length = self._args(p, 3)
        handle = self.handles.get(fd)
        if isinstance(handle, tuple) and handle[0] == "features":
            data = FEATURES[handle[1]: handle[1] + length]
            self.handles[fd] = ("features", handle[1] + len(data))
        elif isinstance(handle, tuple):
            data = self.machine.read_stdin(length)
        elif handle is None:
            self.errno = errno.EBADF
            return -1
        else:
            data = handle.read(length)
        self.machine.uc.mem_write(buffer, data)
        return length - len(data)

    def _readc(self, p):
        data = self.machine.read_stdin(1)
        return data[0] if data else -1

    def _iserror(self, p):
        return 1 if self._word(p) & 0x80000000 else 0

    def _istty(self, p):
        handle = self.handles.get(self._word(p))
        return 1 if isinstance(handle, tuple) and handle[0] == "tt" else 0

    def _seek(self, p):
        fd, position = self._args(p, 2)
        handle = self.handles.get(fd)
        if isinstance(handle, tuple) and handle[0] == "features":
            self.handles[fd] = ("features", position)
            return 0
        if handle is None or isinstance(handle, tuple):
            self.errno = errno.EBADF
            return -1
        handle.seek(position)
        return 0

    def _flen(self, p):
        handle = self.handles.get(self._word(p))
        if isinstance(handle, tuple):
            return len(FEATURES) if handle[0] == "features" else 0
        if handle is None:
            self.errno = errno.EBADF
            return -1
        return os.fstat(handle.fileno()).st_size

    def _tmpnam(self, p):
        buffer, identifier, length = self._args(p, 3)
        name = f"mcusim-tmp-{identifier & 0xFF:03d}".encode() + b"\0"
        if len(name) > length:
            return -1
        self.machine.uc.mem_write(buffer, name)
        return 0

    def _remove(self, p):
        name_ptr, length = self._args(p, 2)
        name = self._string(name_ptr, length)
        path = self._host_path(name)
        if path is None:
            return self._refuse(f"SYS_REMOVE of host file '{name}'")
        try:
            path.unlink()
        except OSError as exc:
            self.errno = exc.errno or errno.EIO
            return -1
        return 0

    def _rename(self, p):
        old_ptr, old_len, new_ptr, new_len = self._args(p, 4)
        old, new = self._string(old_ptr, old_len), self._string(new_ptr, new_len)
        old_path, new_path = self._host_path(old), self._host_path(new)
        if old_path is None or new_path is None:
            return self._refuse(f"SYS_RENAME of host file '{old}' to '{new}'")
        try:
            old_path.rename(new_path)
        except OSError as exc:
            self.errno = exc.errno or errno.EIO
            return -1
        return 0

    def _clock(self, p):
        return int(self.machine.simulated_seconds() * 100)  # centiseconds since start

    def _time(self, p):
        """Seconds since the epoch: the host's clock when the run started plus simulated time."""
        return int(self.started_wall + self.machine.simulated_seconds())

    def _system(self, p):
        command_ptr, length = self._args(p, 2)
        command = self._string(command_ptr, length)
        if self.root is None:
            return self._refuse(f"SYS_SYSTEM of '{command}'")
        try:
            words = shlex.split(command)
        except ValueError:
            words = []
        program = self._host_path(words[0]) if words else None
        if program is None or not program.is_file() or not os.access(program, os.X_OK):
            return self._refuse(f"SYS_SYSTEM of '{command}' (only programs inside the semihosting root run)")
        self.machine.warn(f"semihosting: running '{command}' in {self.root}")
        return subprocess.run([str(program), *words[1:]], cwd=self.root).returncode

    def _cmdline(self, p):
        """The command line and its length. A buffer too small for it and its NUL gets the error
        return (-1: "not successful" in the spec's SYS_GET_CMDLINE) with nothing written and
        errno E2BIG, as QEMU answers it; newlib's crt0 then sees an empty line (argc 0)."""
        buffer, length = self._args(p, 2)
        data = self.cmdline.encode() + b"\0"
        if len(data) > length:
            self.machine.warn(f"semihosting: SYS_GET_CMDLINE buffer of {length} bytes is too small for the "
                              f"{len(data)}-byte command line; the call fails")
            self.errno = errno.E2BIG
            return -1
        self.machine.uc.mem_write(buffer, data)
        self.machine.uc.mem_write(p + 4, (len(data) - 1).to_bytes(4, "little"))
        return 0

    def _heapinfo(self, p):
        block = self._word(p)
        m = self.machine
        words = heap_info(m.board, m.image.segments, m.initial_sp)
        m.uc.mem_write(block, b"".join(word.to_bytes(4, "little") for word in words))
        return 0

    def _exit(self, p):
        # AArch32 SYS_EXIT: the parameter is the reason code itself.
        if p == ADP_STOPPED_APPLICATION_EXIT:
            raise SemihostingExit(0, "semihosting exit (application exit)")
        raise SemihostingExit(1, f"semihosting exit with reason 0x{p:x}")

    def _exit_extended(self, p):
        reason, code = self._args(p, 2)
        if reason == ADP_STOPPED_APPLICATION_EXIT:
            # a process exit status is 8 bits wide, as on a host
            raise SemihostingExit(code & 0xFF, f"semihosting exit (code {code})")
        raise SemihostingExit(1, f"semihosting exit with reason 0x{reason:x}")

    def _elapsed(self, p):
        ticks = int(self.machine.simulated_seconds() * ELAPSED_TICKS_PER_SECOND)
        self.machine.uc.mem_write(p, (ticks & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little"))
        return 0

    def close(self):
        for handle in self.handles.values():
            if hasattr(handle, "close"):
                handle.close()
