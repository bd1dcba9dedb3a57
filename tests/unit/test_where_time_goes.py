"""benchmarks/where_time_goes.py: the split of one run's host time adds up to the run's own
measure, and the wrappers come off again afterwards."""
import sys
import time
from pathlib import Path

import unicorn

from mcusim import examples
from mcusim.timing.capstone_library import Thumb
from mcusim.timing.decoder import Decoder

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import where_time_goes  # noqa: E402


def test_split_sums_to_the_run_and_unwraps():
    started = time.perf_counter()
    seconds, counts, result = where_time_goes.measure(examples.path("hello", "mps2-an386"), "mps2-an386")
    wall = time.perf_counter() - started
    assert result.exit_code == 0
    run = sum(seconds.get(c, 0.0) for c in where_time_goes.CATEGORIES[2:11])
    # Machine.run's own stopwatch against the rows inside it (their wrappers cost a little)
    assert abs(run - result.host_seconds) <= 0.1 * result.host_seconds + 0.005
    total = sum(seconds.values())
    assert total <= wall + 0.01 and seconds["native emulation"] > 0
    assert counts["blocks decoded"] > 0 and counts["instructions decoded"] > 0
    assert not hasattr(unicorn.Uc.emu_start, "__wrapped__") and not hasattr(Decoder.decode_block, "__wrapped__")
    assert not any(hasattr(getattr(Thumb, name), "__wrapped__") for name in ("disasm_lite", "disasm", "raw_disasm"))



def test_capstone_timed_with_the_decode_when_not_apart():
    """speed.py times the decode as one category (capstone_apart=False): capstone's calls are
    then not wrapped one step at a time, so their time stays in the decode's wrappers'."""
    names = ("disasm_lite", "disasm", "raw_disasm")
    for apart in (True, False):
        where_time_goes.instrument(where_time_goes.Stopwatch(), capstone_apart=apart)
        try:
            assert hasattr(Decoder.decode_block, "__wrapped__")
            assert all(hasattr(getattr(Thumb, name), "__wrapped__") == apart for name in names)
        finally:
            where_time_goes._uninstrument()
    assert not any(hasattr(getattr(Thumb, name), "__wrapped__") for name in names)
