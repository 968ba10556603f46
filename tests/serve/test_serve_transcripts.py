"""A run's transcript as steps, in each format the agents write: the command or SQL and what came back."""

from __future__ import annotations

import json

from clinbench.serve.evidence_view import derive_steps


def _steps(tmp_path, events):
    path = tmp_path / "transcript.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in events) + "not json at all\n")
    steps, total = derive_steps(path)
    assert total == len(events) + 1
    return [(s.role, [(n, t.head) for n, t in s.calls], [(n, t.head) for n, t in s.texts]) for s in steps]


def test_each_agents_commands_and_results_are_steps(tmp_path):
    sql = "SELECT count(*) FROM mimiciv_icu.icustays"
    events = [
        # clinbench's llm agent
        {"type": "assistant", "text": "Counting stays.", "tool_calls": [{"name": "run_sql", "arguments": json.dumps({"sql": sql})}]},
        {"type": "tool_result", "content": "count\n140"},
        # Codex
        {"type": "item.completed", "item": {"type": "command_execution", "command": "duckdb db -c 'select 1'",
                                            "aggregated_output": "1\n", "exit_code": 0}},
        {"type": "item.completed", "item": {"type": "agent_message", "text": "Done."}},
        # Claude Code
        {"type": "assistant", "message": {"content": [{"type": "text", "text": "Let me look."},
                                                     {"type": "tool_use", "name": "Bash", "input": {"command": "ls"}}]}},
        {"type": "user", "message": {"content": [{"type": "tool_result", "content": "database.duckdb"}]}},
        # Gemini CLI
        {"type": "tool_use", "tool_name": "run_shell_command", "parameters": {"command": "cat prompt.md"}},
        {"type": "tool_result", "status": "success", "output": "# SOFA"},
    ]
    assert _steps(tmp_path, events) == [
        ("assistant", [("run_sql", sql)], [("text", "Counting stays.")]),
        ("tool_result", [], [("content", "count\n140")]),
        ("command", [("shell", "duckdb db -c 'select 1'")], [("output (exit 0)", "1\n")]),
        ("agent_message", [], [("text", "Done.")]),
        ("assistant", [("Bash", "ls")], [("text", "Let me look.")]),
        ("user", [], [("tool result", "database.duckdb")]),
        ("tool_use", [("run_shell_command", "cat prompt.md")], []),
        ("tool_result", [], [("output (success)", "# SOFA")]),
        ("text", [], [("text", "not json at all")]),
    ]


def test_a_long_text_is_cut_with_the_rest_kept_for_show_all(tmp_path):
    path = tmp_path / "transcript.jsonl"
    path.write_text(json.dumps({"type": "tool_result", "content": "x" * 5000}) + "\n")
    (step,), _ = derive_steps(path)
    head = step.texts[0][1]
    assert len(head.head) == 1500 and head.head + head.rest == "x" * 5000
