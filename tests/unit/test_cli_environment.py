"""`mcusim run` in a careless or hostile environment: closed or failing standard streams, an
--out that cannot be written, a reused bundle directory, a directory as FIRMWARE, a clock above
the part's maximum, a read-only install (numba's cache). Real processes only where the
behaviour needs one (closed descriptors, a broken pipe, file permissions)."""
import ctypes
import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import mcusim
from elfgen import PF_R, PF_W, PF_X, elf32_arm, program
from mcusim.cli import main

# Thumb code at 0x40 (arm-none-eabi-as; source beside each):
# movs r0,#7; movs r1,#0; bkpt 0xab (SYS_READC); r1=0x20000000; str r0,[r1,#4];
# ldr r2,=0x20026; str r2,[r1]; movs r0,#0x20; bkpt 0xab (SYS_EXIT_EXTENDED: the byte, 255 at EOF)
READC = bytes.fromhex("07200021abbe4ff000514860024a0a602020abbefee7000026000200")
# movs r4,#64; loop: movs r0,#4; r1=0x20000000; bkpt 0xab (SYS_WRITE0); subs r4,#1; bne loop;
# movs r0,#0x18; ldr r1,=0x20026; bkpt 0xab (SYS_EXIT, application exit)
CHATTY = bytes.fromhex("402404204ff00051abbe013cf9d118200149abbefee7000026000200")
CHATTY_TEXT = (b"x" * 63 + b"\n") * 256  # written 64 times: 1 MB, far more than a pipe holds
BOARD = "mps2-an386"


def image(code: bytes, data: bytes = b"") -> bytes:
    vectors = struct.pack("<16I", 0x20010000, 0x41, *[0] * 14)
    segments = [(0, vectors + code, PF_R | PF_X)] + ([(0x20000000, data, PF_R | PF_W)] if data else [])
    return elf32_arm(segments, entry=0x41)


@pytest.fixture
def elfs(tmp_path):
    paths = {"readc": image(READC), "chatty": image(CHATTY, CHATTY_TEXT + b"\0"), "exit7": program("exit7")}
    for name, data in paths.items():
        (tmp_path / f"{name}.elf").write_bytes(data)
    return {name: tmp_path / f"{name}.elf" for name in paths}


def process(*args, **options):
    """`mcusim run ARGS` as a process (preexec_fn closes descriptors in it)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run([sys.executable, "-m", "mcusim.cli", "run", *map(str, args)], env=env, **options)


def run(*args, input=None):
    return CliRunner().invoke(main, ["run", *map(str, args)], input=input)


# Standard streams (item 7)

def test_closed_stdin_reads_as_end_of_file(elfs):
    done = process(elfs["readc"], "--board", BOARD, preexec_fn=lambda: os.close(0), capture_output=True, text=True)
    assert "Traceback" not in done.stderr
    assert done.returncode == 255, done.stderr  # SYS_READC answered -1: end of file


def test_stdin_feeds_the_firmware(elfs):
    assert run(elfs["readc"], "--board", BOARD, input="A").exit_code == ord("A")


def test_closed_stdout_is_reported_once_and_the_run_goes_on(elfs, tmp_path):
    done = process(elfs["chatty"], "--board", BOARD, "--out", tmp_path / "b", preexec_fn=lambda: os.close(1),
                   stderr=subprocess.PIPE, text=True)
    assert "Traceback" not in done.stderr
    assert done.stderr.count("cannot write the firmware's output to stdout") == 1, done.stderr
    assert done.returncode == 74
    bundle = json.loads((tmp_path / "b" / "run.json").read_text())
    assert bundle["exit"]["code"] == 0 and bundle["stdout"] == (CHATTY_TEXT * 64).decode()


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_full_stdout_is_reported_once(elfs):
    with open("/dev/full", "wb") as full:
        done = process(elfs["chatty"], "--board", BOARD, stdout=full, stderr=subprocess.PIPE, text=True)
    assert "Traceback" not in done.stderr
    assert done.stderr.count("cannot write the firmware's output to stdout (No space left on device)") == 1
    assert "exit: semihosting exit (application exit) -> exit code 0" in done.stderr  # (the run finished)
    assert done.returncode == 74


def test_broken_pipe_finishes_the_run_and_writes_the_bundle(elfs, tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    child = subprocess.Popen([sys.executable, "-m", "mcusim.cli", "run", str(elfs["chatty"]), "--board", BOARD,
                              "--out", str(tmp_path / "b")], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert child.stdout.read(1) == b"x"  # `| head -c 1`
    child.stdout.close()
    stderr = child.stderr.read().decode()
    assert child.wait(timeout=120) == 0, stderr
    assert "Traceback" not in stderr and "Exception ignored" not in stderr
    assert stderr.count("stdout was closed by its reader (broken pipe)") == 1
    assert "exit code 0" in stderr and f"bundle: {tmp_path / 'b'}/run.json" in stderr
    assert json.loads((tmp_path / "b" / "run.json").read_text())["stdout"] == (CHATTY_TEXT * 64).decode()


# --out checked before the run (item 9)

@pytest.mark.parametrize("where", ["file/bundle", "/proc/mcusim-bundle"])
def test_unwritable_out_is_a_usage_error_before_the_run(elfs, tmp_path, where):
    (tmp_path / "file").write_text("a file, not a directory")
    if where.startswith("/proc") and not os.path.isdir("/proc/self"):
        pytest.skip("no /proc")
    out = where if where.startswith("/") else tmp_path / where
    done = run(elfs["chatty"], "--board", BOARD, "--out", out)
    assert done.exit_code == 2
    assert f"{out}: cannot write a bundle there" in done.stderr
    assert done.stdout == ""  # (the firmware never ran)


def test_out_is_created_before_the_run(elfs, tmp_path):
    done = run(elfs["exit7"], "--board", BOARD, "--out", tmp_path / "new" / "bundle")
    assert done.exit_code == 7
    assert sorted(p.name for p in (tmp_path / "new" / "bundle").iterdir()) == ["run.json"]


# A reused bundle directory (item 15)

def test_reused_out_removes_the_earlier_runs_artifacts_only(elfs, tmp_path):
    out = tmp_path / "b"
    assert run(elfs["exit7"], "--board", BOARD, "--out", out, "--perfetto", "--swo").exit_code == 7
    assert {"timeline.json", "trace.swo"} <= {p.name for p in out.iterdir()}
    (out / "notes.txt").write_text("mine")
    (out / "report.html").write_text("<html>the earlier run</html>")
    done = run(elfs["exit7"], "--board", BOARD, "--out", out, "--swo")
    assert done.exit_code == 7
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "run.json", "trace.swo"]
    assert "removed timeline.json, report.html from" in done.stderr


# FIRMWARE that is not a file (item 15)

def test_directory_as_firmware_is_bad_input_like_a_missing_file(tmp_path):
    done = run(tmp_path, "--board", BOARD)
    assert done.exit_code == 3
    assert f"{tmp_path}: is a directory, not an ELF file" in done.stderr
    assert run(tmp_path / "missing.elf", "--board", BOARD).exit_code == 3


# --clock-hz above the part's maximum (item 15)

def test_clock_above_the_parts_maximum_is_warned_about(elfs):
    done = run(elfs["exit7"], "--board", "mcu-s", "--clock-hz", "128000000")
    assert done.exit_code == 7
    assert "--clock-hz 128 MHz is above the nRF52840's maximum core clock, 64 MHz" in done.stderr
    assert "maximum core clock" not in run(elfs["exit7"], "--board", "mcu-s", "--clock-hz", "64000000").stderr


# A read-only install (item 8)

def _drop_file_permission_override():
    """In the child: root, too, obeys file permissions (drop CAP_DAC_OVERRIDE and
    CAP_DAC_READ_SEARCH from the bounding set, which exec makes the effective set)."""
    if os.geteuid() == 0:
        libc = ctypes.CDLL(None, use_errno=True)
        for capability in (1, 2):
            if libc.prctl(24, capability, 0, 0, 0) != 0:  # PR_CAPBSET_DROP
                os._exit(99)


@pytest.fixture
def read_only_install(tmp_path):
    """A copy of the package that nobody can write (no __pycache__ to cache in), with a HOME that
    cannot be written either (no ~/.cache/numba) and no NUMBA_CACHE_DIR."""
    if not sys.platform.startswith("linux"):
        pytest.skip("needs Linux (prctl)")
    package = Path(mcusim.__file__).parent
    root = tmp_path / "install"
    shutil.copytree(package, root / "src" / "mcusim", ignore=shutil.ignore_patterns("__pycache__"))
    for data in ("boards", "cores", "powermodels"):  # (the data folders, found beside src/)
        if (package.parent.parent / data).is_dir():
            (root / data).symlink_to(package.parent.parent / data)
    (root / "home").mkdir()
    temp = tmp_path / "tmp"
    temp.mkdir()
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode & ~0o222)
    env = {key: value for key, value in os.environ.items() if key not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    env.update(HOME=str(root / "home"), PYTHONPATH=str(root / "src"), TMPDIR=str(temp))
    yield env, temp
    for path in [root, *root.rglob("*")]:
        if not path.is_symlink():
            path.chmod(path.stat().st_mode | 0o200)


def test_read_only_install_prints_help_with_one_warning(read_only_install):
    env, temp = read_only_install
    done = subprocess.run([sys.executable, "-m", "mcusim.cli", "run", "--help"], env=env, capture_output=True,
                          text=True, preexec_fn=_drop_file_permission_override, cwd=temp)
    assert done.returncode == 0, done.stderr
    assert "Run FIRMWARE" in done.stdout
    assert done.stderr.count("mcusim: warning: numba cannot write its cache") == 1, done.stderr
    assert f"caching compiled code in {temp}" in done.stderr


@pytest.mark.slow
def test_read_only_install_runs_firmware(read_only_install, elfs):
    env, temp = read_only_install
    done = subprocess.run([sys.executable, "-m", "mcusim.cli", "run", str(elfs["exit7"]), "--board", BOARD],
                          env=env, capture_output=True, text=True, preexec_fn=_drop_file_permission_override,
                          cwd=temp)
    assert done.returncode == 7, done.stderr
    assert done.stderr.count("numba cannot write its cache") == 1


def test_no_writable_directory_at_all_compiles_without_a_cache(monkeypatch, capsys):
    from mcusim.machine import numba_cache

    monkeypatch.delenv("NUMBA_CACHE_DIR", raising=False)
    monkeypatch.setattr(numba_cache, "_writable", lambda directory: False)
    monkeypatch.setattr(numba_cache.tempfile, "gettempdir", lambda: (_ for _ in ()).throw(FileNotFoundError()))
    assert numba_cache.choose(numba_cache.__file__) is False
    assert capsys.readouterr().err.count("compiling without a cache") == 1
    assert "NUMBA_CACHE_DIR" not in os.environ


# --trace-limit: memory follows the records kept, not the limit (item 11)

def test_huge_trace_limit_reserves_nothing_up_front(elfs):
    from mcusim import Simulator
    from mcusim.analysis.branch_trace import TraceWindow

    sim = Simulator(elfs["exit7"], BOARD, branch_trace=TraceWindow(limit=10**10))  # 160 GB of records
    assert sim.machine.state.buffer.nbytes < 64 << 20
    result = sim.run()
    assert result.exit_code == 7 and len(result.branch_trace) > 0 and result.branch_trace_dropped == 0


def test_trace_moved_out_of_a_small_table_is_the_whole_trace(tmp_path, monkeypatch):
    from mcusim import Simulator
    from mcusim.analysis.branch_trace import BranchTraceCapture, TraceWindow

    (tmp_path / "count.elf").write_bytes(program("count"))

    def trace(limit):
        result = Simulator(tmp_path / "count.elf", BOARD, max_cycles=20_000, branch_trace=TraceWindow(limit)).run()
        return result.branch_trace, result.branch_trace_dropped

    whole, dropped = trace(10**6)
    assert dropped == 0 and len(whole) > 5000
    monkeypatch.setattr(BranchTraceCapture, "CHUNK", 16)  # the table fills every few blocks
    chunked, dropped = trace(10**6)
    assert dropped == 0 and (chunked == whole).all() and len(chunked) == len(whole)
    first, dropped = trace(100)
    assert len(first) == 100 and (first == whole[:100]).all() and dropped == len(whole) - 100


def test_python_dash_m_mcusim_is_the_mcusim_command(tmp_path, elfs):
    """Where the `mcusim` script is not on PATH, `python -m mcusim` runs the same command line."""
    done = subprocess.run([sys.executable, "-m", "mcusim", "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Usage: python -m mcusim" in done.stdout and "run" in done.stdout
    done = subprocess.run([sys.executable, "-m", "mcusim", "run", str(elfs["exit7"]), "--board", BOARD,
                           "--out", str(tmp_path / "bundle")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 7, done.stderr
    assert (tmp_path / "bundle" / "run.json").is_file()
