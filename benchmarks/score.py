"""Scoring speed: a 5,000,000-row output against its reference (target: < 10 s on 2 cores).

Builds a reference table shaped like ``mimic-sofa-24h`` (key ``stay_id``, 7 scored integer
columns) with N rows, writes an agent CSV with 1% of cells perturbed, 0.1% duplicated rows
and 0.1% extra keys, then times ``score_output`` twice: the first score prepares the cached
reference (in a temporary cache), the second reads it. Baseline: the time DuckDB needs only to
read the same CSV (the I/O floor); the ratio says how much the scoring rules cost on top.

    .venv/bin/python benchmarks/score.py [--rows 5000000]
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import duckdb

from clinbench.derive.score import score_output

TASK = "mimic-sofa-24h"
COMPONENTS = ["respiration", "coagulation", "liver", "cardiovascular", "cns", "renal"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=5_000_000)
    args = ap.parse_args()
    n = args.rows
    with tempfile.TemporaryDirectory() as tmp:
        os.environ["CLINBENCH_CACHE"] = str(Path(tmp) / "cache")
        db, csv = Path(tmp) / "ref.duckdb", Path(tmp) / "output.csv"
        con = duckdb.connect(str(db))
        con.execute("CREATE SCHEMA mimiciv_derived")
        comps = ", ".join(f"CAST((i * {k + 7}) % 5 AS INTEGER) AS {c}" for k, c in enumerate(COMPONENTS))
        con.execute(
            "CREATE TABLE mimiciv_derived.target_sofa_24h AS SELECT "
            f"CAST(i % 1000000 AS INTEGER) AS subject_id, CAST(i + 20000000 AS INTEGER) AS hadm_id, "
            f"CAST(i + 30000000 AS INTEGER) AS stay_id, {comps} FROM range({n}) t(i)"
        )
        con.execute("ALTER TABLE mimiciv_derived.target_sofa_24h ADD COLUMN sofa INTEGER")
        con.execute(f"UPDATE mimiciv_derived.target_sofa_24h SET sofa = {' + '.join(COMPONENTS)}")
        agent_cols = ", ".join(
            f"CASE WHEN hash(stay_id, {k}) % 100 = 0 THEN {c} + 1 ELSE {c} END AS {c}"
            for k, c in enumerate(["sofa", *COMPONENTS])
        )
        con.execute(
            f"COPY (SELECT subject_id, hadm_id, stay_id, {agent_cols} FROM mimiciv_derived.target_sofa_24h "
            "UNION ALL SELECT subject_id, hadm_id, stay_id, sofa, respiration, coagulation, liver, cardiovascular, cns, renal "
            "FROM mimiciv_derived.target_sofa_24h WHERE stay_id % 1000 = 1 "
            "UNION ALL SELECT subject_id, hadm_id, stay_id + 100000000, sofa, respiration, coagulation, liver, cardiovascular, cns, renal "
            f"FROM mimiciv_derived.target_sofa_24h WHERE stay_id % 1000 = 2) TO '{csv}' (HEADER)"
        )
        con.close()
        size_mb = csv.stat().st_size / 1e6

        t0 = time.perf_counter()
        c = duckdb.connect()
        c.execute(f"SELECT count(*) FROM read_csv('{csv}', all_varchar = true, header = true)").fetchone()
        c.close()
        read_s = time.perf_counter() - t0

        t0 = time.perf_counter()
        result = score_output(TASK, csv, db)
        cold_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        result = score_output(TASK, csv, db)
        score_s = time.perf_counter() - t0

    print(f"rows: {n:,} reference, {result.agent_rows:,} agent ({size_mb:.0f} MB CSV)")
    print(f"reward {result.reward:.4f}, strict {result.strict}, key F1 {result.key_f1:.4f}")
    print(f"score_output: {score_s:.2f} s (target < 10 s) -> {'OK' if score_s < 10 else 'SLOW'}; "
          f"first score of the database (prepares the cached reference): {cold_s:.2f} s")
    print(f"baseline (DuckDB CSV read only): {read_s:.2f} s; scoring/read ratio {score_s / read_s:.1f}x")


if __name__ == "__main__":
    main()
