"""Scale run: synthesise N patients, build concepts, prepare workspaces, score; each step's time,
peak memory and ratio against its anchor where the anchor runs here.

Steps (each in a fresh process, so its peak memory is its own):

- synth: ``synth_mimic_iv`` of ``--patients`` (default 30,000);
- concepts: ``build_concepts`` (every concept and task reference); anchor mimic-code's
  ``concepts_duckdb`` run on a copy of the raw database when ``--mimic-code DIR`` points at a
  checkout at 8bcbd190 (``benchmarks/anchor_runs.py``), else no ratio;
- masked database, first use: ``prepare_database`` with an empty workspace cache, for the
  first task on the database, a further standard task and a raw task, twice: with the raw layer
  the synth step kept (what `clinbench data synth` / `data load` leave in the cache), and with
  none (a database written by anything else: the first task writes the raw layer on the way,
  which the raw task then links to); anchor M4Bench's per-task preparation as
  copy + drop + compact (copy the database file, drop the answer and hidden tables, CHECKPOINT,
  copy every remaining table into a new file), per task; goal <= 0.5x;
- per-run workspace, warm cache: ``prepare_workspace`` (median of ``--runs``), in-process and
  from the CLI (process start included); anchor M4Bench's per-run plain copy of its cached
  per-task database (here: a copy of our masked file); goal <= 20 ms;
- score: ``score_output`` of the task's reference rows (a perfect output), in-process and from
  the CLI; anchor M4Bench 0.5.3's ``benchmark/evaluate.py`` on the same output when ``--m4 DIR``
  points at a checkout (it needs pandas), else no ratio.

It ends with per-row costs (per chartevents row) and what a full MIMIC-IV (~313 M
chartevents) needs at those costs.

    .venv/bin/python benchmarks/scale.py [--patients 30000] [--task mimic-sofa-24h] [--runs 7]
        [--steps synth,concepts,masked,workspace,score] [--work DIR] [--mimic-code DIR] [--m4 DIR]

``--work DIR`` keeps the synthesised database there (a rerun reuses it and skips synth);
without it everything goes to a temporary folder. A raw task (e.g. mimic-sofa-24h-raw) needs
no concepts: ``--steps synth,masked,workspace --task mimic-sofa-24h-raw`` times workspaces at a
size where building every concept would take long.

``--record`` writes the rows it measured into docs/performance.json (``benchmarks/figures.py``):
the concepts build against mimic-code (so with ``concepts`` among the steps it needs
``--mimic-code``), each masked database's first use against copy + drop + compact, and the per-run
workspace against a plain copy, ids ending in the patient count (``scale:workspace-3000``). Then
render the table with ``benchmarks/performance_table.py``. The table's runs:
``benchmarks/scale.py --patients 3000 --mimic-code DIR --record`` and the same at ``--patients 30000``.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import figures as figures_store  # noqa: E402  (benchmarks/figures.py; `figures` here is this run's dict)

FULL_MIMIC_CHARTEVENTS = 313_645_063  # MIMIC-IV v2.2 icu/chartevents rows
STEPS = ("synth", "concepts", "masked", "workspace", "score")
CONCEPTS_GOAL, MASKED_GOAL, WORKSPACE_GOAL = 0.5, 0.5, 0.020  # x mimic-code wall and CPU; x the anchor's CPU; s


CPU: dict[str, float] = {}  # step function name -> CPU seconds of its last run (robust on a shared machine)


def _child(queue, fn, args) -> None:
    t0 = time.perf_counter()
    c0 = time.process_time()
    result = fn(*args)
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0
    queue.put((seconds, cpu, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, result))


def in_fresh_process(fn, *args):
    """(seconds, peak RSS MB, result) of ``fn(*args)`` run in a new interpreter; its CPU time goes to ``CPU``."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(queue, fn, args))
    proc.start()
    seconds, cpu, mb, result = queue.get()
    proc.join()
    if proc.exitcode != 0:
        raise SystemExit(f"step {fn.__name__} failed (exit {proc.exitcode})")
    CPU[fn.__name__] = cpu
    return seconds, mb, result


# -- steps (module-level so a spawned process can run them) --------------------------------
def step_synth(src: str, patients: int, cache: str) -> dict:
    os.environ["CLINBENCH_CACHE"] = cache
    import duckdb

    from clinbench.derive import raw_layer
    from clinbench.ehr.synth import synth_mimic_iv

    synth_mimic_iv(src, patients=patients, seed=0, after_raw=raw_layer.keep)  # as `clinbench data synth` does
    con = duckdb.connect(src, read_only=True)
    rows = {t: con.execute(f"SELECT count(*) FROM mimiciv_{t}").fetchone()[0]
            for t in ("icu.chartevents", "hosp.labevents", "icu.inputevents")}
    con.close()
    return rows


def step_concepts(src: str) -> int:
    from clinbench.concepts.build import build_concepts

    return len(build_concepts(src))


def step_mimic_code(db: str, checkout: str) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from anchor_runs import run_mimic_code

    return len(run_mimic_code(Path(db), Path(checkout)))


def step_masked(src: str, tasks: list[str], cache: str) -> list[tuple[str, float, float, int]]:
    """First use of each task's masked database, in order: (path, wall s, CPU s, bytes) each."""
    os.environ["CLINBENCH_CACHE"] = cache
    from clinbench.derive.catalogue import get_task
    from clinbench.derive.workspace import prepare_database

    out = []
    for task in tasks:
        t0, c0 = time.perf_counter(), time.process_time()
        path = prepare_database(get_task(task), "native", src).path
        out.append((str(path), time.perf_counter() - t0, time.process_time() - c0, path.stat().st_size))
    return out


def step_copy_drop_compact(src: str, task: str, work: str) -> int:
    """M4Bench's per-task preparation: copy the database, drop what the agent must not see, compact."""
    import duckdb

    from clinbench.derive.catalogue import get_task

    spec = get_task(task)
    whole, compact = Path(work) / "whole.duckdb", Path(work) / "compact.duckdb"
    shutil.copyfile(src, whole)
    con = duckdb.connect(str(whole))
    drop = [f"{s}.{t}" for s, t in con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived' AND "
        "(table_name LIKE 'target\\_%' ESCAPE '\\' OR table_name LIKE 'variant\\_%' ESCAPE '\\')").fetchall()]
    if spec.mode == "raw":
        drop += [f"{s}.{t}" for s, t in con.execute(
            "SELECT schema_name, table_name FROM duckdb_tables() WHERE schema_name = 'mimiciv_derived'").fetchall()]
    drop += [f"mimiciv_derived.{d}" for d in spec.drop]
    drop += [f"{s}.{t}" for s, t in con.execute(
        "SELECT schema_name, table_name FROM duckdb_tables() WHERE schema_name LIKE 'eicu%'").fetchall()]
    for table in sorted(set(drop)):
        con.execute(f"DROP TABLE IF EXISTS {table}")
    con.execute("CHECKPOINT")
    con.execute(f"ATTACH '{compact}' AS compact")
    con.execute("COPY FROM DATABASE whole TO compact")
    con.close()
    size = compact.stat().st_size
    whole.unlink()
    compact.unlink()
    return size


def step_workspaces(src: str, task: str, cache: str, work: str, runs: int) -> list[float]:
    os.environ["CLINBENCH_CACHE"] = cache
    from clinbench.derive.workspace import prepare_workspace

    times = []
    for i in range(runs + 1):  # the first call warms this process (imports, catalogue memo)
        out = Path(work) / f"run{i}"
        t0 = time.perf_counter()
        prepare_workspace(task, "with-skill", "native", src, out)
        times.append(time.perf_counter() - t0)
        shutil.rmtree(out)
    return times[1:]


def step_plain_copies(masked: str, work: str, runs: int) -> list[float]:
    times = []
    for i in range(runs):
        dst = Path(work) / f"copy{i}.duckdb"
        t0 = time.perf_counter()
        shutil.copyfile(masked, dst)
        times.append(time.perf_counter() - t0)
        dst.unlink()
    return times


def step_score(task: str, output: str, src: str) -> float:
    from clinbench.derive.score import score_output

    return score_output(task, output, src).reward


def step_export(task: str, src: str, output: str) -> int:
    from clinbench.derive.reference import export_reference

    return export_reference(task, src, output)


def cli_seconds(args: list[str], env: dict[str, str], runs: int) -> float:
    """Median wall seconds of ``python -m clinbench args`` (process start included)."""
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-m", "clinbench", *args], env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--patients", type=int, default=30_000, help="synthetic patients (default 30,000)")
    ap.add_argument("--task", default="mimic-sofa-24h", help="task whose workspaces and scoring are timed")
    ap.add_argument("--second-task", default="mimic-kdigo-48h",
                    help="a further task of the same database whose masked database's first use is timed too "
                         "('' for none)")
    ap.add_argument("--raw-task", default="mimic-sofa-24h-raw",
                    help="a raw task whose masked database's first use is timed too ('' for none)")
    ap.add_argument("--runs", type=int, default=7, help="repeats of the per-run figures (median kept)")
    ap.add_argument("--steps", default=",".join(STEPS), help=f"comma-separated subset of {','.join(STEPS)}")
    ap.add_argument("--work", type=Path, help="folder to keep the database in (reused when present)")
    ap.add_argument("--mimic-code", type=Path, help="a mimic-code checkout at 8bcbd190: times its concepts_duckdb as the anchor")
    ap.add_argument("--m4", type=Path, help="an M4Bench checkout at 0.5.3: times its evaluate.py as the scoring anchor")
    ap.add_argument("--record", action="store_true", help="write the measured rows into docs/performance.json")
    a = ap.parse_args()
    steps = set(a.steps.split(","))
    if unknown := steps - set(STEPS):
        raise SystemExit(f"unknown step(s) {', '.join(sorted(unknown))}; steps are {', '.join(STEPS)}")
    if a.record and "concepts" in steps and not a.mimic_code:
        ap.error("--record needs --mimic-code DIR for the concepts row (its anchor runs in the same run), "
                 "or leave concepts out of --steps")
    load_at_start, measured = figures_store.load_average(), []
    tmp = tempfile.TemporaryDirectory()
    root = (a.work or Path(tmp.name)).resolve()
    root.mkdir(parents=True, exist_ok=True)
    src = root / f"mimic-{a.patients}.duckdb"
    env = {**os.environ, "CLINBENCH_CACHE": str(root / "cache")}
    rows: dict[str, int] = {}
    figures: dict[str, float] = {}

    def line(name: str, seconds: float, mb: float | None, note: str = "", cpu: str | None = None) -> None:
        mem = f"{mb:8.0f} MB" if mb is not None else " " * 11
        cpu_s = f"{CPU[cpu]:9.3f} s" if cpu else " " * 11
        print(f"{name:<48} {seconds:9.3f} s {cpu_s} {mem}  {note}", flush=True)

    print(f"scale run: {a.patients:,} synthetic patients, task {a.task}, {os.cpu_count()} CPUs, work {root}")
    print(f"{'step':<48} {'wall':>11} {'cpu':>11} {'peak':>11}  ratio against the anchor (wall)")
    if "synth" in steps and not src.is_file():
        s, mb, rows = in_fresh_process(step_synth, str(src), a.patients, str(root / "cache"))
        line("synth", s, mb, f"{rows['icu.chartevents']:,} chartevents, {src.stat().st_size / 1e6:,.0f} MB file",
             "step_synth")
    if not src.is_file():
        raise SystemExit(f"{src} is missing: include the synth step")
    if not rows:
        import duckdb

        con = duckdb.connect(str(src), read_only=True)
        rows = {"icu.chartevents": con.execute("SELECT count(*) FROM mimiciv_icu.chartevents").fetchone()[0]}
        con.close()
    charts = rows["icu.chartevents"]

    if "concepts" in steps:
        anchor_db = root / "mimic-code.duckdb"
        if a.mimic_code:
            shutil.copyfile(src, anchor_db)  # before clinbench's build: the same raw tables (mimic-code replaces its own)
        s, mb, n = in_fresh_process(step_concepts, str(src))
        figures["concepts"], figures["concepts_cpu"] = s, CPU["step_concepts"]
        if a.mimic_code:
            s_mc, mb_mc, n_mc = in_fresh_process(step_mimic_code, str(anchor_db), str(a.mimic_code.resolve()))
            anchor_db.unlink()
            line("concepts build", s, mb, f"{n} objects; {s / s_mc:.2f}x the anchor "
                 f"({CPU['step_concepts'] / CPU['step_mimic_code']:.2f}x in CPU; goal <= 0.5x)", "step_concepts")
            line(f"  anchor: mimic-code concepts_duckdb ({n_mc} tables)", s_mc, mb_mc, cpu="step_mimic_code")
            r_wall, r_cpu = s / s_mc, CPU["step_concepts"] / CPU["step_mimic_code"]
            measured.append({
                "id": f"scale:concepts-{a.patients}",
                "what": f"concepts build --all, {a.patients:,} patients ({charts:,} chartevents, {n} objects), fresh process",
                "clinbench": f"{CPU['step_concepts']:.1f} s CPU, {s:.1f} s wall, {mb / 1024:.2f} GB peak",
                "anchor": f"mimic-code `concepts_duckdb` ({n_mc} tables), a copy of the same raw database: "
                          f"{CPU['step_mimic_code']:.1f} s CPU, {s_mc:.1f} s wall, {mb_mc / 1024:.2f} GB peak",
                "ratio": f"{r_cpu:.2f}x CPU, {r_wall:.2f}x wall", "goal": f"≤ {CONCEPTS_GOAL}x",
                "met": max(r_cpu, r_wall) <= CONCEPTS_GOAL})
        else:
            line("concepts build", s, mb, f"{n} objects; anchor skipped: pass --mimic-code DIR (mimic-code at 8bcbd190)",
                 "step_concepts")

    masked = None
    if "masked" in steps:
        tasks = [a.task] + [t for t in (a.second_task, a.raw_task) if t]
        labels = ["first task on this database"] + [
            "a further standard task" if t == a.second_task else "a raw task (first of its table set)" for t in tasks[1:]]
        cache = root / "cache" / "workspaces"
        kept = cache / "raw"
        aside = root / "raw-layer-aside"
        shutil.rmtree(aside, ignore_errors=True)
        cases = []
        if any(kept.glob("*.duckdb")):  # kept by the synth step (a rerun with --work keeps it too)
            kept.rename(aside)
            cases.append(("raw layer kept by data synth", True))
        cases.append(("database from elsewhere, no raw layer", False))
        built_by_case = []
        for label, with_layer in cases:
            shutil.rmtree(root / "cache", ignore_errors=True)
            if with_layer:  # moved, not copied: a layer is used only as it was sealed (same inode)
                cache.mkdir(parents=True)
                aside.rename(kept)
            _, mb, built = in_fresh_process(step_masked, str(src), tasks, str(root / "cache"))
            built_by_case.append((label, with_layer, mb, built))
            if with_layer:
                kept.rename(aside)
        if aside.exists():  # leave the layer in place for a later run
            shutil.rmtree(root / "cache", ignore_errors=True)
            cache.mkdir(parents=True)
            aside.rename(kept)
        work = root / "anchor"
        work.mkdir(exist_ok=True)
        anchors = []
        for task in tasks:
            s_anchor, mb_anchor, _ = in_fresh_process(step_copy_drop_compact, str(src), task, str(work))
            anchors.append((s_anchor, CPU["step_copy_drop_compact"], mb_anchor))
        for label, with_layer, mb, built in built_by_case:
            print(f"masked database ({label}):")
            for i, (task, (path, s, cpu, size), (s_anchor, cpu_anchor, mb_anchor)) in enumerate(zip(tasks, built, anchors)):
                if i == 0:
                    masked = path
                    key = "masked" if with_layer else "masked_elsewhere"
                    figures[key], figures[f"{key}_cpu"] = s, cpu
                CPU["masked"] = cpu
                line(f"  {labels[i]}", s, mb if i == 0 else None,
                     f"{task}, {size / 1e6:,.0f} MB; {s / s_anchor:.2f}x the anchor ({cpu / cpu_anchor:.2f}x in CPU; "
                     "goal <= 0.5x)", "masked")
                kind = "first" if i == 0 else "further" if task == a.second_task else "raw"
                measured.append({
                    "id": f"scale:masked-{'kept' if with_layer else 'elsewhere'}-{kind}-{a.patients}",
                    "what": f"masked database, {labels[i]} ({task}; {label}; {a.patients:,} patients)",
                    "clinbench": f"{cpu:.2f} s CPU, {s:.2f} s wall ({size / 1e6:,.0f} MB)",
                    "anchor": f"M4Bench copy + drop + compact: {cpu_anchor:.2f} s CPU, {s_anchor:.2f} s wall",
                    "ratio": f"{cpu / cpu_anchor:.2f}x CPU ({s / s_anchor:.2f}x wall)", "goal": f"≤ {MASKED_GOAL}x CPU",
                    "met": cpu / cpu_anchor <= MASKED_GOAL})
        for task, (s_anchor, cpu_anchor, mb_anchor) in zip(tasks, anchors):
            CPU["anchor"] = cpu_anchor
            line(f"  anchor: M4Bench copy + drop + compact, {task}", s_anchor, mb_anchor, cpu="anchor")

    if "workspace" in steps:
        if masked is None or not Path(masked).exists():
            _, _, [(masked, *_)] = in_fresh_process(step_masked, str(src), [a.task], str(root / "cache"))
        work = root / "runs"
        work.mkdir(exist_ok=True)
        _, mb, times = in_fresh_process(step_workspaces, str(src), a.task, str(root / "cache"), str(work), a.runs)
        _, mb_copy, copies = in_fresh_process(step_plain_copies, masked, str(work), a.runs)
        ours, copy = statistics.median(times), statistics.median(copies)
        figures["workspace"] = ours
        line("per-run workspace (warm cache, median)", ours, mb,
             f"{ours * 1000:.1f} ms, {copy / ours:.0f}x cheaper than the anchor (goal <= 20 ms)")
        line("  anchor: M4Bench per-run copy of the masked DB", copy, mb_copy,
             f"{Path(masked).stat().st_size / 1e6:,.0f} MB copied per run")
        measured.append({
            "id": f"scale:workspace-{a.patients}",
            "what": f"per-run workspace, warm cache, {a.patients:,} patients ({a.task}; median of {a.runs})",
            "clinbench": f"{ours * 1000:.1f} ms", "anchor": f"M4Bench's per-run copy of the "
            f"{Path(masked).stat().st_size / 1e6:,.0f} MB masked file: "
            + (f"{copy:.2f} s" if copy >= 0.1 else f"{copy * 1000:.1f} ms"),
            "ratio": (f"{copy / ours:.0f}x" if copy / ours >= 10 else f"{copy / ours:.2f}x") + " cheaper",
            "goal": f"≤ {WORKSPACE_GOAL * 1000:g} ms",
            "met": ours <= WORKSPACE_GOAL})
        out = root / "cli-ws"
        cli = []
        for i in range(3):
            t0 = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "clinbench", "workspace", a.task, "--db", str(src), "--out",
                                   str(out / str(i))], env=env, capture_output=True, text=True)
            cli.append(time.perf_counter() - t0)
            if done.returncode != 0:  # the CLI checks the task's reference exists (built with the concepts)
                print(f"  per-run workspace from the CLI: not run ({done.stderr.strip().splitlines()[-1]})")
                break
        else:
            line("  per-run workspace from the CLI (process start)", statistics.median(cli), None)
        shutil.rmtree(out, ignore_errors=True)

    if "score" in steps:
        output = root / "output.csv"
        _, _, n = in_fresh_process(step_export, a.task, str(src), str(output))
        s, mb, reward = in_fresh_process(step_score, a.task, str(output), str(src))
        figures["score"] = s
        line(f"score ({n:,} reference rows, in-process)", s, mb, f"reward {reward}", "step_score")
        ours = cli_seconds(["score", a.task, str(output), "--db", str(src)], env, 3)
        evaluate = None
        if a.m4:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from score_vs_m4bench import anchor_copy

            evaluate = anchor_copy(a.m4.resolve(), root, output, a.task)
        if isinstance(evaluate, Path):
            theirs = []
            for _ in range(3):
                t0 = time.perf_counter()
                subprocess.run([sys.executable, str(evaluate), "--task", a.task, "--output", str(output)], env=env,
                               check=True, capture_output=True)
                theirs.append(time.perf_counter() - t0)
            m4 = statistics.median(theirs)
            line("  score from the CLI (process start)", ours, None, f"{m4 / ours:.1f}x faster than the anchor (goal >= 10x)")
            line("  anchor: M4Bench 0.5.3 evaluate.py, same output", m4, None)
        else:
            line("  score from the CLI (process start)", ours, None,
                 f"anchor skipped: {evaluate}" if evaluate else "anchor skipped: pass --m4 DIR (M4Bench at 0.5.3)")

    print(f"\nper chartevents row ({charts:,} here) and what a full MIMIC-IV ({FULL_MIMIC_CHARTEVENTS:,} "
          "chartevents) needs at that cost, assuming cost grows linearly with chartevents:")
    scale = FULL_MIMIC_CHARTEVENTS / charts
    size = src.stat().st_size
    print(f"  database file: {size / charts:,.0f} bytes/row -> {size * scale / 1e9:,.0f} GB")
    for name, label in (("concepts", "concepts build"), ("masked", "masked database, first task (raw layer kept)"),
                        ("masked_elsewhere", "masked database, first task (no raw layer)")):
        if name in figures:
            wall, cpu = figures[name], figures[f"{name}_cpu"]
            print(f"  {label}: {wall / charts * 1e9:,.0f} ns/row wall, {cpu / charts * 1e9:,.0f} ns/row CPU -> "
                  f"{wall * scale / 60:,.1f} min at this run's wall rate, {cpu * scale / 60:,.1f} CPU-min "
                  f"({cpu * scale / 60 / (os.cpu_count() or 1):,.1f} min on {os.cpu_count()} idle cores)")
    if "workspace" in figures:
        print(f"  per-run workspace: independent of size (a hard link) -> {figures['workspace'] * 1000:.1f} ms")
    if a.record:
        if not measured:
            raise SystemExit("nothing recorded: none of the concepts, masked and workspace steps ran")
        figures_store.record(measured, figures_store.this_run(load_at_start))
        print(f"recorded in {figures_store.FIGURES}")
    tmp.cleanup()


if __name__ == "__main__":
    main()
