"""Optional dependencies. matplotlib (plots, the HTML report) and scipy (calibrate) are extras,
`pip install 'mcusim[plots]'` and `'mcusim[calibrate]'`, so running firmware needs neither;
a command that needs one checks for it before doing any work and says how to install it."""
from __future__ import annotations

import importlib

EXTRA_OF = {"matplotlib": "plots", "scipy": "calibrate", "perfetto": "perfetto"}


class MissingExtra(Exception):
    """An optional dependency is not installed; the message names the pip command."""


def require(module: str, purpose: str) -> None:
    """Raise MissingExtra unless `module` imports; `purpose` says what needs it ("--html")."""
    try:
        importlib.import_module(module)
    except ImportError:
        raise MissingExtra(f"{purpose} needs {module}, which is not installed: "
                           f"pip install 'mcusim[{EXTRA_OF[module]}]'") from None
