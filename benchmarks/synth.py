"""Time, peak memory and rows/s of the synthetic MIMIC-IV generator at 10,000 patients.

Baseline: the issue's budget of 120 s and 4 GB on 2 cores. Prints the measured figures and
their ratio to that budget (below 1.0 is within budget). Usage:

    .venv/bin/python benchmarks/synth.py [--patients 10000] [--out /tmp/synth-bench.duckdb]
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from clinbench.ehr.synth import synth_eicu, synth_mimic_iv

BUDGET_SECONDS = 120.0
BUDGET_BYTES = 4 * 1024**3


def _rows(path: Path) -> int:
    with duckdb.connect(str(path), read_only=True) as con:
        tables = con.execute("SELECT table_schema, table_name FROM information_schema.tables").fetchall()
        return sum(con.execute(f"SELECT count(*) FROM {s}.{t}").fetchone()[0] for s, t in tables)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, default=10_000)
    parser.add_argument("--dataset", choices=("mimic-iv", "eicu"), default="mimic-iv")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    build = synth_mimic_iv if args.dataset == "mimic-iv" else synth_eicu
    with tempfile.TemporaryDirectory() as tmp:
        out = args.out or Path(tmp) / "bench.duckdb"
        started = time.perf_counter()
        build(out, patients=args.patients, seed=0)
        seconds = time.perf_counter() - started
        # ru_maxrss is in KiB on Linux, bytes on macOS
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * (1 if sys.platform == "darwin" else 1024)
        rows = _rows(out)
        size = out.stat().st_size
    print(f"{args.dataset}: {args.patients:,} patients, {rows:,} rows, file {size / 1e6:,.0f} MB")
    print(f"time {seconds:.1f} s ({rows / seconds:,.0f} rows/s); ratio to the {BUDGET_SECONDS:.0f} s budget: "
          f"{seconds / BUDGET_SECONDS:.2f}")
    print(f"peak memory {peak / 1024**3:.2f} GiB; ratio to the 4 GiB budget: {peak / BUDGET_BYTES:.2f}")


if __name__ == "__main__":
    main()
