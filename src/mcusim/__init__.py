"""mcusim: an instruction-level simulator of Cortex-M4F/M7F boards with cycle and trace models."""
__version__ = "0.1.0"

__all__ = ["RunResult", "Simulator", "Stop", "Event", "Hit", "run", "examples", "ConfigError", "board_names",
           "load_board", "ElfError", "__version__"]
_HOMES = {"RunResult": "api", "Simulator": "api", "Stop": "run_control", "Event": "machine.machine",
          "Hit": "machine.watchpoints", "run": "api", "ConfigError": "config",
          "board_names": "config", "load_board": "config", "ElfError": "elf"}


def __getattr__(name: str):
    """The API names import on first use, so that `import mcusim` is quick: the console
    script (launch.py) installs its signal handlers before the heavy imports."""
    import importlib
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name in _HOMES:
        value = getattr(importlib.import_module(f".{_HOMES[name]}", __name__), name)
        globals()[name] = value
        return value
    try:
        return importlib.import_module(f".{name}", __name__)
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
