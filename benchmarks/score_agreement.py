"""clinbench's rewards against M4Bench's evaluator on outputs damaged the ways agents damage them.

For each of seven MIMIC-IV tasks and M4Bench's two eICU tasks it writes ``--outputs`` copies of the task's reference (the first 3,000
rows), each with one to four damages drawn at random: rows dropped, duplicated (the same or other values)
or added under keys the reference lacks; rows shuffled; numbers moved by 0.3, 0.7 or 3 times the column's
tolerance, or far; cells emptied or filled; timestamps moved by minutes or hours; text swapped for
another row's; a column dropped, added or the columns reordered; a key cell emptied. Every output stays a
clean CSV (exact header names, empty cells for missing values, plain numbers, ISO timestamps), where
docs/scoring.md says both scorers agree. Each is then scored three ways and compared:

- clinbench alone (``score_output``, as ``clinbench score`` and a campaign run score it);
- clinbench in batches (``Scorer.many``, as ``clinbench rescore`` scores a campaign): must equal alone;
- M4Bench 0.5.3's ``evaluate()`` (``--m4``), M4Bench's columns (``--scored-columns required``): must
  agree to its 8 printed decimals, except where docs/scoring.md names the difference: an empty key cell
  (M4Bench's key column becomes text and nothing joins: reward 0; clinbench misses that row only).

Then it writes one output for each of five rows of docs/scoring.md's table of reader differences (a header
name's case, a null spelling, one unparseable numeric cell, spaces around text, a duplicated header name)
and checks that each comes out as the table says.

Exit status 1 on any disagreement. Not timed: ``score_vs_m4bench.py`` and ``rescore_vs_m4bench.py`` time.

    .venv/bin/python benchmarks/score_agreement.py --m4 PATH/TO/m4 [--anchor-python PY] [--outputs 100]
        [--seed 0] [--patients 200] [--work DIR]

Measured (2026-12-07, 200 patients): MIMIC-IV tasks only, seed 2, 700 outputs, 127 with an empty key cell, the
other 573 agree with M4Bench; seed 7, 1,400 outputs, 234 and 1,166 of 1,166; with the eICU tasks, seed 3, 900
outputs, 141 and 759 of 759. Batches equal alone on all 3,000.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import os
import random
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from score_vs_m4bench import anchor_python_problem  # noqa: E402

TASKS = ["mimic-apsiii-24h", "mimic-kdigo-48h", "mimic-oasis-24h", "mimic-sapsii-24h", "mimic-sofa-24h",
         "mimic-suspicion-infection", "mimic-urine-output-rate"]
EICU_TASKS = ["eicu-gcs", "eicu-oasis"]  # M4Bench's ground truth file: the task name less its database prefix
DAMAGES = ["drop", "dup", "dupdiff", "extra", "shuffle", "num", "far", "empty", "fill", "ts", "text",
           "dropcol", "extracol", "reorder", "emptykey"]
NAMED = {"emptykey"}  # differences docs/scoring.md names (the first-row table): not counted as disagreement
ROWS = 3000


def _number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _timestamp(s: str) -> bool:
    try:
        dt.datetime.fromisoformat(s)
        return len(s) >= 16
    except ValueError:
        return False


def damage(header: list[str], body: list[list[str]], keys: list[str], tolerances: dict[str, float],
           kinds: list[str], rng: random.Random) -> tuple[list[str], list[list[str]]]:
    """A copy of (header, body) with each damage of ``kinds`` applied in turn."""
    h, b = list(header), [list(r) for r in body]
    for kind in kinds:
        at = {c: i for i, c in enumerate(h)}
        values = [c for c in h if c not in keys]
        if not values or not b:
            continue
        if kind == "drop":
            for _ in range(rng.randint(1, 20)):
                b.pop(rng.randrange(len(b)))
                if not b:
                    break
        elif kind in ("dup", "dupdiff"):
            for _ in range(rng.randint(1, 10)):
                row = list(rng.choice(b))
                c = rng.choice(values)
                if kind == "dupdiff" and _number(row[at[c]]):
                    row[at[c]] = repr(float(row[at[c]]) + 7)
                b.insert(rng.randrange(len(b) + 1), row)
        elif kind == "extra":
            for _ in range(rng.randint(1, 10)):
                row = list(rng.choice(b))
                i = at[rng.choice(keys)]
                if _number(row[i]):
                    row[i] = str(int(float(row[i])) + 10_000_000 + rng.randrange(1000))
                b.append(row)
        elif kind == "shuffle":
            rng.shuffle(b)
        elif kind in ("num", "far", "empty", "fill", "ts", "text"):
            for _ in range(rng.randint(1, 30)):
                row, c = rng.choice(b), rng.choice(values)
                v = row[at[c]]
                if kind == "num" and _number(v):
                    step = tolerances.get(c) or 1
                    row[at[c]] = repr(float(v) + rng.choice([-1, 1]) * rng.choice([0.3, 0.7, 3]) * step)
                elif kind == "far" and _number(v):
                    row[at[c]] = repr(float(v) * rng.choice([10, -1, 0.5]) + 100)
                elif kind == "empty":
                    row[at[c]] = ""
                elif kind == "fill" and v == "":
                    row[at[c]] = str(rng.randint(0, 5))
                elif kind == "ts" and _timestamp(v):
                    moved = dt.datetime.fromisoformat(v) + dt.timedelta(minutes=rng.choice([-90, -1, 1, 30, 600]))
                    row[at[c]] = moved.strftime("%Y-%m-%d %H:%M:%S")
                elif kind == "text" and v and not _number(v) and not _timestamp(v):
                    row[at[c]] = rng.choice(b)[at[c]]
        elif kind == "dropcol":
            i = at[rng.choice(values)]
            h.pop(i)
            for row in b:
                row.pop(i)
        elif kind == "extracol":
            h.append("notes")
            for row in b:
                row.append("x")
        elif kind == "reorder":
            order = list(range(len(h)))
            rng.shuffle(order)
            h, b = [h[i] for i in order], [[row[i] for i in order] for row in b]
        elif kind == "emptykey":
            for _ in range(rng.randint(1, 3)):
                rng.choice(b)[at[rng.choice(keys)]] = ""
    return h, b


def _write(path: Path, header: list[str], body: list[list[str]]) -> Path:
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(header)
        writer.writerows(body)
    return path


def _truth(bench: Path, task: str) -> Path:
    return bench / "ground_truth" / f"{task.split('-', 1)[1]}.csv"


def write_outputs(bench: Path, out: Path, per_task: int, seed: int) -> list[tuple[str, str, str, list[str]]]:
    """(run id, task, path, damages) of each damaged output written under ``out``."""
    from clinbench.derive.catalogue import get_task

    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    for task in TASKS + EICU_TASKS:
        spec = get_task(task)
        with open(_truth(bench, task), newline="") as fh:
            header, *body = list(csv.reader(fh))
        body = body[:ROWS]  # the rows after it are missing keys alike for both scorers
        for n in range(per_task):
            kinds = rng.sample(DAMAGES, k=rng.randint(1, 4))
            h, b = damage(header, body, spec.keys, spec.tolerances, kinds, rng)
            path = _write(out / f"{task}.{n}.csv", h, b)
            runs.append((f"{task}.{n}", task, str(path), kinds))
    return runs


# Rows of docs/scoring.md's table of where the two CSV readers differ, each written from a reference:
# (case, task, what clinbench's reward is against M4Bench's as the table says: "higher" or "same").
DOCUMENTED = [
    ("header case", "mimic-sofa-24h", "higher"),  # M4Bench: another column name, a key missing: reward 0
    ("null spelling", "mimic-suspicion-infection", "higher"),  # M4Bench: 'null' is text, never an empty cell
    ("one unparseable numeric cell", "mimic-sofa-24h", "higher"),  # M4Bench: the column compared as text
    ("spaces around text", "mimic-suspicion-infection", "higher"),  # M4Bench: compared as written
    ("duplicated header name", "mimic-sofa-24h", "same"),  # both score the first 'sofa'
]


def write_documented(bench: Path, out: Path) -> list[tuple[str, str, str, str]]:
    """(run id, task, path, expectation) of each ``DOCUMENTED`` case, written under ``out``."""
    ids = {"subject_id", "hadm_id", "stay_id", "ab_id"}
    runs = []
    for case, task, expect in DOCUMENTED:
        with open(_truth(bench, task), newline="") as fh:
            header, *body = [list(r) for r in csv.reader(fh)]
        if case == "header case":
            header = ["Stay_ID" if c == "stay_id" else c for c in header]
        elif case == "null spelling":
            body = [[("null" if v == "" and c not in ids else v) for c, v in zip(header, row)] for row in body]
        elif case == "one unparseable numeric cell":
            i = header.index("sofa")
            for row in body:
                row[i] = f"{row[i]}.0" if row[i] and "." not in row[i] else row[i]
            body[0][i] += " pts"
        elif case == "spaces around text":
            i = header.index("antibiotic")
            body = [[*row[:i], f"{row[i]} " if row[i] else row[i], *row[i + 1:]] for row in body]
        elif case == "duplicated header name":
            header, body = [*header, "SOFA"], [[*row, "99"] for row in body]
        path = _write(out / f"documented-{case.replace(' ', '-')}.csv", header, body)
        runs.append((f"documented: {case}", task, str(path), expect))
    return runs


def alone_rewards(runs, dbs: dict[str, Path]) -> dict[str, float]:
    """Each run's reward scored alone, under M4Bench's columns (``dbs``: task -> its database)."""
    from clinbench.derive.score import score_output

    return {run: score_output(task, path, dbs[task], scored_columns="required").reward for run, task, path, _ in runs}


def clinbench_rewards(runs, dbs: dict[str, Path]) -> tuple[dict[str, float], dict[str, float]]:
    """(alone, in batches): each run's reward under M4Bench's columns (``dbs``: task -> its database)."""
    from clinbench.derive.score import Scorer

    alone = alone_rewards(runs, dbs)
    batched: dict[str, float] = {}
    with Scorer() as scorer:
        for task in dbs:
            mine = [(run, path) for run, t, path, _ in runs if t == task]
            results = scorer.many(task, [p for _, p in mine], dbs[task], scored_columns="required")
            batched.update({run: r.reward for (run, _), r in zip(mine, results)})
    return alone, batched


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--m4", type=Path, required=True, help="an M4Bench (hannesill/m4) checkout at 0.5.3")
    ap.add_argument("--anchor-python", default=sys.executable, help="the Python that runs M4Bench (needs pandas)")
    ap.add_argument("--outputs", type=int, default=100, help="damaged outputs per task (default 100)")
    ap.add_argument("--seed", type=int, default=0, help="seed of the damages (default 0)")
    ap.add_argument("--patients", type=int, default=200, help="synthetic patients (default 200)")
    ap.add_argument("--work", type=Path, help="folder to keep the database and outputs in (reused when present)")
    a = ap.parse_args()
    from anchor_runs import AnchorMissing, m4_benchmark

    try:
        m4_benchmark(a.m4)  # before any work
    except AnchorMissing as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if problem := anchor_python_problem(a.anchor_python):
        print(f"error: {problem}", file=sys.stderr)
        return 2
    tmp = tempfile.TemporaryDirectory()
    work = (a.work or Path(tmp.name)).resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ["CLINBENCH_CACHE"] = str(work / "cache")

    from clinbench.concepts.build import build_concepts
    from clinbench.derive.catalogue import get_task
    from clinbench.derive.reference import export_reference
    from clinbench.ehr.synth import synth_eicu, synth_mimic_iv
    from rescore_vs_m4bench import anchor_setup

    db, eicu = work / f"mimic-{a.patients}.duckdb", work / f"eicu-{a.patients}.duckdb"
    for path, synth in ((db, synth_mimic_iv), (eicu, synth_eicu)):
        if not path.is_file():
            synth(path, patients=a.patients, seed=0)
    build_concepts(db, only=[get_task(t).target_table for t in TASKS])
    build_concepts(eicu, only=[get_task(t).target_table for t in EICU_TASKS])
    bench = anchor_setup(a.m4.resolve(), work, db, a.anchor_python)  # the MIMIC-IV ground truths and the loop
    if isinstance(bench, str):
        print(f"error: {bench}", file=sys.stderr)
        return 2
    for task in EICU_TASKS:
        _truth(bench, task).with_suffix(".csv.gz").unlink(missing_ok=True)  # M4Bench reads a .gz first
        export_reference(task, eicu, _truth(bench, task))
    runs = write_outputs(bench, work / "outputs", a.outputs, a.seed)
    documented = write_documented(bench, work / "outputs")
    dbs = {**dict.fromkeys(TASKS, db), **dict.fromkeys(EICU_TASKS, eicu)}
    alone, batched = clinbench_rewards(runs, dbs)
    docs_alone = alone_rewards(documented, dbs)
    (work / "runs.json").write_text(json.dumps([r[:3] for r in runs + documented]))
    done = subprocess.run([a.anchor_python, str(work / "anchor_loop.py"), str(bench), str(work / "runs.json")],
                          capture_output=True, text=True)
    if done.returncode != 0:
        print(f"error: M4Bench's evaluate() failed: {done.stderr.strip()[-400:]}", file=sys.stderr)
        return 2
    m4 = json.loads(done.stdout)

    named = [run for run, _, _, kinds in runs if NAMED & set(kinds)]
    differ = [(run, alone[run], m4[run], kinds) for run, _, _, kinds in runs
              if run not in named and abs(alone[run] - m4[run]) > 1e-8]  # M4Bench prints 8 decimals
    split = [run for run, *_ in runs if batched[run] != alone[run]]
    print(f"{len(runs)} damaged outputs ({a.outputs} per task x {len(TASKS) + len(EICU_TASKS)} tasks, seed {a.seed}, "
          f"{a.patients} patients), M4Bench's columns")
    print(f"clinbench in batches equals clinbench alone: {len(runs) - len(split)} of {len(runs)}")
    print(f"with a difference docs/scoring.md names (an empty key cell): {len(named)}")
    print(f"clinbench agrees with M4Bench's evaluate(): {len(runs) - len(named) - len(differ)} of "
          f"{len(runs) - len(named)}")
    for run, ours, theirs, kinds in differ[:20]:
        print(f"  DIFFERS {run}: clinbench {ours:.8f}, M4Bench {theirs:.8f} ({', '.join(kinds)})")
    for run in split[:20]:
        print(f"  BATCH DIFFERS {run}: alone {alone[run]}, in a batch {batched[run]}")
    wrong = 0
    print("docs/scoring.md's reader differences, each on a reference (clinbench, M4Bench):")
    for run, _, _, expect in documented:
        ours, theirs = docs_alone[run], m4[run]
        held = ours > theirs + 1e-8 if expect == "higher" else abs(ours - theirs) <= 1e-8
        wrong += not held
        print(f"  {'as documented' if held else 'NOT AS DOCUMENTED'}: {run.removeprefix('documented: ')} "
              f"{ours:.8f}, {theirs:.8f}")
    return 1 if differ or split or wrong else 0


if __name__ == "__main__":
    sys.exit(main())
