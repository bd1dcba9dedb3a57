"""The prebuilt examples shipped in the package run without a toolchain."""
import pytest

from clirun import run_cli as cli
from mcusim import examples
from mcusim.config import board_names


def test_every_example_is_shipped_for_every_board():
    found = examples.available()
    assert set(found) == {"hello", "uart-hello", "exceptions", "dwt", "bench", "isa", "bench-dsp", "bench-table",
                          "bench-float", "flash-timing", "pipeline", "sram-timing",
                          } | {f"{model}-{variant}" for model in ("micro_speech", "person_detection", "kws_dscnn", "resnet8",
                                                          "anomaly_ae", "kws_dscnn_s", "kws_dscnn_l", "odd_shapes")
                             for variant in ("ref", "opt")}
    for boards in found.values():
        assert sorted(boards) == sorted(board_names())
    assert examples.toolchain().startswith("arm-none-eabi-gcc")


def test_examples_command_lists_them():
    done = cli("examples")
    assert done.returncode == 0
    assert "hello" in done.stdout and "mcu-d" in done.stdout


def test_run_example_hello_on_mcu_d():
    done = cli("run", "--example", "hello", "--board", "mcu-d")
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hello from mcusim on mcu-d\n"
    assert "exit code 0" in done.stderr


def test_unknown_example_is_a_usage_error():
    done = cli("run", "--example", "nope", "--board", "mcu-d")
    assert done.returncode == 2
    assert "no example 'nope'" in done.stderr


@pytest.mark.parametrize("args,code,text", [
    (["run", "--board", "mcu-d"], 2, "give either FIRMWARE or --example"),
    (["run", "x.elf"], 2, "Missing option '--board'"),
    (["boards", "show", "nope"], 2, "unknown board"),
])
def test_usage_errors_exit_2(args, code, text):
    done = cli(*args)
    assert done.returncode == code
    assert text in done.stderr


def test_boards_command_lists_and_shows():
    listing = cli("boards")
    assert listing.returncode == 0 and len(listing.stdout.splitlines()) == len(board_names())
    shown = cli("boards", "show", "mcu-d")
    assert shown.returncode == 0
    assert "0x00200000" in shown.stdout and "USART3" in shown.stdout and "cortex-m7" in shown.stdout
