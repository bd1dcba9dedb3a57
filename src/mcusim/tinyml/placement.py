"""Where a generated model's parts go (`mcusim model build/run --config PLACEMENT.toml`): the
levers a TinyML performance guide tells users to try, each recorded in the bundle.

    weights = "flash"   # or "ram": weights and biases copied to RAM at reset
    arena = "ram"       # with the other data; or "dtcm" / "sram" on a board with a DTCM (mcu-d)
    code = "flash"      # or "itcm": the layers' and kernels' code copied to ITCM (mcu-d)
    kernels = "ref"     # the plain C kernels (the SIMD ones are not there yet)
"""
from __future__ import annotations

import tomllib
from dataclasses import asdict, dataclass
from pathlib import Path

CHOICES = {"weights": ("flash", "ram"), "arena": ("ram", "dtcm", "sram"), "code": ("flash", "itcm"),
           "kernels": ("ref",)}


class PlacementError(ValueError):
    """A placement file that cannot be used, with the reason."""


@dataclass(frozen=True)
class Placement:
    weights: str = "flash"
    arena: str = "ram"
    code: str = "flash"
    kernels: str = "ref"

    def as_dict(self) -> dict:
        return asdict(self)


def load_placement(path: str | Path | None) -> Placement:
    """The placement in `path` (None: the defaults); every key and value checked."""
    if path is None:
        return Placement()
    try:
        document = tomllib.loads(Path(path).read_text())
    except OSError as error:
        raise PlacementError(f"{path}: cannot read: {error.strerror or error}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
        raise PlacementError(f"{path}: not valid TOML: {error}") from None
    unknown = sorted(set(document) - set(CHOICES))
    if unknown:
        raise PlacementError(f"{path}: unknown keys {', '.join(unknown)} (known: {', '.join(CHOICES)})")
    for key, value in document.items():
        if value not in CHOICES[key]:
            raise PlacementError(f"{path}: {key} = {value!r}: choose one of {', '.join(map(repr, CHOICES[key]))}")
    return Placement(**document)
