"""Inputs that claim more than they hold, or are not what they claim: a firmware segment as
large as the file, bundle artifacts that are FIFOs or devices, option values out of range,
semihosting names with a trailing NUL, a fitted power model out of range. Each is refused
with a clear message, within a bounded memory and time, never with a traceback."""
import errno
import hashlib
import json
import os
import struct
import threading
import time
import tracemalloc
import warnings

import click
import numpy as np
import pytest
from click.testing import CliRunner

from elfgen import elf32_arm, program
from mcusim import examples
from mcusim.analysis.branch_trace import HEADER, MAGIC, RECORD, VERSION, read
from mcusim.analysis.bundle import BundleError, load, pc_samples, timeline_slices
from mcusim.api import Simulator
from mcusim.cli import main
from mcusim.elf import ElfError, ElfImage
from mcusim.machine import semihosting as S
from mcusim.power.plots import read_trace


def sparse_elf(path, claim: int) -> None:
    """A bootable mcu-m image whose second segment claims `claim` file bytes for RAM at
    0x20000000: the file is made that long, sparse, so the headers are all true."""
    small = program("exit7", flash_base=0x08000000)
    _, code_offset, _, _, code_size = struct.unpack_from("<5I", small, struct.unpack_from("<I", small, 28)[0])
    image = bytearray(elf32_arm([(0x08000000, small[code_offset:code_offset + code_size], 5),
                                 (0x20000000, b"", 6)]))
    struct.pack_into("<8I", image, 52 + 32, 1, 0x10000, 0x20000000, 0x20000000, claim, claim, 6, 4)
    with open(path, "wb") as f:
        f.write(image)
        f.truncate(0x10000 + claim)


def test_a_segment_as_large_as_its_file_is_refused_without_reading_it(tmp_path):
    path = tmp_path / "big.elf"
    sparse_elf(path, 512 << 20)
    started = time.perf_counter()
    tracemalloc.start()
    try:
        with pytest.raises(ElfError, match="more than the board.s whole memory"):
            Simulator(path, "mcu-m")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 << 20, f"refusing a 512 MB segment took {peak:,} bytes"
    assert time.perf_counter() - started < 5


def test_segments_are_the_files_bytes_and_the_hash_is_the_files(tmp_path):
    image = program("exit7")
    path = tmp_path / "fw.elf"
    path.write_bytes(image)
    loaded = ElfImage.load(path)
    assert loaded.sha256 == hashlib.sha256(image).hexdigest()
    offset = struct.unpack_from("<I", image, 28)[0]
    p_offset, _, _, filesz = struct.unpack_from("<8I", image, offset)[1:5]
    assert bytes(loaded.segments[0].data) == image[p_offset:p_offset + filesz]


# --- bundle artifacts: regular files only, and branches.bin only as long as its header says ---

def within(call, seconds=10):
    """call() in a thread: one that blocks (a FIFO opened for reading) fails the test, not hangs it."""
    outcome = {}

    def target():
        try:
            outcome["value"] = call()
        except BaseException as exc:  # noqa: BLE001 (handed to the test)
            outcome["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), "blocked"
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


def cli(*args):
    """`mcusim ARGS` in this process: the result, with no exception but SystemExit let through."""
    result = CliRunner().invoke(main, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result


def special(path, kind):
    """Make `path` a FIFO, or a symlink to /dev/zero."""
    if kind == "fifo":
        os.mkfifo(path)
    else:
        path.symlink_to("/dev/zero")


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_branch_trace_that_is_not_a_regular_file_is_a_usage_error(tmp_path, kind):
    (tmp_path / "run.json").write_text("{}")
    special(tmp_path / "branches.bin", kind)
    result = within(lambda: cli("trace", tmp_path))
    assert result.exit_code == 2
    assert f"{tmp_path / 'branches.bin'} is a {'FIFO' if kind == 'fifo' else 'device'}, not a branch trace" \
        in result.output


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="no /dev/zero")
def test_trace_of_dev_zero_is_a_usage_error():
    result = within(lambda: cli("trace", "/dev/zero"))
    assert result.exit_code == 2 and "/dev/zero is a device, not a branch trace" in result.output


def branch_trace(count: int, records: int) -> bytes:
    header = np.zeros(1, HEADER)
    header[0] = (MAGIC, VERSION, 0, count, 0, 1000, bytes(24))
    return header.tobytes() + bytes(records * RECORD.itemsize)


@pytest.mark.parametrize("count, records, message", [
    (1, 100, "1 records announced, but 1,600 bytes follow the header, not 16"),
    (2**60, 3, "truncated: 1,152,921,504,606,846,976 records announced, 3 present"),
])
def test_a_branch_trace_is_read_only_as_long_as_its_header_says(tmp_path, count, records, message):
    path = tmp_path / "branches.bin"
    path.write_bytes(branch_trace(count, records))
    with pytest.raises(ValueError, match=message):
        read(path)
    assert len(read_back(tmp_path, 5).records) == 5


def read_back(where, records):
    path = where / "ok.bin"
    path.write_bytes(branch_trace(records, records))
    return read(path)


def test_an_oversized_branch_trace_is_refused_before_its_records_are_read(tmp_path):
    path = tmp_path / "branches.bin"
    path.write_bytes(branch_trace(1, 0))
    os.truncate(path, 1 << 30)  # 1 GB, sparse
    tracemalloc.start()
    try:
        with pytest.raises(ValueError, match="1 records announced, but"):
            read(path)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


@pytest.mark.parametrize("kind", ["fifo", "zero"])
@pytest.mark.parametrize("name", ["run.json", "timeline.json", "pc_samples.csv", "power.csv"])
def test_bundle_files_that_are_not_regular_files_are_refused_naming_them(tmp_path, kind, name):
    special(tmp_path / name, kind)
    reader = {"run.json": lambda: load(tmp_path), "timeline.json": lambda: timeline_slices(tmp_path / name),
              "pc_samples.csv": lambda: pc_samples(tmp_path / name),
              "power.csv": lambda: read_trace(tmp_path / name)}[name]
    with pytest.raises(BundleError, match=f"{tmp_path / name} is a {'FIFO' if kind == 'fifo' else 'device'}, not"):
        within(reader)


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_report_of_a_bundle_whose_run_json_is_not_a_file_is_a_usage_error(tmp_path, kind):
    special(tmp_path / "run.json", kind)
    for command in (("report", tmp_path), ("power-budget", tmp_path, "--period-s", "1", "--budget-mw", "1")):
        result = within(lambda: cli(*command))
        assert result.exit_code == 2 and "run.json is a" in result.output, result.output


# --- numeric options: nan, inf, negative, zero and huge values are usage errors (exit 2) ---

def numeric_options():
    """(command, option, bad value) for every numeric option of every command: found by type, so
    an option added later is covered (and needs its command in BASE)."""
    cases = []
    for name, command in sorted(main.commands.items()):
        for param in command.params:
            if not isinstance(param, click.Option) or not isinstance(param.type, (click.types.IntParamType,
                                                                                  click.types.FloatParamType)):
                continue
            low = getattr(param.type, "min", None)
            zero_refused = low is not None and (low > 0 or getattr(param.type, "min_open", False))
            for value in ["nan", "inf", "-inf", "-1", "99999999999999999999999", "1e999"] + ["0"] * zero_refused:
                cases.append((name, param.opts[-1] if param.opts[-1].startswith("--") else param.opts[0], value))
    return cases


def base_args(command, tmp_path):
    firmware = tmp_path / "fw.elf"
    firmware.write_bytes(program("exit7"))
    return {"run": ["--example", "hello", "--board", "mcu-d"], "dvfs": [firmware, "--board", "mcu-d"],
            "power-budget": [tmp_path, "--period-s", "1", "--budget-mw", "1"], "trace": [tmp_path],
            "sweep": ["--board", "mcu-d", "--firmware", firmware, "--out", tmp_path / "sweep"]}[command]


def test_every_numeric_option_is_covered():
    options = {(command, option) for command, option, _ in numeric_options()}
    assert {("run", "--max-cycles"), ("run", "--max-seconds"), ("run", "--clock-hz"), ("run", "--pc-sample-cycles"),
            ("run", "--trace-limit"), ("run", "--power-bin-us"), ("trace", "--limit"), ("dvfs", "--clock-hz"),
            ("dvfs", "--max-cycles"), ("power-budget", "--period-s"), ("power-budget", "--budget-mw"),
            ("power-budget", "--battery-mah"), ("power-budget", "--battery-v")} <= options


@pytest.mark.parametrize("command, option, value", numeric_options())
def test_a_numeric_option_out_of_range_is_a_usage_error(tmp_path, command, option, value):
    result = cli(command, *base_args(command, tmp_path), option, value)
    assert result.exit_code == 2, result.output
    assert f"Invalid value for '{option}'" in result.output, result.output


@pytest.mark.parametrize("value", ["99999999999999999999999:", ":99999999999999999999999", "9223372036854775807:",
                                   "nan:", "-1:", "5:5", "1e3:"])
def test_trace_cycles_out_of_range_is_a_usage_error(tmp_path, value):
    result = cli("run", "--example", "hello", "--board", "mcu-d", "--trace-cycles", value, "--out", tmp_path)
    assert result.exit_code == 2 and "Invalid value for --trace-cycles" in result.output, result.output


def strict_json(text):
    def refuse(name):
        raise ValueError(f"{name} is not JSON")
    return json.loads(text, parse_constant=refuse)


def test_power_budget_json_is_strict_at_the_edges_of_its_options(tmp_path):
    Simulator(examples.path("hello", "mcu-d"), "mcu-d").run().write_bundle(tmp_path)
    for period, budget, mah, volts in (("1e9", "1e9", "1e9", "1e3"), ("1", "1e-300", "1e-300", "1e-300")):
        result = cli("power-budget", tmp_path, "--period-s", period, "--budget-mw", budget, "--battery-mah", mah,
                     "--battery-v", volts, "--json")
        assert result.exit_code in (0, 1), result.output
        figures = strict_json(result.stdout)
        assert figures["battery"]["life_h"] >= 0
    for huge in ("1e300", "inf", "nan"):  # (printed Infinity and NaN before)
        result = cli("power-budget", tmp_path, "--period-s", "1", "--budget-mw", "1", "--battery-mah", huge,
                     "--battery-v", huge, "--json")
        assert result.exit_code == 2 or strict_json(result.stdout), result.output


# --- semihosting: a name's length may count its NUL; remove and rename touch regular files only ---

@pytest.fixture(scope="module")
def hosted(tmp_path_factory):
    """One machine (mps2-an386) for the semihosting cases; `semihosting(root)` gives it a fresh state."""
    path = tmp_path_factory.mktemp("elf") / "exit7.elf"
    path.write_bytes(program("exit7"))
    return Simulator(path, "mps2-an386").machine


NAME, NAME2, BLOCK = 0x20001100, 0x20001200, 0x20001000


def semihosting(m, root):
    m.semihosting = S.Semihosting(m, root, "fw")
    m.warnings.clear()


def sh_call(m, operation, *words):
    m.uc.mem_write(BLOCK, struct.pack(f"<{len(words)}I", *words))
    return m.semihosting.call(operation, BLOCK)


def test_a_name_whose_length_counts_its_nul_is_taken_as_qemu_takes_it(hosted, tmp_path):
    semihosting(hosted, tmp_path)
    (tmp_path / "old.txt").write_text("data")
    hosted.uc.mem_write(NAME, b"old.txt\0")
    hosted.uc.mem_write(NAME2, b"new.txt\0")
    assert sh_call(hosted, S.SYS_RENAME, NAME, 8, NAME2, 8) == 0  # (both lengths count the NUL)
    assert os.listdir(tmp_path) == ["new.txt"]
    handle = sh_call(hosted, S.SYS_OPEN, NAME2, 0, 8)
    assert handle > 0 and sh_call(hosted, S.SYS_FLEN, handle) == 4
    hosted.uc.mem_write(NAME, b":tt\0")
    assert sh_call(hosted, S.SYS_OPEN, NAME, 4, 4) > 0  # the console, counted with its NUL
    assert sh_call(hosted, S.SYS_REMOVE, NAME2, 8) == 0 and os.listdir(tmp_path) == []


@pytest.mark.parametrize("name", [b"a\0b.txt", b"a.txt\0\0", b"\0a.txt"])
def test_a_nul_anywhere_but_at_the_end_of_the_length_is_still_refused(hosted, tmp_path, name):
    semihosting(hosted, tmp_path)
    (tmp_path / "a.txt").write_text("keep")
    hosted.uc.mem_write(NAME, name)
    assert sh_call(hosted, S.SYS_OPEN, NAME, 4, len(name)) == -1
    assert sh_call(hosted, S.SYS_ERRNO, 0) == errno.EINVAL
    assert sh_call(hosted, S.SYS_REMOVE, NAME, len(name)) == -1
    assert os.listdir(tmp_path) == ["a.txt"]


def make_entry(root, kind):
    """An entry named `it` in root: a folder, a FIFO or a symlink (to a file in root)."""
    target = root / "it"
    if kind == "folder":
        target.mkdir()
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        (root / "real.txt").write_text("x")
        target.symlink_to("real.txt")
    return target


@pytest.mark.parametrize("kind, code", [("folder", "EACCES"), ("fifo", "EACCES"), ("symlink", "ELOOP")])
def test_remove_and_rename_touch_regular_files_only(hosted, tmp_path, kind, code):
    semihosting(hosted, tmp_path)
    make_entry(tmp_path, kind)
    (tmp_path / "file.txt").write_text("file")
    before = sorted(os.listdir(tmp_path))
    hosted.uc.mem_write(NAME, b"it")
    hosted.uc.mem_write(NAME2, b"moved")
    for words in ((S.SYS_REMOVE, NAME, 2), (S.SYS_RENAME, NAME, 2, NAME2, 5)):
        assert sh_call(hosted, *words) == -1
        assert sh_call(hosted, S.SYS_ERRNO, 0) == getattr(errno, code)
    hosted.uc.mem_write(NAME2, b"file.txt")  # a regular file may not replace one either
    assert sh_call(hosted, S.SYS_RENAME, NAME2, 8, NAME, 2) == -1
    assert sh_call(hosted, S.SYS_ERRNO, 0) == getattr(errno, code)
    assert sorted(os.listdir(tmp_path)) == before
    assert sh_call(hosted, S.SYS_RENAME, NAME2, 8, NAME2 + 4, 4) == 0  # file.txt -> .txt: a file still moves


# --- calibrate: a fit out of a power model's range is not written; no nan or inf printed ---

def test_calibrate_refuses_a_fit_out_of_range_without_nan_inf_or_warnings(tmp_path):
    hello = examples.path("hello", "mcu-d")
    (tmp_path / "m.csv").write_text(f"firmware,clock_hz,energy_j\n{hello},16000000,1e-300\n{hello},216000000,1e300\n")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (numpy's overflow RuntimeWarnings were printed)
        result = cli("calibrate", tmp_path / "m.csv", "--board", "mcu-d", "--fit", "core.energy_j.alu",
                     "--out", tmp_path / "fit.toml")
    assert result.exit_code == 2, result.output
    assert "energy_j.alu = 2.47" in result.output and "fit.toml is not written" in result.output
    assert not (tmp_path / "fit.toml").exists()
    assert "R^2 = n/a" in result.output
    for word in ("nan", "inf"):
        assert word not in result.output.lower().replace("information", "")


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_a_power_model_or_measurements_that_are_not_regular_files_are_named_so(tmp_path, kind):
    special(tmp_path / "model.toml", kind)
    result = within(lambda: cli("run", "--example", "hello", "--board", "mcu-d", "--power-model",
                                tmp_path / "model.toml"))
    what = "a FIFO" if kind == "fifo" else "a device"
    assert result.exit_code == 2 and f"is not a power model: it is {what}, not a regular file" in result.output
    assert "does not exist" not in result.output
    result = within(lambda: cli("calibrate", tmp_path / "model.toml", "--board", "mcu-d"))
    assert result.exit_code == 2 and f"it is {what}, not a regular file" in result.output, result.output
