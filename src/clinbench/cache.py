"""Where clinbench keeps its caches: ``$CLINBENCH_CACHE`` (default ``~/.cache/clinbench``)."""

from __future__ import annotations

import os
from pathlib import Path


def cache_root() -> Path:
    """``$CLINBENCH_CACHE`` (default ``~/.cache/clinbench``): every cache of clinbench's lives under it."""
    return Path(os.environ.get("CLINBENCH_CACHE") or Path.home() / ".cache" / "clinbench")
