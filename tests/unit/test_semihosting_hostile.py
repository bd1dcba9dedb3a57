"""Semihosting under hostile firmware: calls driven straight into a real machine's memory map.

What a user relies on: firmware reaches no host file outside --semihosting-root, runs no host
program unless allowed, and whatever pointers, lengths and names it passes, each call ends
with an error return to the firmware (as under a debugger), never an exception out of mcusim.
"""
import errno
import io
import json
import os
import shutil
import struct
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mcusim
from elfgen import HOSTFILE_BLOCK, program
from mcusim.cli import main
from mcusim.machine import semihosting as S
from mcusim.machine.machine import Kept

BLOCK, NAME, NAME2, BUFFER = 0x20001000, 0x20001100, 0x20001200, 0x20002000
MEMORY_END = 0x22000000  # mps2-an386: the end of PSRAM, unmapped after it
UNMAPPED, PERIPHERAL = 0x90000000, 0x40000000
STDIN, STDOUT = 3, 4  # the first two handles opened
OPERATION_NAMES = {getattr(S, name): name for name in dir(S) if name.startswith("SYS_")}


@pytest.fixture(scope="module")
def image(tmp_path_factory):
    path = tmp_path_factory.mktemp("elf") / "exit7.elf"
    path.write_bytes(program("exit7"))
    return path


def machine(image, board="mps2-an386", **options):
    return mcusim.Simulator(image, board, **options).machine


@pytest.fixture(scope="module")
def shared(image):
    """One machine for the many small cases; `fresh` gives each its own semihosting state."""
    return machine(image)


def fresh(m, root=None, system=False):
    m.semihosting = S.Semihosting(m, root, "fw", system=system)
    m.warnings.clear()
    m.outputs.stdout = Kept()
    return m


def call(m, operation, *words):
    m.uc.mem_write(BLOCK, struct.pack(f"<{len(words)}I", *words))
    return m.semihosting.call(operation, BLOCK)


def put_name(m, text: bytes, at=NAME):
    m.uc.mem_write(at, text + b"\0")
    return at, len(text)


def open_file(m, text: bytes, mode: int) -> int:
    at, length = put_name(m, text)
    return call(m, S.SYS_OPEN, at, mode, length)


def write_file(m, handle, data: bytes) -> int:
    m.uc.mem_write(BUFFER, data)
    return call(m, S.SYS_WRITE, handle, BUFFER, len(data))


def system(m, command: bytes) -> int:
    at, length = put_name(m, command)
    return call(m, S.SYS_SYSTEM, at, length)


def errno_of(m) -> int:
    return m.semihosting.call(S.SYS_ERRNO, 0)


def script(path: Path, text: str) -> Path:
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(0o755)
    return path


# 1. SYS_SYSTEM and the root ----------------------------------------------------------------------
def test_system_runs_nothing_without_the_semihosting_system_flag(image, tmp_path):
    script(tmp_path / "tool.sh", "touch ran\n")
    m = machine(image, semihosting_root=tmp_path)
    assert system(m, b"tool.sh") == -1
    assert system(m, b"tool.sh") == -1
    assert errno_of(m) == errno.EACCES
    assert not (tmp_path / "ran").exists()
    assert len([w for w in m.warnings if "--semihosting-system" in w]) == 1  # one warning, not one per call
    assert not any("--semihosting-root" in w for w in m.warnings)  # (given already: only the flag is missing)


def test_without_a_root_the_refusals_name_the_root_option(image):
    m = machine(image)
    assert system(m, b"tool.sh") == -1 and open_file(m, b"data.bin", 0) == -1
    assert any("--semihosting-root DIR and --semihosting-system" in w for w in m.warnings)
    assert any("host files are off; pass --semihosting-root" in w for w in m.warnings)


@pytest.mark.parametrize("run_as", [b"tool.sh", b"./tool.sh", b"renamed.sh"])
def test_system_refuses_a_program_the_firmware_rewrote(image, tmp_path, run_as):
    script(tmp_path / "tool.sh", "exit 0\n")  # the user's program, executable
    m = machine(image, semihosting_root=tmp_path, semihosting_system=True)
    handle = open_file(m, b"tool.sh", 4)  # "w": truncates, the execute bit stays
    assert write_file(m, handle, b"#!/bin/sh\ntouch pwned\n") == 0
    assert call(m, S.SYS_CLOSE, handle) == 0
    if run_as == b"renamed.sh":
        old, old_len = put_name(m, b"tool.sh")
        new, new_len = put_name(m, b"renamed.sh", NAME2)
        assert call(m, S.SYS_RENAME, old, old_len, new, new_len) == 0
    assert system(m, run_as) == -1
    assert errno_of(m) == errno.EACCES
    assert not (tmp_path / "pwned").exists()


def test_system_refuses_a_command_naming_a_file_the_firmware_wrote(image, tmp_path):
    script(tmp_path / "runner", 'exec /bin/sh "$1"\n')
    m = machine(image, semihosting_root=tmp_path, semihosting_system=True)
    handle = open_file(m, b"payload", 6)
    write_file(m, handle, b"touch pwned\n")
    call(m, S.SYS_CLOSE, handle)
    for command in (b"runner payload", b"runner ./payload"):
        assert system(m, command) == -1
    assert not (tmp_path / "pwned").exists()


def test_system_output_joins_the_firmware_stdout_and_runs_in_the_root(image, tmp_path, capfd):
    script(tmp_path / "where.sh", 'echo "in $PWD"\necho oops >&2\nexit 3\n')
    m = machine(image, semihosting_root=tmp_path, semihosting_system=True)
    assert system(m, b"where.sh") == 3
    assert bytes(m.outputs.stdout) == f"in {tmp_path.resolve()}\noops\n".encode()
    assert capfd.readouterr().out == ""  # not straight to the terminal


def _dead(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return True
    return state in ("Z", "X")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_system_is_killed_at_its_time_limit_with_what_it_started(image, tmp_path):
    script(tmp_path / "hang.sh", "sleep 30 &\necho $! > bg.pid\necho started\nsleep 30\n")
    m = machine(image, semihosting_root=tmp_path, semihosting_system=True)
    m.semihosting.host.system_timeout = 0.5
    started = time.monotonic()
    assert system(m, b"hang.sh") == -1
    assert time.monotonic() - started < 5
    assert errno_of(m) == errno.ETIMEDOUT
    assert b"started" in m.outputs.stdout
    background = int((tmp_path / "bg.pid").read_text())
    deadline = time.monotonic() + 3
    while not _dead(background) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _dead(background)


def test_semihosting_system_needs_a_root_and_is_recorded(image, tmp_path):
    with pytest.raises(ValueError, match="root"):
        mcusim.Simulator(image, "mps2-an386", semihosting_system=True)
    done = CliRunner().invoke(main, ["run", str(image), "--board", "mps2-an386", "--semihosting-system"])
    assert done.exit_code == 2 and "--semihosting-root" in done.output
    result = mcusim.run(image, "mps2-an386", semihosting_root=tmp_path, semihosting_system=True)
    assert result.to_dict()["settings"]["semihosting_system"] is True
    assert mcusim.run(image, "mps2-an386").to_dict()["settings"]["semihosting_system"] is False


def test_symlinks_in_the_root_are_not_followed(image, tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("keep")
    (root / "data.txt").write_text("inside")
    (root / "out").symlink_to(outside / "secret.txt")
    (root / "dir").symlink_to(outside)
    (root / "alias").symlink_to(root / "data.txt")
    m = machine(image, semihosting_root=root)
    for name in (b"out", b"dir/secret.txt", b"dir/new.txt", b"alias"):
        assert open_file(m, name, 4) == -1, name
        assert errno_of(m) in (errno.ELOOP, errno.ENOTDIR)
    assert (outside / "secret.txt").read_text() == "keep"
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    assert (root / "data.txt").read_text() == "inside"


_before_open: list = []  # (name suffixes, action): run once, just before the next open of such a name


def _audit(event, args):
    if event == "open" and _before_open and isinstance(args[0], (str, bytes, os.PathLike)):
        suffixes, action = _before_open[0]
        if os.fsdecode(args[0]).endswith(suffixes):
            _before_open.clear()
            action()


sys.addaudithook(_audit)  # (hooks stay for the process: idle unless a test arms _before_open)


@pytest.mark.parametrize("name,swapped", [("data.txt", "data.txt"), ("sub/data.txt", "sub")])
def test_a_symlink_swapped_in_just_before_the_open_is_not_followed(image, tmp_path, name, swapped):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "data.txt").write_text("")
    (root / "sub" / "data.txt").write_text("")
    (outside / "data.txt").write_text("keep")
    m = machine(image, semihosting_root=root)

    def swap():  # what checked out as a file or folder inside the root now leads outside
        target = root / swapped
        if target.is_dir():
            shutil.rmtree(target)
            target.symlink_to(outside)
        else:
            target.unlink()
            target.symlink_to(outside / "data.txt")

    _before_open.append(((swapped, name), swap))
    try:
        handle = open_file(m, name.encode(), 8)  # "a": append
    finally:
        armed = bool(_before_open)
        _before_open.clear()
    assert not armed  # the swap happened
    if handle != -1:
        write_file(m, handle, b"x")
        call(m, S.SYS_CLOSE, handle)
    assert (outside / "data.txt").read_text() == "keep"


def test_only_regular_files_open_and_a_fifo_cannot_block_the_run(image, tmp_path):
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "sub").mkdir()
    m = machine(image, semihosting_root=tmp_path)
    results = []
    opener = threading.Thread(target=lambda: results.extend(open_file(m, name, mode) for name, mode in
                                                              ((b"pipe", 0), (b"pipe", 4), (b"sub", 0))))
    opener.start()
    opener.join(5)
    if opener.is_alive():  # release the blocked open before failing
        os.close(os.open(tmp_path / "pipe", os.O_RDWR | os.O_NONBLOCK))
        opener.join(5)
        pytest.fail("opening a FIFO in the semihosting root blocked")
    assert results == [-1, -1, -1]


# 2. names ------------------------------------------------------------------------------------------
BAD_NAMES = [b"bad\xff.txt", b"a\x00b.txt", b"\xed\xa0\x80.txt", b"caf\xe9"]


@pytest.mark.parametrize("bad", BAD_NAMES)
@pytest.mark.parametrize("operation", ["open", "remove", "rename-to", "rename-from", "system"])
def test_names_that_are_not_utf8_or_hold_a_nul_are_refused_untranslated(shared, tmp_path, bad, operation):
    (tmp_path / "keep.txt").write_text("keep")
    m = fresh(shared, tmp_path, system=True)
    name, length = put_name(m, bad)
    keep, keep_len = put_name(m, b"keep.txt", NAME2)
    words = {"open": (S.SYS_OPEN, name, 4, length), "remove": (S.SYS_REMOVE, name, length),
             "rename-to": (S.SYS_RENAME, keep, keep_len, name, length),
             "rename-from": (S.SYS_RENAME, name, length, keep, keep_len),
             "system": (S.SYS_SYSTEM, name, length)}[operation]
    assert call(m, *words) == -1
    assert errno_of(m) == errno.EINVAL
    assert os.listdir(tmp_path) == ["keep.txt"]
    assert (tmp_path / "keep.txt").read_text() == "keep"


# 3. pointers and lengths -------------------------------------------------------------------------
BLOCK_OPERATIONS = [S.SYS_OPEN, S.SYS_CLOSE, S.SYS_WRITE, S.SYS_READ, S.SYS_ISERROR,
                    S.SYS_ISTTY, S.SYS_SEEK, S.SYS_FLEN, S.SYS_TMPNAM, S.SYS_REMOVE, S.SYS_RENAME, S.SYS_SYSTEM,
                    S.SYS_GET_CMDLINE, S.SYS_HEAPINFO, S.SYS_EXIT_EXTENDED, S.SYS_ELAPSED]


@pytest.mark.parametrize("parameter", [UNMAPPED, PERIPHERAL, MEMORY_END - 2, 0xFFFFFFFE])
@pytest.mark.parametrize("operation", BLOCK_OPERATIONS, ids=lambda op: OPERATION_NAMES[op])
def test_a_parameter_block_outside_memory_fails_with_efault(shared, tmp_path, operation, parameter):
    m = fresh(shared, tmp_path, system=True)
    assert m.semihosting.call(operation, parameter) == -1
    assert errno_of(m) == errno.EFAULT
    assert any("EFAULT" in w for w in m.warnings)


POINTER_CASES = [
    (S.SYS_OPEN, (UNMAPPED, 0, 4), -1),
    (S.SYS_OPEN, (NAME, 0, 0xFFFFFFFF), -1),
    (S.SYS_WRITE, (STDOUT, UNMAPPED, 16), 16),
    (S.SYS_WRITE, (STDOUT, BUFFER, 0xFFFFFFFF), 0xFFFFFFFF),
    (S.SYS_WRITE, (STDOUT, MEMORY_END - 8, 16), 16),
    (S.SYS_READ, (STDIN, UNMAPPED, 16), 16),
    (S.SYS_READ, (STDIN, BUFFER, 0xFFFFFFFF), 0xFFFFFFFF),
    (S.SYS_SYSTEM, (UNMAPPED, 4), -1),
    (S.SYS_GET_CMDLINE, (UNMAPPED, 256), -1),
    (S.SYS_HEAPINFO, (UNMAPPED,), -1),
    (S.SYS_HEAPINFO, (MEMORY_END - 8,), -1),
    (S.SYS_REMOVE, (UNMAPPED, 4), -1),
    (S.SYS_RENAME, (NAME, 4, UNMAPPED, 4), -1),
    (S.SYS_TMPNAM, (UNMAPPED, 1, 64), -1),
]


@pytest.mark.parametrize("operation,words,result", POINTER_CASES, ids=[OPERATION_NAMES[c[0]] for c in POINTER_CASES])
def test_pointers_and_lengths_outside_memory_fail_with_efault(shared, tmp_path, operation, words, result):
    m = fresh(shared, tmp_path, system=True)
    assert open_file(m, b":tt", 0) == STDIN
    assert open_file(m, b":tt", 4) == STDOUT
    put_name(m, b"name")
    assert call(m, operation, *words) == result
    assert errno_of(m) in (errno.EFAULT, errno.ENAMETOOLONG)
    assert m.outputs.stdout == b""
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("operation,at", [(S.SYS_WRITEC, UNMAPPED), (S.SYS_WRITEC, PERIPHERAL),
                                          (S.SYS_WRITE0, UNMAPPED), (S.SYS_WRITE0, 0xFFFFFFFF),
                                          (S.SYS_WRITE0, MEMORY_END - 4), (S.SYS_ELAPSED, MEMORY_END - 4)])
def test_direct_pointers_outside_memory_fail_with_efault(shared, operation, at):
    m = fresh(shared)
    m.uc.mem_write(MEMORY_END - 4, b"abcd")  # no NUL before the end of memory
    assert m.semihosting.call(operation, at) == -1
    assert errno_of(m) == errno.EFAULT
    assert m.outputs.stdout == b""


def test_write0_reads_only_up_to_the_nul_and_writes_the_bytes_untranslated(shared):
    m = fresh(shared)
    m.uc.mem_write(MEMORY_END - 4, b"hi\xff\0")  # the last bytes of memory
    assert m.semihosting.call(S.SYS_WRITE0, MEMORY_END - 4) == 0
    assert bytes(m.outputs.stdout) == b"hi\xff"


def test_an_error_inside_a_call_becomes_an_error_return_and_a_warning(image, monkeypatch):
    def broken(*args):
        raise RuntimeError("boom")

    monkeypatch.setattr(S, "heap_info", broken)
    m = machine(image)
    assert call(m, S.SYS_HEAPINFO, BUFFER) == -1
    assert errno_of(m) == errno.EIO
    assert any("RuntimeError: boom" in w for w in m.warnings)


def test_firmware_passing_an_unmapped_name_runs_to_its_end_with_its_bundle(tmp_path):
    image = tmp_path / "badname.elf"
    image.write_bytes(program("hostfile", patch=lambda code: struct.pack_into("<3I", code, HOSTFILE_BLOCK,
                                                                              UNMAPPED, 0, 4)))
    done = CliRunner().invoke(main, ["run", str(image), "--board", "mps2-an386", "--out", str(tmp_path / "out")])
    assert done.exception is None or isinstance(done.exception, SystemExit)
    assert done.exit_code == 255  # SYS_OPEN returned -1, the firmware exits with it
    bundle = json.loads((tmp_path / "out" / "run.json").read_text())
    assert bundle["exit"]["code"] == 255
    assert any("EFAULT" in w for w in bundle["warnings"])


# 4. handles, flash and non-regular files --------------------------------------------------------
def test_read_from_a_write_only_file_and_write_to_a_read_only_one_fail_with_ebadf(image, tmp_path):
    (tmp_path / "in.txt").write_text("abc")
    m = machine(image, semihosting_root=tmp_path)
    out = open_file(m, b"out.txt", 4)
    assert call(m, S.SYS_READ, out, BUFFER, 8) == 8  # nothing read
    assert errno_of(m) == errno.EBADF
    source = open_file(m, b"in.txt", 0)
    assert write_file(m, source, b"xyz") == 3  # nothing written
    assert errno_of(m) == errno.EBADF
    assert (tmp_path / "in.txt").read_text() == "abc"


def test_read_into_flash_is_refused_and_consumes_nothing(tmp_path):
    image = tmp_path / "flash.elf"
    image.write_bytes(program("exit7", flash_base=0x08000000))
    (tmp_path / "data.txt").write_text("hello")
    m = machine(image, "mcu-d", semihosting_root=tmp_path, stdin=io.BytesIO(b"typed"))
    flash = 0x08000100
    before = bytes(m.uc.mem_read(flash, 5))
    handle = open_file(m, b"data.txt", 0)
    stdin = open_file(m, b":tt", 0)
    for source in (handle, stdin):
        assert call(m, S.SYS_READ, source, flash, 5) == 5
        assert errno_of(m) == errno.EFAULT
    assert bytes(m.uc.mem_read(flash, 5)) == before
    assert call(m, S.SYS_READ, handle, BUFFER, 5) == 0
    assert bytes(m.uc.mem_read(BUFFER, 5)) == b"hello"  # from the start: the refused read took nothing
    assert call(m, S.SYS_READ, stdin, BUFFER, 5) == 0
    assert bytes(m.uc.mem_read(BUFFER, 5)) == b"typed"


# fuzz ----------------------------------------------------------------------------------------------
POINTERS = st.one_of(st.sampled_from([0, BLOCK, NAME, NAME2, BUFFER, MEMORY_END - 1, MEMORY_END - 5, MEMORY_END,
                                      PERIPHERAL, UNMAPPED, 0x20400000 - 2, 0xFFFFFFFC, 0xFFFFFFFF]),
                     st.integers(0, 0xFFFFFFFF))


def mostly(usual, other):
    """Draws from strategy `usual` three times in four, else from `other`."""
    return st.sampled_from([usual, usual, usual, other]).flatmap(lambda strategy: strategy)


NAMES = mostly(st.sampled_from([b"ok", b"sub/ok", b"new", b"tool", b"../escape", b"sub/../../escape",
                                b"<tmp>/escape", b"link/escape", b":tt", b"pipe", b"sub", S.FEATURES_FILE.encode(),
                                b"tool ok", b"tool ../escape", b"tool new"]),
               st.binary(max_size=16))
# every operation, and a few there are not; SYS_CLOSE last, or it would close the round's handle first
OPERATIONS = [op for op in sorted(OPERATION_NAMES) if op != S.SYS_CLOSE] + [0x14, 0x17, 0x100, 0xFFFFFFFF, S.SYS_CLOSE]
ROUNDS = st.fixed_dictionaries({
    "parameter": mostly(st.just(BLOCK), POINTERS), "shaped": st.sampled_from([True, True, True, False]),
    "handle": st.integers(2, 7), "pointer": POINTERS, "length": st.one_of(st.integers(0, 64), POINTERS),
    "mode": st.integers(0, 13), "word": st.integers(0, 0xFFFFFFFF), "name": NAMES, "name2": NAMES,
    "words": st.lists(st.one_of(POINTERS, st.integers(0, 16)), max_size=4)})


def block_for(operation, r, name, name2):
    """The round's parameter block for `operation`: shaped as the operation expects (most
    rounds; its pointers and values still at random), else the round's random words."""
    shapes = {S.SYS_OPEN: [NAME, r["mode"], len(name)], S.SYS_REMOVE: [NAME, len(name)],
              S.SYS_SYSTEM: [NAME, len(name)], S.SYS_RENAME: [NAME, len(name), NAME2, len(name2)],
              S.SYS_READ: [r["handle"], r["pointer"], r["length"]], S.SYS_WRITE: [r["handle"], r["pointer"], r["length"]],
              S.SYS_SEEK: [r["handle"], r["word"]], S.SYS_CLOSE: [r["handle"]], S.SYS_FLEN: [r["handle"]],
              S.SYS_ISTTY: [r["handle"]], S.SYS_GET_CMDLINE: [r["pointer"], r["word"] & 0x1FF],
              S.SYS_TMPNAM: [r["pointer"], r["word"], r["length"]], S.SYS_HEAPINFO: [r["pointer"]]}
    return shapes[operation] if r["shaped"] and operation in shapes else r["words"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(rounds=st.lists(ROUNDS, min_size=1, max_size=4))
def test_fuzz_no_exception_escapes_and_nothing_lands_outside_the_root(shared, rounds):
    """Each round makes every call once with the round's parameter block and names: without a
    root, with one, and with one and SYS_SYSTEM allowed."""
    for with_root, allow_system in ((False, False), (True, False), (True, True)):
        m = fresh(shared)
        m.stdin = io.BytesIO(b"typed\n" * 1000)
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder) / "root"
            (root / "sub").mkdir(parents=True)
            (root / "ok").write_text("ok")
            script(root / "tool", "echo tool\n")
            os.mkfifo(root / "pipe")
            (root / "link").symlink_to(folder)
            here = os.getcwd()
            os.chdir(folder)  # a name opened relative to the current folder would land here, outside the root
            sh = m.semihosting = S.Semihosting(m, root if with_root else None, "fw", system=allow_system)
            if sh.host:
                sh.host.system_timeout = 2
            for text, mode in ((b":tt", 0), (S.FEATURES_FILE.encode(), 0), (b"ok", 2)):  # handles 3, 4 and 5
                open_file(m, text, mode)
            try:
                for r in rounds:
                    name, name2 = (r[key].replace(b"<tmp>", os.fsencode(folder)) for key in ("name", "name2"))
                    for operation in OPERATIONS:
                        m.outputs.stdout = Kept()
                        m.uc.mem_write(NAME, name + b"\0")
                        m.uc.mem_write(NAME2, name2 + b"\0")
                        words = block_for(operation, r, name, name2)
                        m.uc.mem_write(BLOCK, struct.pack(f"<{len(words)}I", *words))
                        try:
                            result = sh.call(operation, r["parameter"])
                        except S.SemihostingExit:
                            continue
                        assert isinstance(result, int)
            finally:
                sh.close()
                os.chdir(here)
                m.stdin = None
            assert sorted(os.listdir(folder)) == ["root"]
            assert not [w for w in m.warnings if "inside mcusim" in w]  # no error the handlers did not foresee
