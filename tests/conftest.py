import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import os  # noqa: E402
import tempfile  # noqa: E402

# The decode store (mcusim/timing/decode_store.py) of this test session: not the user's
# ~/.cache/mcusim, and empty at the start, so a session's first run of an image decodes it and
# later runs copy the rows, as a user's runs do.
_STORE = tempfile.TemporaryDirectory(prefix="mcusim-test-decode-")
os.environ.setdefault("MCUSIM_DECODE_CACHE", _STORE.name)
