"""Arm semihosting (BKPT 0xAB), as newlib's rdimon uses it.

Console handles (":tt") go to the firmware's stdout stream; host files are refused unless a
root folder was given, and then only regular files inside it are used (host_root.py);
SYS_SYSTEM runs nothing unless the user also allowed it. Operation numbers: Arm "Semihosting
for AArch32 and AArch64" v3, chapter 2.

Whatever the firmware passes, a call ends as a debugger would end it: a pointer or length
outside the board's memory (or a buffer to fill outside its RAM) fails with EFAULT, a name
that is not UTF-8 or holds a NUL (other than one ending its length) with EINVAL, and any other error becomes an error return
with a warning, never an exception out of the simulator. Failed calls return -1 and set
the errno SYS_ERRNO reads, except SYS_READ and SYS_WRITE, which return the number of bytes
not transferred (all of them), as the spec and QEMU have it.

SYS_HEAPINFO and SYS_GET_CMDLINE answer what newlib's rdimon crt0 (libgloss/arm/crt0.S) builds
the C runtime from: it sets SP to the stack base (and only falls back to a `__stack` symbol,
which many linker scripts lack, when the answer is 0), bounds sbrk by the heap limit, and
splits the command line at spaces into argc/argv (honouring '...' and "..." quotes).
"""
from __future__ import annotations

import errno
import os
import time
from pathlib import Path

from .host_root import HostRoot, Refused

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
_W, _A = os.O_CREAT | os.O_TRUNC, os.O_CREAT | os.O_APPEND
# SYS_OPEN modes 0-11: r, rb, r+, r+b, w, wb, w+, w+b, a, ab, a+, a+b
OPEN_FLAGS = [os.O_RDONLY] * 2 + [os.O_RDWR] * 2 + [os.O_WRONLY | _W] * 2 + [os.O_RDWR | _W] * 2 + \
             [os.O_WRONLY | _A] * 2 + [os.O_RDWR | _A] * 2
NAME_LIMIT = 4096    # bytes in a file name or SYS_SYSTEM command (PATH_MAX)
HANDLE_LIMIT = 256   # handles open at once
WARNING_LIMIT = 32   # distinct semihosting warnings in a run; a hostile loop cannot flood them
STRING_CHUNK = 256   # SYS_WRITE0 reads its string in pieces up to the NUL
OPERATION_NAMES = {value: name for name, value in globals().items()
                   if name.startswith("SYS_") and isinstance(value, int)}


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
    Segments at or above the initial SP in its region, with image below it too, count as neither.
    """
    spans = ram_spans(board)
    regions = [region for span in spans for region in span]

    def region_of(address: int) -> tuple[int, int] | None:
        return next((r for r in regions if r[0] <= address < r[1]), None)

    sp_region = region_of(initial_sp - 1) if initial_sp else None
    sp_span = next((span for span in spans if sp_region in span), [])
    in_sp_span = [s for s in segments if s.memsz and region_of(s.vaddr) in sp_span]
    # what the image places above the initial SP in its region while more of it lies below the SP
    # (an arena carved off the top of RAM) is neither heap nor stack: the heap starts after the
    # image below, the stack under what is above. (With the whole image above the SP, as a
    # stack-first layout has it, the heap follows the image as usual.)
    above = [s for s in in_sp_span if region_of(s.vaddr) == sp_region and s.vaddr >= initial_sp] \
        if any(s.vaddr < initial_sp for s in in_sp_span) else []
    image = [(region_of(s.vaddr), s.vaddr + s.memsz) for s in segments
             if s.memsz and region_of(s.vaddr) and s not in above]
    top = max(image, key=lambda item: item[1], default=None)
    stack_region = sp_region
    if stack_region is None:
        stack_region = top[0] if top else max(regions, key=lambda r: r[1] - r[0])
    heap_region = top[0] if top else stack_region

    def image_end(region: tuple[int, int]) -> int:
        return (max((end for r, end in image if r == region), default=region[0]) + 7) & ~7

    heap_base, stack_base = image_end(heap_region), min([stack_region[1]] + [s.vaddr for s in above])
    span_of = {region: k for k, span in enumerate(spans) for region in span}
    if span_of[heap_region] == span_of[stack_region] and heap_base < stack_base:
        return heap_base, stack_base, stack_base, heap_base
    return heap_base, heap_region[1], stack_base, image_end(stack_region)


class SemihostingExit(Exception):
    def __init__(self, code: int, reason: str):
        super().__init__(reason)
        self.code = code
        self.reason = reason


class _Fault(Exception):
    """Firmware memory a call cannot use: the call returns `result` with errno EFAULT."""

    def __init__(self, address: int, length: int, write: bool, result: int = -1):
        where = "RAM (a buffer to fill)" if write else "memory"
        super().__init__(f"{length} bytes at 0x{address:08x}, not all in the board's {where}")
        self.result = result


class Semihosting:
    def __init__(self, machine, root: str | Path | None = None, cmdline: str = "", system: bool = False):
        if system and root is None:
            raise ValueError("SYS_SYSTEM runs programs inside the semihosting root: give a semihosting root")
        self.machine = machine
        self.host = HostRoot(root, allow_system=system) if root else None
        self.root = self.host.path if self.host else None
        self.cmdline = cmdline
        self.errno = 0
        self.handles: dict[int, tuple[str, int]] = {}  # ("tt", stream) / ("features", offset) / ("file", fd)
        self.next_handle = 3
        self.started_wall = time.time()
        self._warned: set[str] = set()

    # memory and warnings --------------------------------------------------------------
    def _memory(self, address: int, length: int, result: int = -1) -> bytes:
        if length > self.machine.debug_span(address):
            raise _Fault(address, length, False, result)
        return self.machine.read_memory(address, length) if length else b""

    def _check_writable(self, address: int, length: int, result: int = -1) -> None:
        if length > self.machine.debug_span(address, write=True):
            raise _Fault(address, length, True, result)

    def _store(self, address: int, data: bytes) -> None:
        self._check_writable(address, len(data))
        self.machine.uc.mem_write(address, data)

    def _word(self, address: int) -> int:
        return int.from_bytes(self._memory(address, 4), "little")

    def _args(self, block: int, count: int) -> list[int]:
        data = self._memory(block, 4 * count)
        return [int.from_bytes(data[4 * i: 4 * i + 4], "little") for i in range(count)]

    def _name(self, address: int, length: int) -> str:
        """A file name or command: UTF-8 without NUL, or the call fails (EINVAL); never translated.
        One NUL ending the given length is dropped: QEMU reads names up to their NUL, so firmware
        that counts it in works there."""
        if length > NAME_LIMIT:
            raise Refused(errno.ENAMETOOLONG, f"a name of {length} bytes (at most {NAME_LIMIT})")
        raw = self._memory(address, length)
        raw = raw[:-1] if raw.endswith(b"\0") else raw
        try:
            if b"\0" in raw:
                raise ValueError("it holds a NUL byte")
            return raw.decode("utf-8")
        except ValueError as exc:
            raise Refused(errno.EINVAL, f"the name {raw[:80]!r} is not UTF-8 without NUL ({exc})") from None

    def _string0(self, address: int) -> bytes:
        """The NUL-terminated string at `address`, read up to its NUL and never past the memory it lies in."""
        span = self.machine.debug_span(address)
        out = bytearray()
        while len(out) < span:
            chunk = self.machine.read_memory(address + len(out), min(STRING_CHUNK, span - len(out)))
            end = chunk.find(0)
            if end >= 0:
                return bytes(out + chunk[:end])
            out += chunk
        raise _Fault(address, span + 1, False)

    def _warn(self, key: str, message: str) -> None:
        """One warning per kind, and at most WARNING_LIMIT kinds in a run."""
        if key in self._warned or len(self._warned) > WARNING_LIMIT:
            return
        self._warned.add(key)
        if len(self._warned) > WARNING_LIMIT:
            message = "semihosting: further warnings are not reported"
        self.machine.warn(message)

    def _refuse(self, what: str) -> int:
        self._warn(f"refused:{what}", f"semihosting: refused {what} (host files are off; pass "
                                      f"--semihosting-root DIR to allow a folder)")
        self.errno = errno.EACCES
        return -1

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
            self._warn(f"unsupported:{operation}", f"semihosting: unsupported operation 0x{operation:02x}")
            self.errno = errno.ENOSYS
            return -1
        name = OPERATION_NAMES[operation]
        try:
            return handler(parameter)
        except SemihostingExit:
            raise
        except _Fault as fault:
            self._warn(f"fault:{name}", f"semihosting: {name} with {fault}: the call fails (EFAULT)")
            self.errno = errno.EFAULT
            return fault.result
        except Refused as refused:
            self._warn(f"refused:{name}:{refused}", f"semihosting: refused {name}: {refused}")
            self.errno = refused.code
            return -1
        except OSError as exc:
            self.errno = exc.errno or errno.EIO
            return -1
        except Exception as exc:  # a bug here must not end the run: the firmware sees a failed call
            self._warn(f"error:{name}", f"semihosting: {name} failed inside mcusim ({type(exc).__name__}: {exc}); "
                                        f"the call returns -1 (EIO)")
            self.errno = errno.EIO
            return -1

    def _new_handle(self, kind: str, value: int) -> int:
        self.handles[self.next_handle] = (kind, value)
        self.next_handle += 1
        return self.next_handle - 1

    def _open(self, p):
        name_ptr, mode, length = self._args(p, 3)
        name = self._name(name_ptr, length)
        if mode >= len(OPEN_FLAGS):
            raise Refused(errno.EINVAL, f"open mode {mode} (modes are 0-11)")
        if len(self.handles) >= HANDLE_LIMIT:
            raise Refused(errno.EMFILE, f"more than {HANDLE_LIMIT} handles open at once")
        if name == ":tt":
            # newlib opens stdin, stdout, stderr in that order: give them 1, 2, 3
            return self._new_handle("tt", {0: 0, 1: 0, 4: 1, 5: 1, 8: 2, 9: 2}.get(mode, 1))
        if name == FEATURES_FILE:
            return self._new_handle("features", 0)
        if self.host is None:
            return self._refuse(f"SYS_OPEN of host file '{name}'")
        return self._new_handle("file", self.host.open(name, OPEN_FLAGS[mode]))

    def _close(self, p):
        kind, value = self.handles.pop(self._word(p), (None, None))
        if kind is None:
            self.errno = errno.EBADF
            return -1
        if kind == "file":
            os.close(value)
        return 0

    def _writec(self, p):
        self.machine.console_write(self._memory(p, 1), "semihosting")
        return 0

    def _write0(self, p):
        self.machine.console_write(self._string0(p), "semihosting")
        return 0

    def _write(self, p):
        fd, buffer, length = self._args(p, 3)
        kind, value = self.handles.get(fd, (None, None))
        data = self._memory(buffer, length, result=length)
        if kind == "tt":
            self.machine.console_write(data, "semihosting", stderr=value == 2)
            return 0
        if kind != "file":
            self.errno = errno.EBADF
            return length
        try:
            return length - os.write(value, data)
        except OSError as exc:  # e.g. EBADF: a handle opened for reading
            self.errno = exc.errno or errno.EIO
            return length

    def _read(self, p):
        fd, buffer, length = self._args(p, 3)
        kind, value = self.handles.get(fd, (None, None))
        if kind is None:
            self.errno = errno.EBADF
            return length
        self._check_writable(buffer, length, result=length)  # (flash too: a store there would fail)
        if kind == "features":
            data = FEATURES[value: value + length]
            self.handles[fd] = ("features", value + len(data))
        elif kind == "tt":
            data = self.machine.read_stdin(length)[:length]
        else:
            try:
                data = os.read(value, length)
            except OSError as exc:  # e.g. EBADF: a handle opened for writing
                self.errno = exc.errno or errno.EIO
                return length
        self.machine.uc.mem_write(buffer, data)
        return length - len(data)

    def _readc(self, p):
        data = self.machine.read_stdin(1)
        return data[0] if data else -1

    def _iserror(self, p):
        return 1 if self._word(p) & 0x80000000 else 0

    def _istty(self, p):
        return 1 if self.handles.get(self._word(p), (None,))[0] == "tt" else 0

    def _seek(self, p):
        fd, position = self._args(p, 2)
        kind, value = self.handles.get(fd, (None, None))
        if kind == "features":
            self.handles[fd] = ("features", position)
            return 0
        if kind != "file":
            self.errno = errno.EBADF
            return -1
        os.lseek(value, position, os.SEEK_SET)
        return 0

    def _flen(self, p):
        kind, value = self.handles.get(self._word(p), (None, None))
        if kind is None:
            self.errno = errno.EBADF
            return -1
        if kind != "file":
            return len(FEATURES) if kind == "features" else 0
        return os.fstat(value).st_size

    def _tmpnam(self, p):
        buffer, identifier, length = self._args(p, 3)
        name = f"mcusim-tmp-{identifier & 0xFF:03d}".encode() + b"\0"
        if len(name) > length:
            self.errno = errno.EINVAL
            return -1
        self._store(buffer, name)
        return 0

    def _remove(self, p):
        name_ptr, length = self._args(p, 2)
        name = self._name(name_ptr, length)
        if self.host is None:
            return self._refuse(f"SYS_REMOVE of host file '{name}'")
        self.host.remove(name)
        return 0

    def _rename(self, p):
        old_ptr, old_len, new_ptr, new_len = self._args(p, 4)
        old, new = self._name(old_ptr, old_len), self._name(new_ptr, new_len)
        if self.host is None:
            return self._refuse(f"SYS_RENAME of host file '{old}' to '{new}'")
        self.host.rename(old, new)
        return 0

    def _clock(self, p):
        return int(self.machine.simulated_seconds() * 100)  # centiseconds since start

    def _time(self, p):
        """Seconds since the epoch: the host's clock when the run started plus simulated time."""
        return int(self.started_wall + self.machine.simulated_seconds())

    def _system(self, p):
        """Only with a root and the user's leave (host_root.py); the command's output joins the
        firmware's stdout, and a command past the time limit is killed (-1, ETIMEDOUT)."""
        command_ptr, length = self._args(p, 2)
        command = self._name(command_ptr, length)
        if self.host is None or not self.host.allow_system:
            needed = "--semihosting-system" if self.host else "--semihosting-root DIR and --semihosting-system"
            self._warn("system-off", f"semihosting: refused SYS_SYSTEM of '{command}': SYS_SYSTEM is off (pass "
                                     f"{needed} to run programs inside DIR)")
            self.errno = errno.EACCES
            return -1
        code, output = self.host.system(command, give_up=self.machine.host_wait_over)
        self.machine.console_write(output, "semihosting")
        if code is None and self.machine.host_wait_over():  # (the run ends: its exit says why)
            self._warn(f"system-stopped:{command}", f"semihosting: SYS_SYSTEM '{command}' was killed: the run "
                                                    f"is ending")
            self.errno = errno.EINTR
            return -1
        if code is None:
            self._warn(f"system-timeout:{command}", f"semihosting: SYS_SYSTEM '{command}' ran past "
                                                    f"{self.host.system_timeout:g} s and was killed")
            self.errno = errno.ETIMEDOUT
            return -1
        self._warn(f"system:{command}", f"semihosting: ran '{command}' in {self.root} (exit code {code})")
        return code

    def _cmdline(self, p):
        """The command line and its length. A buffer too small for it and its NUL gets the error
        return (-1: "not successful" in the spec's SYS_GET_CMDLINE) with nothing written and
        errno E2BIG, as QEMU answers it; newlib's crt0 then sees an empty line (argc 0)."""
        buffer, length = self._args(p, 2)
        data = self.cmdline.encode() + b"\0"
        if len(data) > length:
            self._warn("cmdline-small", f"semihosting: SYS_GET_CMDLINE buffer of {length} bytes is too small for "
                                        f"the {len(data)}-byte command line; the call fails")
            self.errno = errno.E2BIG
            return -1
        self._check_writable(p + 4, 4)
        self._store(buffer, data)
        self.machine.uc.mem_write(p + 4, (len(data) - 1).to_bytes(4, "little"))
        return 0

    def _heapinfo(self, p):
        block = self._word(p)
        self._check_writable(block, 16)
        m = self.machine
        words = heap_info(m.board, m.image.segments, m.initial_sp)
        self._store(block, b"".join(word.to_bytes(4, "little") for word in words))
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
        self._store(p, (ticks & 0xFFFFFFFFFFFFFFFF).to_bytes(8, "little"))
        return 0

    def close(self):
        for kind, value in self.handles.values():
            if kind == "file":
                os.close(value)
        self.handles.clear()
