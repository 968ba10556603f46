"""Load the MIMIC-IV demo 2.2 (and the eICU demo copy) and print time and rows/s.

Baselines, both printed as ratios:
- the issue's target: the MIMIC-IV demo loads in under 15 s on 2 cores (ratio < 1 passes);
- a bare DuckDB scan (``SELECT count(*) FROM read_csv(...)``) of the same files with the
  same options: the cost of parsing alone, so the ratio shows what typing, checking and
  writing the database add.

Usage: .venv/bin/python benchmarks/load_demo.py [--data ../shared/data] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

import duckdb

from clinbench.ehr.load import CSV_OPTIONS, load_dataset

TARGET_SECONDS = 15.0


def scan_seconds(src: Path) -> float:
    files = sorted(src.glob("hosp/*.csv.gz")) + sorted(src.glob("icu/*.csv.gz"))
    con = duckdb.connect()
    started = time.perf_counter()
    for f in files:
        con.execute(f"SELECT count(*) FROM read_csv('{f}', {CSV_OPTIONS}, all_varchar=true)").fetchone()
    con.close()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[1].parent / "shared" / "data")
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    mimic, eicu = args.data / "mimic-iv-demo-2.2", args.data / "eicu-demo-2.0.1"
    if not mimic.is_dir():
        raise SystemExit(f"{mimic} is absent: pass --data pointing at the shared data folder")

    with tempfile.TemporaryDirectory() as tmp:
        times, rows = [], 0
        for i in range(args.repeat):
            report = load_dataset("mimic-iv", mimic, Path(tmp) / f"mimic-{i}.duckdb")
            times.append(report.seconds)
            rows = report.total_rows
        best, median = min(times), statistics.median(times)
        scan = min(scan_seconds(mimic) for _ in range(args.repeat))
        print(f"cpus: {os.cpu_count()}, duckdb {duckdb.__version__}")
        print(f"MIMIC-IV demo 2.2: {rows:,} rows, 31 tables: best {best:.2f} s, median {median:.2f} s "
              f"({rows / best:,.0f} rows/s)")
        print(f"  vs target {TARGET_SECONDS:.0f} s on 2 cores: ratio {best / TARGET_SECONDS:.2f} "
              f"({'within' if best < TARGET_SECONDS else 'OVER'} target)")
        print(f"  vs bare DuckDB CSV scan of the same files ({scan:.2f} s): ratio {best / scan:.2f}x")
        if eicu.is_dir():
            report = load_dataset("eicu", eicu, Path(tmp) / "eicu.duckdb", partial=True)
            print(f"eICU demo 2.0.1 copy (27 tables, partial): {report.total_rows:,} rows in {report.seconds:.2f} s "
                  f"({report.total_rows / report.seconds:,.0f} rows/s)")


if __name__ == "__main__":
    main()
