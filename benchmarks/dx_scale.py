"""The offline diagnosis stack at the scale of MIMIC-IV-Ext-SDBench: cases per minute.

    .venv/bin/python benchmarks/dx_scale.py [--cases 488] [--jobs 4] [--agent ed-workup] [--out DIR]

Makes N synthetic cases by renumbering the 32 demo cases round-robin (case ids 1001, 1002, ...;
the dataset has 488), plays them through ``dx.run.run_dx`` (the campaign engine: offline
gatekeeper and judge, the store and evidence, ``--jobs`` worker processes) and prints wall and
CPU time (workers included), cases per minute and CPU seconds per case. Run it again on the same ``--out``: a finished
campaign records no new run (resume). The cases are in the demo layout, not the MIMIC-IV-Note
layout (no generator for 488 note-layout cases ships yet).
"""

from __future__ import annotations

import argparse
import os
import resource
import tempfile
import time
from pathlib import Path

from clinbench.dx.cases import demo_cases
from clinbench.dx.run import DxConfig, run_dx


def _cpu() -> float:
    """CPU seconds of this process and its finished workers (``--jobs`` runs processes)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--cases", type=int, default=488)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--agent", default="ed-workup")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args()
    base = demo_cases()
    cases = [base[i % len(base)].model_copy(update={"case_id": 1001 + i}) for i in range(args.cases)]
    out = args.out or Path(tempfile.mkdtemp(prefix="dx-scale-"))
    wall, cpu = time.perf_counter(), _cpu()
    new = run_dx(cases, DxConfig(agent=args.agent), out, jobs=args.jobs)
    wall, cpu = time.perf_counter() - wall, _cpu() - cpu
    correct = sum(1 for r in new if r.reward == 1.0)
    print(f"{len(new)} new runs of {args.cases} cases ({args.agent}, --jobs {args.jobs}) in {out}: "
          f"wall {wall:.1f} s, CPU {cpu:.1f} s; {len(new) / (wall / 60) if new else 0:.1f} cases/minute, "
          f"{cpu / max(len(new), 1):.2f} CPU s per case; {correct}/{len(new)} correct")


if __name__ == "__main__":
    main()
