"""matplotlib and scipy are extras: running firmware needs neither, and a command that needs one
says which extra to install instead of failing with a traceback."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

import mcusim
from elfgen import program
from mcusim.cli import main

ROOT = Path(__file__).resolve().parents[2]
BLOCK = "import sys; sys.modules['scipy'] = None; sys.modules['matplotlib'] = None\n"


def test_every_module_imports_without_the_extras():
    code = BLOCK + ("import importlib, pkgutil, mcusim\n"
                    "for m in pkgutil.walk_packages(mcusim.__path__, 'mcusim.'): importlib.import_module(m.name)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT / "src"), "PATH": ""})
    assert done.returncode == 0, done.stderr


def test_a_run_needs_neither_extra(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    elf = tmp_path / "exit.elf"
    elf.write_bytes(program("exit7"))
    result = mcusim.run(elf, "mps2-an386")
    assert result.exit_code == 7
    result.write_bundle(tmp_path / "out")  # run.json and the files a plain run writes


@pytest.mark.parametrize("module, extra, command", [
    ("matplotlib", "plots", ["report", "{bundle}", "--html"]),
    ("matplotlib", "plots", ["power-plot", "{bundle}"]),
    ("matplotlib", "plots", ["dvfs", "{firmware}", "--board", "mcu-m", "--plot", "{bundle}/dvfs.png"]),
    ("scipy", "calibrate", ["calibrate", "{firmware}", "--board", "mcu-m"]),
])
def test_a_command_that_needs_an_extra_names_it(tmp_path, monkeypatch, module, extra, command):
    monkeypatch.setitem(sys.modules, module, None)
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    (bundle / "run.json").write_text(json.dumps({"board": "mcu-m"}))
    firmware = tmp_path / "app.elf"
    firmware.write_bytes(program("exit7"))
    args = [word.format(bundle=bundle, firmware=firmware) for word in command]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    assert f"pip install 'mcusim[{extra}]'" in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (bundle / "report.html").exists() and not (bundle / "dvfs.png").exists()
