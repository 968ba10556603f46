"""The genuine Codex CLI and Claude Code, when installed, driven offline by the scripted server.

Install them with `npm install --prefix DIR @openai/codex @anthropic-ai/claude-code` and set
CLINBENCH_REAL_CLIS=DIR; otherwise these tests are skipped (the stand-ins cover the adapters).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from clinbench.agents.base import RunContext, Workspace
from clinbench.agents.claude_code import ClaudeCodeAgent
from clinbench.agents.codex import CodexAgent
from clinbench.agents.sandbox import BwrapSandbox, NoSandbox, bwrap_available
from tests.agents.scripted_server import ScriptedServer

PREFIX = os.environ.get("CLINBENCH_REAL_CLIS")
BIN = Path(PREFIX or "/nonexistent") / "node_modules" / ".bin"
pytestmark = [pytest.mark.slow, pytest.mark.skipif(
    not (BIN / "codex").exists() or not (BIN / "claude").exists(),
    reason="real CLIs not installed: npm install --prefix DIR @openai/codex @anthropic-ai/claude-code; set CLINBENCH_REAL_CLIS=DIR",
)]
WRITE = "printf 'stay_id,x\\n1,2\\n' > output.csv"


@pytest.mark.parametrize("name", ["codex", "claude"])
def test_real_cli_writes_output_in_the_sandbox_through_the_egress_proxy(name, workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{BIN}:{os.environ['PATH']}")
    sandbox = BwrapSandbox() if bwrap_available() else NoSandbox()
    with ScriptedServer([{"shell": WRITE}, {"text": "Done."}], skip_toolless=True) as srv:
        if name == "codex":
            agent = CodexAgent(sandbox=sandbox, base_url=srv.base_url, api_key="dummy", model="gpt-5.5")
        else:
            agent = ClaudeCodeAgent(sandbox=sandbox, base_url=srv.url, api_key="dummy", model="claude-sonnet-4-5")
        ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=120)
        outcome = agent.run(Workspace.from_dir(workspace), ctx)
    assert outcome.status == "ok", (ctx.evidence_dir / "agent_stderr.txt").read_text()[-2000:]
    assert outcome.output_csv.read_text() == "stay_id,x\n1,2\n"
    assert outcome.final_message == "Done." and outcome.usage.input_tokens == 40
    assert "demo-skill" in json.dumps(srv.requests)  # the placed skill reached the model's context
    if sandbox.isolated:
        log = [json.loads(line) for line in (ctx.evidence_dir / "egress.jsonl").read_text().splitlines()]
        assert log and all(e["allowed"] for e in log)


# -- failures, as each CLI reports them -----------------------------------------------------
needs_bwrap = pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot create namespaces here")


def _agent(name, srv, **kw):
    sandbox = BwrapSandbox()
    if name == "codex":
        return CodexAgent(sandbox=sandbox, base_url=srv.base_url, api_key="dummy", model="gpt-5.5", **kw)
    return ClaudeCodeAgent(sandbox=sandbox, base_url=srv.base_url, api_key="dummy", model="claude-sonnet-4-5", **kw)


@needs_bwrap
@pytest.mark.parametrize("name,said", [
    ("codex", "codex exited with status 1: codex unexpected status 404 Not Found: File Not Found, url: http://127.0.0.1:"),
    ("claude", "claude exited with status 1: claude error: There's an issue with the selected model (claude-sonnet-4-5)"),
])
def test_the_clis_own_error_event_is_the_recorded_reason(name, said, workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{BIN}:{os.environ['PATH']}")
    with ScriptedServer([{"text": "x"}], skip_toolless=True, wires=("chat",)) as srv:  # no Responses/Messages API
        ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=120)
        outcome = _agent(name, srv).run(Workspace.from_dir(workspace), ctx)
    assert outcome.status == "error" and outcome.error.startswith(said)
    assert outcome.error.endswith("(if the endpoint speaks only chat completions, pass --endpoint-api chat)")
    assert "Reading additional input" not in outcome.error
    log = (ctx.evidence_dir / "egress.jsonl").read_text().splitlines()
    assert outcome.usage.http_requests == len(log) > 0  # counted by the egress proxy, not the CLI


@needs_bwrap
@pytest.mark.parametrize("name", ["codex", "claude"])
def test_a_token_budget_stops_a_cli_at_the_proxy(name, workspace, tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", f"{BIN}:{os.environ['PATH']}")
    script = [{"shell": "true"}] * 5 + [{"text": "Done."}]
    with ScriptedServer(script, skip_toolless=True, wires=("chat",)) as srv:
        ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=120)
        outcome = _agent(name, srv, endpoint_api="chat", token_budget=50, max_tokens=256).run(Workspace.from_dir(workspace), ctx)
    assert outcome.status == "error" and outcome.limit == "token_budget"
    assert outcome.error == "token budget of 50 tokens used up (60 tokens)"
    assert outcome.usage.input_tokens == 40 and outcome.usage.output_tokens == 20  # two answered requests
    tool_requests = [b for b in srv.requests if b.get("tools")]
    assert len(tool_requests) == 2 and all(b["max_tokens"] <= 256 for b in srv.requests)


@needs_bwrap
def test_a_hanging_chat_server_ends_a_cli_run_at_its_timeout(workspace, tmp_path, monkeypatch):
    import time

    monkeypatch.setenv("PATH", f"{BIN}:{os.environ['PATH']}")
    with ScriptedServer([{"hang": 120}], skip_toolless=True, wires=("chat",)) as srv:
        ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=6)
        t0 = time.monotonic()
        outcome = _agent("codex", srv, endpoint_api="chat").run(Workspace.from_dir(workspace), ctx)
        elapsed = time.monotonic() - t0
    assert outcome.status == "timeout" and outcome.limit == "timeout"
    assert outcome.error == "agent killed after the 6 s timeout" and elapsed < 12
    assert outcome.usage.http_requests >= 1


class _IdleCodex(CodexAgent):
    """Codex with a 1.5 s stream-idle timeout, so a slow model without keep-alives would lose its answer."""

    def command(self, *args, **kw):
        launch = super().command(*args, **kw)
        launch.argv[-1:-1] = ["-c", "model_providers.clinbench.stream_idle_timeout_ms=1500"]
        return launch


@needs_bwrap
@pytest.mark.parametrize("name", ["codex", "claude"])
def test_a_slow_model_keeps_the_cli_stream_alive_through_the_translator(name, workspace, tmp_path, monkeypatch):
    from clinbench.agents.api_translate import ChatTranslator

    monkeypatch.setenv("PATH", f"{BIN}:{os.environ['PATH']}")
    monkeypatch.setattr(ChatTranslator, "first_byte_seconds", 0.3)
    monkeypatch.setattr(ChatTranslator, "keepalive_seconds", 0.3)
    with ScriptedServer([{"shell": WRITE, "hang": 4}, {"text": "Done."}], skip_toolless=True, wires=("chat",)) as srv:
        if name == "codex":  # without keep-alives this Codex drops the 4 s answer and retries (no output.csv)
            agent = _IdleCodex(sandbox=BwrapSandbox(), base_url=srv.base_url, api_key="d", model="gpt-5.5", endpoint_api="chat")
        else:
            agent = _agent(name, srv, endpoint_api="chat")
        ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=120)
        outcome = agent.run(Workspace.from_dir(workspace), ctx)
    assert outcome.status == "ok", outcome.error
    assert outcome.output_csv.read_text() == "stay_id,x\n1,2\n" and outcome.final_message == "Done."
    slow = [json.loads(line) for line in (ctx.evidence_dir / "egress.jsonl").read_text().splitlines()]
    assert any(e.get("seconds", 0) >= 4 for e in slow)  # the slow request was streamed, not dropped
