"""Help and usage errors a newcomer reads: whole option names, true descriptions, one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys


def _clinbench(*args: str, columns: int = 80) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(columns), "TERM": "dumb"}
    return subprocess.run([sys.executable, "-m", "clinbench", *args], capture_output=True, text=True, env=env)


def test_the_top_level_help_says_the_demo_synthesises_mimic_iv_only():
    """`clinbench demo` makes no eICU database: the listing must not say it does."""
    from clinbench.cli import AREAS

    line = AREAS["demo"][1]
    assert "eICU" not in line
    assert "MIMIC-IV" in line
