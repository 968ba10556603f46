"""A model server killed mid-run (#30 item 1), with the real CLIs through the chat translation and
with the llm agent: the run is the harness's failure with the upstream's reason, not the agent's.

The CLIs retry a dead endpoint with their own backoff (Codex gives up after ~30 s and 30 retries,
Claude Code and Gemini go on past 90 s). The harness does not wait for them: once the proxy has seen
every model request fail for --endpoint-down (60 s by default, 3 s here) and its own check
fails too, the run is stopped as the endpoint's failure. Before that rule each run here waited
out a 40 s timeout."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from clinbench.agents.base import RunContext, Workspace
from clinbench.agents.claude_code import ClaudeCodeAgent
from clinbench.agents.codex import CodexAgent
from clinbench.agents.gemini_cli import GeminiCliAgent
from clinbench.agents.llm_agent import LLMAgent
from clinbench.agents.llm_clients import RetryPolicy
from clinbench.agents.sandbox import BwrapSandbox, bwrap_available
from tests.agents.scripted_server import ScriptedServer

BIN = Path(os.environ.get("CLINBENCH_REAL_CLIS") or "/nonexistent") / "node_modules" / ".bin"
AGENTS = {"codex": (CodexAgent, "gpt-5.5"), "claude": (ClaudeCodeAgent, "claude-sonnet-4-5"),
          "gemini": (GeminiCliAgent, "gemini-2.5-pro")}
PATHS = {"codex": "/v1/responses", "claude": "/v1/messages?beta=true",
         "gemini": "/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse"}


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot create namespaces here")
@pytest.mark.parametrize("name", ["claude", "gemini"])  # codex: through a campaign and --retry-failed, below
@pytest.mark.slow
def test_a_server_killed_mid_run_is_a_harness_error_for_each_cli(name, workspace, tmp_path, monkeypatch):
    # before: "codex exited with status 1: ... 502 Bad Gateway: chat endpoint unreachable: Connection refused" -> agent-failed
    if not (BIN / name).exists():
        pytest.skip(f"the real {name} CLI is not installed (CLINBENCH_REAL_CLIS)")
    monkeypatch.setenv("PATH", f"{BIN}:{os.environ['PATH']}")
    cls, model = AGENTS[name]
    with ScriptedServer([{"shell": "true"}, {"kill": True}], skip_toolless=True, wires=("chat",)) as srv:
        agent = cls(sandbox=BwrapSandbox(), base_url=srv.base_url, api_key="d", model=model, endpoint_api="chat",
                    endpoint_down_seconds=3)
        ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=120)
        started = time.monotonic()
        outcome = agent.run(Workspace.from_dir(workspace), ctx)
    assert outcome.status == "harness-error", outcome.error
    # stopped once the endpoint was down 3 s, not at the 120 s timeout
    assert "stopped after 3 s in which the model endpoint answered no request" in outcome.error
    assert time.monotonic() - started < 90 and outcome.limit is None
    # the request in flight was cut (reset); retries were refused
    assert re.match(rf"model endpoint failed: POST {re.escape(PATHS[name])}: connection (refused|reset) \(", outcome.error)
    assert "the harness's own check after the run failed too (connection refused" in outcome.error
    log = [json.loads(line) for line in (ctx.evidence_dir / "egress.jsonl").read_text().splitlines()]
    answered = [e for e in log if e.get("upstream_status") == 200]
    failed = [e for e in log if e.get("upstream_error")]
    assert len(answered) >= 1 and failed and all(e["status"] in (502, 500) for e in failed)
    # the proxy's 502s are failed attempts, not model requests
    assert outcome.usage.requests == len([e for e in log if e.get("model_request")]) < outcome.usage.http_requests


def test_a_server_killed_mid_run_is_a_harness_error_for_the_llm_agent(workspace, tmp_path):
    script = [{"tool": "list_tables", "arguments": {}}, {"kill": True}]
    with ScriptedServer(script) as srv:
        agent = LLMAgent("openai", "m", base_url=srv.base_url, api_key="k", retry=RetryPolicy(max_attempts=3, sleep=lambda s: None))
        outcome = agent.run(Workspace.from_dir(workspace), RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=30))
    assert outcome.status == "harness-error" and "after 3 attempts" in outcome.error, outcome.error
    assert outcome.usage.requests == 1


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot create namespaces here")
@pytest.mark.slow
def test_retry_failed_redoes_a_codex_run_whose_server_died_once_it_is_back(tmp_path, monkeypatch):
    from clinbench.agents.factory import AgentOptions
    from clinbench.campaign.campaign import run_campaign
    from clinbench.campaign.execute import CampaignConfig
    from clinbench.campaign.matrix import RunSpec
    from clinbench.records.store import Store

    from campaign.campaign_fixtures import build_tiny_db

    if not (BIN / "codex").exists():
        pytest.skip("the real codex CLI is not installed (CLINBENCH_REAL_CLIS)")
    monkeypatch.setenv("PATH", f"{BIN}:{os.environ['PATH']}")
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    db, out = build_tiny_db(tmp_path / "db.duckdb"), tmp_path / "camp"
    write = "printf 'stay_id\\n1\\n' > output.csv"
    spec = RunSpec("mimic-sofa-24h", "no-skill", "native", "codex", "gpt-5.5", 0)

    def campaign(srv, retry):
        options = AgentOptions(base_url=srv.base_url, endpoint_api="chat", sandbox="bwrap", endpoint_down_seconds=3)
        run_campaign([spec], CampaignConfig(db=str(db), out=str(out), options=options, timeout_seconds=120), retry_failed=retry)
        return Store.open(out).runs()[0]

    with ScriptedServer([{"shell": "true"}, {"kill": True}], skip_toolless=True, wires=("chat",)) as srv:
        port = srv.port
        row = campaign(srv, False)
    assert row["status"] == "harness-error" and row["reward"] is None
    assert re.match(r"model endpoint failed: POST /v1/responses: connection (refused|reset) \(", row["error"]), row["error"]
    log = [json.loads(line) for line in (out / row["evidence_dir"] / "egress.jsonl").read_text().splitlines()]
    failed = [e for e in log if e.get("upstream_error")]
    assert failed and all(e["status"] in (502, 500) and not e["model_request"] for e in failed)
    with ScriptedServer([{"shell": write}, {"text": "Done."}], skip_toolless=True, wires=("chat",), port=port) as srv:
        row = campaign(srv, True)
    assert row["status"] == "ok" and row["reward"] is not None and row["error"] is None
