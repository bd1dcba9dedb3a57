"""Many simulators in one process (a sweep, a test session) must not keep the finished ones:
nothing global (hook variants, decode memos, numba's cache) may hold on to a machine."""
import gc
import weakref

from mcusim import examples
from mcusim.api import Simulator


def test_a_finished_simulator_is_freed_after_the_next_one_runs():
    elf = examples.path("hello", "mps2-an386")
    first = Simulator(elf, "mps2-an386")
    first.run()
    machine = weakref.ref(first.machine)
    del first
    second = Simulator(elf, "mps2-an386")  # (constructed and run while the first is garbage)
    second.run()
    del second
    gc.collect()
    assert machine() is None
