"""Region statistics from ITM markers (src/mcusim/analysis/regions.py)."""
from mcusim.analysis.regions import (COLUMNS, RegionRecorder, format_table, heap_peak_by_region, lowest_sp_by_region,
                                     read_info, summarize)

NAMES = {0x100: "inference", 0x200: "conv", 0x300: "fc"}


def test_nested_and_repeated_regions():
    r = RegionRecorder()
    for begin, name, cycle in [(True, 0x100, 0), (True, 0x200, 10), (False, 0x200, 110), (True, 0x300, 110),
                               (False, 0x300, 130), (False, 0x999, 131), (False, 0x100, 140),
                               (True, 0x200, 200), (False, 0x200, 260), (True, 0x300, 300)]:
        r.mark(begin, name, cycle, cycle / 1e6)
    rows = {row["name"]: row for row in summarize(r, NAMES.get, {"conv": (500, 64)}, 400)}
    assert set(rows) == {"inference", "conv", "fc"}     # the unmatched end and the open fc are left out
    assert r.unmatched == 2
    conv = rows["conv"]
    assert (conv["count"], conv["cycles_mean"], conv["cycles_min"], conv["cycles_max"]) == (2, 80, 60, 100)
    assert conv["share"] == 160 / 400 and conv["macs"] == 500 and conv["macs_per_cycle"] == round(500 / 80, 4)
    assert rows["fc"]["count"] == 1 and rows["fc"]["macs"] == 0
    assert (rows["inference"]["macs"], rows["inference"]["bytes"]) == (500, 64)  # its conv run's
    assert (conv["cycles_p50"], conv["cycles_p99"]) == (60, 100)
    assert set(conv) == set(COLUMNS)
    table = format_table(list(rows.values())).splitlines()
    assert [line.split()[0] for line in table[2:]] == ["conv", "inference", "fc"]  # by total cycles


def test_a_parent_region_sums_the_outermost_described_runs_inside_it():
    """An undescribed region (an inference, twice) gets the MACs and bytes of the described runs
    inside each of its runs, per run; a described run inside another is not counted again, and a
    described run outside the parent is not counted."""
    names = {0x100: "inference", 0x200: "block", 0x300: "conv", 0x400: "fc"}
    r = RegionRecorder()
    for begin, name, cycle in [(True, 0x400, 0), (False, 0x400, 5),            # fc before: outside
                               (True, 0x100, 10), (True, 0x200, 20), (True, 0x300, 30), (False, 0x300, 40),
                               (False, 0x200, 50), (True, 0x400, 50), (False, 0x400, 60), (False, 0x100, 70),
                               (True, 0x100, 100), (True, 0x400, 110), (False, 0x400, 120), (False, 0x100, 130)]:
        r.mark(begin, name, cycle, cycle / 1e6)
    info = {"block": (1000, 100), "conv": (900, 90), "fc": (10, 1)}
    rows = {row["name"]: row for row in summarize(r, names.get, info, 200)}
    # run 1: block (1000, which holds conv) + fc (10); run 2: fc (10): a mean of 510 per run
    assert (rows["inference"]["macs"], rows["inference"]["bytes"]) == (510, 51)
    assert rows["inference"]["macs_per_cycle"] == round(510 / 45, 4)  # runs of 60 and 30 cycles
    assert rows["block"]["macs"] == 1000  # described: its own figure, not its children's


def test_marker_buffer_is_bounded():
    r = RegionRecorder(limit=3)
    for i in range(5):
        r.mark(True, 0x100, i, 0.0)
    assert len(r.events) == 3 and r.dropped == 2


def test_region_info_table_is_read_until_its_null_name():
    memory = {0x1000: 0x200, 0x1004: 7, 0x1008: 9, 0x100C: 0}
    info = read_info(memory.get, NAMES.get, 0x1000)
    assert info == {"conv": (7, 9)}
    assert read_info(memory.get, NAMES.get, None) == {}


def test_percentiles_show_the_tail_of_a_repeated_region():
    r = RegionRecorder()
    t = 0
    for i in range(100):  # 100 inferences, two of them stretched by an interrupt
        length = 1000 + (500 if i in (10, 60) else 0)
        r.mark(True, 0x100, t, 0.0)
        r.mark(False, 0x100, t + length, 0.0)
        t += 2000
    row = summarize(r, NAMES.get, {}, t)[0]
    assert (row["cycles_p50"], row["cycles_p95"], row["cycles_max"]) == (1000, 1000, 1500)
    assert row["cycles_p99"] == 1500 and row["cycles_mean"] == 1010


def test_each_region_gets_the_lowest_sp_between_its_markers():
    """Each marker carries the lowest SP since the one before and the SP at it: a region's is
    the lowest from its begin's SP through the markers up to its end, never what came before
    its begin (nesting, repeats, and markers without one)."""
    r = RegionRecorder()
    for begin, name, stack in [(True, 0x100, (800, 1000)), (True, 0x200, (990, 990)), (False, 0x200, (900, 990)),
                               (True, 0x300, (980, 985)), (False, 0x300, (950, 985)), (False, 0x100, (970, 1000)),
                               (True, 0x200, (700, 1000)), (False, 0x200, (880, 1000)),
                               (True, 0x300, None), (False, 0x300, None)]:
        r.mark(begin, name, 0, 0.0, stack)
    assert lowest_sp_by_region(r, NAMES.get) == {"inference": 900, "conv": 880, "fc": 950}


def test_each_region_gets_the_heap_peak_between_its_markers():
    """The heap's samples are (the most since the marker before, the amount at this one): a
    region's peak is the most from its begin through its end, even when it shrank again."""
    r = RegionRecorder()
    for begin, name, heap in [(True, 0x100, (500, 100)), (True, 0x200, (100, 100)), (False, 0x200, (400, 300)),
                              (True, 0x300, (300, 300)), (False, 0x300, (900, 200)), (False, 0x100, (200, 200)),
                              (True, 0x200, (200, 200)), (False, 0x200, (250, 250))]:
        r.mark(begin, name, 0, 0.0, heap=heap)
    assert heap_peak_by_region(r, NAMES.get) == {"inference": 900, "conv": 400, "fc": 900}


def test_a_marker_on_the_process_stack_carries_no_main_stack_sp():
    """While Thread mode runs on the process stack the main SP is unknown at a marker (None):
    the region takes its lowest from the markers that know it."""
    r = RegionRecorder()
    for begin, name, stack in [(True, 0x100, (900, None)), (True, 0x200, (None, 950)), (False, 0x200, (940, 950)),
                               (False, 0x100, (None, None))]:
        r.mark(begin, name, 0, 0.0, stack)
    assert lowest_sp_by_region(r, NAMES.get) == {"inference": 940, "conv": 940}


def test_plots_read_only_the_region_slices_of_a_timeline(tmp_path):
    """report --html and power-plot draw region lanes: the exception and function tracks of the
    same timeline.json stay out of them."""
    import json

    from mcusim.analysis.bundle import timeline_slices

    events = [{"name": "inference", "ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 10},
              {"name": "SysTick", "ph": "X", "pid": 1, "tid": 2, "ts": 1, "dur": 1},
              {"name": "main", "ph": "X", "pid": 1, "tid": 4, "ts": 0, "dur": 10},
              {"name": "ITM port 0", "ph": "i", "pid": 1, "tid": 3, "ts": 2}]
    (tmp_path / "timeline.json").write_text(json.dumps({"traceEvents": events}))
    assert [e["name"] for e in timeline_slices(tmp_path / "timeline.json")] == ["inference"]
