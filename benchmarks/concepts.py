"""Build every concept on a 2,000-patient synthetic MIMIC-IV database; print seconds per concept and in total.

Baselines, printed as ratios:
- a bare copy (CREATE TABLE AS SELECT *) of every raw table the concepts read: the I/O no
  build can avoid, so the ratio shows what the clinical logic costs on top;
- the same build on a 200-patient database: with 10x the patients, a ratio near 10 means the
  set-based SQL scales linearly (well above 10 would point at a quadratic join).
It also times a second build of the unchanged database (every concept skipped).

Usage: .venv/bin/python benchmarks/concepts.py [--patients 2000] [--seed 0] [--top N]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import duckdb


def _synth(path: Path, patients: int, seed: int) -> float:
    from clinbench.ehr.synth import synth_mimic_iv

    started = time.perf_counter()
    synth_mimic_iv(path, patients=patients, seed=seed)
    return time.perf_counter() - started


def _build(path: Path):
    from clinbench.concepts.build import build_concepts

    started = time.perf_counter()
    results = build_concepts(path)
    return results, time.perf_counter() - started


def _copy_inputs(path: Path) -> float:
    from clinbench.concepts.catalog import load_concepts
    from clinbench.concepts.graph import dependency_map

    raw = sorted({t for d in dependency_map(load_concepts()).values() for t in d.raw if t.startswith("mimiciv_")})
    con = duckdb.connect(str(path))
    try:
        started = time.perf_counter()
        for i, table in enumerate(raw):
            con.execute(f"CREATE OR REPLACE TEMP TABLE copy_{i} AS SELECT * FROM {table}")
        return time.perf_counter() - started
    finally:
        con.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top", type=int, default=0, help="list only the N slowest concepts (default: all)")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="cb-concepts-"))
    big, small = tmp / "big.duckdb", tmp / "small.duckdb"
    synth_big = _synth(big, args.patients, args.seed)
    _synth(small, max(args.patients // 10, 1), args.seed)
    print(f"synthetic databases: {args.patients} patients in {synth_big:.1f} s; {max(args.patients // 10, 1)} patients for the scaling baseline")

    results, total = _build(big)
    _, small_total = _build(small)
    _, rerun = _build(big)
    copy = _copy_inputs(big)

    built = [r for r in results if r.status == "built"]
    print(f"\n{len(built)} concepts built, {sum(r.status == 'skipped' for r in results)} skipped (no eicu_crd)")
    print(f"{'concept':<52} {'rows':>10} {'seconds':>8}")
    slowest = sorted(built, key=lambda r: -r.seconds)
    shown = slowest[: args.top] if args.top else slowest
    for r in shown:
        print(f"{r.name:<52} {r.rows:>10,} {r.seconds:>8.3f}")
    rest = slowest[len(shown) :]
    if rest:
        print(f"... {len(rest)} more, {sum(r.seconds for r in rest):.2f} s together")
    print(f"sum over concepts: {sum(r.seconds for r in built):.2f} s")
    print(f"\ntotal build ({args.patients} patients): {total:.2f} s")
    print(f"baseline, bare copy of the raw inputs: {copy:.2f} s -> ratio {total / copy:.1f}x")
    print(f"baseline, same build at {max(args.patients // 10, 1)} patients: {small_total:.2f} s -> ratio {total / small_total:.1f}x for 10x patients")
    print(f"rebuild with nothing changed: {rerun:.2f} s ({rerun / total:.1%} of a full build)")


if __name__ == "__main__":
    main()
