"""mcusim: an instruction-level simulator of Cortex-M4F/M7F boards with cycle and trace models."""
__version__ = "0.1.0"

from .api import RunResult, Simulator, run  # noqa: E402
from .config import ConfigError, board_names, load_board  # noqa: E402
from .elf import ElfError  # noqa: E402

__all__ = ["RunResult", "Simulator", "run", "ConfigError", "board_names", "load_board", "ElfError", "__version__"]
