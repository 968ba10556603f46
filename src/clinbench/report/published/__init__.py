"""Published per-run tables shipped with clinbench (see README.md here for source and licence)."""

from __future__ import annotations

from pathlib import Path

M4BENCH_RUNS = Path(__file__).resolve().parent / "m4bench_v1_final_codex_runs.csv"
M4BENCH_INTRO = (
    "The per-run table of the M4Bench v1 Codex campaign (hannesill/m4, benchmark/release/v1/planning/"
    "final_codex_runs.csv, MIT License, Copyright (c) 2026 Hannes Ill), shipped unmodified with clinbench and "
    "analysed here exactly as `clinbench stats` analyses any campaign: 28 tasks × no-skill/with-skill × 2 models × "
    "5 trials = 560 runs. The paper reports 0.703 → 0.839, delta +0.136, 95% task-cluster CI [0.085, 0.191], "
    "26 of 28 tasks improving, strict passes 13/280 vs 25/280."
)
