"""Sweep specs (src/mcusim/sweep.py) and the Pareto front (analysis/pareto.py), without running
anything: the product and its order, each board's own build, what a run's ID hashes, and the
errors a bad spec gets."""
import shutil

import pytest

from mcusim import sweep as S
from mcusim.analysis.pareto import front


@pytest.fixture
def builds(tmp_path):
    for board in ("mcu-s", "mcu-d"):
        (tmp_path / board).mkdir()
        (tmp_path / board / "app.elf").write_bytes(board.encode())
    (tmp_path / "model.tflite").write_bytes(b"model")
    (tmp_path / "weights-ram.toml").write_text('weights = "ram"\n')
    return tmp_path


def test_the_product_in_order_with_each_board_s_own_build(builds):
    spec = S.build(["mcu-s", "mcu-d"], ["nominal", 48_000_000], [], ["{board}/app.elf"],
                   [{"path": "model.tflite", "variants": ["opt", "ref"], "placements": ["default", "weights-ram.toml"]}],
                   {"max_cycles": 1000}, base=builds)
    assert len(spec.runs) == 2 * 2 * (1 + 2 * 2)
    first = spec.runs[0]
    assert (first.board, first.clock, first.firmware) == ("mcu-s", "nominal", str(builds / "mcu-s" / "app.elf"))
    assert spec.runs[5].firmware == str(builds / "mcu-s" / "app.elf") and spec.runs[5].clock == 48_000_000
    assert spec.runs[10].firmware == str(builds / "mcu-d" / "app.elf")
    assert [(r.variant, r.placement is not None) for r in spec.runs[1:5]] == [("opt", False), ("opt", True),
                                                                              ("ref", False), ("ref", True)]
    assert spec.notes  # model runs cannot pin the clock: said so
    command = spec.runs[5].command(builds / "out")
    assert command[command.index("--clock-hz") + 1] == "48000000" and "--max-cycles" in command


def test_a_run_s_id_hashes_contents_not_paths(builds, tmp_path_factory):
    elsewhere = tmp_path_factory.mktemp("copy")
    shutil.copy(builds / "mcu-s" / "app.elf", elsewhere / "app.elf")
    here = S.build(["mcu-s"], [], [], ["mcu-s/app.elf"], [], {}, base=builds).runs[0]
    there = S.build(["mcu-s"], [], [], [str(elsewhere / "app.elf")], [], {}, base=builds).runs[0]
    assert here.identity() == there.identity()
    other = S.build(["mcu-s"], [], [], ["mcu-d/app.elf"], [], {}, base=builds).runs[0]
    longer = S.build(["mcu-s"], [], [], ["mcu-s/app.elf"], [], {"max_cycles": 5}, base=builds).runs[0]
    assert len({here.identity(), other.identity(), longer.identity()}) == 3


@pytest.mark.parametrize("text, message", [
    ('[axes]\nboards = ["mcu-q"]\nfirmware = ["mcu-s/app.elf"]\n', "unknown board 'mcu-q'"),
    ('[axes]\nboards = ["mcu-s"]\nfirmware = ["nope.elf"]\n', "nope.elf: no such file"),
    ('[axes]\nboards = ["mcu-s"]\nclocks = [0]\nfirmware = ["mcu-s/app.elf"]\n', "positive integer"),
    ('[axes]\nboards = "mcu-s"\n', "axes.boards must be a list"),
    ('[axes]\nboards = ["mcu-s"]\nfirmware = ["mcu-s/app.elf"]\n[run]\nturbo = true\n', "unknown option"),
    ('[axes]\nboards = ["mcu-s"]\nfirmware = ["mcu-s/app.elf"]\n[run]\nmax_cycles = true\n', "expected int"),
    ('[axes]\nboards = ["mcu-s"]\n', "at least one board and one firmware or model"),
    ('[[runs]]\nboard = "mcu-s"\n', "give board and one of firmware or model"),
    ('[axes]\nboards = ["mcu-s", "mcu-s"]\nfirmware = ["mcu-s/app.elf"]\n', "the same run more than once"),
    ('[sweep]\n', "unknown tables sweep"),
    ('[keep]\nfiles = "run.json"\n', "one key, files"),
    ('[axes\n', "not valid TOML"),
])
def test_bad_specs_say_what_is_wrong(builds, text, message):
    spec = builds / "spec.toml"
    spec.write_text(text)
    with pytest.raises(S.SpecError, match=message):
        S.load(spec)


def test_an_explicit_list_of_runs(builds):
    spec = builds / "spec.toml"
    spec.write_text('[[runs]]\nboard = "mcu-d"\nfirmware = "{board}/app.elf"\nclock = 100_000_000\n'
                    '[[runs]]\nboard = "mcu-s"\nmodel = "model.tflite"\nvariant = "ref"\n')
    loaded = S.load(spec)
    runs = loaded.runs
    assert loaded.keep is None
    assert [(r.board, r.clock, r.variant) for r in runs] == [("mcu-d", 100_000_000, None), ("mcu-s", "nominal", "ref")]
    assert runs[0].firmware.endswith("mcu-d/app.elf")


def test_the_pareto_front_keeps_what_nothing_beats():
    rows = [{"t": 1, "e": 5}, {"t": 2, "e": 3}, {"t": 3, "e": 4}, {"t": 4, "e": 1}, {"t": 2, "e": 3},
            {"t": None, "e": 0}, {"t": 5, "e": 1}]
    assert front(rows, "t", "e") == [0, 1, 3]  # (3, 4) is beaten by (2, 3); a tie keeps one; (5, 1) by (4, 1)
