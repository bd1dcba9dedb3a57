"""The commands that read a result bundle back (report, report --html, compare, trace,
power-budget, power-plot) answer a corrupt or wrongly shaped bundle with a usage error (exit
2) naming the file, never a traceback: a real bundle, mutated key by key (issue 14)."""
import copy
import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mcusim import examples
from mcusim.analysis.branch_trace import RECORD
from mcusim.analysis.branch_trace import write as write_branch_trace
from mcusim.api import Simulator
from mcusim.cli import main
from mcusim.machine import native as N

FIRMWARE = examples.path("odd_shapes-opt", "mcu-d")  # regions with energy, an "inference", 1.3 ms simulated
ARTIFACTS = ["branches.bin", "timeline.json", "pc_samples.csv", "power.csv"]


@pytest.fixture(scope="module")
def original(tmp_path_factory):
    out = tmp_path_factory.mktemp("bundle")
    Simulator(FIRMWARE, "mcu-d", profile=True, pc_sample_cycles=1000, timeline=True, branch_trace=True,
              power_trace=True).run().write_bundle(out)
    return out


@pytest.fixture(scope="module")
def document(original):
    return json.loads((original / "run.json").read_text())


def bundle_with(original: Path, where: Path, run_json=None, artifacts: dict | None = None) -> Path:
    """A copy of the bundle with run.json (a document, or bytes) and artifacts (name: bytes) replaced."""
    where.mkdir(parents=True, exist_ok=True)
    for name in ARTIFACTS:
        if name not in (artifacts or {}):
            (where / name).symlink_to(original / name)
    raw = run_json if isinstance(run_json, bytes) else json.dumps(run_json).encode()
    (where / "run.json").write_bytes((original / "run.json").read_bytes() if run_json is None else raw)
    for name, data in (artifacts or {}).items():
        (where / name).write_bytes(data)
    return where


def invoke(*args):
    result = CliRunner().invoke(main, [str(arg) for arg in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), \
        f"mcusim {' '.join(map(str, args))} raised {result.exception!r}:\n{result.output}"
    return result


FAST = [("report",), ("compare", "ORIGINAL"), ("power-budget", "--period-s", "1", "--budget-mw", "500")]
TRACE = [("trace",), ("trace", "--instructions", "--limit", "20")]  # (they read run.json's firmware and board only)
SLOW = [("report", "--html", "OUT/report.html"), ("power-plot", "--out", "OUT/power.png")]


def check_commands(bundle: Path, original: Path, commands):
    """Each command exits 0 (1: power-budget over budget) or 2 with a usage error."""
    for command in commands:
        name, *options = command
        options = [str(original) if o == "ORIGINAL" else o.replace("OUT", str(bundle)) for o in options]
        result = invoke(name, bundle, *options)
        assert result.exit_code in (0, 1, 2), (command, result.exit_code, result.output)
        if result.exit_code == 1:
            assert name == "power-budget" and "FAIL" in result.output
        if result.exit_code == 2:
            assert "Error: " in result.output, (command, result.output)


def test_the_commands_read_the_original_bundle(original):
    for command in FAST + TRACE + SLOW:
        name, *options = command
        options = [str(original) if o == "ORIGINAL" else o.replace("OUT", str(original)) for o in options]
        result = invoke(name, original, *options)
        assert result.exit_code == 0, (command, result.output)


# run.json mutations: every key deleted, set to null and to a value of another type; the same
# inside the first region, function and the nested tables
def other_type(value):
    if isinstance(value, bool):
        return "yes"
    if isinstance(value, (int, float)):
        return "x"
    if isinstance(value, str):
        return 7
    if isinstance(value, list):
        return "x"
    if isinstance(value, dict):
        return ["x"]
    return {"x": 1}


def paths(document):
    top = [(key,) for key in document]
    nested = [(key, sub) for key in ("firmware", "exit", "power", "pc_samples") for sub in document[key]] + \
        [("settings", "voltage_range"), ("settings", "power_model"), ("stalls", "fetch_wait")]
    rows = [(key, 0, sub) for key in ("regions", "functions") for sub in document[key][0]]
    return top + nested + rows


def mutated(document, path, how):
    doc = copy.deepcopy(document)
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    if how == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = None if how == "null" else other_type(parent[path[-1]])
    return doc


MUTATIONS = ["delete", "null", "type"]


@pytest.mark.slow  # (some 300 commands)
@pytest.mark.parametrize("how", MUTATIONS)
def test_run_json_mutated_key_by_key_is_a_usage_error_or_fine(original, document, tmp_path, how):
    for k, path in enumerate(paths(document)):
        bundle = bundle_with(original, tmp_path / f"m{k}", mutated(document, path, how))
        check_commands(bundle, original, FAST + (TRACE if path[0] in ("firmware", "board") else []))


@pytest.mark.parametrize("path, command", [(("regions",), SLOW[0]), (("functions",), SLOW[0]),
                                           (("pc_samples",), SLOW[0]), (("regions",), SLOW[1]),
                                           (("regions", 0, "energy_j"), SLOW[1]), (("energy_j",), SLOW[1])])
@pytest.mark.parametrize("how", MUTATIONS)
def test_html_report_and_power_plot_of_a_mutated_run_json(original, document, tmp_path, path, command, how):
    check_commands(bundle_with(original, tmp_path, mutated(document, path, how)), original, [command])


@pytest.mark.parametrize("raw", [b"[]", b'"run"', b"null", b"3", b"{", b"", b"\xff\xfe\x00\x01", b"[" * 100_000,
                                 b'{"cycles": NaN}', b'{"regions": [{"name": "a"}]}', b'{"energy_j": 1e999}'])
def test_run_json_that_is_not_a_run_document(original, tmp_path, raw):
    bundle = bundle_with(original, tmp_path, raw)
    for command in FAST + TRACE + SLOW:
        name, *options = command
        options = [str(original) if o == "ORIGINAL" else o.replace("OUT", str(bundle)) for o in options]
        result = invoke(name, bundle, *options)
        assert result.exit_code == 2, (command, result.output)
        assert f"{bundle / 'run.json'}" in result.output and "is not a run.json bundle" in result.output


def test_messages_say_what_is_wrong(original, document, tmp_path):
    doc = mutated(document, ("regions",), "type")
    result = invoke("report", bundle_with(original, tmp_path / "a", doc))
    assert result.exit_code == 2
    assert "run.json is not a run.json bundle: regions: expected a list, got \"x\"" in " ".join(result.output.split())
    doc = mutated(document, ("cycles",), "null")
    result = invoke("compare", bundle_with(original, tmp_path / "b", doc), original)
    assert result.exit_code == 2 and "cycles: expected a number, got null" in " ".join(result.output.split())


# artifacts ----------------------------------------------------------------------------------
def head(original, name, keep):
    return (original / name).read_bytes()[:keep]


def trace_off_the_code(original):
    """A well-formed branches.bin whose records lead where the ELF has no code."""
    path = original.parent / "off-the-code.bin"
    records = np.zeros(3, RECORD)
    records["word"] = [N.TRACE_SYNC << 56, N.TRACE_BRANCH << 56 | 10, N.TRACE_END << 56 | 20]
    records["source"] = [0x1234_5670, 0x1234_5680, 0x1234_5690]
    records["target"] = [0x1234_5670, 0x1234_5690, 0x1234_5690]
    write_branch_trace(path, records, 0, 216_000_000, "00" * 32)
    return path.read_bytes()


ARTIFACT_CASES = {
    "branches.bin truncated": ("branches.bin", lambda o: head(o, "branches.bin", 64 + 16 * 3 + 5)),
    "branches.bin header only": ("branches.bin", lambda o: head(o, "branches.bin", 40)),
    "branches.bin not a trace": ("branches.bin", lambda o: b"\x00" * 500),
    "branches.bin off the code": ("branches.bin", trace_off_the_code),
    "timeline.json not JSON": ("timeline.json", lambda o: b'{"traceEvents": [1, 2'),
    "timeline.json junk events": ("timeline.json", lambda o: b'{"traceEvents": [1, "x", {"ph": "X", "ts": "a"}]}'),
    "timeline.json a string": ("timeline.json", lambda o: b'"x"'),
    "timeline.json binary": ("timeline.json", lambda o: bytes(range(256))),
    "pc_samples.csv garbage": ("pc_samples.csv", lambda o: b"cycle,pc,function\nzz,0x1,main\n"),
    "pc_samples.csv binary": ("pc_samples.csv", lambda o: bytes(range(256)) * 3),
    "pc_samples.csv no columns": ("pc_samples.csv", lambda o: b""),
    "pc_samples.csv short rows": ("pc_samples.csv", lambda o: b"cycle,pc,function\n1000\n"),
    "power.csv empty": ("power.csv", lambda o: b""),
    "power.csv text": ("power.csv", lambda o: b"time_s,core_w\n0.0,abc\n"),
    "power.csv nan": ("power.csv", lambda o: b"time_s,core_w\n0.0,nan\n"),
    "power.csv binary": ("power.csv", lambda o: bytes(range(256))),
}
READERS = {"branches.bin": [("trace",), ("trace", "--instructions", "--limit", "0")],
           "timeline.json": SLOW, "pc_samples.csv": [SLOW[0]], "power.csv": [SLOW[1]]}


@pytest.mark.parametrize("case", ARTIFACT_CASES)
def test_a_corrupt_artifact_is_a_usage_error_naming_it(original, tmp_path, case):
    """Each reader of the artifact exits 0 or 2, at least one with 2 and the artifact's name."""
    name, make = ARTIFACT_CASES[case]
    bundle = bundle_with(original, tmp_path, artifacts={name: make(original)})
    codes = []
    for command in READERS[name]:
        cmd, *options = command
        result = invoke(cmd, bundle, *[o.replace("OUT", str(bundle)) for o in options])
        assert result.exit_code in (0, 2), (command, result.output)
        if result.exit_code == 2:
            assert str(bundle / name) in result.output, (command, result.output)
        codes.append(result.exit_code)
    assert 2 in codes


# random mutations anywhere in the document ------------------------------------------------------
JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=5),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3),
                    max_leaves=6)


def all_paths(value, prefix=()):
    yield prefix
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in list(children)[:30]:
        yield from all_paths(child, prefix + (key,))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_random_mutations_never_raise(original, document, tmp_path_factory, data):
    doc = copy.deepcopy(document)
    for _ in range(data.draw(st.integers(1, 3))):
        candidates = [p for p in all_paths(doc) if p]
        path = data.draw(st.sampled_from(candidates))
        parent = doc
        for step in path[:-1]:
            parent = parent[step]
        if data.draw(st.booleans()):
            del parent[path[-1]]
        else:
            parent[path[-1]] = data.draw(JSON)
    bundle = bundle_with(original, tmp_path_factory.mktemp("random"), doc)
    check_commands(bundle, original, FAST + TRACE)
