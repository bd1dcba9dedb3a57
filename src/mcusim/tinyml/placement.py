"""Where a generated model's parts go (`mcusim model build/run --config PLACEMENT.toml`): the
levers a TinyML performance guide tells users to try, each recorded in the bundle.

    weights = "flash"   # or "ram": weights and biases copied to RAM at reset
    arena = "ram"       # with the other data; or "dtcm" / "sram" on a board with a DTCM (mcu-d)
    code = "flash"      # or "itcm": the layers' and kernels' code copied to ITCM (mcu-d)
    kernels = "opt"     # the SIMD kernels where a layer has one; or "ref", the plain C ones

    [layer_kernels]     # a layer's own kernel set, by its name in `mcusim model show`
    "1_DEPTHWISE_CONV_2D" = "ref"
"""
from __future__ import annotations

import tomllib
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

VARIANTS = ("opt", "ref")
CHOICES = {"weights": ("flash", "ram"), "arena": ("ram", "dtcm", "sram"), "code": ("flash", "itcm"),
           "kernels": VARIANTS}


class PlacementError(ValueError):
    """A placement file that cannot be used, with the reason."""


@dataclass(frozen=True)
class Placement:
    weights: str = "flash"
    arena: str = "ram"
    code: str = "flash"
    kernels: str = "opt"
    layer_kernels: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {f.name: (dict(getattr(self, f.name)) if f.name == "layer_kernels" else getattr(self, f.name))
                for f in fields(self)}

    def with_kernels(self, variant: str | None) -> "Placement":
        """This placement with every layer's kernel set (`--variant`); None: unchanged."""
        return self if variant is None else replace(self, kernels=variant, layer_kernels={})

    def variants(self, model) -> dict[int, str]:
        """The kernel set asked for each layer of `model`, by node index; PlacementError names a
        layer in [layer_kernels] the model does not have."""
        names = {f"{op.index}_{op.name}": op.index for op in model.operators}
        unknown = sorted(set(self.layer_kernels) - set(names))
        if unknown:
            raise PlacementError(f"[layer_kernels] names {', '.join(unknown)}, not layers of {model.path} "
                                 f"(its layers: {', '.join(names)})")
        asked = {op.index: self.kernels for op in model.operators}
        asked.update({names[name]: variant for name, variant in self.layer_kernels.items()})
        return asked


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
    unknown = sorted(set(document) - set(CHOICES) - {"layer_kernels"})
    if unknown:
        raise PlacementError(f"{path}: unknown keys {', '.join(unknown)} (known: {', '.join(CHOICES)}, layer_kernels)")
    for key, value in document.items():
        if key == "layer_kernels":
            if not isinstance(value, dict):
                raise PlacementError(f"{path}: layer_kernels must be a table of layer name = \"opt\" or \"ref\"")
            for name, variant in value.items():
                if variant not in VARIANTS:
                    raise PlacementError(f"{path}: layer_kernels.{name} = {variant!r}: choose one of "
                                         f"{', '.join(map(repr, VARIANTS))}")
        elif value not in CHOICES[key]:
            raise PlacementError(f"{path}: {key} = {value!r}: choose one of {', '.join(map(repr, CHOICES[key]))}")
    return Placement(**document)
