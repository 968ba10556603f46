"""The campaign harness's own cost per run on a 200-patient synthetic MIMIC-IV database.

Each run is a real ``execute_run`` (workspace from the cached masked database, agent in the
sandbox, scoring, evidence with manifest) followed by publishing the evidence and recording
the run in the store. The agent is a one-line script run through the ``command`` adapter inside
the sandbox, so the "agent" phase is pure sandbox start and stop: agent thinking time is
excluded by construction. The "agent" is a shell script that copies the task's reference
answer into output.csv, so scoring does its full work.

Baselines, printed as ratios:
- the issue's target: median harness cost per run <= 1.0 s (ratio < 1 passes);
- a bare byte copy of the run's masked database (the one cost no harness can avoid).

Usage: .venv/bin/python benchmarks/campaign_overhead.py [--runs 20] [--patients 200] [--task mimic-sofa-24h]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--patients", type=int, default=200)
    parser.add_argument("--task", default="mimic-sofa-24h")
    parser.add_argument("--condition", default="with-skill")
    args = parser.parse_args()

    tmp = Path(tempfile.mkdtemp(prefix="cb-overhead-"))
    os.environ["CLINBENCH_CACHE"] = str(tmp / "cache")
    from clinbench.agents.factory import AgentOptions
    from clinbench.agents.sandbox import choose_sandbox
    from clinbench.campaign import evidence
    from clinbench.campaign.execute import CampaignConfig, execute_run
    from clinbench.campaign.matrix import RunSpec
    from clinbench.records.store import Store
    from clinbench.concepts.build import build_concepts
    from clinbench.derive.catalogue import get_task
    from clinbench.derive.reference import export_reference
    from clinbench.derive.workspace import prepare_database
    from clinbench.ehr.synth import synth_mimic_iv

    try:
        t = time.perf_counter()
        db = synth_mimic_iv(tmp / "synth.duckdb", patients=args.patients, seed=0)
        build_concepts(db, only=[get_task(args.task).reference])
        print(f"setup: {args.patients}-patient database and {args.task} reference in {time.perf_counter() - t:.1f} s")

        # the "agent": a script in its own folder (the sandbox mounts it read-only) that copies the answer
        agent_dir = tmp / "agentbin"
        agent_dir.mkdir()
        export_reference(args.task, db, agent_dir / "answer.csv")
        script = agent_dir / "answer.sh"
        script.write_text(f"#!/bin/sh\ncp {agent_dir / 'answer.csv'} output.csv\n")
        script.chmod(0o755)
        sandbox = choose_sandbox(unsafe_no_isolation=True)
        options = AgentOptions(agent_command=str(script), unsafe_no_isolation=True)
        out = tmp / "campaign"
        config = CampaignConfig(db=str(db), out=str(out), options=options)
        store = Store.create(out)

        totals, phases = [], {"workspace": [], "agent": [], "score": [], "record": []}
        for trial in range(args.runs + 1):  # run 0 builds the masked-database cache: reported apart
            spec = RunSpec(args.task, args.condition, "native", "command", "-", trial)
            start = time.perf_counter()
            result = execute_run(spec, config)
            t_rec = time.perf_counter()
            evidence.publish(Path(result.partial_dir), out, spec.run_id)
            store.record(result.record)
            end = time.perf_counter()
            if result.record.status != "ok" or result.record.reward != 1.0:
                raise SystemExit(f"run failed: {result.record}")
            if trial == 0:
                print(f"first run (builds the cached masked database): {end - start:.3f} s")
                continue
            totals.append(end - start)
            for name in ("workspace", "agent", "score"):
                phases[name].append(result.timings.get(name, 0.0))
            phases["record"].append(end - t_rec)

        masked = prepare_database(get_task(args.task), "native", db).path
        copies = []
        for _ in range(5):
            t = time.perf_counter()
            shutil.copyfile(masked, tmp / "copy.duckdb")
            copies.append(time.perf_counter() - t)
        bare = statistics.median(copies)

        median = statistics.median(totals)
        p90 = sorted(totals)[max(0, int(0.9 * len(totals)) - 1)]
        print(f"sandbox: {sandbox.kind}; masked database {masked.stat().st_size / 1e6:.1f} MB")
        print(f"harness cost per run over {len(totals)} runs: median {median:.3f} s, p90 {p90:.3f} s")
        for name, values in phases.items():
            print(f"  {name:<9} median {statistics.median(values):.3f} s")
        print(f"ratio to target ({TARGET_SECONDS:.1f} s): {median / TARGET_SECONDS:.2f} ({'meets' if median <= TARGET_SECONDS else 'misses'} target)")
        print(f"ratio to a bare copy of the masked database ({bare:.3f} s): {median / bare:.1f}x")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
