"""Codex and Claude Code adapters against faithful stand-ins and the scripted model server."""

from __future__ import annotations

import json
import subprocess

import pytest

from clinbench.agents.base import RunContext, Workspace
from clinbench.agents.claude_code import ClaudeCodeAgent, parse_claude_stream
from clinbench.agents.codex import CodexAgent, parse_codex_events
from clinbench.agents.command import CommandAgent
from clinbench.agents.sandbox import NoSandbox, bwrap_available, BwrapSandbox
from clinbench.errors import AgentError
from tests.agents.scripted_server import ScriptedServer

WRITE = "printf 'stay_id,x\\n1,2\\n' > output.csv"


def _ctx(tmp_path, **kw):
    return RunContext(evidence_dir=tmp_path / "evidence", task_id="demo-task", timeout_seconds=60, **kw)


@pytest.mark.slow
def test_standins_refuse_what_the_real_clis_refuse(standin_path):
    bad = subprocess.run(["codex", "exec", "-a", "never", "hi"], capture_output=True, text=True)
    assert bad.returncode == 2 and "unexpected argument '-a'" in bad.stderr
    no_verbose = subprocess.run(["claude", "-p", "hi", "--output-format", "stream-json"], capture_output=True, text=True)
    assert "requires --verbose" in no_verbose.stderr
    assert subprocess.run(["codex", "--version"], capture_output=True, text=True).stdout.strip() == "codex-cli 0.171.0"


@pytest.mark.slow
def test_codex_command_line_skills_and_transcript(workspace, standin_path, tmp_path):
    with ScriptedServer([{"shell": WRITE}, {"text": "Wrote output.csv.", "usage": {"input_tokens": 50, "output_tokens": 5}}], skip_toolless=True) as srv:
        agent = CodexAgent(sandbox=NoSandbox(), base_url=srv.base_url, api_key="dummy", model="gpt-5.5", reasoning_effort="high")
        outcome = agent.run(Workspace.from_dir(workspace), _ctx(tmp_path))
    assert outcome.status == "ok", outcome.error
    assert outcome.output_csv.read_text() == "stay_id,x\n1,2\n"
    seen = json.loads((workspace / ".standin" / "codex.json").read_text())
    argv = seen["argv"][1:]
    assert argv[:3] == ["exec", "--json", "--skip-git-repo-check"]
    assert "--dangerously-bypass-approvals-and-sandbox" in argv and argv[argv.index("--disable") + 1] == "plugins"
    assert seen["config"]["model_providers.clinbench.wire_api"] == "responses"
    assert seen["config"]["model_providers.clinbench.base_url"] == srv.base_url
    assert seen["config"]["model_reasoning_effort"] == "high" and seen["config"]["analytics.enabled"] is False
    assert seen["env"]["CLINBENCH_MODEL_API_KEY"] == "dummy"
    assert seen["env"]["HOME"] != str(__import__("pathlib").Path.home())  # a private HOME
    assert [s.split("/")[-1] for s in seen["skills"]] == ["demo-skill"]
    assert (workspace / ".codex" / "skills" / "demo-skill" / "SKILL.md").is_file()
    assert outcome.usage.input_tokens == 20 + 50 and outcome.usage.output_tokens == 15
    assert outcome.final_message == "Wrote output.csv."
    events = [json.loads(line) for line in outcome.transcript.read_text().splitlines()]
    assert events[0]["type"] == "thread.started" and events[-1]["type"] == "turn.completed"
    # Codex spoke the Responses API, with the skill root in its developer message
    assert all(r["stream"] for r in srv.requests) and "Skill roots" in json.dumps(srv.requests[0]["input"])


@pytest.mark.slow
def test_claude_command_line_skills_and_transcript(workspace, standin_path, tmp_path):
    with ScriptedServer([{"shell": WRITE}, {"text": "Done here."}], skip_toolless=True) as srv:
        agent = ClaudeCodeAgent(sandbox=NoSandbox(), base_url=srv.url, api_key="dummy", model="claude-sonnet-4-5", allowed_tools="Bash,Read")
        outcome = agent.run(Workspace.from_dir(workspace), _ctx(tmp_path))
    assert outcome.status == "ok", outcome.error
    assert outcome.output_csv.read_text() == "stay_id,x\n1,2\n"
    seen = json.loads((workspace / ".standin" / "claude.json").read_text())
    assert seen["flags"]["--output-format"] == "stream-json" and seen["flags"]["--verbose"] is True
    assert seen["flags"]["--allowedTools"] == "Bash,Read" and "--dangerously-skip-permissions" not in seen["flags"]
    assert seen["env"]["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert seen["env"]["ANTHROPIC_BASE_URL"] == srv.url
    assert [s.split("/")[-1] for s in seen["skills"]] == ["demo-skill"]
    assert outcome.final_message == "Done here."
    assert outcome.usage.input_tokens == 40 and outcome.usage.output_tokens == 20
    assert outcome.cost is None  # Claude Code's own guess is kept apart; the price table sets the run's cost
    assert outcome.usage.reported_cost == pytest.approx(40 * 3e-6 + 20 * 15e-6)
    assert any(entry["method"] == "HEAD" for entry in srv.log)


def test_claude_skip_permissions_sets_is_sandbox(workspace, standin_path, tmp_path):
    with ScriptedServer([{"shell": WRITE}, {"text": "ok"}], skip_toolless=True) as srv:
        agent = ClaudeCodeAgent(sandbox=NoSandbox(), base_url=srv.url, skip_permissions=True)
        outcome = agent.run(Workspace.from_dir(workspace), _ctx(tmp_path))
    assert outcome.status == "ok", outcome.error
    seen = json.loads((workspace / ".standin" / "claude.json").read_text())
    assert seen["env"]["IS_SANDBOX"] == "1" and seen["flags"]["--dangerously-skip-permissions"] is True


def test_transcript_parsers_on_the_documented_event_shapes():
    codex = "\n".join(json.dumps(e) for e in [
        {"type": "thread.started", "thread_id": "01a2"},
        {"type": "item.completed", "item": {"type": "error", "message": "Model metadata for stub-model not found"}},
        {"type": "item.completed", "item": {"id": "item_1", "type": "agent_message", "text": "Wrote it."}},
        {"type": "turn.completed", "usage": {"input_tokens": 20, "cached_input_tokens": 0, "output_tokens": 10}},
    ])
    parsed = parse_codex_events(codex + "\nnot json\n")
    assert (parsed.usage.input_tokens, parsed.usage.output_tokens, parsed.final_message) == (20, 10, "Wrote it.")
    assert parsed.error is None  # the model-metadata item does not fail the run
    claude = "\n".join(json.dumps(e) for e in [
        {"type": "system", "subtype": "init", "skills": []},
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "x"}], "usage": {"input_tokens": 5, "output_tokens": 2}}},
        {"type": "result", "subtype": "success", "is_error": False, "num_turns": 2, "result": "Fin.", "total_cost_usd": 0.00021},
    ])
    parsed = parse_claude_stream(claude)
    assert (parsed.usage.input_tokens, parsed.final_message, parsed.cost) == (5, "Fin.", 0.00021)


def test_codex_cached_tokens_and_failure_events():
    turns = "\n".join(json.dumps(e) for e in [
        {"type": "error", "message": "stream disconnected; retrying 1/5"},  # retried: not the run's failure
        {"type": "turn.completed", "usage": {"input_tokens": 900, "cached_input_tokens": 640, "output_tokens": 30}},
        {"type": "turn.completed", "usage": {"input_tokens": 1000, "cached_input_tokens": 900, "output_tokens": 12}},
    ])
    parsed = parse_codex_events(turns)
    assert (parsed.usage.input_tokens, parsed.usage.cached_input_tokens, parsed.usage.output_tokens) == (1900, 1540, 42)
    assert parsed.error is None
    failed = parse_codex_events("\n".join(json.dumps(e) for e in [
        {"type": "error", "message": "unexpected status 401 Unauthorized"},
        {"type": "turn.failed", "error": {"message": "unexpected status 401 Unauthorized: invalid key"}},
    ]))
    assert failed.error == "codex unexpected status 401 Unauthorized: invalid key"
    no_turn = parse_codex_events(json.dumps({"type": "error", "message": "Reconnecting... 5/5\n(stream closed)"}))
    assert no_turn.error == "codex Reconnecting... 5/5 (stream closed)"
    claude_failed = parse_claude_stream(json.dumps({"type": "result", "subtype": "error_max_turns", "is_error": True,
                                                    "num_turns": "many", "total_cost_usd": "n/a", "result": "Reached max turns"}))
    assert claude_failed.error == "claude error_max_turns: Reached max turns" and claude_failed.cost is None


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot create namespaces here (.ci/run installs it)")
@pytest.mark.slow
def test_codex_in_bwrap_reaches_its_endpoint_only_through_the_logged_egress_proxy(workspace, standin_path, tmp_path):
    with ScriptedServer([{"shell": WRITE}, {"text": "Done."}], skip_toolless=True) as srv:
        agent = CodexAgent(sandbox=BwrapSandbox(), base_url=srv.base_url, api_key="dummy")
        outcome = agent.run(Workspace.from_dir(workspace), _ctx(tmp_path))
    assert outcome.status == "ok", (outcome.error, (tmp_path / "evidence" / "agent_stderr.txt").read_text())
    assert outcome.isolated and outcome.output_csv.read_text() == "stay_id,x\n1,2\n"
    log = [json.loads(line) for line in (tmp_path / "evidence" / "egress.jsonl").read_text().splitlines()]
    assert [e["target"] for e in log] == ["/v1/responses", "/v1/responses"] and all(e["allowed"] for e in log)
    seen = json.loads((workspace / ".standin" / "codex.json").read_text())
    assert seen["env"]["HOME"] == "/tmp/home"


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot create namespaces here (.ci/run installs it)")
def test_a_command_agents_program_never_runs_outside_the_sandbox(workspace, tmp_path, monkeypatch):
    # a program that leaves a mark where only the host can write (tmp_path is not visible in bwrap)
    escaped = tmp_path / "ran-on-host"
    script = tmp_path / "agent.sh"
    script.write_text(f"#!/bin/sh\ntouch {escaped} 2>/dev/null\nprintf 'stay_id\\n1\\n' > output.csv\n")
    script.chmod(0o755)
    monkeypatch.chdir(tmp_path)
    outcome = CommandAgent(str(script), sandbox=BwrapSandbox()).run(Workspace.from_dir(workspace), _ctx(tmp_path))
    assert outcome.status == "ok" and outcome.output_csv.read_text() == "stay_id\n1\n"
    assert not escaped.exists() and not (tmp_path / "output.csv").exists()  # not even a `--version` probe
    assert outcome.agent_version is None


def test_a_command_agent_is_told_its_task_and_trial(workspace, tmp_path):
    # a scripted agent varies its answer by trial, reproducibly: the placeholders reach its command line
    agent = CommandAgent("/bin/sh -c 'printf \"task,trial\\n%s,%s\\n\" \"$0\" \"$1\" > output.csv' {task} {trial}",
                         sandbox=NoSandbox())
    outcome = agent.run(Workspace.from_dir(workspace), _ctx(tmp_path, trial=7))
    assert outcome.status == "ok" and outcome.output_csv.read_text() == "task,trial\ndemo-task,7\n"


def test_an_unknown_command_placeholder_names_the_ones_there_are(workspace, tmp_path):
    agent = CommandAgent("/bin/true {run}", sandbox=NoSandbox())
    with pytest.raises(AgentError) as exc:
        agent.command(Workspace.from_dir(workspace), _ctx(tmp_path), "", None, "/ws")
    assert str(exc.value) == ("unknown placeholder 'run' in --agent-command; use {workspace}, {prompt_file}, {model}, "
                              "{task}, {trial}")
