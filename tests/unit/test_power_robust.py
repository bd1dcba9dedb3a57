"""The power model's figures stay bounded and well-formed whatever the run and the model file:
peak power in bounded memory, a bounded power trace, power models and calibration
measurements checked before use (issue 14)."""
import tracemalloc

import numpy as np
import pytest

from mcusim import examples
from mcusim.api import Simulator
from mcusim.power.energy import MAX_COUNTER_BINS, MAX_TRACE_BINS, RunEnergy, summary

HELLO = examples.path("hello", "mcu-d")
SHAPES = examples.path("odd_shapes-opt", "mcu-d")


def run_energy(firmware, **options):
    sim = Simulator(firmware, "mcu-d", **options)
    result = sim.run()
    return result, RunEnergy(sim.machine.power, result.cycles, result.simulated_seconds)


def trace_maximum(energy, bin_us):
    """Peak power as it was computed before: the maximum of the whole trace."""
    return float(sum(energy.trace(bin_us)[1].values()).max())


@pytest.fixture(scope="module")
def shapes():
    return run_energy(SHAPES)


@pytest.fixture(scope="module")
def slow_hello():
    """hello at a 25 Hz clock: 306 s simulated, 3 million power bins of 100 us."""
    return run_energy(HELLO, clock_hz=25)


@pytest.mark.parametrize("bin_us", [100.0, 7.3, 1.0, 0.05, 1e6])
def test_peak_power_is_the_maximum_of_the_trace(shapes, bin_us):
    result, energy = shapes
    assert energy.peak_power(bin_us) == trace_maximum(energy, bin_us)
    if bin_us == 100.0:
        assert result.energy["peak_power_w"] == trace_maximum(energy, bin_us)


def test_peak_power_of_a_long_slow_run_takes_bounded_memory(slow_hello):
    result, energy = slow_hello
    assert energy.bin_count(100.0) > 3 * MAX_TRACE_BINS
    tracemalloc.start()
    try:
        figures = summary(energy, 100.0, {})
        _, peak_bytes = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak_bytes < 32 << 20  # (the whole trace: 3 million bins x 5 rails, several arrays each, ~0.5 GB)
    # the bins around the knots hold the peak: the same as every bin's maximum, up to rounding
    exact = 0.0
    for first in range(0, energy.bin_count(100.0), 1 << 18):
        index = np.arange(first, min(first + (1 << 18), energy.bin_count(100.0)))
        exact = max(exact, float(sum(energy.bins(index, 100.0)[1].values()).max()))
    assert figures["peak_power_w"] == pytest.approx(exact, rel=1e-9)
    assert result.energy["peak_power_w"] == figures["peak_power_w"]


@pytest.mark.parametrize("timeline, most", [(False, MAX_TRACE_BINS), (True, MAX_COUNTER_BINS)])
def test_a_power_trace_too_long_for_its_bins_is_widened_with_a_warning(timeline, most):
    warnings = []
    sim = Simulator(HELLO, "mcu-d", clock_hz=25, power_trace=True, timeline=timeline, on_warning=warnings.append)
    result = sim.run()
    times, watts = result.power_trace
    assert len(times) <= most
    widened = result.energy["power"]["trace_bin_us"]
    assert widened > 100.0 and widened % 100.0 == 0
    assert times[1] - times[0] == pytest.approx(widened * 1e-6)
    assert any("--power-bin-us" in w and f"{widened:g} us bins" in w for w in warnings)
    assert result.energy["power"]["bin_us"] == 100.0  # (the peak stays over the bins asked for)
