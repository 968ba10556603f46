"""The figures store, ``docs/performance.json``: the latest measurement of each benchmark row, no history.

A row is one thing measured with its anchor measured in the same run: what it is, clinbench's
figure, the anchor's, their ratio, the goal (if any) and whether it is met, and the run that
produced it (the exact command, date, commit, machine load). A benchmark script's ``--record``
hands the figures it just printed to ``record``, which replaces that script's rows by id (a new
row goes after the last row of its script, so the table keeps its grouping) and writes the file
atomically. ``benchmarks/performance_table.py`` renders the rows into ``docs/performance.md``.

Row ids are ``script:name`` (``concepts:layer``); the script part places new rows.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from clinbench.atomic import write_text_atomic

ROOT = Path(__file__).resolve().parents[1]
FIGURES = ROOT / "docs" / "performance.json"


@dataclass(frozen=True)
class Figure:
    """One row of the performance table. Figures are text as the script printed them (units included)."""

    id: str
    what: str
    clinbench: str
    anchor: str
    ratio: str
    goal: str | None  # e.g. "≥ 10x wall and CPU"; None when the row has no goal
    met: bool | None  # None when there is no goal
    command: str
    date: str
    commit: str
    load: str  # the 1-minute load average at the start -> at the end of the run


@dataclass(frozen=True)
class Run:
    """How a measurement was made: taken once per benchmark run, shared by its rows."""

    command: str
    date: str
    commit: str
    load: str


def load_average() -> float:
    return os.getloadavg()[0]


def this_run(load_at_start: float, argv: list[str] | None = None) -> Run:
    """The run now ending: its command line (the script's path from the repository root), today's date
    (UTC), the checkout's commit (``+changes`` when src/ or benchmarks/ differ from it) and the load."""
    argv = list(sys.argv if argv is None else argv)
    script = Path(argv[0]).resolve()
    try:
        argv[0] = str(script.relative_to(ROOT))
    except ValueError:
        pass
    return Run(command=shlex.join(argv), date=time.strftime("%Y-%m-%d", time.gmtime()), commit=_commit(),
               load=f"{load_at_start:.1f} -> {load_average():.1f}")


def _commit() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", "-C", str(ROOT), *args], capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    # the figures belong to the code measured: say so when that is not the commit itself
    return head + ("+changes" if git("status", "--porcelain", "--", "src", "benchmarks") else "")


def read(path: Path = FIGURES) -> list[Figure]:
    """The stored rows, in table order (a missing file holds none)."""
    if not path.is_file():
        return []
    names = {f.name for f in fields(Figure)}
    rows = []
    for raw in json.loads(path.read_text(encoding="utf-8"))["rows"]:
        if set(raw) != names:
            raise SystemExit(f"{path}: row {raw.get('id', '?')!r} has fields {sorted(set(raw) ^ names)} "
                             "wrong (missing or unknown)")
        rows.append(Figure(**raw))
    return rows


def record(measured: list[dict], run: Run, path: Path = FIGURES) -> list[Figure]:
    """Write ``measured`` (dicts of every Figure field but the run's) into ``path``: each replaces the row
    of its id, or is placed after the last row of its script; every other row is kept as it was."""
    rows = read(path)
    for item in measured:
        new = Figure(**item, **asdict(run))
        ids = [r.id for r in rows]
        if new.id in ids:
            rows[ids.index(new.id)] = new
            continue
        script = new.id.split(":", 1)[0]
        same = [i for i, r in enumerate(rows) if r.id.split(":", 1)[0] == script]
        rows.insert(same[-1] + 1 if same else len(rows), new)
    write(rows, path)
    return rows


def write(rows: list[Figure], path: Path = FIGURES) -> None:
    write_text_atomic(path, json.dumps({"rows": [asdict(r) for r in rows]}, indent=1, ensure_ascii=False) + "\n")
