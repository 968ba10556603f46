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
from clinbench.agents.scripted_server import ScriptedServer

PREFIX = os.environ.get("CLINBENCH_REAL_CLIS")
BIN = Path(PREFIX or "/nonexistent") / "node_modules" / ".bin"
pytestmark = pytest.mark.skipif(
    not (BIN / "codex").exists() or not (BIN / "claude").exists(),
    reason="real CLIs not installed: npm install --prefix DIR @openai/codex @anthropic-ai/claude-code; set CLINBENCH_REAL_CLIS=DIR",
)
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
