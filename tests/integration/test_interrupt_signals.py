"""Ctrl-C (SIGINT) and SIGTERM end `mcusim run` with a partial bundle and summary, exit 130 / 143."""
import json
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from elfgen import program
from mcusim.config import load_board


def _print_then_spin(code):
    """The `itm` entry prints "OK" on ITM port 0; its last branch goes to `count` (adds; b) instead of exit."""
    code[0x168:0x16A] = bytes.fromhex("52e7")  # b.n from CODE+0x168 to CODE+0x10


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_signal_writes_a_partial_bundle_and_exits_128_plus_signal(tmp_path, signum):
    board = "mcu-d"
    elf = tmp_path / "spin.elf"
    elf.write_bytes(program("itm", flash_base=load_board(board).boot_address, patch=_print_then_spin))
    out = tmp_path / "bundle"
    run = subprocess.Popen([sys.executable, "-m", "mcusim.cli", "run", str(elf), "--board", board, "--out", str(out),
                            "--profile"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=dict(os.environ))
    started = []
    reader = threading.Thread(target=lambda: started.append(run.stdout.readline()), daemon=True)
    reader.start()
    reader.join(60)  # (the firmware is running once it has printed)
    assert started == [b"OK\n"], "the firmware did not start"
    time.sleep(1)
    run.send_signal(signum)
    try:
        _, stderr = run.communicate(timeout=30)
    except subprocess.TimeoutExpired:
        run.kill()
        pytest.fail("the run did not stop on the signal")
    assert run.returncode == 128 + signum
    name = signal.Signals(signum).name
    assert f"exit: interrupted by {name} at cycle" in stderr.decode()
    document = json.loads((out / "run.json").read_text())
    assert document["exit"]["reason"] == "interrupted" and document["exit"]["code"] == 128 + signum
    assert document["cycles"] > 100_000 and document["instructions"] > 100_000
    assert document["energy_j"] > 0 and document["functions"]
    assert "functions.csv" in document["artifacts"]
