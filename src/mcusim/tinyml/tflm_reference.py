"""The TFLite Micro interpreter (`tflite-micro` on PyPI, its reference kernels) as the oracle of
`mcusim model run`. It runs in a child process: the interpreter aborts the whole process on
some models (an arena too small, a malformed graph) instead of failing, and that must not take
mcusim down."""
from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

CHILD = r"""
import sys
import numpy as np
from tflite_micro.python.tflite_micro import runtime
model, inputs, outputs, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
data = open(model, "rb").read()
interpreter = runtime.Interpreter.from_bytes(data, arena_size=max(1 << 20, 16 * len(data)))
given = np.load(inputs)
for i in range(len(given.files)):
    interpreter.set_input(given[f"x{i}"], i)
interpreter.invoke()
np.savez(outputs, **{f"y{i}": interpreter.get_output(i) for i in range(count)})
"""


class InterpreterError(RuntimeError):
    """The interpreter is missing or could not run the model."""


def version() -> str:
    try:
        from tflite_micro.python.tflite_micro import _version
        return f"tflite-micro {getattr(_version, '__version__', 'unknown')}"
    except ImportError:
        return "tflite-micro (not installed)"


def outputs(model_path: str | Path, inputs: list[np.ndarray], count: int, timeout: float = 600) -> list[np.ndarray]:
    """The model's `count` outputs for `inputs`, as the TFLite Micro interpreter computes them."""
    with tempfile.TemporaryDirectory(prefix="mcusim-tflm-") as work:
        given = Path(work) / "inputs.npz"
        results = Path(work) / "outputs.npz"
        np.savez(given, **{f"x{i}": x for i, x in enumerate(inputs)})
        try:
            done = subprocess.run([sys.executable, "-c", CHILD, str(model_path), str(given), str(results),
                                   str(count)],
                                  capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise InterpreterError(f"the TFLite Micro interpreter did not finish in {timeout:g} s") from None
        if done.returncode != 0:
            last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
            if "No module named 'tflite_micro'" in done.stderr:
                raise InterpreterError("the TFLite Micro interpreter is not installed: pip install tflite-micro")
            raise InterpreterError(f"the TFLite Micro interpreter failed on this model "
                                   f"(exit {done.returncode}): {last}")
        with np.load(results) as found:
            return [found[f"y{i}"] for i in range(len(found.files))]
