"""Integration fixtures: the firmware kit built once per session, QEMU located.

In CI (CI=true) a missing toolchain or QEMU is a failure, never a silent skip.
"""
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIRMWARE = ROOT / "firmware"
BOARDS = ["mcu-s", "mcu-m", "mcu-b", "mcu-d", "mps2-an386", "mps2-an500"]
PROGRAMS = ["hello", "uart-hello", "exceptions", "dwt", "bench", "isa", "bench-dsp", "bench-table",
            "bench-float", "flash-timing", "pipeline"]
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


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
    done = subprocess.run(["make", "-C", str(FIRMWARE), "-j", jobs], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(f"firmware build failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return FIRMWARE / "build"


@pytest.fixture(scope="session")
def qemu() -> str:
    return require_tool("qemu-system-arm")
