"""The stores `clinbench serve` shows, and the one rule for reaching a file inside them.

Every folder given on the command line is searched for campaign stores (``results.duckdb``);
a run's evidence folders (``runs/``) and a campaign's scratch folders are not searched. A
store is known by its position in that list, never by a path the browser sends, and a file
is served only when it resolves (symbolic links followed) to a path inside its store's
folder: a run row whose ``evidence_dir`` says ``../..`` reaches nothing.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path

from clinbench.records import STORE_FILE
from clinbench.errors import ClinbenchError

# One DuckDB file may not be open read-only and read-write at once in a process: the app's threads take
# turns on every store (the clinicians' store is written while pages read it).
STORE_LOCK = threading.RLock()
_SKIP = {"runs", ".partial", ".work", ".git", "__pycache__", "node_modules"}


@dataclass(frozen=True)
class Source:
    index: int
    root: Path  # the campaign folder (resolved)
    label: str  # as shown: the folder relative to the folder it was found under

    @property
    def store_path(self) -> Path:
        return self.root / STORE_FILE


def find_stores(folders: list[Path]) -> list[Source]:
    """The campaign stores at or under each folder, in the order given (each found once)."""
    found: list[Path] = []
    labels: dict[Path, str] = {}
    for folder in folders:
        folder = Path(folder)
        if not folder.exists():
            raise ClinbenchError(f"no such folder: {folder}; pass campaign folders (the --out of `clinbench run`)")
        base = folder.resolve()
        if base.is_file():
            base = base.parent if base.name == STORE_FILE else base
            if not (base / STORE_FILE).is_file():
                raise ClinbenchError(f"{folder} is not a campaign folder or store; pass a folder holding {STORE_FILE}")
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in _SKIP)
            if STORE_FILE in filenames:
                path = Path(dirpath).resolve()
                if path not in labels:
                    found.append(path)
                    rel = path.relative_to(base)
                    labels[path] = str(Path(folder.name if base != Path("/") else "/") / rel) if str(rel) != "." else (
                        folder.name or str(base))
    return [Source(i, p, labels[p]) for i, p in enumerate(found)]


def inside(root: Path, *parts: str | None) -> Path | None:
    """``root/parts…`` when it resolves inside ``root`` (``None`` otherwise, or for an empty part)."""
    if any(not p for p in parts):
        return None
    try:
        path = Path(root, *parts).resolve()
    except (OSError, RuntimeError, ValueError):
        return None
    root = Path(root).resolve()
    return path if path == root or root in path.parents else None
