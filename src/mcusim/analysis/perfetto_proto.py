"""timeline.json (the Chrome trace event format) as Perfetto's native protobuf trace,
DIR/timeline.pftrace (`--perfetto-proto`), written with the protos the `perfetto` package ships:
one process track, a thread track per timeline track (regions, exceptions, ITM writes,
functions), a counter track per power rail. Slices become TrackEvent begin/end pairs on their
track, instants instant events, counters counter events; times in nanoseconds. Needs the
`perfetto` extra: pip install 'mcusim[perfetto]'."""
from __future__ import annotations

from pathlib import Path

PROCESS_UUID = 1
SEQUENCE = 1  # one writer: every packet on one trusted sequence


def _ns(microseconds: float) -> int:
    return int(round(microseconds * 1000))


def trace(timeline: dict):
    """The perfetto_trace_pb2.Trace of a timeline.json document."""
    from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as P

    out = P.Trace()
    events = timeline["traceEvents"]
    process = next((e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "process_name"), "mcusim")

    def packet(**fields):
        made = out.packet.add(trusted_packet_sequence_id=SEQUENCE, **fields)
        return made

    first = packet(track_descriptor=P.TrackDescriptor(uuid=PROCESS_UUID, process=P.ProcessDescriptor(
        pid=1, process_name=process)))
    first.sequence_flags = P.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED
    for event in events:
        if event.get("ph") == "M" and event["name"] == "thread_name":
            packet(track_descriptor=P.TrackDescriptor(uuid=100 + event["tid"], parent_uuid=PROCESS_UUID,
                                                      thread=P.ThreadDescriptor(pid=1, tid=event["tid"],
                                                                                thread_name=event["args"]["name"])))
    ordered = []  # (ns, order keys..., packet fields): ends before begins at one time, parents around children
    counters: dict[str, int] = {}
    for event in events:
        kind = event.get("ph")
        if kind == "X":
            start, duration = _ns(event["ts"]), _ns(event["dur"])
            track = 100 + event["tid"]
            ordered.append(((start, 1, -duration, 0), start, P.TrackEvent(
                type=P.TrackEvent.TYPE_SLICE_BEGIN, track_uuid=track, name=event["name"],
                debug_annotations=[P.DebugAnnotation(name=key, int_value=value) for key, value in
                                   (event.get("args") or {}).items() if isinstance(value, int)])))
            end = start + duration
            ordered.append(((end, 0, -start, 0) if duration else (end, 1, 0, 1), end,
                            P.TrackEvent(type=P.TrackEvent.TYPE_SLICE_END, track_uuid=track)))
        elif kind == "i":
            at = _ns(event["ts"])
            ordered.append(((at, 1, 0, 0), at, P.TrackEvent(
                type=P.TrackEvent.TYPE_INSTANT, track_uuid=100 + event["tid"], name=event["name"],
                debug_annotations=[P.DebugAnnotation(name=key, string_value=str(value)) for key, value in
                                   (event.get("args") or {}).items()])))
        elif kind == "C":
            at = _ns(event["ts"])
            for series, value in (event.get("args") or {}).items():
                name = f"{event['name']}: {series}"
                if name not in counters:
                    counters[name] = 1000 + len(counters)
                    packet(track_descriptor=P.TrackDescriptor(uuid=counters[name], parent_uuid=PROCESS_UUID,
                                                              name=name, counter=P.CounterDescriptor()))
                ordered.append(((at, 1, 0, 0), at, P.TrackEvent(type=P.TrackEvent.TYPE_COUNTER,
                                                                track_uuid=counters[name],
                                                                double_counter_value=float(value))))
    ordered.sort(key=lambda item: item[0])
    for _, at, track_event in ordered:
        packet(timestamp=at, track_event=track_event)
    return out


def write(timeline: dict, path: str | Path) -> None:
    Path(path).write_bytes(trace(timeline).SerializeToString())
