"""The genuine Gemini CLI (npm @google/gemini-cli), offline in bubblewrap, against the scripted
server: a whole task scored 1.0 through a chat-completions-only server (its Gemini API
requests translated in the run's egress proxy), its own error event as the recorded reason,
and a placed skill reaching the model's context. The same checks as Codex and Claude Code.

Needs CLINBENCH_REAL_CLIS=DIR with `npm install --prefix DIR @google/gemini-cli` (.ci/run does).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clinbench.agents.base import RunContext, Workspace
from clinbench.agents.gemini_cli import GeminiCliAgent
from clinbench.agents.sandbox import BwrapSandbox, bwrap_available
from tests.agents.scripted_server import ScriptedServer
from test_agents_chat_only_endpoint import _answer_shell, _campaign

PREFIX = os.environ.get("CLINBENCH_REAL_CLIS")
BIN = Path(PREFIX or "/nonexistent") / "node_modules" / ".bin"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not (BIN / "gemini").exists() or not bwrap_available(),
    reason="needs the real Gemini CLI (npm install --prefix DIR @google/gemini-cli; CLINBENCH_REAL_CLIS=DIR) "
           "and a working bubblewrap",
)]


@pytest.fixture(autouse=True)
def gemini_on_path(monkeypatch):
    monkeypatch.setenv("PATH", f"{BIN}:{os.environ['PATH']}")


def test_gemini_scores_one_through_a_chat_only_server(sofa_db, tmp_path, monkeypatch):
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    script = [{"shell": "duckdb database.duckdb -c '.tables'"}, {"shell": _answer_shell()},
              {"text": "Wrote output.csv with one row per ICU stay."}]
    with ScriptedServer(script, skip_toolless=True, wires=("chat",)) as srv:
        summary, run, evidence = _campaign("gemini", "gemini-2.5-flash", srv, tmp_path / "camp", db=sofa_db,
                                           endpoint_api="chat")
    assert summary.by_status == {"ok": 1}, (evidence / "score.json").read_text()
    assert (run["reward"], run["strict"], run["isolated"]) == (1.0, True, True)
    assert run["agent_version"] == "0.61.0" or run["agent_version"].startswith("0.")  # `gemini --version`
    assert run["served_model"] == "gemini-2.5-flash"  # the chat endpoint's own "model" field
    assert {e["path"].split("?")[0] for e in srv.log if e["method"] == "POST"} == {"/v1/chat/completions"}
    assert srv.steps_used == 3
    tool_results = json.dumps([m for r in srv.requests for m in r["messages"] if m["role"] == "tool"])
    assert "mimiciv_icu.icustays" in tool_results and "target_" not in tool_results
    log = [json.loads(line) for line in (evidence / "egress.jsonl").read_text().splitlines()]
    posts = [e for e in log if e["method"] == "POST"]
    assert posts and all(e["translated"] and e["status"] == 200 for e in posts)
    assert ":streamGenerateContent" in posts[0]["target"]
    assert run["input_tokens"] == 20 * len(posts) and run["output_tokens"] == 10 * len(posts)


def test_the_clis_own_error_event_is_the_recorded_reason(workspace, tmp_path):
    with ScriptedServer([{"text": "x"}], skip_toolless=True, wires=("chat",)) as srv:  # no Gemini API
        agent = GeminiCliAgent(sandbox=BwrapSandbox(), base_url=srv.base_url, api_key="dummy", model="gemini-2.5-flash")
        ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=120)
        outcome = agent.run(Workspace.from_dir(workspace), ctx)
    assert outcome.status == "error" and "gemini result error: " in outcome.error, outcome.error
    assert "YOLO mode" not in outcome.error


def test_a_placed_skill_reaches_the_models_context(workspace, tmp_path):
    with ScriptedServer([{"shell": "printf 'stay_id,x\\n1,2\\n' > output.csv"}, {"text": "Done."}],
                        skip_toolless=True, wires=("chat",)) as srv:
        agent = GeminiCliAgent(sandbox=BwrapSandbox(), base_url=srv.base_url, api_key="dummy",
                               model="gemini-2.5-flash", endpoint_api="chat")
        ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=120)
        outcome = agent.run(Workspace.from_dir(workspace), ctx)
    assert outcome.status == "ok", (ctx.evidence_dir / "agent_stderr.txt").read_text()[-2000:]
    assert outcome.output_csv.read_text() == "stay_id,x\n1,2\n" and outcome.final_message == "Done."
    assert "demo-skill" in json.dumps(srv.requests)
