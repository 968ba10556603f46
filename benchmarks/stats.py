"""How long the full campaign analysis takes at scale: 100,000 runs over the 28 tasks.

Prints the time to load a 100,000-run per-run CSV and to compute the complete comparison
(task-balanced means, 20,000-draw task-cluster / family-cluster / family-balanced
bootstraps, 200,000-draw sign-flip test, per-task run bootstraps, key-F1 and nMAE deltas,
per-model rows), and the ratio against a named baseline: the same bootstraps written as a
Python loop over draws (the shape of a straightforward analysis script), timed on a
fraction of the draws and scaled up linearly.

    .venv/bin/python benchmarks/stats.py [--runs 100000] [--seed 0]
"""

from __future__ import annotations

import argparse
import csv
import tempfile
import time
from pathlib import Path

import numpy as np

from clinbench.derive.catalogue import load_catalogue, task_families
from clinbench.stats.analysis import analyse
from clinbench.stats.bootstrap import percentile_ci
from clinbench.stats.compare import compare
from clinbench.stats.permutation import sign_flip_test
from clinbench.stats.runs import load_runs

CONDITIONS = ("no-skill", "with-skill")
MODELS = ("model-a", "model-b")


def synth_csv(path: Path, runs: int, seed: int) -> None:
    """Per-run rows spread evenly over 28 tasks × 2 conditions × 2 models, rewards in [0, 1]."""
    rng = np.random.default_rng(seed)
    tasks = list(load_catalogue())
    base = rng.uniform(0.3, 0.9, len(tasks))
    lift = rng.normal(0.12, 0.1, len(tasks))
    i = np.arange(runs)
    task = i % len(tasks)
    cond = (i // len(tasks)) % 2
    model = (i // (2 * len(tasks))) % 2
    trial = i // (4 * len(tasks)) + 1
    reward = np.clip(base[task] + cond * lift[task] + rng.normal(0, 0.15, runs), 0, 1)
    strict = reward > 0.97
    key_f1 = np.clip(reward + rng.normal(0.1, 0.05, runs), 0, 1)
    nmae = np.clip(1 - reward + rng.normal(0, 0.05, runs), 0, 1)
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["task", "condition", "model", "trial", "reward", "strict", "key_f1", "ordered_value_nmae"])
        for row in zip(np.asarray(tasks)[task], np.asarray(CONDITIONS)[cond], np.asarray(MODELS)[model], trial,
                       np.round(reward, 6), strict, np.round(key_f1, 6), np.round(nmae, 6)):
            w.writerow(row)


def loop_headline(deltas: np.ndarray, draws: int, perm_draws: int, sample: int) -> float:
    """Baseline: task-cluster bootstrap and sign-flip test as a Python loop over draws,
    timed on ``sample`` draws and scaled to the full counts."""
    rng = np.random.default_rng(0)
    t = time.perf_counter()
    for _ in range(sample):
        rng.choice(deltas, size=deltas.size, replace=True).mean()
    boot = (time.perf_counter() - t) / sample * draws
    t = time.perf_counter()
    for _ in range(sample):
        (deltas * rng.choice((-1.0, 1.0), size=deltas.size)).mean()
    return boot + (time.perf_counter() - t) / sample * perm_draws


def loop_per_task(task_runs: list[tuple[np.ndarray, np.ndarray]], draws: int, sample: int) -> float:
    """Baseline: the per-task run bootstraps as a Python loop over draws (each draw vectorised over runs)."""
    rng = np.random.default_rng(0)
    t = time.perf_counter()
    for _ in range(sample):
        for ra, rb in task_runs:
            rng.choice(rb, rb.size).mean() - rng.choice(ra, ra.size).mean()
    return (time.perf_counter() - t) / sample * draws


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "runs.csv"
        synth_csv(path, args.runs, args.seed)
        t0 = time.perf_counter()
        runs = load_runs(path)
        t_load = time.perf_counter() - t0
        t0 = time.perf_counter()
        result = analyse(path, "no-skill:with-skill", by="model", families=task_families())
        t_total = time.perf_counter() - t0
    t0 = time.perf_counter()
    compare(runs, "no-skill", "with-skill", by="model", families=task_families())
    t_compare = time.perf_counter() - t0
    deltas = np.array([r.delta for r in result.per_task])
    t0 = time.perf_counter()
    percentile_ci(deltas, draws=result.draws)
    sign_flip_test(deltas, draws=result.permutation_draws)
    t_headline = time.perf_counter() - t0
    task_runs = [(runs.reward[(runs.task == t) & (runs.condition == "no-skill")],
                  runs.reward[(runs.task == t) & (runs.condition == "with-skill")]) for t in sorted(set(runs.task))]
    t0 = time.perf_counter()
    compare(runs, "no-skill", "with-skill", draws=10, permutation_draws=10, families=task_families())
    t_per_task = time.perf_counter() - t0
    base_headline = loop_headline(deltas, result.draws, result.permutation_draws, sample=5000)
    base_per_task = loop_per_task(task_runs, result.task_draws, sample=100)
    print(f"runs: {len(runs):,} over {result.tasks} tasks, {len(MODELS)} models, 2 conditions")
    print(f"load CSV: {t_load:.2f} s; full comparison: {t_compare:.2f} s; load + comparison: {t_total:.2f} s")
    print(f"headline: {result.mean_a:.3f} -> {result.mean_b:.3f}, delta {result.delta:+.3f} "
          f"[{result.ci_task.lo:+.3f}, {result.ci_task.hi:+.3f}], p {result.sign_flip_p:.1e}")
    print(f"task-cluster bootstrap ({result.draws:,}) + sign-flip ({result.permutation_draws:,}): {t_headline:.3f} s; "
          f"baseline python loop over draws: {base_headline:.2f} s; ratio {base_headline / t_headline:.0f}x")
    print(f"per-task run bootstraps ({result.tasks} tasks x {result.task_draws:,} draws, with everything else): "
          f"{t_per_task:.2f} s; baseline python loop over draws: {base_per_task:.2f} s; "
          f"ratio {base_per_task / t_per_task:.1f}x")


if __name__ == "__main__":
    main()
