"""clinbench against both anchors on a synthetic (or any raw) MIMIC-IV database, in one run.

On the same raw database it runs:
1. mimic-code's ``concepts_duckdb`` (a copy of the database) and ``clinbench concepts build``
   (another copy), timing both (wall and CPU, same run): the concept-build ratio;
2. a row-for-row comparison of every mimic-code table clinbench builds (numbers to 1e-6);
3. M4Bench's ``benchmark/ground_truth/*.sql`` over mimic-code's tables, written as M4Bench writes
   its references, each scored as if an agent had written it with clinbench's scorer against
   clinbench's own reference table (both ``--scored-columns`` settings), and compared cell by cell.

Exit status 1 when a table or reference disagrees. Neither anchor ships with clinbench: point
at your own checkouts (see benchmarks/anchor_runs.py for the commits).

    .venv/bin/python benchmarks/anchors.py --mimic-code ~/src/mimic-code --m4 ~/src/m4 \
        [--patients 300] [--seed 0] [--knob quirks=0.3 ...] [--db RAW.duckdb] [--work DIR]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
from anchor_runs import AnchorMissing, m4_mimic_references, mimic_code_files, run_mimic_code, write_m4_reference  # noqa: E402


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(fn, *args):
    wall, cpu = time.perf_counter(), _cpu()
    result = fn(*args)
    return result, time.perf_counter() - wall, _cpu() - cpu


def _raw_database(args, work: Path) -> Path:
    raw = work / "raw.duckdb"
    if args.db:
        shutil.copy(args.db, raw)
        print(f"raw database: a copy of {args.db}")
        return raw
    from clinbench.ehr.synth import synth_mimic_iv
    from clinbench.errors import DataError

    try:
        knobs = {k: float(v) for k, _, v in (item.partition("=") for item in args.knob)}
        _, wall, _ = _timed(lambda: synth_mimic_iv(raw, patients=args.patients, seed=args.seed, **knobs))
    except (ValueError, DataError) as exc:
        raise SystemExit(f"error: --knob: {exc}") from None
    con = duckdb.connect(str(raw), read_only=True)
    n = con.execute("SELECT count(*) FROM mimiciv_icu.chartevents").fetchone()[0]
    con.close()
    print(f"raw database: synthetic, {args.patients:,} patients (seed {args.seed}{''.join(f', {k}={v}' for k, v in knobs.items())}), "
          f"{n:,} chartevents, {wall:.1f} s")
    return raw


def compare_concepts(ours_db: Path, anchor_db: Path) -> tuple[list[str], dict[str, str]]:
    """(tables compared, table -> what differs) for every mimic-code table clinbench builds."""
    from clinbench.concepts.compare import table_mismatch

    con = duckdb.connect(str(ours_db), read_only=True)
    try:
        con.execute(f"ATTACH '{anchor_db}' AS anchor (READ_ONLY)")
        def tables(catalog):
            return {t for (t,) in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE database_name = ? AND schema_name = 'mimiciv_derived'",
                [catalog]).fetchall()}
        both = sorted(tables("anchor") & tables(ours_db.stem))
        differ = {}
        for t in both:
            found = table_mismatch(con, f"mimiciv_derived.{t}", f"anchor.mimiciv_derived.{t}")
            if found:
                differ[t] = found
        return both, differ
    finally:
        con.close()


def compare_references(ours_db: Path, anchor_db: Path, m4: Path, out: Path) -> list[tuple[str, int, str]]:
    """(reference, rows, "" or what differs) for every M4Bench MIMIC-IV reference clinbench has a task for."""
    from clinbench.concepts.compare import table_mismatch
    from clinbench.derive.catalogue import load_catalogue
    from clinbench.derive.score import SCORED_COLUMN_SETS, score_against

    tasks = load_catalogue()
    anchor = duckdb.connect(str(anchor_db), read_only=True)
    ours = duckdb.connect(str(ours_db), read_only=True)
    found = []
    try:
        for name, ref in m4_mimic_references(m4).items():
            ids = [t for t in ref.task_ids if t in tasks]
            if not ids:
                continue
            csv = out / f"{name}.csv"
            rows = write_m4_reference(anchor, ref, csv)
            spec = tasks[ids[0]]
            problems = []
            if tuple(spec.keys) != ref.keys:
                problems.append(f"keys {spec.keys} vs M4Bench {list(ref.keys)}")
            for columns in SCORED_COLUMN_SETS:
                result = score_against(spec, csv, ours, spec.target_table, scored_columns=columns)
                if result.reward != 1.0 or not result.strict:
                    worst = {c: round(s.match_rate, 4) for c, s in result.columns.items() if s.match_rate < 1}
                    problems.append(f"{columns}: reward {result.reward:.4f} {worst or result.reason}")
            cells = table_mismatch(ours, spec.target_table, f"read_csv('{csv}', header = true)") if rows else None
            if rows == 0 and ours.execute(f"SELECT count(*) FROM {spec.target_table}").fetchone()[0]:
                cells = "M4Bench's reference is empty, clinbench's is not"
            if cells:
                problems.append(cells)
            found.append((name, rows, "; ".join(problems)))
    finally:
        anchor.close()
        ours.close()
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mimic-code", type=Path, required=True, help="mimic-code checkout at 8bcbd190")
    parser.add_argument("--m4", type=Path, required=True, help="M4Bench (hannesill/m4) checkout at 0.5.3")
    parser.add_argument("--patients", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--knob", action="append", default=[], metavar="NAME=SHARE",
                        help="a synthesis prevalence knob, e.g. quirks=0.3 (repeatable)")
    parser.add_argument("--db", type=Path, help="a raw MIMIC-IV database to use instead of a synthetic one")
    parser.add_argument("--work", type=Path, help="keep the databases here (default: a temporary folder)")
    args = parser.parse_args()
    try:
        files = mimic_code_files(args.mimic_code)
        m4_mimic_references(args.m4)
    except AnchorMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    work = args.work or Path(tempfile.mkdtemp(prefix="cb-anchors-"))
    work.mkdir(parents=True, exist_ok=True)
    raw = _raw_database(args, work)
    anchor_db, ours_db = work / "mimic_code.duckdb", work / "clinbench.duckdb"
    shutil.copy(raw, anchor_db)
    shutil.copy(raw, ours_db)

    from clinbench.concepts.build import build_concepts

    _, mc_wall, mc_cpu = _timed(run_mimic_code, anchor_db, args.mimic_code)
    results, cb_wall, cb_cpu = _timed(build_concepts, ours_db)
    built = sum(r.status == "built" for r in results)
    print(f"\nconcept build           {'wall s':>8} {'CPU s':>8}")
    print(f"mimic-code ({len(files)} files)  {mc_wall:>8.2f} {mc_cpu:>8.2f}")
    print(f"clinbench ({built} objects) {cb_wall:>8.2f} {cb_cpu:>8.2f}")
    print(f"ratio clinbench / mimic-code: {cb_wall / mc_wall:.2f}x wall, {cb_cpu / mc_cpu:.2f}x CPU "
          "(clinbench's build includes its task references)")

    tables, differ = compare_concepts(ours_db, anchor_db)
    print(f"\nmimic-code tables clinbench builds: {len(tables)}; equal row for row: {len(tables) - len(differ)}")
    for t, what in differ.items():
        print(f"  DIFFERS {t}: {what}")

    out = work / "m4bench-references"
    out.mkdir(exist_ok=True)
    refs = compare_references(ours_db, anchor_db, args.m4, out)
    bad = [r for r in refs if r[2]]
    print(f"\nM4Bench references: {len(refs)}; reward 1.0 under both column settings and every cell equal: {len(refs) - len(bad)}")
    for name, rows, what in refs:
        print(f"  {'ok     ' if not what else 'DIFFERS'} {name:<24} {rows:>8,} rows  {what}")
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if differ or bad else 0


if __name__ == "__main__":
    sys.exit(main())
