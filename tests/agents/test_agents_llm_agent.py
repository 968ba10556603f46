"""The built-in tool-using agent driven by the scripted server through the real openai client."""

from __future__ import annotations

import csv
import json


from clinbench.agents.base import RunContext, Workspace
from clinbench.agents.llm_agent import LLMAgent
from clinbench.agents.llm_clients import RetryPolicy
from tests.agents.scripted_server import ScriptedServer
from clinbench.agents.sql_tools import WorkspaceTools

ANSWER_SQL = "SELECT stay_id, round(los * 24) AS los_hours FROM mimiciv_icu.icustays ORDER BY stay_id"
SCRIPT = [
    {"tool": "list_tables", "arguments": {}},
    {"tool": "describe_table", "arguments": {"table": "mimiciv_icu.icustays"}},
    {"tool": "read_skill", "arguments": {"name": "demo-skill"}},
    {"tool": "run_sql", "arguments": {"sql": "SELECT count(*) AS n FROM mimiciv_icu.icustays"}},
    {"tool": "write_output", "arguments": {"sql": ANSWER_SQL}},
    {"text": "Saved output.csv."},
]


def _ctx(tmp_path, **kw):
    return RunContext(evidence_dir=tmp_path / "evidence", task_id="demo", model="scripted", timeout_seconds=60, **kw)


def test_llm_agent_explores_and_writes_the_output(workspace, tmp_path):
    with ScriptedServer(SCRIPT) as srv:
        agent = LLMAgent("openai", base_url=srv.base_url, api_key="dummy")
        outcome = agent.run(Workspace.from_dir(workspace), _ctx(tmp_path))
    assert outcome.status == "ok" and outcome.final_message == "Saved output.csv."
    rows = list(csv.reader(outcome.output_csv.open()))
    assert rows == [["stay_id", "los_hours"], ["100", "36.0"], ["200", "78.0"], ["300", "12.0"]]
    # the model saw each tool's real result in the next request
    tool_msgs = [m for m in srv.requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_msgs[0]["content"] == "mimiciv_icu.icustays"
    assert tool_msgs[1]["content"].splitlines()[2] == "stay_id INTEGER"
    assert "Use los." in tool_msgs[2]["content"]
    assert tool_msgs[3]["content"] == "n\n3\n(1 rows)"
    assert json.loads(tool_msgs[4]["content"])["rows"] == 3
    assert outcome.usage.requests == 6 and outcome.usage.input_tokens == 120
    kinds = [json.loads(line)["type"] for line in outcome.transcript.read_text().splitlines()]
    assert kinds[0] == "start" and kinds[-1] == "end" and kinds.count("tool_result") == 5


def test_429_then_success_is_retried_with_backoff(workspace, tmp_path):
    slept = []
    retry = RetryPolicy(max_attempts=4, base_seconds=0.5, sleep=slept.append)
    script = [{"status": 429, "headers": {"retry-after": "0"}}, {"status": 503}, {"tool": "write_output", "arguments": {"sql": "SELECT 1 AS stay_id"}}, {"text": "done"}]
    with ScriptedServer(script) as srv:
        outcome = LLMAgent("openai", base_url=srv.base_url, api_key="k", retry=retry).run(Workspace.from_dir(workspace), _ctx(tmp_path))
    assert outcome.status == "ok"
    assert outcome.output_csv.read_text().splitlines() == ["stay_id", "1"]
    assert len(slept) == 2 and 0 <= slept[0] <= 0.5 and 0 <= slept[1] <= 1.0  # full jitter within base·2^attempt
    assert len(srv.requests) == 4  # 429, 503, the tool call, the final text


def test_persistent_errors_end_the_run_as_a_harness_error_with_a_message(workspace, tmp_path):
    retry = RetryPolicy(max_attempts=3, sleep=lambda s: None)
    with ScriptedServer([{"status": 500}] * 3) as srv:
        outcome = LLMAgent("openai", base_url=srv.base_url, api_key="k", retry=retry).run(Workspace.from_dir(workspace), _ctx(tmp_path))
    # an endpoint that keeps failing is the harness's failure, not the agent's (issue 14)
    assert outcome.status == "harness-error" and "after 3 attempts" in outcome.error and outcome.output_csv is None


def test_step_limit_stops_a_looping_model(workspace, tmp_path):
    with ScriptedServer([{"tool": "list_tables", "arguments": {}}] * 10) as srv:
        outcome = LLMAgent("openai", base_url=srv.base_url, api_key="k", max_steps=3).run(Workspace.from_dir(workspace), _ctx(tmp_path))
    assert outcome.error == "stopped at the step limit (3)" and len(srv.requests) == 3


def test_anthropic_messages_provider(workspace, tmp_path):
    script = [{"tool": "write_output", "arguments": {"sql": "SELECT stay_id FROM mimiciv_icu.icustays WHERE los > 1 ORDER BY 1"}}, {"text": "ok"}]
    with ScriptedServer(script) as srv:
        outcome = LLMAgent("anthropic", base_url=srv.url, api_key="k").run(Workspace.from_dir(workspace), _ctx(tmp_path))
    assert outcome.output_csv.read_text().splitlines() == ["stay_id", "100", "200"]
    second = srv.requests[1]["messages"]
    assert second[-1]["content"][0]["type"] == "tool_result" and srv.log[0]["headers"]["x-api-key"] == "k"


def test_sql_tools_are_read_only_capped_and_cannot_touch_files(workspace, tmp_path):
    tools = WorkspaceTools(workspace / "database.duckdb", workspace / "output.csv", [], max_rows=2)
    try:
        assert tools.call("run_sql", {"sql": "DROP TABLE mimiciv_icu.icustays"}).startswith("error:")
        assert tools.call("run_sql", {"sql": f"SELECT * FROM read_csv('{workspace}/prompt.md')"}).startswith("error:")
        assert tools.call("run_sql", {"sql": f"ATTACH '{tmp_path}/other.duckdb'"}).startswith("error:")
        assert tools.call("run_sql", {"sql": "SET enable_external_access = true"}).startswith("error:")
        capped = tools.call("run_sql", {"sql": "SELECT stay_id FROM mimiciv_icu.icustays ORDER BY 1"})
        assert capped.splitlines() == ["stay_id", "100", "200", "... 1 more rows not shown (row cap 2)", "(3 rows)"]
        assert tools.call("nope", {}).startswith("error: unknown tool")
        assert "no skill" in tools.call("read_skill", {"name": "x"})
    finally:
        tools.close()
    assert not (tmp_path / "other.duckdb").exists()


def test_sql_time_cap_interrupts_a_runaway_query(workspace):
    tools = WorkspaceTools(workspace / "database.duckdb", workspace / "output.csv", [], time_limit_seconds=0.3)
    try:
        result = tools.call("run_sql", {"sql": "SELECT count(*) FROM range(100000000000) a"})
    finally:
        tools.close()
    assert "time limit" in result


def test_a_result_python_cannot_hold_is_the_models_error_not_a_harness_error(workspace, tmp_path):
    # found by a review: INTERVAL 1000000000 DAY raised OverflowError out of the tool, and the run became a
    # harness error, left out of every statistic and redone by --retry-failed: an agent could drop its failures
    for sql in ("SELECT INTERVAL 1000000000 DAY AS d", "SELECT stay_id, INTERVAL 1000000000 DAY AS d FROM mimiciv_icu.icustays"):
        script = [{"tool": "run_sql", "arguments": {"sql": sql}}, {"tool": "write_output", "arguments": {"sql": sql}},
                  {"text": "Done."}, {"text": "Done."}]
        with ScriptedServer(script) as srv:
            outcome = LLMAgent("openai", base_url=srv.base_url, api_key="dummy").run(
                Workspace.from_dir(workspace), _ctx(tmp_path / str(len(sql))))
        tool_msgs = [m["content"] for m in srv.requests[-1]["messages"] if m["role"] == "tool"]
        assert [m.split(":")[0:2] for m in tool_msgs] == [["error", " the result cannot be read"]] * 2, tool_msgs
        assert outcome.status == "error" and "harness error" not in (outcome.error or "")  # the agent's failure


def test_write_output_streams_a_large_result(workspace, tmp_path):
    tools = WorkspaceTools(workspace / "database.duckdb", workspace / "output.csv", [])
    try:
        written = json.loads(tools.call("write_output", {"sql": "SELECT range AS i, range * 2 AS j FROM range(100000)"}))
        empty = tools.call("write_output", {"sql": "SELECT 1 AS a WHERE false"})
    finally:
        tools.close()
    assert written["rows"] == 100000 and json.loads(empty)["rows"] == 0
    lines = (workspace / "output.csv").read_text().splitlines()
    assert lines == ["a"]  # the second call replaced the first, header and all
