"""Re-scoring a campaign: ``clinbench rescore`` of 560 runs against M4Bench 0.5.3's evaluator called once per run.

Synthesises ``--patients`` MIMIC-IV patients and records two 560-run campaigns on it (once; kept
in ``--work``), on 7 standard tasks whose reference has a variant and their 7 raw-mode twins, scored
on M4Bench 0.5.3's columns (``--scored-columns required``):

- deterministic: the built-in ``reference`` agent (a perfect output) and ``variant`` agent (a
  documented alternative convention: rewards below 1), 20 trials each. The agents are
  deterministic, so the 560 outputs are a few distinct files per task, and rescore scores each
  distinct output of a task once (its sealed hash, verified for every run): the figure is mostly
  what every run costs whatever its output (verifying its evidence, the store, the process) plus
  one scoring query per reference;
- distinct: a ``command`` agent (``perturbing_agent.py``, sandboxed like any agent program) that
  writes the reference with 3 value cells changed, chosen by the run's task and trial, 40 trials
  each: every output its own, as a real campaign's (LLM agents) are. This is the honest figure.

Then, for each campaign, alternating, ``--runs`` times:

- clinbench: ``python -m clinbench rescore CAMPAIGN`` (one process, start included: every run's
  evidence verified and its output re-scored; a changed score is resealed and recorded, and on a
  campaign rescored before none is);
- anchor: one Python process that calls M4Bench's ``benchmark/evaluate.py`` ``evaluate(task,
  output)`` for each of the campaign's 560 outputs, with each task's reference written once as its
  ground truth CSV in a copy of the checkout's ``benchmark`` folder and read once per task (the
  ground truth read is memoised: the fairest per-run loop M4Bench's own code allows).

It prints, per campaign, how many distinct outputs it has, the median wall and CPU seconds of each,
the ratio anchor / clinbench (goal >= 20x), and on how many runs the two rewards agree. The anchor
needs pandas and duckdb (``pip install pandas duckdb``, or ``--anchor-python`` a Python with them).

    .venv/bin/python benchmarks/rescore_vs_m4bench.py --m4 PATH/TO/m4 [--patients 200] [--runs 5] [--work DIR] [--record]

``--record`` (needs ``--m4``: the anchor runs in the same rounds) writes the two rows it measured,
``rescore_vs_m4bench:campaign`` (deterministic) and ``rescore_vs_m4bench:distinct``, into
docs/performance.json (``benchmarks/figures.py``); then render the table with
``benchmarks/performance_table.py``.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import figures  # noqa: E402  (benchmarks/figures.py: the figures store)
from score_vs_m4bench import anchor_arguments, anchor_python_problem, timed  # noqa: E402

TASKS = ["mimic-apsiii-24h", "mimic-kdigo-48h", "mimic-oasis-24h", "mimic-sapsii-24h", "mimic-sofa-24h",
         "mimic-suspicion-infection", "mimic-urine-output-rate"]
TASKS = TASKS + [t + "-raw" for t in TASKS]
TRIALS = 20
GOAL = 20.0  # x: M4Bench's loop's seconds over rescore's, wall and CPU

# The anchor's loop, run by the interpreter clinbench runs under: argv = benchmark folder, runs JSON.
ANCHOR_LOOP = '''
import json, sys
sys.path.insert(0, sys.argv[1])
import evaluate
from lib import runner

read = runner.read_benchmark_csv
truths = {}

def read_once(path):  # each task's ground truth is read once; every agent output is read per run
    if "/ground_truth/" in str(path):
        if path not in truths:
            truths[path] = read(path)
        return truths[path]
    return read(path)

runner.read_benchmark_csv = read_once
rewards = {run: evaluate.evaluate(task, output)["reward"] for run, task, output in json.load(open(sys.argv[2]))}
print(json.dumps(rewards))
'''


def campaign(work: Path, patients: int) -> tuple[Path, Path]:
    """(database, campaign folder) of the 560 runs, recorded once."""
    from clinbench.campaign.campaign import run_campaign
    from clinbench.campaign.demo import execute_demo_run
    from clinbench.campaign.execute import CampaignConfig
    from clinbench.campaign.matrix import expand
    from clinbench.concepts.build import build_concepts
    from clinbench.derive.catalogue import get_task
    from clinbench.derive.reference import variant_table
    from clinbench.campaign.demo import task_variant
    from clinbench.ehr.synth import synth_mimic_iv

    db, out = work / f"mimic-{patients}.duckdb", work / "campaign"
    if not db.is_file():
        synth_mimic_iv(db, patients=patients, seed=0)
    tables = [get_task(t).target_table for t in TASKS] + [variant_table(get_task(t), task_variant(t)) for t in TASKS]
    build_concepts(db, only=sorted(set(tables)))
    specs = expand(TASKS, ["no-skill"], ["native"], ["reference", "variant"], [], TRIALS)
    config = CampaignConfig(db=str(db.resolve()), out=str(out.resolve()), scored_columns="required")
    run_campaign(specs, config, jobs=2, runner=execute_demo_run)
    return db, out


def distinct_campaign(work: Path, db: Path) -> Path:
    """The campaign folder of 560 runs whose outputs are all distinct, recorded once: the same 14 tasks, 40
    trials each, of a command agent (``perturbing_agent.py``, sandboxed as any agent program) that writes the
    reference with a few value cells changed, chosen by the run's task and trial: as a real campaign's LLM
    agents, every run its own output."""
    from clinbench.agents.factory import AgentOptions
    from clinbench.campaign.campaign import run_campaign
    from clinbench.campaign.execute import CampaignConfig
    from clinbench.campaign.matrix import expand
    from clinbench.derive.catalogue import get_task
    from clinbench.derive.reference import export_reference

    out, references = work / "campaign-distinct", work / "perturbing-agent"
    if not (references / "columns.json").is_file():
        references.mkdir(exist_ok=True)
        for task in TASKS:
            export_reference(task, db, references / f"{task}.csv")
        values = {t: [c for c in get_task(t).required_columns if c not in get_task(t).keys] for t in TASKS}
        (references / "columns.json").write_text(json.dumps(values))
    agent = Path(__file__).with_name("perturbing_agent.py").resolve()
    options = AgentOptions(agent_command=f"{agent} {references.resolve()} {{task}} {{trial}}",
                           mounts=(str(references.resolve()),))
    specs = expand(TASKS, ["no-skill"], ["native"], ["command"], [], 2 * TRIALS)
    config = CampaignConfig(db=str(db.resolve()), out=str(out.resolve()), scored_columns="required", options=options)
    run_campaign(specs, config, jobs=2)
    return out


def anchor_setup(m4: Path, work: Path, db: Path, python: str) -> Path | str:
    """The benchmark copy the anchor loop runs in (each task's ground truth written once), or why it cannot run."""
    from anchor_runs import AnchorMissing, m4_benchmark

    from clinbench.derive.reference import export_reference

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
    for task in TASKS:  # the reference written once per task, as M4Bench's setup writes its ground truth
        key = task.removeprefix("mimic-")
        for old in (copy / "ground_truth").glob(f"{key}.csv*"):
            old.unlink()
        export_reference(task, db, copy / "ground_truth" / f"{key}.csv")
    (work / "anchor_loop.py").write_text(ANCHOR_LOOP)
    return copy


def anchor_runs(work: Path, out: Path) -> Path:
    """The anchor loop's runs JSON for campaign ``out``: (run id, task, output path) of each run."""
    from clinbench.records.store import Store

    runs = [(r["run_id"], r["task"], str(_output(out, r))) for r in Store.open(out).runs()]
    path = work / f"anchor-runs-{out.name}.json"
    path.write_text(json.dumps(runs))
    return path


def _output(out: Path, run: dict) -> Path:
    return out / (run["evidence_dir"] or f"runs/{run['run_id']}") / "output.csv"


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def main() -> None:
    a, work, _tmp = anchor_arguments(__doc__, 200, "synthetic patients (default 200)", "the database and campaigns")
    os.environ["CLINBENCH_CACHE"] = str(work / "cache")
    db, out = campaign(work, a.patients)
    campaigns = {"deterministic": out, "distinct": distinct_campaign(work, db)}
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed packages are: compiled once (both sides)
    bench = None
    if a.m4 is None:
        print("anchor skipped: pass --m4 PATH, an M4Bench (hannesill/m4) checkout at 0.5.3")
    else:
        found = anchor_setup(a.m4.resolve(), work, db, a.anchor_python)
        if isinstance(found, str):
            print(f"anchor skipped: {found}")
        else:
            bench = found
    load = os.getloadavg()
    print(f"{os.cpu_count()} CPUs, load average {load[0]:.1f} at the start; {a.patients} synthetic patients; "
          f"median of {a.runs} runs, alternating")
    rows = []
    for name, out in campaigns.items():
        anchor = None if bench is None else [a.anchor_python, str(work / "anchor_loop.py"), str(bench),
                                             str(anchor_runs(work, out))]
        rows.append(measure(name, out, anchor, a.runs, env, a.patients))
    end = os.getloadavg()
    print(f"load average {end[0]:.1f} at the end")
    if a.record:
        if None in rows:
            raise SystemExit("nothing recorded: the anchor did not run (see 'anchor skipped' above)")
        figures.record(rows, figures.this_run(load[0]))
        print(f"recorded in {figures.FIGURES}")


def measure(name: str, out: Path, anchor: list[str] | None, runs: int, env: dict[str, str],
            patients: int) -> dict | None:
    """Time ``clinbench rescore`` of campaign ``out`` and the anchor loop over its outputs, alternating; print both
    and return the row to record (None when the anchor did not run)."""
    from clinbench.records.store import Store

    records = Store.open(out).runs()
    stored = {r["run_id"]: r["reward"] for r in records}
    distinct = {(r["task"], _sha256(_output(out, r))) for r in records}
    agents = sorted({r["agent"] for r in records})
    trials = len({r["trial"] for r in records})
    print(f"\n{name} campaign: rescore of {len(stored)} runs ({len(TASKS)} tasks x {'/'.join(agents)} agent"
          f"{'s' if len(agents) > 1 else ''} x {trials} trials); {len(distinct)} distinct (task, output bytes) pairs "
          f"(rescore scores each distinct one once, M4Bench's loop each run's)")
    samples: dict[str, list[tuple[float, float]]] = {"clinbench": [], "m4": []}
    m4_rewards: dict[str, float] = {}
    for _ in range(runs):
        wall, cpu, text = timed([sys.executable, "-m", "clinbench", "rescore", str(out)], env)
        samples["clinbench"].append((wall, cpu))
        if not re.search(r"(?<![\d,])0 changed", text):  # not "10 changed"
            raise SystemExit(f"rescore changed stored rewards: {text[-400:]}")
        if anchor is not None:
            wall, cpu, text = timed(anchor, env)
            samples["m4"].append((wall, cpu))
            m4_rewards = json.loads(text)
    names = {"clinbench": "clinbench rescore", "m4": "M4Bench evaluate() x runs"}
    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in samples.items() if v}
    print(f"{'scorer':<28} {'wall s':>8} {'CPU s':>8} {'ms/run CPU':>11}")
    for k, (wall, cpu) in med.items():
        print(f"{names[k]:<28} {wall:8.2f} {cpu:8.2f} {cpu / len(stored) * 1000:11.2f}")
    if "m4" in med:
        print(f"anchor / clinbench rescore   {med['m4'][0] / med['clinbench'][0]:7.1f}x wall "
              f"{med['m4'][1] / med['clinbench'][1]:7.1f}x CPU   (goal >= 20x)")
        agree = sum(abs(m4_rewards[r] - stored[r]) <= 1e-6 for r in stored if r in m4_rewards)
        print(f"rewards agree (M4Bench evaluate vs clinbench, required columns) on {agree} of {len(stored)} runs")
        what = (f"{len(TASKS)} tasks x reference/variant agents x {TRIALS} trials" if name == "deterministic" else
                f"{len(TASKS)} tasks x {trials} trials of a command agent writing the reference with a few cells "
                "changed by task and trial, every output distinct as an LLM campaign's")
        return rescore_row(f"rescore_vs_m4bench:{'campaign' if name == 'deterministic' else name}", what, patients,
                           len(stored), len(distinct), med, agree)
    return None


def rescore_row(row_id: str, what: str, patients: int, runs: int, distinct: int, med: dict[str, tuple[float, float]],
                agree: int) -> dict:
    (wall, cpu), (m4_wall, m4_cpu) = med["clinbench"], med["m4"]
    r_wall, r_cpu = m4_wall / wall, m4_cpu / cpu
    return {"id": row_id,
            "what": f"`clinbench rescore` of a {runs}-run campaign ({what}, {patients} synthetic patients, M4Bench's "
                    f"columns; {distinct} distinct (task, output) pairs), process start included",
            "clinbench": f"{wall:.2f} s wall, {cpu:.2f} s CPU, {cpu / runs * 1000:.1f} ms CPU a run",
            "anchor": f"M4Bench 0.5.3 `evaluate()` once per run in one process, each ground truth read once, same "
                      f"rounds, same outputs: {m4_wall:.1f} s wall, {m4_cpu:.1f} s CPU, {m4_cpu / runs * 1000:.1f} ms a run",
            "ratio": f"{r_wall:.1f}x wall, {r_cpu:.1f}x CPU; rewards agree on {agree} of {runs} runs",
            "goal": f"≥ {GOAL:g}x wall and CPU", "met": r_wall >= GOAL and r_cpu >= GOAL}


if __name__ == "__main__":
    main()
