"""clinbench against both anchors on a synthetic (or any raw) MIMIC-IV database, in one run.

On the same raw database it runs:
1. mimic-code's ``concepts_duckdb`` (a copy of the database) and ``clinbench concepts build``
   (another copy), timing both (wall and CPU, same run): the concept-build ratio;
2. a row-for-row comparison of every mimic-code table clinbench builds (numbers to 1e-6);
3. M4Bench's ``benchmark/ground_truth/*.sql`` over mimic-code's tables, written as M4Bench writes
   its references, each scored as if an agent had written it with clinbench's scorer against
   clinbench's own reference table (both ``--scored-columns`` settings), and compared cell by cell;
4. M4Bench's own pipeline (reference profile m4bench): M4's vendored concept copy
   (``src/m4/core/derived/builtins/mimic_iv``, its ``duckdb.sql`` order) on a third copy beside
   ``clinbench concepts build --profile m4bench`` on a fourth (M4's copy typed as mimic-code's
   ``buildmimic`` load, FLOAT columns REAL, as M4's demo outputs were made); every one of its 63 tables compared
   row for row (the columns M4's own SQL leaves to the engine aside: ``Profile.undetermined``) and
   M4Bench's references over M4's tables scored and compared cell by cell as in 3; and each
   standard task's agent database (its derived tables) against an M4Bench agent's: M4's tables
   less the task's ``drop_tables`` (the deviations named in ``WORKSPACE_DEVIATIONS`` aside);
5. the same for M4Bench's two eICU references (gcs, oasis: raw eicu_crd only) on a synthetic
   eICU database of ``--eicu-patients`` (0 skips it; the open eICU demo lacks their tables).

``--perturb SEED`` first damages the raw copy the way real extracts are damaged (a share of
chart, lab, output and input rows deleted, duplicated or emptied, chart times moved by a minute,
cultures without a time, prescriptions without a stop), so edge rules are compared too.

Exit status 1 when a table or reference disagrees. Neither anchor ships with clinbench: point
at your own checkouts (see benchmarks/anchor_runs.py for the commits).

    .venv/bin/python benchmarks/anchors.py --mimic-code ~/src/mimic-code --m4 ~/src/m4 \
        [--patients 300] [--seed 0] [--knob quirks=0.3 ...] [--db RAW.duckdb] [--perturb SEED]
        [--eicu-patients 300] [--work DIR] [--m4-own-load]

``--m4-own-load`` leaves M4's copy typed as loaded (64-bit FLOAT columns, as M4's own `m4 init` gives them),
so step 4 counts the rows the m4bench profile's 32-bit casts change against M4's pipeline on its own load.
Read its comparison against M4's own build: the tie alignment after it runs M4's downstream SQL on
clinbench's weight_durations, whose 32-bit weights it then takes for tie choices. At 2,000 patients (seed 0):
57 of 63 tables equal (bg 40 rows, first_day_bg and first_day_bg_art 13, kdigo_stages and kdigo_uo 24,
urine_output_rate 37); 14 of 15 references equal cell for cell, urine-output-rate 37 of 140,711 rows off
by 0.001 in uo_mlkghr (within its 0.01 tolerance: reward 1.0).
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
import anchor_ties  # noqa: E402
from anchor_runs import (  # noqa: E402
    AnchorMissing, M4Reference, apply_buildmimic_types, buildmimic_create_sql, m4_concept_files, m4_drop_tables,
    m4_mimic_references, m4_references, mimic_code_files, run_m4_pipeline, run_mimic_code, write_m4_reference,
)

# Where an agent's database differs from M4Bench's on purpose: task -> (tables clinbench hides, why).
WORKSPACE_DEVIATIONS = {"mimic-sofa-24h": ({"sepsis3"}, "its SOFA components at the suspected-infection time")}


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


PERTURBED = [  # (table, value column) damaged by --perturb
    ("mimiciv_icu.chartevents", "valuenum"), ("mimiciv_hosp.labevents", "valuenum"),
    ("mimiciv_icu.outputevents", "value"), ("mimiciv_icu.inputevents", "rate"),
]


def perturb(raw: Path, seed: int) -> None:
    """Delete 15%, duplicate 3% and empty the value of 3% of the rows of each PERTURBED table, and more."""
    con = duckdb.connect(str(raw))
    try:
        con.execute("SELECT setseed(?)", [(seed % 1000) / 1000])
        for table, value in PERTURBED:
            con.execute(f"DELETE FROM {table} WHERE random() < 0.15")
            con.execute(f"INSERT INTO {table} SELECT * FROM {table} WHERE random() < 0.03")
            con.execute(f"UPDATE {table} SET {value} = NULL WHERE random() < 0.03")
        con.execute("UPDATE mimiciv_icu.chartevents SET charttime = charttime + INTERVAL 1 MINUTE WHERE random() < 0.05")
        con.execute("DELETE FROM mimiciv_hosp.microbiologyevents WHERE random() < 0.2")
        con.execute("UPDATE mimiciv_hosp.microbiologyevents SET charttime = NULL WHERE random() < 0.1")
        con.execute("UPDATE mimiciv_hosp.prescriptions SET stoptime = NULL WHERE random() < 0.05")
        con.execute("UPDATE mimiciv_icu.icustays SET outtime = outtime + INTERVAL 3 HOUR WHERE random() < 0.1")
    finally:
        con.close()
    print(f"raw database perturbed (seed {seed})")


def _ignored(profile: str | None):
    """table -> the columns ``profile`` marks undetermined by its anchor's SQL (None: compare every column)."""
    from clinbench.concepts.profiles import get_profile

    return get_profile(profile).ignored if profile else (lambda table: ())


TIED = ("mimiciv_icu.chartevents", "mimiciv_hosp.labevents")  # tables --perturb-ties adds same-time rows to


def perturb_ties(raw: Path, seed: int, share: float = 0.02) -> None:
    """Chart a share of the numeric rows of each TIED table a second time at the same chart and store
    time with a value one higher, so that every pick among same-time rows an SQL leaves to the engine
    is put to the test (the columns it moves are then ties of the anchor's SQL or a clinbench bug)."""
    con = duckdb.connect(str(raw))
    try:
        con.execute("SELECT setseed(?)", [(seed % 1000) / 1000 + 0.0005])
        for table in TIED:
            con.execute(f"INSERT INTO {table} SELECT * REPLACE (valuenum + 1 AS valuenum, "
                        f"CAST(valuenum + 1 AS VARCHAR) AS value) FROM {table} WHERE valuenum IS NOT NULL AND random() < {share}")
            if table == "mimiciv_hosp.labevents":  # keep labevent_id unique
                con.execute(f"CREATE OR REPLACE TABLE {table} AS SELECT * REPLACE (row_number() OVER () AS labevent_id) FROM {table}")
    finally:
        con.close()
    print(f"raw database: {share:.0%} of the numeric rows of {', '.join(TIED)} charted twice at one time (seed {seed})")


def compare_concepts(ours_db: Path, anchor_db: Path, profile: str | None = "mimic-code") -> tuple[list[str], dict[str, str]]:
    """(tables compared, table -> what differs) for every anchor table clinbench builds (``profile``'s;
    None: every column, the undetermined ones too)."""
    from clinbench.concepts.compare import table_mismatch

    ignored = _ignored(profile)
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
            found = table_mismatch(con, f"mimiciv_derived.{t}", f"anchor.mimiciv_derived.{t}", ignore=ignored(t))
            if found:
                differ[t] = found
        return both, differ
    finally:
        con.close()


def compare_references(ours_db: Path, anchor_db: Path, refs: dict[str, M4Reference], out: Path,
                       profile: str | None = "mimic-code") -> list[tuple[str, int, str]]:
    """(reference, rows, "" or what differs) for every M4Bench reference clinbench has a task for.

    Each reference is made by M4Bench's SQL on ``anchor_db`` and scored against ``ours_db``; the
    columns ``profile`` marks undetermined by the anchor's SQL are compared by neither (None: every column).
    """
    from clinbench.concepts.compare import table_mismatch
    from clinbench.derive.catalogue import load_catalogue
    from clinbench.derive.score import SCORED_COLUMN_SETS, score_against

    tasks = load_catalogue()
    anchor = duckdb.connect(str(anchor_db), read_only=True)
    ours = anchor if anchor_db == ours_db else duckdb.connect(str(ours_db), read_only=True)
    found = []
    try:
        for name, ref in refs.items():
            ids = [t for t in ref.task_ids if t in tasks]
            if not ids:
                continue
            csv = out / f"{name}.csv"
            rows = write_m4_reference(anchor, ref, csv)
            spec = tasks[ids[0]]
            ignored = _ignored(profile)(spec.target_table.split(".", 1)[1])
            problems = []
            if tuple(spec.keys) != ref.keys:
                problems.append(f"keys {spec.keys} vs M4Bench {list(ref.keys)}")
            ours_rows = ours.execute(f"SELECT count(*) FROM {spec.target_table}").fetchone()[0]
            if rows == 0:  # nothing to score; both must be empty
                found.append((name, rows, "" if ours_rows == 0 else f"M4Bench's reference is empty, clinbench's has {ours_rows:,} rows"))
                continue
            for columns in SCORED_COLUMN_SETS:
                result = score_against(spec, csv, ours, spec.target_table, scored_columns=columns)
                worst = {c: round(s.match_rate, 4) for c, s in result.columns.items() if s.match_rate < 1}
                if {c for c in worst if c not in ignored} or (not worst and (result.reward != 1.0 or not result.strict)):
                    problems.append(f"{columns}: reward {result.reward:.4f} {worst or result.reason}")
                elif worst:
                    print(f"  ({name}: reward {result.reward:.4f} from undetermined columns only: {worst})")
            cells = table_mismatch(ours, spec.target_table, f"read_csv('{csv}', header = true)", ignore=ignored)
            if cells:
                problems.append(cells)
            found.append((name, rows, "; ".join(problems)))
    finally:
        anchor.close()
        if ours is not anchor:
            ours.close()
    return found


def _print_references(title: str, refs: list[tuple[str, int, str]]) -> int:
    bad = [r for r in refs if r[2]]
    print(f"\n{title}: {len(refs)}; reward 1.0 under both column settings and every cell equal: {len(refs) - len(bad)}")
    for name, rows, what in refs:
        print(f"  {'ok     ' if not what else 'DIFFERS'} {name:<24} {rows:>8,} rows  {what}")
    return len(bad)


def _eicu(args, work: Path, out: Path) -> int:
    from clinbench.concepts.build import build_concepts
    from clinbench.ehr.synth import synth_eicu

    db = work / "eicu.duckdb"
    synth_eicu(db, patients=args.eicu_patients, seed=args.seed)
    build_concepts(db)
    refs = compare_references(db, db, m4_references(args.m4, "eicu"), out)
    return _print_references(f"M4Bench eICU references (synthetic eICU, {args.eicu_patients:,} patients)", refs)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mimic-code", type=Path, required=True, help="mimic-code checkout at 8bcbd190")
    parser.add_argument("--m4", type=Path, required=True, help="M4Bench (hannesill/m4) checkout at 0.5.3")
    parser.add_argument("--patients", type=int, default=300)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--knob", action="append", default=[], metavar="NAME=SHARE",
                        help="a synthesis prevalence knob, e.g. quirks=0.3 (repeatable)")
    parser.add_argument("--perturb", type=int, metavar="SEED", help="damage the raw copy first (see above)")
    parser.add_argument("--perturb-ties", type=int, metavar="SEED",
                        help="then chart 2%% of the numeric chart and lab rows twice at one time, another value (see perturb_ties)")
    parser.add_argument("--eicu-patients", type=int, default=300, help="synthetic eICU size for the eICU references (0: skip)")
    parser.add_argument("--db", type=Path, help="a raw MIMIC-IV database to use instead of a synthetic one")
    parser.add_argument("--work", type=Path, help="keep the databases here (default: a temporary folder)")
    parser.add_argument("--m4-own-load", action="store_true",
                        help="run M4's pipeline on the raw types as loaded (64-bit, as M4's own `m4 init` reads MIMIC's "
                             "FLOAT columns) instead of mimic-code's buildmimic REAL: measures what the m4bench "
                             "profile's 32-bit casts change (docs/conventions.md, SOFA)")
    args = parser.parse_args()
    if args.db and not args.db.is_file():
        print(f"error: --db {args.db} is not a file: pass a raw MIMIC-IV DuckDB database (clinbench data load)", file=sys.stderr)
        return 2
    try:
        files = mimic_code_files(args.mimic_code)
        m4_mimic_references(args.m4)
        m4_concept_files(args.m4)
        if not args.m4_own_load:
            buildmimic_create_sql(args.mimic_code)  # M4's copy is typed as that load (step 4)
    except AnchorMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    work = args.work or Path(tempfile.mkdtemp(prefix="cb-anchors-"))
    work.mkdir(parents=True, exist_ok=True)
    raw = _raw_database(args, work)
    if args.perturb is not None:
        perturb(raw, args.perturb)
    if args.perturb_ties is not None:
        perturb_ties(raw, args.perturb_ties)
    anchor_db, ours_db = work / "mimic_code.duckdb", work / "clinbench.duckdb"
    shutil.copy(raw, anchor_db)
    shutil.copy(raw, ours_db)

    from clinbench.concepts.build import build_concepts

    _, mc_wall, mc_cpu = _timed(run_mimic_code, anchor_db, args.mimic_code)
    results, cb_wall, cb_cpu = _timed(lambda db: build_concepts(db, profile="mimic-code"), ours_db)
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
    refs = compare_references(ours_db, anchor_db, m4_mimic_references(args.m4), out)
    bad = _print_references("M4Bench MIMIC-IV references over mimic-code's tables (profile mimic-code)", refs)
    differ_m4, bad_m4 = _m4_pipeline(args, raw, work)
    if args.eicu_patients:
        bad += _eicu(args, work, out)
    if not args.work:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if differ or bad or differ_m4 or bad_m4 else 0


def _m4_pipeline(args, raw: Path, work: Path) -> tuple[dict[str, str], int]:
    """M4's own concept copy against `concepts build --profile m4bench`, and M4Bench's references over it."""
    from clinbench.concepts.build import build_concepts

    m4_db, ours_db = work / "m4_pipeline.duckdb", work / "clinbench_m4bench.duckdb"
    shutil.copy(raw, m4_db)
    shutil.copy(raw, ours_db)
    if args.m4_own_load:
        print("\nM4's copy of the raw data: the types as loaded (FLOAT columns 64-bit, as M4's own `m4 init` reads them)")
    else:
        retyped = apply_buildmimic_types(m4_db, args.mimic_code)  # the load M4's demo outputs were made on
        print(f"\nM4's copy of the raw data: {len(retyped)} columns typed REAL as mimic-code's buildmimic declares them "
              f"({', '.join(c.split('.', 1)[1] for c in retyped[:4])}, ...)")
    _, m4_wall, m4_cpu = _timed(run_m4_pipeline, m4_db, args.m4)
    _, cb_wall, cb_cpu = _timed(lambda db: build_concepts(db, profile="m4bench"), ours_db)
    print(f"\nM4's own pipeline ({len(m4_concept_files(args.m4))} files) {m4_wall:>8.2f} s wall {m4_cpu:>8.2f} s CPU; "
          f"clinbench --profile m4bench {cb_wall:.2f} s wall {cb_cpu:.2f} s CPU")
    tables, differ = compare_concepts(ours_db, m4_db, "m4bench")
    print(f"M4 pipeline tables clinbench builds: {len(tables)}; equal row for row: {len(tables) - len(differ)}")
    empty = _empty_tables(m4_db, tables)
    print(f"  of which empty in M4's build (compared trivially): {len(empty)}{': ' + ', '.join(empty) if empty else ''}")
    for t, what in differ.items():
        print(f"  DIFFERS {t}: {what}")
    out = work / "m4bench-pipeline-references"
    out.mkdir(exist_ok=True)
    refs = compare_references(ours_db, m4_db, m4_mimic_references(args.m4), out, "m4bench")
    _print_references("M4Bench MIMIC-IV references over M4's own tables (profile m4bench)", refs)
    members, rerun, aligned_differ, aligned_bad = _m4_ties(args, ours_db, m4_db, work)
    # M4's own build is one of the builds its SQL can give; clinbench must equal another one: the one with
    # its own choices among ties (membership), everything else as M4's SQL makes it (aligned, every column).
    # So a table or reference that differs from M4's own build only through a tie is no disagreement.
    moved = {t.table for t in anchor_ties.TIES} | set(rerun)
    unexplained = {t: w for t, w in differ.items() if t not in moved or t in aligned_differ}
    unexplained.update(compare_workspaces(ours_db, m4_db, args.m4))  # what each task's agent sees
    by_ties = sorted(set(differ) - set(unexplained)) + [name for name, _, what in refs if what]
    verdict = not (members or aligned_differ or aligned_bad or unexplained)
    ties_only = f"; moved by ties only, against M4's own build: {', '.join(by_ties)}" if by_ties else ""
    print(f"\nm4bench verdict: {'equal' if verdict else 'DIFFERS'} to a build M4's SQL can give (tied choices a "
          f"candidate, every column equal once aligned){ties_only}")
    return {**unexplained, **members, **{f"{t} (aligned)": w for t, w in aligned_differ.items()}}, aligned_bad


def compare_workspaces(ours_db: Path, m4_db: Path, checkout: Path) -> dict[str, str]:
    """Each standard MIMIC-IV task: the derived tables its agent's database holds against an M4Bench agent's
    (M4's tables less the task's drop_tables); named deviations (WORKSPACE_DEVIATIONS) are printed, not counted."""
    from clinbench.derive.catalogue import load_catalogue
    from clinbench.derive.workspace import DERIVED_SCHEMA, allowed_relations, read_catalog

    _, catalog = read_catalog(ours_db)
    with duckdb.connect(str(m4_db), read_only=True) as con:
        m4_tables = {t for (t,) in con.execute("SELECT table_name FROM duckdb_tables() WHERE schema_name = ?",
                                               [DERIVED_SCHEMA]).fetchall()}
    drops = m4_drop_tables(checkout)
    differ, same = {}, 0
    for task, spec in sorted(load_catalogue().items()):
        if spec.database != "mimic-iv" or spec.mode != "standard":
            continue
        ours = {r.name for r in allowed_relations(spec, catalog) if r.schema == DERIVED_SCHEMA}
        theirs = m4_tables - {t.split(".")[-1] for t in drops[task]}
        hidden, why = WORKSPACE_DEVIATIONS.get(task, (set(), ""))
        if ours == theirs - hidden:
            same += 1
            if hidden:
                print(f"  {task}: also hides {', '.join(sorted(hidden))} ({why}), a named deviation")
            continue
        differ[f"workspace {task}"] = f"shows {sorted(ours - theirs)} that M4Bench's agent lacked, lacks {sorted(theirs - ours)}"
    print(f"agent databases (derived tables) equal to M4Bench's: {same} of {same + len(differ)} standard tasks")
    for task, what in differ.items():
        print(f"  DIFFERS {task}: {what}")
    return differ


def _empty_tables(db: Path, tables: list[str]) -> list[str]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return [t for t in tables if not con.execute(f"SELECT count(*) FROM mimiciv_derived.{t}").fetchone()[0]]
    finally:
        con.close()


def _m4_ties(args, ours_db: Path, m4_db: Path, work: Path) -> tuple[dict[str, str], list[str], dict[str, str], int]:
    """The undetermined columns: clinbench's ties among M4's candidates, then every column on M4's tables aligned to
    them: (tie table -> what is no candidate, M4 files run again, aligned table -> what differs, references differing)."""
    print("\nundetermined columns (benchmarks/anchor_ties.py): clinbench's choice among M4's tied candidates")
    members = {f"{t} (ties)": what for t, what in anchor_ties.membership(ours_db, m4_db, args.m4, work).items() if what}
    aligned, rerun = anchor_ties.aligned_copy(ours_db, m4_db, args.m4, work)
    print(f"M4's tables given clinbench's tie choices ({len(rerun)} files downstream run again: {', '.join(rerun)})")
    tables, differ = compare_concepts(ours_db, aligned, None)
    print(f"M4 pipeline tables (tie-aligned) clinbench builds: {len(tables)}; equal row for row on every column: "
          f"{len(tables) - len(differ)}")
    for t, what in differ.items():
        print(f"  DIFFERS {t}: {what}")
    out = work / "m4bench-aligned-references"
    out.mkdir(exist_ok=True)
    refs = compare_references(ours_db, aligned, m4_mimic_references(args.m4), out, None)
    bad = _print_references("M4Bench MIMIC-IV references over M4's tie-aligned tables, every column (profile m4bench)", refs)
    return members, rerun, differ, bad


if __name__ == "__main__":
    sys.exit(main())
