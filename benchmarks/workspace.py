"""Per-run workspace cost against copy-drop-compact (target: >= 20x cheaper at 2,000 patients).

Makes a synthetic MIMIC-IV database (``--patients``, default 2,000) with its concepts and
targets, prepares the masked database for one task once (the cache), then times:

- per run (ours): ``prepare_workspace`` with a warm cache — a private copy of the cached
  masked file plus the prompt and skills;
- baseline (copy-drop-compact, as M4Bench did per run): copy the full database, drop the
  task's target and answer tables, then compact it by copying every remaining table into
  a new file (DuckDB does not shrink a file in place).

    .venv/bin/python benchmarks/workspace.py [--patients 2000] [--runs 5] [--task mimic-sofa-24h]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from clinbench.derive.catalogue import get_task
from clinbench.derive.workspace import prepare_database, prepare_workspace


def baseline(src: Path, work: Path, drop: list[str]) -> float:
    t0 = time.perf_counter()
    full = work / "whole.duckdb"
    shutil.copyfile(src, full)
    con = duckdb.connect(str(full))
    for table in drop:
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute("CHECKPOINT")
    con.execute(f"ATTACH '{work / 'compact.duckdb'}' AS compact")
    con.execute("COPY FROM DATABASE whole TO compact")
    con.close()
    elapsed = time.perf_counter() - t0
    for p in work.iterdir():
        p.unlink()
    return elapsed


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--patients", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--task", default="mimic-sofa-24h")
    args = ap.parse_args()
    from clinbench.concepts.build import build_concepts
    from clinbench.ehr.synth import synth_mimic_iv

    spec = get_task(args.task)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        os.environ["CLINBENCH_CACHE"] = str(root / "cache")
        src = root / "mimic.duckdb"
        t0 = time.perf_counter()
        synth_mimic_iv(src, patients=args.patients, seed=0)
        build_concepts(src)
        print(f"source: {args.patients:,} patients, {src.stat().st_size / 1e6:.0f} MB "
              f"(made in {time.perf_counter() - t0:.0f} s)")

        t0 = time.perf_counter()
        cached = prepare_database(spec, "native", src)
        print(f"cache build (once per database/task/mode/variant): {time.perf_counter() - t0:.2f} s, "
              f"masked file {cached.path.stat().st_size / 1e6:.0f} MB")

        con = duckdb.connect(str(src), read_only=True)
        hidden = [f"{s}.{t}" for s, t in con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived' "
            "AND (table_name LIKE 'target\\_%' ESCAPE '\\' OR table_name LIKE 'variant\\_%' ESCAPE '\\')").fetchall()]
        con.close()
        hidden += [f"mimiciv_derived.{d}" for d in spec.drop]

        ours = []
        for i in range(args.runs):
            t0 = time.perf_counter()
            prepare_workspace(spec.id, "with-skill", "native", src, root / f"run{i}")
            ours.append(time.perf_counter() - t0)
            shutil.rmtree(root / f"run{i}")
        work = root / "baseline"
        work.mkdir()
        base = [baseline(src, work, hidden) for _ in range(args.runs)]

    ours_s, base_s = statistics.median(ours), statistics.median(base)
    print(f"per-run workspace (ours, warm cache): {ours_s * 1000:.0f} ms (median of {args.runs})")
    print(f"baseline copy-drop-compact: {base_s * 1000:.0f} ms (median of {args.runs})")
    ratio = base_s / ours_s
    print(f"ratio: {ratio:.1f}x cheaper (target >= 20x) -> {'OK' if ratio >= 20 else 'BELOW TARGET'}")


if __name__ == "__main__":
    main()
