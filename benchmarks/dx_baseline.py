"""The offline diagnosis baselines on the 32 demo cases: accuracy (offline judge), mean cost, time.

    PYTHONPATH=src python benchmarks/dx_baseline.py [--agents ed-instant,ed-workup] [--show]

Plays every demo case with the offline gatekeeper and judge (no model, no network) and prints
one line per agent: correct/32, accuracy with its 95% bootstrap interval, mean cost per case.
``--show`` lists each case's reference, the agent's diagnosis and the judge's score.
"""

from __future__ import annotations

import argparse
import time

from clinbench.dx.agents import make_agent
from clinbench.dx.cases import demo_cases
from clinbench.dx.costs import PriceTable
from clinbench.dx.encounter import run_encounter
from clinbench.dx.gatekeeper import OfflineGatekeeper
from clinbench.dx.judge import make_judge
from clinbench.stats.bootstrap import percentile_ci


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--agents", default="ed-instant,ed-workup")
    ap.add_argument("--show", action="store_true")
    args = ap.parse_args()
    cases, judge, prices = demo_cases(), make_judge("offline"), PriceTable.bundled()
    for name in args.agents.split(","):
        started = time.monotonic()
        correct, costs = [], []
        for case in cases:
            result = run_encounter(case, make_agent(name, case), OfflineGatekeeper(case), prices)
            verdict = judge.score(case.final_diagnosis, result.diagnosis)
            correct.append(1.0 if verdict.correct else 0.0)
            costs.append(result.cost)
            if args.show:
                print(f"  {verdict.score} {case.final_diagnosis!r} <- {result.diagnosis!r} (${result.cost:,.0f})")
        lo, hi = percentile_ci(correct, draws=10000, seed=0)
        print(f"{name}: {int(sum(correct))}/{len(cases)} correct ({sum(correct) / len(cases):.1%}, 95% CI "
              f"{lo:.1%}-{hi:.1%}), mean cost ${sum(costs) / len(costs):,.0f}, {time.monotonic() - started:.1f} s")


if __name__ == "__main__":
    main()
