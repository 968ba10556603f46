"""The real Codex CLI and Claude Code, and the llm agent, against a server that speaks ONLY chat
completions (like llama.cpp's llama-server): a whole task scored 1.0, the CLIs' own shell tool
calls running the toolbox's `duckdb` inside bubblewrap, their Responses / Messages requests
translated to chat completions in the run's egress proxy.

Needs the real CLIs (CLINBENCH_REAL_CLIS=DIR, see test_agents_real_clis.py) and bubblewrap for
the CLI tests; the llm test needs neither.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from clinbench.agents.factory import AgentOptions
from clinbench.agents.sandbox import bwrap_available
from tests.agents.scripted_server import ScriptedServer
from clinbench.campaign.campaign import run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import RunSpec
from clinbench.records.store import Store

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

TASK = "mimic-sofa-24h"
PREFIX = os.environ.get("CLINBENCH_REAL_CLIS")
BIN = Path(PREFIX or "/nonexistent") / "node_modules" / ".bin"
needs_clis = pytest.mark.skipif(
    not (BIN / "codex").exists() or not (BIN / "claude").exists() or not bwrap_available(),
    reason="needs the real CLIs (npm install --prefix DIR @openai/codex @anthropic-ai/claude-code; "
           "CLINBENCH_REAL_CLIS=DIR) and a working bubblewrap",
)


def _answer_shell() -> str:
    """A shell command that writes the task's answer with the toolbox's duckdb CLI.

    The SQL headers' comments are left out: the Gemini CLI refuses any command holding a backtick
    ("Blocked: command substitution detected"), even inside a quoted heredoc, and the default
    profile's headers quote `m4 init-derived mimic-iv`."""
    from clinbench.concepts.build import target_sql

    sql = re.sub(r"/\*.*?\*/", "", target_sql("sofa-24h"), flags=re.S)
    return f"duckdb database.duckdb <<'SQL'\nCOPY ({sql}) TO 'output.csv' (HEADER);\nSQL"


def _campaign(agent, model, srv, out, **options):
    config = CampaignConfig(db=str(options.pop("db")), out=str(out), timeout_seconds=300,
                            options=AgentOptions(base_url=srv.base_url, sandbox="bwrap", **options))
    summary = run_campaign([RunSpec(TASK, "no-skill", "native", agent, model, 0)], config)
    run = Store.open(out).runs()[0]
    return summary, run, out / run["evidence_dir"]


@needs_clis
@pytest.mark.parametrize("agent,model", [("codex", "gpt-5.5"), ("claude", "claude-sonnet-4-5")])
def test_real_cli_scores_one_through_a_chat_only_server(agent, model, sofa_db, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{BIN}:{os.environ['PATH']}")
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    script = [{"shell": "duckdb database.duckdb -c '.tables'"}, {"shell": _answer_shell()},
              {"text": "Wrote output.csv with one row per ICU stay."}]
    with ScriptedServer(script, skip_toolless=True, wires=("chat",)) as srv:
        summary, run, evidence = _campaign(agent, model, srv, tmp_path / "camp", db=sofa_db, endpoint_api="chat")
    assert summary.by_status == {"ok": 1}, (evidence / "score.json").read_text()
    assert (run["reward"], run["strict"], run["isolated"]) == (1.0, True, True)
    # the server saw chat completions only, with the CLI's shell tool offered
    assert {e["path"].split("?")[0] for e in srv.log if e["method"] == "POST"} == {"/v1/chat/completions"}
    assert srv.steps_used == 3
    # the CLI's own tool call ran the toolbox's duckdb inside the sandbox and saw the masked tables
    tool_results = json.dumps([m for r in srv.requests for m in r["messages"] if m["role"] == "tool"])
    assert "mimiciv_icu.icustays" in tool_results and "target_" not in tool_results
    # every request went through the proxy and was translated; usage is what the server reported
    log = [json.loads(line) for line in (evidence / "egress.jsonl").read_text().splitlines()]
    posts = [e for e in log if e["method"] == "POST"]
    assert posts and all(e["translated"] and e["status"] == 200 for e in posts)
    assert run["requests"] == len(posts) and run["http_requests"] == len(log)
    assert run["input_tokens"] == 20 * len(posts) and run["output_tokens"] == 10 * len(posts)
    assert run["model_seconds"] > 0 and run["harness_seconds"] > 0
    events = [json.loads(line) for line in (evidence / "transcript.jsonl").read_text().splitlines()]
    assert len(events) > 3 and all(e["time"].endswith("+00:00") for e in events)  # the CLI's events, timestamped
    print(f"\n{agent}: reward {run['reward']} in {run['elapsed_seconds']:.1f} s, {len(log)} HTTP requests "
          f"({len(posts)} model), model {run['model_seconds']:.2f} s, harness {run['harness_seconds']:.2f} s")


def test_llm_agent_scores_one_against_a_chat_only_server(sofa_db, tmp_path, monkeypatch):
    from clinbench.concepts.build import target_sql

    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    script = [{"tool": "list_tables", "arguments": {}},
              {"tool": "write_output", "arguments": {"sql": target_sql("sofa-24h")}},
              {"text": "Wrote one row per ICU stay."}]
    with ScriptedServer(script, wires=("chat",)) as srv:
        summary, run, evidence = _campaign("llm", "scripted", srv, tmp_path / "camp", db=sofa_db, max_tokens=512)
    assert summary.by_status == {"ok": 1} and (run["reward"], run["strict"]) == (1.0, True)
    # what real servers need: never a null content, tool_choice with the tools, max_tokens sent
    for body in srv.requests:
        assert all(isinstance(m["content"], str) for m in body["messages"])
        assert body["tool_choice"] == "auto" and body["max_tokens"] == 512
    assert (run["requests"], run["http_requests"], run["input_tokens"], run["output_tokens"]) == (3, 3, 60, 30)
    events = [json.loads(line) for line in (evidence / "transcript.jsonl").read_text().splitlines()]
    assert all("time" in e for e in events)
    assert events[0]["limits"]["max_tokens"] == 512
