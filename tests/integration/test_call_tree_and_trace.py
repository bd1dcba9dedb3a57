"""Inclusive cycles and call paths of the exact profile, the line profile, flame graph
exports and the ETM-style branch trace, checked against each other and against the counters."""
import json
from collections import Counter

import pytest

import mcusim
from clirun import run_cli
from mcusim.analysis import branch_trace as BT
from mcusim.config import load_board
from mcusim.elf import ElfImage

BIG = 3_000_000  # branch trace records: a whole KWS inference has about 1.1 million


def by_name(rows):
    return {row["function"]: row for row in rows}


cli = run_cli


def trace_inclusive(events, image):
    """Inclusive cycles per function rebuilt from the branch trace alone: a BL/BLX to a function
    opens an activation that ends at the branch back to its return address; a branch to a
    function's start from elsewhere (a tail call) hands the activation over."""
    code = [(s.vaddr, s.data) for s in image.segments if s.data]

    def halfword(address):
        return next(int.from_bytes(d[address - b: address - b + 2], "little") for b, d in code
                    if b <= address < b + len(d))

    starts = {address: name for address, _, name in image.functions}
    stack, total = [], Counter()
    for e in events:
        if e["kind"] != "branch":
            continue
        source, target, cycle = e["source"], e["target"], e["cycle"]
        first, second = halfword(source), halfword(source + 2)
        if target in starts and first & 0xF800 == 0xF000 and second & 0xD000 == 0xD000:  # BL
            stack.append((source + 4, starts[target], cycle))
        elif target in starts and first & 0xFF87 == 0x4780:  # BLX Rm
            stack.append((source + 2, starts[target], cycle))
        elif target in starts and stack and starts[target] != stack[-1][1]:  # tail call
            back, function, began = stack.pop()
            total[function] += cycle - began
            stack.append((back, starts[target], cycle))
        elif stack and target == stack[-1][0]:
            _, function, began = stack.pop()
            total[function] += cycle - began
    return total


@pytest.fixture(scope="module")
def kws_d(firmware_build):
    elf = firmware_build / "mcu-d" / "kws_dscnn-opt.elf"
    return elf, mcusim.run(elf, "mcu-d", profile=True, branch_trace=BT.TraceWindow(limit=BIG), flamegraph=True)


@pytest.mark.slow
def test_inclusive_cycles_match_the_branch_trace(kws_d):
    elf, result = kws_d
    assert result.exceptions_taken == 0
    rows = by_name(result.functions)
    assert rows["Reset_Handler"]["inclusive_cycles"] == result.cycles  # everything runs below the reset handler
    assert all(row["inclusive_cycles"] >= row["exclusive_cycles"] for row in result.functions)
    from_trace = trace_inclusive(BT.BranchTrace(result.branch_trace, 0, 0, b"").events(), ElfImage.load(elf))
    for name in ("main", "tfl_model_run", "tfl_conv_opt", "tfl_depthwise_opt", "channels", "memset"):
        assert rows[name]["inclusive_cycles"] == from_trace[name], name


def test_interrupt_handlers_stay_out_of_inclusive_cycles(firmware_build):
    result = mcusim.run(firmware_build / "mcu-m" / "exceptions.elf", "mcu-m", profile=True)
    rows = by_name(result.functions)
    handlers = [name for name in rows if name.endswith("_Handler") and name != "Reset_Handler"]
    assert {"SysTick_Handler", "SVC_Handler", "PendSV_Handler", "HardFault_Handler"} <= set(handlers)
    # the run splits into the code below reset, the exception overhead, and each handler's own time
    # (PendSV's nested SVC and IRQ0 count as theirs, not PendSV's)
    assert result.cycles == (rows["Reset_Handler"]["inclusive_cycles"] + sum(rows[h]["inclusive_cycles"] for h in handlers)
                             + rows["(exception entry and return)"]["exclusive_cycles"])
    assert rows["main"]["inclusive_cycles"] < rows["Reset_Handler"]["inclusive_cycles"]


@pytest.mark.slow
def test_flame_graph_files_hold_every_cycle(kws_d, tmp_path):
    _, result = kws_d
    result.write_bundle(tmp_path)
    folded = (tmp_path / "stacks.folded").read_text().splitlines()
    assert sum(int(line.rsplit(" ", 1)[1]) for line in folded) == result.cycles
    assert any(line.startswith("Reset_Handler;main;") and ";tfl_conv_opt" in line for line in folded)
    scope = json.loads((tmp_path / "speedscope.json").read_text())
    profile = scope["profiles"][0]
    assert scope["$schema"].startswith("https://www.speedscope.app/") and profile["type"] == "sampled"
    assert sum(profile["weights"]) == profile["endValue"] == result.cycles
    frames = scope["shared"]["frames"]
    assert all(0 <= i < len(frames) for sample in profile["samples"] for i in sample)
    listed = json.loads((tmp_path / "run.json").read_text())["artifacts"]
    assert {"functions.csv", "lines.csv", "branches.bin", "stacks.folded", "speedscope.json"} <= set(listed)
    assert all((tmp_path / name).exists() for name in listed)


@pytest.mark.parametrize("board,program", [("mcu-m", "exceptions"), pytest.param("mcu-s", "micro_speech-opt", marks=pytest.mark.slow),
                                           pytest.param("mcu-d", "bench-float", marks=pytest.mark.slow), ("mcu-b", "dwt"),
                                           ("mcu-d", "flash-timing")])
def test_branch_trace_rebuilds_every_instruction(firmware_build, board, program, tmp_path):
    """Straight-line code between the records, from the ELF: exactly the instructions the run counted."""
    elf = firmware_build / board / f"{program}.elf"
    result = mcusim.run(elf, board, branch_trace=BT.TraceWindow(limit=BIG))
    result.write_bundle(tmp_path)
    trace = BT.read(tmp_path / "branches.bin")
    assert trace.dropped == 0 and trace.clock_hz == result.clock_hz
    kinds = Counter(event["kind"] for event in trace.events())
    assert kinds["sync"] == 1 and kinds["end"] == 1 and kinds["branch"] > 100
    assert kinds["exception"] == result.exceptions_taken
    aliases = BT.board_aliases(load_board(board))  # (flash-timing runs code through the F7's ITCM alias)
    assert sum(1 for _ in BT.instructions(trace, ElfImage.load(elf), aliases)) == result.instructions


@pytest.mark.slow
def test_branch_trace_window_limit_and_decoder(firmware_build, tmp_path):
    elf = firmware_build / "mcu-m" / "kws_dscnn-opt.elf"
    out = tmp_path / "window"
    run = cli("run", elf, "--board", "mcu-m", "--out", out, "--trace-from", "tfl_depthwise_opt", "--trace-to",
              "tfl_fully_connected_opt", "-q")
    assert run.returncode == 0, run.stderr
    image = ElfImage.load(elf)
    events = BT.read(out / "branches.bin").events()
    assert events[0]["kind"] == "sync" and events[0]["target"] == image.symbol("tfl_depthwise_opt")
    assert events[-1]["kind"] == "end" and events[-1]["target"] == image.symbol("tfl_fully_connected_opt")
    assert [e["kind"] for e in events].count("sync") == 1
    decoded = cli("trace", out, "--limit", "3")
    assert decoded.returncode == 0 and "sync      tfl_depthwise_opt" in decoded.stdout
    assert "more records" in decoded.stdout
    listing = cli("trace", out, "--instructions", "--limit", "4").stdout.splitlines()
    assert len(listing) == 4 and listing[0].split()[1] == "tfl_depthwise_opt"  # (address, symbol, disassembly)

    small = tmp_path / "small"
    run = cli("run", elf, "--board", "mcu-m", "--out", small, "--branch-trace", "--trace-limit", "100")
    assert run.returncode == 0 and "branch trace records beyond the first 100" in run.stderr
    assert BT.read(small / "branches.bin").dropped > 0 and len(BT.read(small / "branches.bin").records) == 100


def test_bad_trace_options_are_refused(firmware_build, tmp_path):
    elf = firmware_build / "mcu-m" / "hello.elf"
    missing = cli("run", elf, "--board", "mcu-m", "--out", tmp_path, "--trace-from", "no_such_function")
    assert missing.returncode == 2 and "no symbol 'no_such_function'" in missing.stderr
    backwards = cli("run", elf, "--board", "mcu-m", "--out", tmp_path, "--trace-cycles", "500:100")
    assert backwards.returncode == 2 and "--trace-cycles" in backwards.stderr
    no_out = cli("run", elf, "--board", "mcu-m", "--branch-trace")
    assert no_out.returncode == 2 and "give --out DIR" in no_out.stderr
    (tmp_path / "branches.bin").write_bytes(b"not a trace")
    assert "not an mcusim branch trace" in cli("trace", tmp_path / "branches.bin", "--elf", elf).stderr


def test_tail_chained_exceptions_rebuild(tmp_path):
    """A handler that returns while another exception is pending goes straight to it."""
    from elfgen import ENTRY, program

    elf = tmp_path / "tail.elf"
    elf.write_bytes(program("tail_chain", handlers={14: ENTRY["return"], 15: ENTRY["return"]}))
    result = mcusim.run(elf, "mps2-an386", branch_trace=True)
    trace = BT.BranchTrace(result.branch_trace, 0, 0, b"")
    assert [e["kind"] for e in trace.events()].count("exception") == result.exceptions_taken >= 2
    assert sum(1 for _ in BT.instructions(trace, ElfImage.load(elf))) == result.instructions


def test_lines_count_code_outside_the_image_too(firmware_build):
    """mcu-d flash-timing runs code through the ITCM alias: its cycles get their own row."""
    result = mcusim.run(firmware_build / "mcu-d" / "flash-timing.elf", "mcu-d", profile=True)
    assert sum(row["cycles"] for row in result.lines) == result.cycles
    assert sum(row["instructions"] for row in result.lines) == result.instructions
    assert any(row["function"] == "(code outside the image's line ranges)" for row in result.lines)


@pytest.mark.slow
def test_line_profile_adds_up_to_the_function_profile(kws_d, tmp_path):
    _, result = kws_d
    assert sum(row["cycles"] for row in result.lines) == result.cycles
    assert sum(row["instructions"] for row in result.lines) == result.instructions
    per_function = Counter()
    for row in result.lines:
        per_function[row["function"]] += row["cycles"]
    assert all(per_function[row["function"]] == row["exclusive_cycles"] for row in result.functions)
    top = result.lines[0]
    assert top["file"].endswith((".c", ".h")) and top["line"] > 0
    assert top["function"] in ("channels", "tfl_conv_opt", "tfl_depthwise_opt")
    result.write_bundle(tmp_path)
    assert (tmp_path / "lines.csv").read_text().splitlines()[0] == "file,line,function,cycles,share,instructions"


@pytest.mark.slow
def test_all_writes_every_artifact(firmware_build, tmp_path):
    run = cli("run", firmware_build / "mcu-m" / "exceptions.elf", "--board", "mcu-m", "--all", "--out", tmp_path, "-q")
    assert run.returncode == 0, run.stderr
    document = json.loads((tmp_path / "run.json").read_text())
    expected = {"functions.csv", "lines.csv", "pc_samples.csv", "timeline.json", "trace.swo", "signals.vcd",
                "branches.bin", "stacks.folded", "speedscope.json"}
    assert expected <= set(document["artifacts"])
    assert all((tmp_path / name).stat().st_size > 0 for name in document["artifacts"])
    assert document["settings"]["pc_sample_cycles"] == 1000 and document["settings"]["branch_trace"]["limit"] > 0


@pytest.mark.slow
def test_evented_profile_replays_the_calls_in_time_order(kws_d, tmp_path):
    """speedscope.json's second profile opens and closes every call at its cycle, properly
    nested, from cycle 0 to the end; each function's outermost activations add up to its
    inclusive cycles; frames name their source file and line."""
    _, result = kws_d
    result.write_bundle(tmp_path)
    scope = json.loads((tmp_path / "speedscope.json").read_text())
    frames = scope["shared"]["frames"]
    evented = scope["profiles"][1]
    assert evented["type"] == "evented" and evented["unit"] == "none" and "(cycles)" in evented["name"]
    assert (evented["startValue"], evented["endValue"]) == (0, result.cycles)
    stack, open_depth, began, inclusive, at = [], Counter(), {}, Counter(), 0
    for event in evented["events"]:
        name = frames[event["frame"]]["name"]
        assert event["at"] >= at
        at = event["at"]
        if event["type"] == "O":
            stack.append(name)
            if open_depth[name] == 0:
                began[name] = at
            open_depth[name] += 1
        else:
            assert stack.pop() == name  # closes the innermost open call
            open_depth[name] -= 1
            if open_depth[name] == 0:
                inclusive[name] += at - began[name]
    assert not stack
    rows = by_name(result.functions)
    for name in ("Reset_Handler", "main", "tfl_conv_opt", "tfl_depthwise_opt", "channels", "memset"):
        assert inclusive[name] == rows[name]["inclusive_cycles"], name
    located = {frame["name"]: frame for frame in frames if "file" in frame}
    assert located["tfl_conv_opt"]["file"].endswith(".c") and located["tfl_conv_opt"]["line"] > 0


@pytest.mark.slow
def test_timeline_has_a_functions_track_with_the_handlers(firmware_build):
    """With the profile, timeline.json gets track 4, one slice per call, nested by time; interrupt
    handlers appear there as the calls they are, besides their own exceptions track."""
    result = mcusim.run(firmware_build / "mcu-m" / "exceptions.elf", "mcu-m", profile=True, timeline=True)
    events = result.timeline["traceEvents"]
    assert {"name": "thread_name", "ph": "M", "pid": 1, "tid": 4, "args": {"name": "functions"}} in events
    calls = [e for e in events if e.get("tid") == 4 and e["ph"] == "X"]
    rows = by_name(result.functions)
    for name in ("main", "SysTick_Handler", "PendSV_Handler"):
        assert sum(1 for e in calls if e["name"] == name) == rows[name]["calls"], name
    # SysTick has the highest priority: nothing preempts it, so its slices hold its inclusive
    # cycles exactly; main's slice also holds the handlers that interrupted it
    assert sum(e["args"]["cycles"] for e in calls if e["name"] == "SysTick_Handler") == \
        rows["SysTick_Handler"]["inclusive_cycles"]
    main = next(e for e in calls if e["name"] == "main")
    assert main["args"]["cycles"] > rows["main"]["inclusive_cycles"]
    assert all(round(e["ts"], 3) == e["ts"] for e in calls)
    plain = mcusim.run(firmware_build / "mcu-m" / "exceptions.elf", "mcu-m", timeline=True)
    assert not any(e.get("tid") == 4 for e in plain.timeline["traceEvents"])  # no profile, no functions track
    assert plain.cycles == result.cycles


def test_a_full_call_log_ends_the_call_timeline_with_a_warning(firmware_build, monkeypatch):
    """With room for 40 moves, the evented calls stop where the log filled, still balanced, and
    the run says so; what is measured does not change."""
    from mcusim.machine import build

    monkeypatch.setattr(build, "CALL_LOG_MOVES", 40)
    elf = firmware_build / "mcu-m" / "exceptions.elf"
    result = mcusim.run(elf, "mcu-m", flamegraph=True)
    assert any("call log keeps the first 40" in w for w in result.warnings)
    opened = [e for e in result.calls if e[0] == "O"]
    assert len(opened) == len([e for e in result.calls if e[0] == "C"]) and result.calls[-1][1] < result.cycles
    assert result.cycles == mcusim.run(elf, "mcu-m").cycles
