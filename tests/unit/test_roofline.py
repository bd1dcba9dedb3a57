"""The roofline's arithmetic (analysis/roofline.py): ceilings per bank, the ceiling that bounds
a region, the fraction of it reached and the verdict."""
import pytest

from mcusim.analysis import roofline
from mcusim.config.loader import core_timing_table, load_core

CORE = {"simd_macs_per_cycle": 2.0, "plain_macs_per_cycle": 1.0, "load_store_bytes_per_cycle": 4.0}


def limits(flash_wait=4):
    return roofline.ceilings(CORE, [roofline.bank_ceiling("flash", "flash", 4.0, 8, flash_wait),
                                    roofline.bank_ceiling("ram", "ram", 4.0)])


def test_bank_ceilings_follow_wait_states_and_caches():
    assert roofline.bank_ceiling("ram", "ram", 4.0)["bytes_per_cycle"] == 4.0
    assert roofline.bank_ceiling("flash", "flash", 4.0, 8, 4)["bytes_per_cycle"] == pytest.approx(1.6)
    assert roofline.bank_ceiling("flash", "flash", 8.0, 32, 7)["bytes_per_cycle"] == 4.0
    assert roofline.bank_ceiling("flash", "flash", 4.0, 32, 0)["bytes_per_cycle"] == 4.0  # never above the core's
    cached = roofline.bank_ceiling("flash", "flash", 4.0, 8, 4, data_cache=True)
    assert cached["bytes_per_cycle"] == 4.0 and cached["miss_bytes_per_cycle"] == pytest.approx(1.6)


def test_a_region_is_bound_by_its_lowest_ceiling():
    # 1,000 MACs over 4,000 flash bytes: flash allows 0.25 * 1.6 = 0.4 MACs/cycle
    memory = roofline.place({"name": "fc", "macs": 1000, "cycles_mean": 2800, "bytes_by_bank": {"flash": 4000,
                                                                                                "ram": 100}}, limits())
    assert memory["bound"] == "flash" and memory["attainable_macs_per_cycle"] == pytest.approx(0.4)
    assert memory["ceiling_fraction"] == pytest.approx((1000 / 2800) / 0.4, abs=1e-4)
    assert memory["verdict"] == "memory-bound (flash)"
    # 100,000 MACs over 1,000 bytes: only the SIMD peak bounds it
    compute = roofline.place({"name": "conv", "macs": 100_000, "cycles_mean": 60_000,
                              "bytes_by_bank": {"flash": 500, "ram": 500}}, limits())
    assert compute["bound"] == "compute" and compute["verdict"] == "compute-bound"
    # the same work in five times the cycles reaches a sixth of its ceiling: overhead
    slow = roofline.place({"name": "conv", "macs": 100_000, "cycles_mean": 300_000,
                           "bytes_by_bank": {"flash": 500, "ram": 500}}, limits())
    assert slow["bound"] == "compute" and slow["verdict"] == "overhead-bound"
    # all banks together: the core's load/store port (4 B/cycle over 1,500 + 1,500 bytes)
    both = roofline.place({"name": "add", "macs": 1000, "cycles_mean": 800,
                           "bytes_by_bank": {"flash": 1500, "ram": 1500}}, limits(flash_wait=0))
    assert both["bound"] == "load/store" and both["attainable_macs_per_cycle"] == pytest.approx(1000 / 3000 * 4, abs=1e-4)


def test_regions_without_macs_or_traffic_are_left_off():
    rows = [{"name": "inference", "macs": 0, "cycles_mean": 10, "bytes_by_bank": {"ram": 4}},
            {"name": "idle", "macs": 10, "cycles_mean": 10, "bytes_by_bank": {"ram": 0}},
            {"name": "uncounted", "macs": 10, "cycles_mean": 10},
            {"name": "layer", "macs": 10, "cycles_mean": 10, "bytes_by_bank": {"ram": 4}}]
    assert [p["name"] for p in roofline.analyse(rows, limits())] == ["layer"]


@pytest.mark.parametrize("name", ["cortex-m4", "cortex-m7"])
def test_core_peaks_match_the_core_timing_tables(name):
    core = load_core(name)
    peaks, timing = core.roofline, core_timing_table(core)
    assert set(peaks) == set(CORE)
    if name == "cortex-m4":  # one SMLAD (two MACs) and one MLA per `dsp` and `multiply` cycles
        assert peaks["simd_macs_per_cycle"] == 2 / timing["dsp"]
        assert peaks["plain_macs_per_cycle"] == 1 / timing["multiply"]
        assert peaks["load_store_bytes_per_cycle"] == 4 / timing["multiple_base"]
    else:  # LDM/STM: multiple_registers_per_cycle words a cycle
        assert peaks["load_store_bytes_per_cycle"] == 4 * timing["multiple_registers_per_cycle"]


def test_the_plot_draws_every_ceiling_and_region(tmp_path):
    pytest.importorskip("matplotlib")
    placed = roofline.analyse([{"name": "fc", "macs": 1000, "cycles_mean": 2800,
                                "bytes_by_bank": {"flash": 4000, "ram": 100}}], limits())
    figure = roofline.plot(placed, limits(), "test", tmp_path / "r.png")
    labels = [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
    assert labels == ["flash: 1.6 B/cycle", "load/store: 4 B/cycle", "ram: 4 B/cycle", "SIMD peak: 2 MACs/cycle",
                      "plain MLA peak: 1 MACs/cycle"]
    assert (tmp_path / "r.png").stat().st_size > 10_000
