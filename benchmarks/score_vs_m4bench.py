"""Scoring, process to result: ``clinbench score`` against M4Bench 0.5.3's ``benchmark/evaluate.py``, same files, same run.

Synthesises ``--patients`` MIMIC-IV patients (default 3,100: about 209,000 rows of the
mimic-urine-output-rate reference, 13 columns), builds that task's reference and writes it as
two agent outputs: ``perfect.csv`` (the reference itself) and ``perturbed.csv`` (1 in 50 value
cells off by one). Each is then scored, alternating, in fresh processes (process start
included), ``--runs`` times:

- clinbench: ``python -m clinbench score TASK OUTPUT --db DB --json`` (bytecode cached, as an installed
  package's is: ``PYTHONDONTWRITEBYTECODE`` is dropped for both sides), once with the default
  columns (``value``) and once with ``--scored-columns required`` (the columns M4Bench 0.5.3
  scores). The reference cache is warm (``cold`` is the first score, which prepares it);
- anchor: ``python <copy of benchmark/>/evaluate.py --task TASK --output OUTPUT``, with the same
  reference written as its ground truth CSV (``benchmark/ground_truth/<key>.csv``) in a copy of
  the checkout's ``benchmark`` folder (the checkout itself is not touched).

It prints the median wall and CPU seconds (user + system, of the child process) of each, the
ratio anchor / clinbench, and both rewards (they must agree under ``required``). The anchor
needs pandas, which clinbench does not depend on: ``pip install pandas``, or ``--anchor-python`` a Python with it. Without ``--m4`` the
anchor is skipped, saying so.

    .venv/bin/python benchmarks/score_vs_m4bench.py --m4 PATH/TO/m4 [--patients 3100] [--runs 5] [--work DIR] [--record]

``--record`` (needs the anchor to have run: ``--m4``) writes the four rows it measured (perfect and
perturbed output, default and M4Bench's columns, each against M4Bench's evaluator on the same output
in the same runs) into docs/performance.json (``benchmarks/figures.py``); then render the table with
``benchmarks/performance_table.py``.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
import figures  # noqa: E402  (benchmarks/figures.py: the figures store)

TASK = "mimic-urine-output-rate"
GOAL = 10.0  # x: M4Bench's seconds over clinbench's, wall and CPU


def timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, stdout) of one process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {done.returncode}): {done.stderr.strip()[-400:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout


def prepare(work: Path, patients: int) -> tuple[Path, Path, Path, int]:
    """(database, perfect.csv, perturbed.csv, reference rows), reusing what ``work`` already holds."""
    from clinbench.concepts.build import build_concepts
    from clinbench.derive.catalogue import get_task
    from clinbench.derive.reference import export_reference
    from clinbench.ehr.synth import synth_mimic_iv

    db = work / f"mimic-{patients}.duckdb"
    perfect, perturbed = work / "perfect.csv", work / "perturbed.csv"
    if not db.is_file():
        synth_mimic_iv(db, patients=patients, seed=0)
    spec = get_task(TASK)
    build_concepts(db, only=[spec.target_table.split(".")[1]])
    rows = export_reference(TASK, db, perfect)
    rng = random.Random(0)
    with perfect.open(newline="") as src, perturbed.open("w", newline="") as dst:
        reader, writer = csv.reader(src), csv.writer(dst, lineterminator="\n")
        header = next(reader)
        writer.writerow(header)
        values = [header.index(c) for c in spec.scored_columns]
        for row in reader:
            for i in values:
                if row[i] and rng.random() < 0.02:
                    row[i] = repr(float(row[i]) + 1.0)
            writer.writerow(row)
    return db, perfect, perturbed, rows


def anchor_copy(m4: Path, work: Path, perfect: Path, task: str = TASK, python: str = sys.executable) -> Path | str:
    """A copy of the checkout's ``benchmark`` folder with ``perfect`` as ``task``'s ground truth, or why not."""
    from anchor_runs import AnchorMissing, m4_benchmark

    try:
        bench = m4_benchmark(m4)
    except AnchorMissing as exc:
        return str(exc)
    if not (bench / "evaluate.py").is_file():
        return f"{bench} has no evaluate.py: pass an M4Bench checkout at 0.5.3"
    if problem := anchor_python_problem(python):
        return problem
    copy = work / "m4-benchmark"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(bench, copy, ignore=shutil.ignore_patterns("agent_db", "results", "*.duckdb"))
    key = task.removeprefix("mimic-")
    for old in (copy / "ground_truth").glob(f"{key}.csv*"):
        old.unlink()
    shutil.copyfile(perfect, copy / "ground_truth" / f"{key}.csv")
    return copy / "evaluate.py"


def anchor_python_problem(python: str) -> str | None:
    """Why ``python`` cannot run M4Bench's evaluator (it needs pandas, which clinbench does not, and duckdb:
    evaluate.py imports its lib.db), or None."""
    if subprocess.run([python, "-c", "import pandas, duckdb"], capture_output=True).returncode != 0:
        return (f"M4Bench's evaluator needs pandas and duckdb, which {python} lacks: pip install pandas duckdb "
                "(M4Bench 0.5.3 locks pandas 2.3.1, numpy 2.2.6, duckdb 1.4.1), or pass --anchor-python a Python "
                "that has them")
    return None


def m4_reward(stdout: str) -> float:
    for line in stdout.splitlines():
        if line.startswith("Reward:"):
            return float(line.split(":", 1)[1])
    raise SystemExit(f"M4Bench's evaluator printed no reward:\n{stdout[-400:]}")


def anchor_arguments(doc: str, patients: int, patients_help: str, kept: str) -> tuple[argparse.Namespace, Path, object]:
    """The options both M4Bench comparisons take, parsed; the work folder (made); and the temporary folder
    behind it, to keep alive while it is used."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--m4", type=Path, help="an M4Bench (hannesill/m4) checkout at 0.5.3; without it the anchor is skipped")
    ap.add_argument("--patients", type=int, default=patients, help=patients_help)
    ap.add_argument("--anchor-python", default=sys.executable, help="the Python that runs the anchor (needs pandas; "
                    "default: this one)")
    ap.add_argument("--runs", type=int, default=5, help="repetitions of each measurement (median kept)")
    ap.add_argument("--work", type=Path, help=f"folder to keep {kept} in (reused when present)")
    ap.add_argument("--record", action="store_true", help="write the measured rows into docs/performance.json")
    a = ap.parse_args()
    if a.record and a.m4 is None:
        ap.error("--record needs --m4 PATH: each row's anchor is measured in the same run")
    tmp = tempfile.TemporaryDirectory()
    work = (a.work or Path(tmp.name)).resolve()
    work.mkdir(parents=True, exist_ok=True)
    return a, work, tmp


def main() -> None:
    a, work, _tmp = anchor_arguments(__doc__, 3100, "synthetic patients (default 3,100: ~209 k reference rows)",
                                     "the database and outputs")
    db, perfect, perturbed, rows = prepare(work, a.patients)
    env = {**os.environ, "CLINBENCH_CACHE": str(work / "cache")}
    # as installed packages are: compiled once (both sides; the cold run writes clinbench's)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    shutil.rmtree(work / "cache", ignore_errors=True)

    evaluate: Path | None = None
    if a.m4 is None:
        print("anchor skipped: pass --m4 PATH, an M4Bench (hannesill/m4) checkout at 0.5.3")
    else:
        found = anchor_copy(a.m4.resolve(), work, perfect, python=a.anchor_python)
        if isinstance(found, str):
            print(f"anchor skipped: {found}")
        else:
            evaluate = found

    def clinbench(output: Path, columns: str) -> list[str]:
        return [sys.executable, "-m", "clinbench", "score", TASK, str(output), "--db", str(db), "--json",
                "--scored-columns", columns]

    cold_wall, cold_cpu, _ = timed(clinbench(perfect, "value"), env)
    load = os.getloadavg()
    load_at_start, measured = load[0], []
    print(f"{TASK}: {rows:,} reference rows, {perfect.stat().st_size / 1e6:.0f} MB output, {os.cpu_count()} CPUs, "
          f"load average {load[0]:.1f} at the start; median of {a.runs} runs, alternating")
    print(f"clinbench cold (first score of this database, prepares the cached reference): "
          f"{cold_wall:.2f} s wall, {cold_cpu:.2f} s CPU")
    print(f"{'output':<10} {'scorer':<28} {'wall s':>8} {'CPU s':>8} {'reward':>10}")
    for output in (perfect, perturbed):
        samples: dict[str, list[tuple[float, float]]] = {"value": [], "required": [], "m4": []}
        rewards: dict[str, float] = {}
        for _ in range(a.runs):
            for columns in ("value", "required"):
                wall, cpu, out = timed(clinbench(output, columns), env)
                samples[columns].append((wall, cpu))
                rewards[columns] = json.loads(out)["reward"]
            if evaluate is not None:
                wall, cpu, out = timed([a.anchor_python, str(evaluate), "--task", TASK, "--output", str(output)], env)
                samples["m4"].append((wall, cpu))
                rewards["m4"] = m4_reward(out)
        med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in samples.items() if v}
        names = {"value": "clinbench (value columns)", "required": "clinbench (required columns)",
                 "m4": "M4Bench 0.5.3 evaluate.py"}
        for k, (wall, cpu) in med.items():
            print(f"{output.stem:<10} {names[k]:<28} {wall:8.2f} {cpu:8.2f} {rewards[k]:10.6f}")
        if "m4" in med:
            for k in ("value", "required"):
                print(f"{output.stem:<10} anchor / {names[k]:<17} {med['m4'][0] / med[k][0]:7.1f}x wall "
                      f"{med['m4'][1] / med[k][1]:7.1f}x CPU   (goal >= 10x)")
            if abs(rewards["m4"] - rewards["required"]) > 1e-6:
                print(f"{output.stem:<10} WARNING: rewards differ (M4Bench {rewards['m4']}, clinbench {rewards['required']})")
            measured += score_rows(output.stem, rows, a.runs, med, rewards)
    load = os.getloadavg()
    print(f"load average {load[0]:.1f} at the end")
    if a.record:
        if not measured:
            raise SystemExit("nothing recorded: the anchor did not run (see 'anchor skipped' above)")
        figures.record(measured, figures.this_run(load_at_start))
        print(f"recorded in {figures.FIGURES}")


def score_rows(output: str, rows: int, runs: int, med: dict[str, tuple[float, float]],
               rewards: dict[str, float]) -> list[dict]:
    """One output's rows, default and M4Bench's columns, each against M4Bench's evaluator on that output."""
    m4_wall, m4_cpu = med["m4"]
    columns = {"value": "default columns", "required": "M4Bench's scored columns (`--scored-columns required`)"}
    out = []
    for key, label in columns.items():
        wall, cpu = med[key]
        r_wall, r_cpu = m4_wall / wall, m4_cpu / cpu
        agree = "rewards agree" if abs(rewards["m4"] - rewards["required"]) <= 1e-6 else "REWARDS DIFFER"
        out.append({"id": f"score_vs_m4bench:{output}-{key}",
                    "what": f"scoring `{TASK}` ({rows:,} reference rows), `clinbench score ... --json` process start to "
                            f"result, median of {runs}: {output} output, {label}",
                    "clinbench": f"{wall:.2f} s wall, {cpu:.2f} s CPU (reward {rewards[key]:.6f})",
                    "anchor": f"M4Bench 0.5.3 `evaluate.py`, same output, same runs: {m4_wall:.2f} s wall, {m4_cpu:.2f} s "
                              f"CPU (reward {rewards['m4']:.6f}; {agree} under M4Bench's columns)",
                    "ratio": f"{r_wall:.1f}x wall, {r_cpu:.1f}x CPU", "goal": f"≥ {GOAL:g}x wall and CPU",
                    "met": r_wall >= GOAL and r_cpu >= GOAL})
    return out


if __name__ == "__main__":
    main()
