"""`--perfetto-proto`: timeline.pftrace, Perfetto's native protobuf, parsed back with the protos
the perfetto package ships: the same slices, instants and counters as timeline.json, on one
track each, every slice's begin and end balanced and nested on its track."""
import json

import pytest

from clirun import run_cli

pytestmark = pytest.mark.slow  # a captured run written and parsed back


def test_protobuf_trace_holds_the_json_timeline(firmware_build, tmp_path):
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as P

    out = tmp_path / "out"
    done = run_cli("run", firmware_build / "mcu-m" / "exceptions.elf", "--board", "mcu-m", "--profile",
                   "--perfetto-proto", "--power-trace", "--out", out, "-q")
    assert done.returncode == 0, done.stderr
    timeline = json.loads((out / "timeline.json").read_text())
    assert "timeline.pftrace" in json.loads((out / "run.json").read_text())["artifacts"]
    parsed = P.Trace()
    parsed.ParseFromString((out / "timeline.pftrace").read_bytes())
    tracks = {p.track_descriptor.uuid: p.track_descriptor for p in parsed.packet if p.HasField("track_descriptor")}
    threads = {d.thread.thread_name for d in tracks.values() if d.HasField("thread")}
    assert threads == {"regions", "exceptions", "ITM writes", "functions"}
    assert all(p.trusted_packet_sequence_id == 1 for p in parsed.packet)
    events = [p for p in parsed.packet if p.HasField("track_event")]
    assert [p.timestamp for p in events] == sorted(p.timestamp for p in events)
    open_on: dict[int, list[str]] = {}
    slices = []
    for p in events:
        event = p.track_event
        assert event.track_uuid in tracks
        if event.type == P.TrackEvent.TYPE_SLICE_BEGIN:
            open_on.setdefault(event.track_uuid, []).append(event.name)
        elif event.type == P.TrackEvent.TYPE_SLICE_END:
            slices.append((tracks[event.track_uuid].thread.thread_name, open_on[event.track_uuid].pop()))
    assert not any(open_on.values())
    by_tid = {e["tid"]: e["args"]["name"] for e in timeline["traceEvents"] if e.get("name") == "thread_name"}
    expected = sorted((by_tid[e["tid"]], e["name"]) for e in timeline["traceEvents"] if e["ph"] == "X")
    assert sorted(slices) == expected and len(expected) > 20
    instants = [p for p in events if p.track_event.type == P.TrackEvent.TYPE_INSTANT]
    assert len(instants) == sum(1 for e in timeline["traceEvents"] if e["ph"] == "i")
    counters = [p for p in events if p.track_event.type == P.TrackEvent.TYPE_COUNTER]
    series = sum(len(e["args"]) for e in timeline["traceEvents"] if e["ph"] == "C")
    assert len(counters) == series > 0
    assert run_cli("run", firmware_build / "mcu-m" / "hello.elf", "--board", "mcu-m",
                   "--perfetto-proto").returncode == 2  # (it writes into DIR: --out is needed)
