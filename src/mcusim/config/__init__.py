"""Hardware descriptions: boards, SoCs and cores loaded from TOML."""
from .loader import ConfigError, board_names, data_dir, load_board, load_core
from .specs import BoardSpec, CoreSpec, MemoryRegion, PeripheralSpec

__all__ = ["ConfigError", "board_names", "data_dir", "load_board", "load_core",
           "BoardSpec", "CoreSpec", "MemoryRegion", "PeripheralSpec"]
