"""`pip install .` gives a working mcusim: the wheel carries the board/core data and the examples."""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_wheel_contains_data_and_runs_an_example_outside_the_source_tree(tmp_path):
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path / "dist"), str(ROOT)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    wheel = next((tmp_path / "dist").glob("mcusim-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for expected in ("mcusim/data/boards/mcu-d.toml", "mcusim/data/boards/soc/stm32f746zg.toml",
                     "mcusim/data/cores/cortex-m7.toml", "mcusim/examples/mcu-d/hello.elf",
                     "mcusim/examples/TOOLCHAIN", "mcusim/cli.py"):
        assert expected in names
    target = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(target),
                                str(wheel)], capture_output=True, text=True)
    assert installed.returncode == 0, installed.stderr
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(target)
    done = subprocess.run([sys.executable, "-c", "import mcusim.cli as c, mcusim; print(mcusim.__file__); "
                           "c.main(['run', '--example', 'hello', '--board', 'mcu-d'])"],
                          capture_output=True, text=True, cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stderr
    assert str(target) in done.stdout
    assert "Hello from mcusim on mcu-d" in done.stdout
    # the firmware sources `mcusim model build` compiles come with the wheel too
    assert "mcusim/data/firmware/tinyml/tfl_ops.c" in names
    model = ROOT / "tests" / "data" / "tflite" / "hello_world_int8.tflite"
    built = subprocess.run([sys.executable, "-c", "import mcusim.cli as c; c.main(['model', 'build', "
                            f"{str(model)!r}, '--board', 'mcu-m', '--out', 'built'])"],
                           capture_output=True, text=True, cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr
    assert (tmp_path / "built" / "model.elf").is_file()
