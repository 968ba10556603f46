"""Offline sequential-diagnosis speed: gatekeeper + judge time per turn on the demo cases.

For every demo case a fixed encounter is played with the offline gatekeeper: one turn of
five history/examination questions, then the case's listed tests three per turn, then a
diagnosis that the offline judge scores. Model loading (sentence encoder, ICD-10-CM
tables) happens once before timing and is reported separately.

Baseline: the issue's target of 100 ms per turn after model load. Prints per-case figures,
the median and the ratio median / target (below 1.0 is faster than the target).

    .venv/bin/python benchmarks/dx_offline.py
"""

from __future__ import annotations

import statistics
import time

from clinbench.dx.agents import ScriptedAgent
from clinbench.dx.cases import demo_cases
from clinbench.dx.costs import PriceTable
from clinbench.dx.embeddings import embedder
from clinbench.dx.encounter import run_encounter
from clinbench.dx.gatekeeper import OfflineGatekeeper
from clinbench.dx.judge import make_judge

TARGET_MS = 100.0
QUESTIONS = ["When did it start?", "Any fever?", "What medications do you take?", "Do you smoke?",
             "What are the vital signs?"]


class _Lines(ScriptedAgent):
    def __init__(self, lines: list[str]) -> None:  # no file needed for the benchmark
        self.lines, self.model, self.i = lines, "bench", 0


def main() -> None:
    t0 = time.perf_counter()
    embedder()
    judge = make_judge("offline")
    judge.score("Acute appendicitis", "Appendicitis")
    prices = PriceTable.bundled()
    cases = demo_cases()
    OfflineGatekeeper(cases[0])  # loads the ICD-10-CM tables
    load = time.perf_counter() - t0
    print(f"model + tables load: {load:.2f} s (once per process)")
    per_turn = []
    for case in cases:
        tests = case.test_names
        lines = ["".join(f"<question>{q}</question>" for q in QUESTIONS)]
        lines += ["".join(f"<test>{t}</test>" for t in tests[i:i + 3]) for i in range(0, len(tests), 3)]
        lines.append(f"<diagnosis>{case.final_diagnosis.split(' due to ')[0].replace('Acute ', '')}</diagnosis>")
        t = time.perf_counter()
        result = run_encounter(case, _Lines(lines), OfflineGatekeeper(case), prices)
        verdict = judge.score(case.final_diagnosis, result.diagnosis)
        ms = (time.perf_counter() - t) * 1000 / result.turns
        per_turn.append(ms)
        print(f"case {case.case_id:>3}: {result.turns:>2} turns, {ms:7.1f} ms/turn, judge {verdict.score}, "
              f"cost ${result.cost:,.0f}")
    median = statistics.median(per_turn)
    print(f"median {median:.1f} ms/turn (max {max(per_turn):.1f}) over {len(cases)} cases; "
          f"ratio to the {TARGET_MS:.0f} ms/turn target: {median / TARGET_MS:.2f}")


if __name__ == "__main__":
    main()
