"""What an agent's or a model's bytes can do to the harness and to the operator: nothing but fail.

Deeply nested JSON (on a CLI's stdout, in a model's tool-call arguments) is the agent's bad
output, never a harness error that leaves the statistics; escape sequences never reach the
operator's terminal; HTML never lands live in report.md; API keys never show in ``ps``.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import time

import pytest
from rich.console import Console
from typer.testing import CliRunner

from clinbench.agents.base import RunContext, Workspace
from clinbench.agents.claude_code import parse_claude_stream
from clinbench.agents.codex import parse_codex_events
from clinbench.agents.gemini_cli import parse_gemini_stream
from clinbench.agents.llm_agent import LLMAgent
from clinbench.agents.llm_clients import RetryPolicy
from clinbench.agents.sandbox import BwrapSandbox, bwrap_available
from clinbench.cli import app
from clinbench.cli._console import make_console
from clinbench.cli._campaign import print_causes
from clinbench.report.build import write_report
from clinbench.stats.analysis import Analysis

from tests.agents.agent_fixtures import make_workspace
from tests.agents.scripted_server import ScriptedServer

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

DEEP = '{"type": "x", "v": ' + "[" * 50_000 + "]" * 50_000 + "}"
ESCAPES = ("\x1b]0;owned", "\x07", "\x1b[2J", "\x1b[31m")


def test_a_deeply_nested_json_line_on_stdout_is_the_agents_bytes_not_a_harness_error(hostile):
    row = hostile.rows["deep-json"]
    assert row["status"] == "ok" and row["reward"] == 1.0, (row["status"], row["error"])
    assert row["publishable"] is True, hostile.reasons["deep-json"]  # the audit read its transcript too
    assert hostile.seen("deep-json")["attack"] == "deep-json"  # the lines after it were kept (the stamper lived)


def test_a_json_line_past_pythons_integer_limit_is_the_agents_bytes_not_a_harness_error(hostile):
    row = hostile.rows["huge-int-json"]
    assert row["status"] == "ok" and row["reward"] == 1.0, (row["status"], row["error"])
    assert row["publishable"] is True, hostile.reasons["huge-int-json"]  # the audit read its transcript too


@pytest.mark.parametrize("parse, final", [
    (parse_codex_events, '{"type": "item.completed", "item": {"type": "agent_message", "text": "done"}}'),
    (parse_claude_stream, '{"type": "result", "subtype": "success", "result": "done", "usage": {}}'),
    (parse_gemini_stream, '{"type": "message", "role": "assistant", "content": "done"}'),
])
def test_cli_event_parsers_skip_a_deeply_nested_line(parse, final):
    parsed = parse("\n".join([DEEP, "[" * 100_000, final]))
    assert parsed.final_message == "done"


ODD_EVENTS = {
    parse_codex_events: ['{"type": "item.completed", "item": -1}', '{"type": "turn.completed", "usage": {"input_tokens": NaN}}',
                         '{"type": "turn.completed", "usage": {"input_tokens": 1e999, "output_tokens": '
                         '100000000000000000000000000000}}', '{"type": "error", "error": [1]}'],
    parse_claude_stream: ['{"type": "assistant", "message": 1}', '{"type": "assistant", "message": {"usage": '
                          '{"input_tokens": -5, "output_tokens": Infinity}}}'],
    parse_gemini_stream: ['{"type": "result", "status": "success", "stats": 7}',
                          '{"type": "result", "status": "success", "stats": {"input_tokens": "x"}}'],
}


@pytest.mark.parametrize("parse, final", [
    (parse_codex_events, '{"type": "item.completed", "item": {"type": "agent_message", "text": "done"}}'),
    (parse_claude_stream, '{"type": "result", "subtype": "success", "result": "done", "usage": {}}'),
    (parse_gemini_stream, '{"type": "message", "role": "assistant", "content": "done"}'),
])
def test_cli_events_of_shapes_the_cli_never_writes_are_skipped_and_odd_counts_are_no_counts(parse, final):
    # a tool the agent runs can write lines into the CLI's own stdout (/proc/<pid>/fd/1): an item that is a
    # number made the run a harness error (AttributeError), a NaN or infinite count too (int()), and a count of
    # 30 digits stopped the campaign at the results store (INT64), on every resume and rebuild after
    parsed = parse("\n".join([*ODD_EVENTS[parse], final]))
    assert parsed.final_message == "done"
    assert all(isinstance(n, int) and 0 <= n <= 2**53 for n in (parsed.usage.input_tokens, parsed.usage.output_tokens))


def test_deeply_nested_tool_call_arguments_go_back_to_the_model_as_its_error(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    write = {"tool": "write_output", "arguments": {"sql": "SELECT stay_id FROM mimiciv_icu.icustays"}}
    script = [{"tool": "run_sql", "raw_arguments": '{"sql": ' + "[" * 100_000 + "]" * 100_000 + "}"}, write, {"text": "Saved."}]
    with ScriptedServer(script) as srv:
        agent = LLMAgent("openai", "m", base_url=srv.base_url, api_key="k", retry=RetryPolicy(max_attempts=1))
        ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=30)
        outcome = agent.run(Workspace.from_dir(ws), ctx)
        results = [m["content"] for m in srv.requests[1]["messages"] if m["role"] == "tool"]
    assert outcome.status == "ok", outcome.error
    assert results == ["error: arguments of run_sql are not valid JSON: JSON nested deeper than 64 levels"]


def test_tool_call_arguments_past_pythons_integer_limit_go_back_to_the_model_as_its_error(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    write = {"tool": "write_output", "arguments": {"sql": "SELECT stay_id FROM mimiciv_icu.icustays"}}
    script = [{"tool": "run_sql", "raw_arguments": '{"sql": "SELECT 1", "limit": ' + "9" * 5000 + "}"}, write, {"text": "Saved."}]
    with ScriptedServer(script) as srv:
        agent = LLMAgent("openai", "m", base_url=srv.base_url, api_key="k", retry=RetryPolicy(max_attempts=1))
        outcome = agent.run(Workspace.from_dir(ws), RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=30))
        results = [m["content"] for m in srv.requests[1]["messages"] if m["role"] == "tool"]
    assert outcome.status == "ok", outcome.error  # before: "harness error in the llm agent: ValueError"
    assert len(results) == 1 and results[0].startswith("error: arguments of run_sql are not valid JSON: JSON Python cannot read")


def test_a_deeply_nested_reply_body_is_the_models_bad_reply_not_a_harness_error(tmp_path):
    ws = make_workspace(tmp_path / "ws")
    with ScriptedServer([{"html": '{"choices": ' + "[" * 100_000 + "]" * 100_000 + "}"}]) as srv:
        agent = LLMAgent("openai", "m", base_url=srv.base_url, api_key="k", retry=RetryPolicy(max_attempts=1))
        outcome = agent.run(Workspace.from_dir(ws), RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=30))
    assert outcome.status == "error" and "that cannot be read: JSON nested deeper than 64 levels" in outcome.error
    assert not (tmp_path / "ev" / "harness_error.txt").exists()


def test_escape_sequences_from_an_agents_stderr_do_not_reach_the_terminal(hostile):
    row = hostile.rows["terminal-escape"]
    assert row["status"] == "agent-failed" and "\x1b]0;owned" in row["error"]  # the evidence keeps the bytes
    buf = io.StringIO()
    print_causes(hostile.summary, make_console(file=buf, force_terminal=True, width=400))
    printed = buf.getvalue()
    assert "owned" in printed and "\\x1b]0;owned\\x07" in printed  # shown, as text
    assert not any(e in printed for e in ESCAPES)
    shown = CliRunner().invoke(app, ["explain", str(hostile.folder("terminal-escape"))])
    assert shown.exit_code == 0, shown.output
    assert "onerror" in shown.output and not any(e in shown.output for e in ESCAPES)


def test_agent_html_in_report_md_is_shown_as_text(hostile, tmp_path):
    md = tmp_path / "report.md"
    write_report(hostile.out, Analysis(draws=200, include_flagged=True, summary=True), markdown=md)
    text = md.read_text()
    assert "onerror" in text and "<img" not in text and "&lt;img src=x onerror=alert(1)&gt;" in text
    assert "\x1b" not in text


@pytest.mark.skipif(not bwrap_available(), reason="bubblewrap cannot create namespaces here")
def test_api_keys_stay_off_bwraps_command_line(tmp_path):
    secret = "sk-secret-" + os.urandom(6).hex()
    ws = tmp_path / "ws"
    ws.mkdir()
    argv, env = BwrapSandbox().wrap(["/bin/sh", "-c", 'printf "%s" "$OPENAI_API_KEY"; sleep 1'], ws,
                                    {"PATH": "/usr/bin:/bin", "HOME": "/home/agent", "OPENAI_API_KEY": secret})
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        time.sleep(0.3)
        cmdline = open(f"/proc/{proc.pid}/cmdline", "rb").read().decode(errors="replace")
        out, err = proc.communicate(timeout=20)
    finally:
        proc.kill()
    assert "bwrap" in cmdline and secret not in cmdline and secret not in json.dumps(argv)
    assert out.decode() == secret, err.decode()  # the agent still gets its key
