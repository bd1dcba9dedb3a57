"""Integration fixtures: the firmware kit built once per session, QEMU located.

In CI (CI=true) a missing toolchain or QEMU is a failure, never a silent skip.
"""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mcusim.config import board_names

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
BOARDS = board_names()  # the registry: boards/*.toml
PAPER_BOARDS = [board for board in BOARDS if not board.startswith("mps2-")]  # with power models; not QEMU's
PROGRAMS = ["hello", "uart-hello", "exceptions", "dwt", "bench", "isa", "bench-dsp", "bench-table",
            "bench-float", "flash-timing", "pipeline", "sram-timing"]
MODELS = ["micro_speech", "person_detection", "kws_dscnn", "resnet8", "anomaly_ae", "kws_dscnn_s",
          "kws_dscnn_l", "odd_shapes"]  # firmware/Makefile ALL_MODELS
VARIANTS = ["ref", "opt"]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


def pytest_collection_modifyitems(config, items):
    """Every test in this folder is an integration test (pyproject's `integration` marker), so
    `-m "not integration"` runs the unit tests alone; no test file has to remember it."""
    here = Path(__file__).parent
    for item in items:
        if here in item.path.parents:
            item.add_marker(pytest.mark.integration)


def require_tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        message = f"{name} is not installed"
        if IN_CI:
            pytest.fail(message + " (CI must install it: see .ci/run)")
        pytest.skip(message)
    return path


@pytest.fixture(scope="session")
def firmware_build() -> Path:
    """firmware/build, freshly made with the cross toolchain."""
    require_tool("arm-none-eabi-gcc")
    jobs = str(os.cpu_count() or 2)
    # the kit's models are exported and built by this Python (it has mcusim's dependencies): PYTHON= for make
    done = subprocess.run(["make", "-C", str(FIRMWARE), "-j", jobs, f"PYTHON={sys.executable}"], capture_output=True,
                          text=True)
    if done.returncode != 0:
        pytest.fail(f"firmware build failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return FIRMWARE / "build"


@pytest.fixture(scope="session")
def qemu() -> str:
    return require_tool("qemu-system-arm")


def program_flow(result) -> str:
    """A digest of a run's branch trace as program flow: kinds, sources and targets, no cycles
    (two runs that took the same branches have the same digest)."""
    import hashlib

    import numpy as np

    records = result.branch_trace
    assert result.branch_trace_dropped == 0, "the branch trace dropped records: raise its limit"
    return hashlib.sha256(np.stack([records["word"] >> np.uint64(56), records["source"].astype(np.uint64),
                                    records["target"].astype(np.uint64)]).tobytes()).hexdigest()
