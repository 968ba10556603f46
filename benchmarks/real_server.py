"""One campaign against a real local model server (llama-server, vLLM, Ollama, llama-cpp-python).

Not run in CI: it needs a server you started (see the README's "Agents against a local model
server"). It builds a small synthetic MIMIC-IV database with the task's reference (or uses
--db), runs each agent once on each task with the run's limits, and prints per run: status,
reward, tokens (input / cached / output), model and HTTP requests, model vs harness seconds,
the limit hit and the reason. Without --base-url it says what to pass and exits 2.

Usage:
  .venv/bin/python benchmarks/real_server.py --base-url http://127.0.0.1:8080/v1 --model qwen2.5-coder \\
      [--agents llm,codex,claude] [--endpoint-api chat] [--tasks mimic-sofa-24h] [--timeout 20] \\
      [--max-tokens 2048] [--token-budget 400000] [--no-text-tool-calls] [--db mimic.duckdb] [--out DIR]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="the server's OpenAI-compatible base URL, e.g. http://127.0.0.1:8080/v1")
    parser.add_argument("--model", default="local", help="model name the server knows")
    parser.add_argument("--agents", default="llm", help="comma-separated: llm, codex, claude")
    parser.add_argument("--endpoint-api", default="chat", help="codex/claude: chat (translate) or native")
    parser.add_argument("--tasks", default="mimic-sofa-24h")
    parser.add_argument("--condition", default="with-skill")
    parser.add_argument("--timeout", type=float, default=20.0, help="minutes per run")
    parser.add_argument("--max-tokens", type=int, default=2048)
    parser.add_argument("--token-budget", type=int, default=None)
    parser.add_argument("--text-tool-calls", action=argparse.BooleanOptionalAction, default=True)
    parser.add_argument("--db", type=Path, help="a database with the tasks' references built (default: a synthetic one)")
    parser.add_argument("--patients", type=int, default=50)
    parser.add_argument("--out", type=Path, help="campaign folder (default: a temporary one)")
    args = parser.parse_args()
    if not args.base_url:
        print("give the server: --base-url http://127.0.0.1:PORT/v1 (and --model NAME); "
              "see the README for llama-server, vLLM and Ollama flags", file=sys.stderr)
        return 2

    from clinbench.agents.factory import AgentOptions
    from clinbench.agents.toolbox import preflight
    from clinbench.campaign.campaign import run_campaign
    from clinbench.campaign.execute import CampaignConfig
    from clinbench.campaign.matrix import expand, split_list
    from clinbench.records.store import Store
    from clinbench.derive.catalogue import get_task

    tmp = Path(tempfile.mkdtemp(prefix="cb-real-server-"))
    os.environ.setdefault("CLINBENCH_CACHE", str(tmp / "cache"))
    tasks = split_list([args.tasks])
    db = args.db
    if db is None:
        from clinbench.concepts.build import build_concepts
        from clinbench.ehr.synth import synth_mimic_iv

        t = time.perf_counter()
        db = synth_mimic_iv(tmp / "synth.duckdb", patients=args.patients, seed=0)
        build_concepts(db, only=[get_task(t_).reference for t_ in tasks])
        print(f"setup: {args.patients}-patient synthetic database with {', '.join(tasks)} in {time.perf_counter() - t:.1f} s")
    out = args.out or tmp / "campaign"
    agents = split_list([args.agents])
    options = AgentOptions(base_url=args.base_url, max_tokens=args.max_tokens, token_budget=args.token_budget,
                           text_tool_calls=args.text_tool_calls, endpoint_api=args.endpoint_api)
    from clinbench.agents.factory import make_agent

    for name in agents:  # fail before any run when an agent cannot start or its sandbox lacks the toolbox
        sandbox = getattr(make_agent(name, options, args.model), "sandbox", None)
        if sandbox is not None:
            preflight(sandbox)
    specs = expand(tasks, [args.condition], ["native"], agents, [args.model], 1)
    config = CampaignConfig(db=str(Path(db).resolve()), out=str(out.resolve()), options=options,
                            timeout_seconds=args.timeout * 60)
    t = time.perf_counter()
    run_campaign(specs, config)
    wall = time.perf_counter() - t
    import json

    print(f"\n{'agent':8} {'task':22} {'status':8} {'reward':>6} {'in':>8} {'cached':>7} {'out':>7} "
          f"{'req':>4} {'http':>4} {'model s':>8} {'harness s':>9}  limit / reason")
    for run in Store.open(out).runs():
        manifest = json.loads((out / run["evidence_dir"] / "manifest.json").read_text())
        reason = (manifest.get("error") or "")[:90]
        print(f"{run['agent']:8} {run['task']:22} {run['status']:8} {run['reward'] or 0:6.3f} {run['input_tokens'] or 0:8d} "
              f"{run['cached_input_tokens'] or 0:7d} {run['output_tokens'] or 0:7d} {run['requests'] or 0:4d} "
              f"{run['http_requests'] or 0:4d} {run['model_seconds'] or 0:8.1f} {run['harness_seconds'] or 0:9.1f}  "
              f"{manifest.get('limit_hit') or '-'} {reason}")
    print(f"\ncampaign: {len(specs)} run(s) in {wall:.1f} s; store {out / 'results.duckdb'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
