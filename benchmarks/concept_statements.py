"""Where the concept layer's CPU goes: each statement's own CPU, clinbench's layer against mimic-code's files.

``benchmarks/concepts.py`` times whole builds: SQL, writing the tables to the file (compression,
WAL, checkpoints), clinbench's bookkeeping (content hashes, build rows) and Python. This script
times the SQL alone, so that a rewrite's gain, and what is left to gain there, can be read apart from
the rest: every statement runs on one DuckDB thread with its output kept in memory, on the same
synthetic raw database, ``--repeat`` times after a first run that creates the table the next
statements read; the median CPU of each is reported. Anchor (``--mimic-code DIR``, required):
mimic-code's ``concepts_duckdb`` files, in its ``duckdb.sql`` order, timed the same way in the same
process. A ratio here well under the whole build's ratio means the rest of the build (what both
builds write, and what clinbench records) is where the CPU goes.

Usage: .venv/bin/python benchmarks/concept_statements.py --mimic-code DIR [--profile NAME]
           [--patients 2000] [--seed 0] [--repeat 5] [--top 15]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

from clinbench.concepts.build import _select, output_table  # _select: the layer's statements, as a build picks them
from clinbench.concepts.catalog import load_concepts
from clinbench.concepts.graph import dependency_map
from clinbench.concepts.helpers import inputs, statement

sys.path.insert(0, str(Path(__file__).resolve().parent))
import anchor_runs  # noqa: E402  (benchmarks/anchor_runs.py: mimic-code's files from a checkout)
from concepts import _synth  # noqa: E402  (benchmarks/concepts.py: the synthetic raw database)


def _session(raw: Path) -> duckdb.DuckDBPyConnection:
    """One thread; the raw tables read from ``raw``, the derived ones written to memory."""
    con = duckdb.connect()
    con.execute(f"ATTACH '{raw}' AS raw (READ_ONLY)")
    con.execute("USE raw")
    con.execute("SET threads = 1")
    con.execute("ATTACH ':memory:' AS mimiciv_derived")
    return con


def _cpu(con: duckdb.DuckDBPyConnection, sql: str) -> float:
    started = time.process_time()
    con.execute(sql)
    return time.process_time() - started


def clinbench_statements(raw: Path, profile: str | None, repeat: int) -> dict[str, float]:
    """Median CPU seconds of each concept-layer statement of ``profile``, by table name."""
    con = _session(raw)
    concepts = load_concepts(profile=profile)
    deps = dependency_map(concepts)
    present = {f"{s}.{t}" for s, t in con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE database_name = 'raw'").fetchall()}
    seconds = {}
    for qualified in _select(concepts, inputs(deps, concepts), None, False, lambda: present, "mimiciv_derived"):
        out = output_table(concepts[qualified], "mimiciv_derived")
        if not out.startswith("mimiciv_derived."):
            continue  # eICU concepts: no eICU tables in a MIMIC-IV database
        body = statement(qualified, concepts, deps, "mimiciv_derived").body
        con.execute(f"CREATE TABLE {out} AS {body}")
        seconds[out.split(".", 1)[1]] = statistics.median(
            _cpu(con, f"CREATE OR REPLACE TEMP TABLE timed AS {body}") for _ in range(repeat))
    con.close()
    return seconds


def mimic_code_statements(raw: Path, folder: Path, repeat: int) -> dict[str, float]:
    """Median CPU seconds of each mimic-code concept file (it drops and re-creates its table), by file stem."""
    con = _session(raw)
    seconds = {}
    for sql_file in anchor_runs.mimic_code_files(folder):
        sql = sql_file.read_text(encoding="utf-8")
        con.execute(sql)
        seconds[sql_file.stem] = statistics.median(_cpu(con, sql) for _ in range(repeat))
    con.close()
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mimic-code", type=Path, required=True, help="mimic-code's concepts_duckdb folder (or a checkout)")
    parser.add_argument("--profile", help="clinbench reference profile (default: m4bench)")
    parser.add_argument("--patients", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each statement; medians are reported")
    parser.add_argument("--top", type=int, default=15, help="list the N costliest statements of each")
    args = parser.parse_args()
    try:
        folder = anchor_runs.mimic_code_concepts(args.mimic_code)
    except anchor_runs.AnchorMissing as exc:
        parser.error(f"--mimic-code: {exc}")
    tmp = Path(tempfile.mkdtemp(prefix="cb-statements-"))
    try:
        raw = tmp / "raw.duckdb"
        _synth(raw, args.patients, args.seed)
        ours = clinbench_statements(raw, args.profile, max(args.repeat, 1))
        theirs = mimic_code_statements(raw, folder, max(args.repeat, 1))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    total, anchor = sum(ours.values()), sum(theirs.values())
    print(f"{args.patients:,} patients, one DuckDB thread, output in memory, median of {args.repeat} runs each")
    print(f"clinbench ({args.profile or 'm4bench'} profile): {len(ours)} statements, {total:.3f} s CPU")
    print(f"mimic-code concepts_duckdb: {len(theirs)} files, {anchor:.3f} s CPU")
    print(f"ratio: {total / anchor:.2f}x CPU (the SQL alone; benchmarks/concepts.py times whole builds)")
    print(f"\n{'table':30s} {'clinbench':>10s} {'mimic-code':>11s}")
    names = sorted(set(ours) | set(theirs), key=lambda n: -max(ours.get(n, 0.0), theirs.get(n, 0.0)))
    for name in names[:args.top]:
        mine = f"{ours[name]:.4f}" if name in ours else "-"
        anchor_s = f"{theirs[name]:.4f}" if name in theirs else "-"
        print(f"{name:30s} {mine:>10s} {anchor_s:>11s}")


if __name__ == "__main__":
    main()
