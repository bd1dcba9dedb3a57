"""The native (numba) side of the simulator: hooks Unicorn calls at every block (and on a few
accesses) and the one int64 buffer they share with Python.

One module per job (layout: where each slot is; tables: decode-table look-ups; block_cache:
block summaries; core_timing, memory_model, power, profile, sampling, branch_trace,
dwt_events: the models and captures; counters: the list of counters and
their values at an instruction; hooks: the @cfuncs and their registration; m4_rows,
m7_schedule, m7_rows: what the decoder computes natively; state: the Python side). Everything is
re-exported here, so `from ..machine import native as N` and `N.CYCLES`, `N.NativeState`, ...
work as they did when this was one module.
"""
from __future__ import annotations

from . import jit  # noqa: F401  (first: chooses numba's cache before numba compiles anything)
from .layout import *  # noqa: F401,F403
from .encoding import *  # noqa: F401,F403
from .tables import *  # noqa: F401,F403
from .tables import _kind_at, _range_sum, _value_at, _window_of  # noqa: F401
from .core_timing import *  # noqa: F401,F403
from .core_timing import _lazy_fp_store, _predict, _refill_after_branch, _start_adjust  # noqa: F401
from .power import *  # noqa: F401,F403
from .profile import *  # noqa: F401,F403
from .profile import _function_of  # noqa: F401
from .sampling import *  # noqa: F401,F403
from .sampling import _take_samples  # noqa: F401
from .branch_trace import *  # noqa: F401,F403
from .dwt_events import *  # noqa: F401,F403
from .block_cache import *  # noqa: F401,F403
from .memory_model import *  # noqa: F401,F403
from .data_sampling import *  # noqa: F401,F403
from .held_repeats import *  # noqa: F401,F403
from .counters import *  # noqa: F401,F403
from .state import *  # noqa: F401,F403
from .hooks import *  # noqa: F401,F403
