"""`clinbench run` with the real-server flags: limits reach the requests and the record, and a
setting that cannot work stops before any run with one line and exit 2."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from clinbench.agents.codex import CodexAgent
from clinbench.agents.sandbox import NoSandbox
from tests.agents.scripted_server import ScriptedServer
from clinbench.errors import AgentError
from clinbench.records.store import Store

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)


def _run(*args):
    return subprocess.run([sys.executable, "-m", "clinbench", "run", *args], capture_output=True, text=True, timeout=300)


def test_limits_flags_reach_every_request_and_the_record(sofa_db, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    out = tmp_path / "camp"
    with ScriptedServer([{"tool": "list_tables", "arguments": {}}] * 10) as srv:
        done = _run("--db", str(sofa_db), "--tasks", "mimic-sofa-24h", "--agent", "llm", "--model", "local-model",
                    "--base-url", srv.base_url, "--max-tokens", "64", "--token-budget", "70", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert "1 run(s) done (1 agent-failed)" in done.stdout
    runs = [b for b in srv.requests if b.get("tools")]  # the first request is run's endpoint preflight
    assert [b["max_tokens"] for b in runs] == [64, 64, 64]  # 3 × 30 tokens > 70
    run = Store.open(out).runs()[0]
    manifest = json.loads((out / run["evidence_dir"] / "manifest.json").read_text())
    assert (run["status"], manifest["limit_hit"]) == ("agent-failed", "token_budget")
    assert manifest["error"] == "token budget of 70 tokens used up (90 tokens in 3 requests)"
    assert manifest["limits"] == {"timeout_seconds": 1800.0, "max_tokens": 64, "token_budget": 70, "max_steps": 40}
    assert (run["requests"], run["input_tokens"], run["output_tokens"]) == (3, 60, 30)


def test_an_endpoint_api_that_cannot_work_is_refused_before_any_run(sofa_db, tmp_path, standin_path):
    bad = _run("--db", str(sofa_db), "--tasks", "mimic-sofa-24h", "--agent", "codex", "--endpoint-api", "responses",
               "--out", str(tmp_path / "camp"))
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "--endpoint-api 'responses': use native (the CLI's own API) or chat" in bad.stderr
    assert not (tmp_path / "camp" / "results.duckdb").exists()
    # translation happens in the sandbox's egress proxy: an unisolated run cannot have it
    with pytest.raises(AgentError, match="--endpoint-api chat translates in the sandbox's egress proxy"):
        CodexAgent(sandbox=NoSandbox(), base_url="http://127.0.0.1:9/v1", endpoint_api="chat")
