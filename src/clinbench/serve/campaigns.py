"""What the campaign page shows: the statistics `clinbench stats --json` prints (the same call),
its figure, the runs table with its filters, and a running campaign's progress.

Statistics are computed once per (store file state, comparison) and kept while the store is
unchanged. Every read opens the store read-only.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clinbench.records.store import Store
from clinbench.errors import ClinbenchError
from clinbench.serve.sources import STORE_LOCK, Source

FILTERS = ("task", "family", "condition", "schema", "agent", "model", "status")
_cache: dict[tuple, tuple[tuple, Any]] = {}  # (what, store folder, extra) -> (store file state, value)


def _stamp(source: Source) -> tuple:
    st = source.store_path.stat()
    return (st.st_mtime_ns, st.st_size)


def _cached(key: tuple, source: Source, make) -> Any:
    """``make()``, kept until the store file changes (one entry per key: a live campaign does not pile them up)."""
    with STORE_LOCK:
        stamp = _stamp(source)
        hit = _cache.get(key)
        if hit is None or hit[0] != stamp:
            _cache[key] = (stamp, make())
        return _cache[key][1]


def readable(source: Source) -> Path:
    """The folder to read ``source``'s store from: its own, or, for a store an older clinbench wrote
    (which ``Store.open`` would upgrade in place), a private upgraded copy, so the app writes nothing there."""
    def make() -> Path:
        from clinbench.records import RUN_COLUMNS, STORE_FILE

        with Store(source.store_path).connect(read_only=True) as con:
            have = {r[0] for r in con.execute(
                "SELECT column_name FROM duckdb_columns() WHERE database_name = current_database() "
                "AND table_name = 'runs'").fetchall()}
        if not have or not set(RUN_COLUMNS) - have:
            return source.root  # current (or not a store at all: Store.open says so in one line)
        copy = Path(tempfile.mkdtemp(prefix="clinbench-serve-"))
        shutil.copyfile(source.store_path, copy / STORE_FILE)
        return copy

    return _cached(("readable", str(source.root)), source, make)


def runs_of(source: Source) -> list[dict[str, Any]]:
    """Every run of the store (with usage), cached while the store file is unchanged."""
    return _cached(("runs", str(source.root)), source, lambda: Store.open(readable(source)).runs())


def benchmarks(source: Source) -> dict[str, int]:
    out: dict[str, int] = {}
    for r in runs_of(source):
        out[r["benchmark"]] = out.get(r["benchmark"], 0) + 1
    return out


@dataclass
class Stats:
    data: dict[str, Any] | None  # stats --json's object
    figure: str | None  # SVG text
    error: str | None  # the one-line reason there are none


def derive_stats(source: Source, compare: str | None) -> Stats:
    """``clinbench stats DIR [--compare X] --json`` with its default draws and seed, and its figure."""
    def make() -> Stats:
        from clinbench.derive.catalogue import task_families
        from clinbench.report.data import make_figures, summary_figures
        from clinbench.stats.analysis import analyse

        try:
            result = analyse(readable(source), compare, families=task_families())
        except ClinbenchError as exc:
            return Stats(None, None, str(exc))
        figures = summary_figures(result) if result.kind == "summary" else make_figures(result)
        return Stats(json.loads(json.dumps(result.to_dict(), default=str)), figures.get("forest"), None)

    return _cached(("stats", str(source.root), compare), source, make)


def comparisons(runs: list[dict[str, Any]]) -> list[str]:
    """The comparisons a campaign offers: each dimension with exactly two values (``DIM:A:B``)."""
    out = []
    for dim in ("condition", "agent", "model", "schema"):
        values = sorted({str(r[dim] or "") for r in runs if r["benchmark"] == "derive"})
        if len(values) == 2:
            out.append(f"{dim}:{values[0]}:{values[1]}")
    return out


def filter_options(runs: list[dict[str, Any]]) -> dict[str, list[str]]:
    return {f: sorted({"" if r[f] is None else str(r[f]) for r in runs}) for f in FILTERS}


def _number(text: str | None) -> float | None:
    try:
        return float(text) if text not in (None, "") else None
    except ValueError:
        return None


def filter_runs(runs: list[dict[str, Any]], query: dict[str, str]) -> list[dict[str, Any]]:
    """The runs matching every given filter: exact values, ``reward_min`` / ``reward_max`` bounds."""
    out = []
    lo, hi = _number(query.get("reward_min")), _number(query.get("reward_max"))
    for r in runs:
        if any(query.get(f) not in (None, "") and ("" if r[f] is None else str(r[f])) != query[f] for f in FILTERS):
            continue
        if (lo is not None or hi is not None) and r["reward"] is None:
            continue
        if lo is not None and r["reward"] < lo or hi is not None and r["reward"] > hi:
            continue
        out.append(r)
    return out


def dx_summaries(source: Source) -> list[Any]:
    """What `clinbench dx stats` summarises (the same calls), per agent and clinician."""
    from clinbench.stats import accuracy

    if "dx" not in benchmarks(source):
        return []
    return _cached(("dx", str(source.root)), source, lambda: accuracy.summarise(accuracy.dx_runs(readable(source))))


# -- a running campaign ----------------------------------------------------------------

def _locked(path: Path) -> bool | None:
    """Whether a process holds an flock on ``path`` (read from /proc/locks: nothing is locked or written)."""
    try:
        st = path.stat()
        text = Path("/proc/locks").read_text()
    except OSError:
        return None
    ident = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in text.splitlines():
        parts = line.split()
        if "FLOCK" in parts and len(parts) > 5 and parts[5].lower() == ident.lower():
            return True
    return False


def progress(source: Source) -> dict[str, Any]:
    """Done / failed / left of the campaign's latest invocation, and whether it is running now."""
    from clinbench.campaign.campaign import LOCK_FILE, PLAN_FILE

    try:
        plan = json.loads((source.root / PLAN_FILE).read_text(encoding="utf-8"))
        planned = [str(x) for x in plan.get("planned") or []]
    except (OSError, ValueError, AttributeError):
        planned = []
    status = {r["run_id"]: r["status"] for r in runs_of(source)}
    if not planned:
        planned = list(status)
    done = sum(1 for r in planned if status.get(r) == "ok")
    failed = sum(1 for r in planned if r in status and status[r] != "ok")
    return {"planned": len(planned), "done": done, "failed": failed, "left": len(planned) - done - failed,
            "running": bool(_locked(source.root / LOCK_FILE))}
