"""signals.vcd writes a value only when it changes (analysis/vcd.py): a constant power rail is
one value, not one per trace bin; pins and regions that repeat their level add nothing."""
from vcdread import read_vcd

from mcusim.analysis.vcd import write


def test_only_changes_are_written(tmp_path):
    power = [(i * 1e-4, "core", 0.07673) for i in range(718)]  # a constant rail over 718 bins
    power += [(i * 1e-4, "board", 0.05 if i < 300 else 0.06) for i in range(718)]  # one step
    pins = [(1e-5, "LED", 1), (2e-5, "LED", 1), (3e-5, "LED", 0), (4e-5, "LED", 0)]
    regions = [(1e-5, "conv", True), (2e-5, "conv", False), (3e-5, "conv", True), (4e-5, "conv", False)]
    path = tmp_path / "signals.vcd"
    write(path, pins, regions, end_seconds=0.1, power=power)
    _, changes = read_vcd(path)
    core = changes["mcusim.power.core_w"]
    assert [value for _, value in core] == [0.07673]  # its one value, at time 0 (in $dumpvars)
    board = changes["mcusim.power.board_w"]
    assert [value for _, value in board] == [0.05, 0.06] and board[-1][0] == 300 * 100_000  # at 30 ms (in ns)
    assert [value for _, value in changes["mcusim.gpio.LED"]] == ["z", "1", "0"]
    assert [value for _, value in changes["mcusim.regions.conv"]] == ["0", "1", "0", "1", "0"]
