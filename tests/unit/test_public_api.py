"""`import mcusim` exports what a tool author uses, each name resolving on first use."""
import mcusim


def test_every_exported_name_resolves():
    for name in mcusim.__all__:
        assert getattr(mcusim, name) is not None, name
    assert mcusim.examples.path("hello", "mcu-d").is_file()
    assert {"Simulator", "Stop", "Event", "Hit", "run"} <= set(mcusim.__all__)
