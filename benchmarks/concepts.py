"""Build every concept on a 2,000-patient synthetic MIMIC-IV database; print seconds per concept and in total.

Anchor, printed as a ratio (``--mimic-code DIR``): mimic-code's ``concepts_duckdb`` (its
``duckdb.sql``, a list of ``.read file.sql``) run on a copy of the same raw database. DIR is that
folder or a mimic-code checkout holding ``mimic-iv/concepts_duckdb``; get one at the commit the
anchor tests use with
``git -C MIMIC_CODE_REPO archive 8bcbd190 mimic-iv/concepts_duckdb | tar x -C DIR``.
clinbench's full build (``concepts build --all``: concepts, task references and variants) and
its default build, the concept layer alone (``targets=False``, the kind of tables mimic-code
builds; references and variants are built on demand), are timed. All builds run ``--repeat``
times, interleaved, each in a fresh interpreter on a fresh copy of the raw database (imports
included), and the medians of wall and CPU seconds (every thread of the process) are compared:
on a shared machine CPU is the steadier figure. clinbench keeps the table references it parsed
from the concept SQL in ``$CLINBENCH_CACHE``; one extra first build with an empty cache shows
what a new install pays once.

Other baselines, printed as ratios:
- a bare copy (CREATE TABLE AS SELECT *) of every raw table the concepts read: the I/O no
  build can avoid, so the ratio shows what the clinical logic costs on top;
- the same build on a database with a tenth of the patients: a ratio near 10 means the
  set-based SQL scales linearly (well above 10 would point at a quadratic join).
It also times a second build of the unchanged database (every concept skipped).

Usage: .venv/bin/python benchmarks/concepts.py [--patients 2000] [--seed 0] [--top N]
           [--mimic-code DIR] [--repeat 3] [--profile NAME] [--no-baselines] [--record]

``--record`` (needs ``--mimic-code``: a row's anchor is measured in the same run) writes the rows it
measured into docs/performance.json (``benchmarks/figures.py``): ``concepts:all`` and
``concepts:layer`` against mimic-code, and ``concepts:unchanged`` (the rebuild against the full
build) unless ``--no-baselines``; with ``--patients N`` other than 2,000 the ids end in ``-N``, then
with ``--profile NAME`` in ``@NAME``. Then render the
table with ``benchmarks/performance_table.py``. The table's runs:
``benchmarks/concepts.py --mimic-code DIR --repeat 5 --record`` and the same with ``--profile mimic-code``,
then both again with ``--patients 20000 --repeat 3 --no-baselines`` (ten times the size: what each
statement and table costs whatever its rows weighs less there).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parent))
import anchor_runs  # noqa: E402  (benchmarks/anchor_runs.py: runs mimic-code from a checkout)
import figures  # noqa: E402  (benchmarks/figures.py: the figures store)

ALL_GOAL, LAYER_WALL_GOAL, LAYER_CPU_GOAL, REBUILD_GOAL = 0.5, 0.8, 0.6, 2.0  # x mimic-code; seconds
DEFAULT_PATIENTS = 2000  # the size the goals are judged at; rows of another size get ids of their own


def _synth(path: Path, patients: int, seed: int) -> float:
    from clinbench.ehr.synth import synth_mimic_iv

    started = time.perf_counter()
    synth_mimic_iv(path, patients=patients, seed=seed)
    return time.perf_counter() - started


def run_mimic_code(db: str, folder: str) -> list[tuple[str, float]]:
    """mimic-code's duckdb.sql run in ``db`` (``anchor_runs.run_mimic_code``); seconds per file."""
    return list(anchor_runs.run_mimic_code(Path(db), Path(folder)).items())


def run_clinbench(db: str, targets: bool = True, profile: str | None = None) -> list[tuple[str, str, int | None, float]]:
    from clinbench.concepts.build import build_concepts

    return [(r.name, r.status, r.rows, r.seconds) for r in build_concepts(db, targets=targets, profile=profile)]


def _child(queue, fn, args) -> None:
    wall, cpu = time.perf_counter(), time.process_time()
    result = fn(*args)
    queue.put((time.perf_counter() - wall, time.process_time() - cpu, result))


def in_fresh_process(fn, *args):
    """(wall s, CPU s, result) of ``fn(*args)`` in a new interpreter: imports included, CPU of every thread."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue, fn, args))
    proc.start()
    outcome = queue.get()
    proc.join()
    if proc.exitcode != 0:
        raise SystemExit(f"{fn.__name__} failed (exit {proc.exitcode})")
    return outcome


def _fresh_copy(raw: Path, name: str) -> str:
    copy = raw.with_name(name)
    for old in (copy, copy.with_name(copy.name + ".wal")):
        old.unlink(missing_ok=True)
    shutil.copyfile(raw, copy)
    return str(copy)


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


def _median(values: list[float]) -> float:
    return statistics.median(values)


def _spread(values: list[float]) -> str:
    return f"{min(values):.2f}-{max(values):.2f}" if len(values) > 1 else f"{values[0]:.2f}"


def _suffix(args) -> str:
    """A row id's ending: the patient count when it is not the default (``concepts:layer-20000``), then the
    profile when one is named (``@mimic-code``), so a run at another size or profile keeps its own rows."""
    size = f"-{args.patients}" if args.patients != DEFAULT_PATIENTS else ""
    return size + (f"@{args.profile}" if args.profile else "")


def build_rows(args, chartevents: int, objects: int, layer_concepts: int, anchor_files: int,
               ours: list[tuple[float, float]], layer: list[tuple[float, float]],
               anchor: list[tuple[float, float]]) -> list[dict]:
    """The rows of the full build and of the concept layer, each against mimic-code's build in the same run."""
    def med(runs: list[tuple[float, float]]) -> tuple[float, float]:
        return _median([w for w, _ in runs]), _median([c for _, c in runs])

    (a_wall, a_cpu), profile = med(anchor), args.profile or "m4bench"
    mimic = f"mimic-code `concepts_duckdb` ({anchor_files} files), same database, interleaved: {a_cpu:.2f} s CPU, {a_wall:.2f} s wall"
    size = f"{args.patients:,} patients ({chartevents:,} chartevents), median of {len(ours)} interleaved fresh-process builds"
    rows = []
    for key, runs, what in (("all", ours, f"concepts build --all: {objects} objects (concepts, task references, variants)"),
                            ("layer", layer, f"concepts build, the default: the concept layer ({layer_concepts} concepts)")):
        wall, cpu = med(runs)
        r_wall, r_cpu = wall / a_wall, cpu / a_cpu
        if key == "all":
            goal, met = f"≤ {ALL_GOAL}x", max(r_wall, r_cpu) <= ALL_GOAL
        else:
            goal = (f"≤ {LAYER_WALL_GOAL}x wall ({'met' if r_wall <= LAYER_WALL_GOAL else 'not met'}), "
                    f"≤ {LAYER_CPU_GOAL}x CPU ({'met' if r_cpu <= LAYER_CPU_GOAL else 'not met'})")
            met = r_wall <= LAYER_WALL_GOAL and r_cpu <= LAYER_CPU_GOAL
        rows.append({"id": f"concepts:{key}{_suffix(args)}", "what": f"{what}, {profile} profile, {size}",
                     "clinbench": f"{cpu:.2f} s CPU, {wall:.2f} s wall", "anchor": mimic,
                     "ratio": f"{r_cpu:.2f}x CPU, {r_wall:.2f}x wall", "goal": goal, "met": met})
    return rows


def rebuild_row(args, unchanged: int, wall: float, cpu: float, ours: list[tuple[float, float]]) -> dict:
    """A rebuild of the unchanged database against the full build of the same run."""
    full_wall, full_cpu = _median([w for w, _ in ours]), _median([c for _, c in ours])
    return {"id": f"concepts:unchanged{_suffix(args)}",
            "what": f"concepts build of an unchanged database ({args.patients:,} patients, {unchanged} unchanged, "
                    f"{args.profile or 'm4bench'} profile, fresh process)",
            "clinbench": f"{cpu:.2f} s CPU, {wall:.2f} s wall",
            "anchor": f"the same run's full build (`--all`, median): {full_cpu:.2f} s CPU, {full_wall:.2f} s wall",
            "ratio": f"{cpu / full_cpu:.1%} of a full build's CPU", "goal": f"≤ {REBUILD_GOAL:g} s wall",
            "met": wall <= REBUILD_GOAL}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--patients", type=int, default=DEFAULT_PATIENTS)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--top", type=int, default=0, help="list only the N slowest concepts (default: all)")
    parser.add_argument("--mimic-code", type=Path, help="mimic-code's concepts_duckdb folder (or a checkout): time it as the anchor")
    parser.add_argument("--repeat", type=int, default=3, help="builds of each, interleaved; medians are reported")
    parser.add_argument("--profile", help="reference profile of the clinbench builds (default: the default, m4bench); "
                        "mimic-code is the one whose concept layer reproduces the anchor's tables")
    parser.add_argument("--no-baselines", action="store_true", help="skip the bare-copy, tenth-size and rebuild baselines")
    parser.add_argument("--record", action="store_true", help="write the measured rows into docs/performance.json")
    args = parser.parse_args()
    if args.record and not args.mimic_code:
        parser.error("--record needs --mimic-code DIR: each row's anchor is measured in the same run")
    load_at_start = figures.load_average()
    folder = None
    if args.mimic_code:
        try:
            folder = anchor_runs.mimic_code_concepts(args.mimic_code)
        except anchor_runs.AnchorMissing as exc:
            parser.error(f"--mimic-code: {exc} (or extract its concepts: `git -C MIMIC_CODE_REPO archive "
                         f"{anchor_runs.MIMIC_CODE_COMMIT} mimic-iv/concepts_duckdb | tar x -C DIR`)")

    tmp = Path(tempfile.mkdtemp(prefix="cb-concepts-"))
    try:
        raw = tmp / "raw.duckdb"
        synth_seconds = _synth(raw, args.patients, args.seed)
        with duckdb.connect(str(raw), read_only=True) as con:
            chartevents = con.execute("SELECT count(*) FROM mimiciv_icu.chartevents").fetchone()[0]
        print(f"synthetic database: {args.patients:,} patients, {chartevents:,} chartevents, in {synth_seconds:.1f} s")
        print(f"clinbench reference profile: {args.profile or 'the default'}")

        # a cache of its own: the first build parses every concept's SQL (a new install), later ones reuse it
        os.environ["CLINBENCH_CACHE"] = str(tmp / "cache")
        cold_wall, cold_cpu, _ = in_fresh_process(run_clinbench, _fresh_copy(raw, "clinbench.duckdb"), True, args.profile)
        ours: list[tuple[float, float]] = []
        layer: list[tuple[float, float]] = []  # the concept layer only (no task references or variants)
        anchor: list[tuple[float, float]] = []
        results = layer_results = anchor_files = None
        for _ in range(max(args.repeat, 1)):
            wall, cpu, results = in_fresh_process(run_clinbench, _fresh_copy(raw, "clinbench.duckdb"), True, args.profile)
            ours.append((wall, cpu))
            wall, cpu, layer_results = in_fresh_process(run_clinbench, _fresh_copy(raw, "clinbench-layer.duckdb"), False, args.profile)
            layer.append((wall, cpu))
            if folder:
                wall, cpu, anchor_files = in_fresh_process(run_mimic_code, _fresh_copy(raw, "mimic-code.duckdb"), str(folder))
                anchor.append((wall, cpu))

        built = [r for r in results if r[1] == "built"]
        print(f"\n{len(built)} objects built, {sum(r[1] == 'skipped' for r in results)} skipped (no eicu_crd); last build:")
        print(f"{'concept':<60} {'rows':>10} {'seconds':>8}")
        slowest = sorted(built, key=lambda r: -r[3])
        shown = slowest[: args.top] if args.top else slowest
        for name, _, rows, seconds in shown:
            print(f"{name:<60} {rows:>10,} {seconds:>8.3f}")
        rest = slowest[len(shown):]
        if rest:
            print(f"... {len(rest)} more, {sum(r[3] for r in rest):.2f} s together")
        print(f"sum over objects: {sum(r[3] for r in built):.2f} s")

        walls, cpus = [w for w, _ in ours], [c for _, c in ours]
        print(f"\nclinbench concepts build --all ({args.patients:,} patients, fresh process, {len(ours)} runs): "
              f"median {_median(walls):.2f} s wall ({_spread(walls)}), {_median(cpus):.2f} s CPU ({_spread(cpus)})")
        l_walls, l_cpus = [w for w, _ in layer], [c for _, c in layer]
        n_layer = sum(r[1] == "built" for r in layer_results)
        print(f"clinbench concepts build, the default: the concept layer ({n_layer} concepts; references and "
              "variants are built on demand): "
              f"median {_median(l_walls):.2f} s wall ({_spread(l_walls)}), {_median(l_cpus):.2f} s CPU ({_spread(l_cpus)})")
        print(f"first build after installing (concept SQL not parsed yet): {cold_wall:.2f} s wall, {cold_cpu:.2f} s CPU")
        if folder:
            a_walls, a_cpus = [w for w, _ in anchor], [c for _, c in anchor]
            print(f"mimic-code concepts_duckdb ({len(anchor_files)} files, same database, interleaved): "
                  f"median {_median(a_walls):.2f} s wall ({_spread(a_walls)}), {_median(a_cpus):.2f} s CPU ({_spread(a_cpus)})")
            print(f"ratio clinbench / mimic-code: --all {_median(walls) / _median(a_walls):.2f}x wall, "
                  f"{_median(cpus) / _median(a_cpus):.2f}x CPU; the default build (concept layer): "
                  f"{_median(l_walls) / _median(a_walls):.2f}x wall (goal <= 0.8x), "
                  f"{_median(l_cpus) / _median(a_cpus):.2f}x CPU (goal <= 0.6x)")
            measured = build_rows(args, chartevents, len(built), n_layer, len(anchor_files), ours, layer, anchor)
            slow = sorted(anchor_files, key=lambda f: -f[1])[:5]
            print("mimic-code's slowest (last run): " + ", ".join(f"{n} {s:.2f} s" for n, s in slow))
        else:
            print("anchor: skipped (pass --mimic-code DIR, mimic-code's concepts_duckdb folder, to time it and print the ratio)")

        if args.no_baselines:
            if args.record:
                figures.record(measured, figures.this_run(load_at_start))
                print(f"recorded in {figures.FIGURES}")
            return
        small = tmp / "small.duckdb"
        tenth = max(args.patients // 10, 1)
        _synth(small, tenth, args.seed)
        small_wall, _, _ = in_fresh_process(run_clinbench, str(small), True, args.profile)
        last = raw.with_name("clinbench.duckdb")
        rerun, rerun_cpu, rerun_results = in_fresh_process(run_clinbench, str(last), True, args.profile)
        copy = _copy_inputs(last)
        total = _median(walls)
        print(f"\nbaseline, bare copy of the raw inputs: {copy:.2f} s -> ratio {total / copy:.1f}x")
        print(f"baseline, same build at {tenth:,} patients: {small_wall:.2f} s -> ratio {total / small_wall:.1f}x for 10x patients")
        unchanged = sum(r[1] == "unchanged" for r in rerun_results)
        print(f"rebuild with nothing changed ({unchanged} unchanged, fresh process): {rerun:.2f} s wall, "
              f"{rerun_cpu:.2f} s CPU ({rerun / total:.1%} of a full build's wall, {rerun_cpu / _median(cpus):.1%} "
              f"of its CPU; goal <= 2 s)")
        if args.record:
            measured.append(rebuild_row(args, unchanged, rerun, rerun_cpu, ours))
            figures.record(measured, figures.this_run(load_at_start))
            print(f"recorded in {figures.FIGURES}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
