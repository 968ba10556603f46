"""The llm agent against the ways real local servers fail (llama-cpp-python, llama-server, vLLM,
Ollama), each reproduced by the scripted server: the recorded status, reason and usage."""

from __future__ import annotations

import json
import time

import httpx
import pytest

from clinbench.agents.base import RunContext, Workspace
from clinbench.agents.llm_agent import LLMAgent
from clinbench.agents.llm_clients import RetryPolicy
from tests.agents.scripted_server import ScriptedServer
from tests.agents.text_call_shapes import SEVERAL_IN_A_ROW, SHAPES

LIST = {"tool": "list_tables", "arguments": {}}
WRITE = {"tool": "write_output", "arguments": {"sql": "SELECT stay_id FROM mimiciv_icu.icustays ORDER BY 1"}}
NO_WAIT = RetryPolicy(max_attempts=3, sleep=lambda s: None)


def _run(workspace, tmp_path, script, *, timeout=60.0, server=None, **agent_kw):
    with ScriptedServer(script, **(server or {})) as srv:
        agent = LLMAgent("openai", "local-model", base_url=srv.base_url, api_key="k", retry=NO_WAIT, **agent_kw)
        ctx = RunContext(evidence_dir=tmp_path / "ev", task_id="t", timeout_seconds=timeout)
        t0 = time.monotonic()
        outcome = agent.run(Workspace.from_dir(workspace), ctx)
        outcome.elapsed = time.monotonic() - t0
    events = [json.loads(line) for line in ctx.transcript.read_text().splitlines()]
    return outcome, srv, events


def test_the_scripted_server_rejects_null_content_like_llama_cpp_python():
    with ScriptedServer([{"text": "hi"}]) as srv:
        resp = httpx.post(f"{srv.base_url}/chat/completions", json={"model": "m", "messages": [
            {"role": "user", "content": "q"}, {"role": "assistant", "content": None, "tool_calls": []}]})
    assert resp.status_code == 500 and "messages.1.content: Input should be a valid string" in resp.text


def test_multi_step_run_passes_a_server_that_rejects_null_content(workspace, tmp_path):
    outcome, srv, _ = _run(workspace, tmp_path, [LIST, WRITE, {"text": "Saved."}])
    assert outcome.status == "ok" and outcome.error is None
    assert outcome.output_csv.read_text().splitlines() == ["stay_id", "100", "200", "300"]
    second = srv.requests[1]["messages"]
    assert second[2]["role"] == "assistant" and second[2]["content"] == "" and second[2]["tool_calls"]
    assert outcome.usage.requests == 3 and outcome.usage.http_requests == 3


def test_a_persistent_server_error_keeps_the_servers_own_message(workspace, tmp_path):
    body = {"error": {"message": "Value is not a string: None", "type": "internal_server_error"}}
    outcome, srv, events = _run(workspace, tmp_path, [LIST] + [{"status": 500, "body": body}] * 3)
    assert outcome.status == "harness-error"  # the endpoint failed, not the agent
    assert "after 3 attempts (HTTP 500: Value is not a string: None)" in outcome.error
    # the first turn's tokens and every failed request are counted
    assert (outcome.usage.requests, outcome.usage.input_tokens, outcome.usage.http_requests) == (1, 20, 4)
    assert events[-1]["type"] == "end" and events[-1]["usage"]["http_requests"] == 4


def test_with_text_tool_calls_off_a_call_written_as_text_is_an_error_naming_it(workspace, tmp_path):
    outcome, _, events = _run(workspace, tmp_path, [{"text_tool_call": "hermes", **LIST}], text_tool_calls=False)
    assert outcome.status == "error" and outcome.output_csv is None
    assert "wrote a tool call as text (hermes style, list_tables)" in outcome.error and "--no-text-tool-calls" in outcome.error
    assert outcome.usage.requests == 1 and outcome.usage.output_tokens == 10


def test_text_tool_calls_are_used_by_default_and_each_is_marked_in_the_transcript(workspace, tmp_path):
    script = [{"text_tool_call": "hermes", **LIST}, {"text_tool_call": "json", **WRITE}, {"text": "Saved."}]
    outcome, srv, events = _run(workspace, tmp_path, script)
    assert outcome.status == "ok" and outcome.output_csv.read_text().splitlines()[1:] == ["100", "200", "300"]
    turns = [e for e in events if e["type"] == "assistant"]
    assert [t["text_style"] for t in turns] == ["hermes", "json", None]
    assert [[c.get("parsed_from_text") for c in t["tool_calls"]] for t in turns] == [[True], [True], []]
    assert events[0]["text_tool_calls"] is True
    # the model saw the first call's result
    assert next(m for m in srv.requests[1]["messages"] if m["role"] == "tool")["content"] == "mimiciv_icu.icustays"


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_reply_shape_seen_from_a_local_model_becomes_the_intended_call(workspace, tmp_path, shape):
    text = SHAPES[shape]("read_skill", {"name": "demo-skill"})
    outcome, srv, events = _run(workspace, tmp_path, [{"text": text}, WRITE, {"text": "Saved."}])
    assert outcome.status == "ok", outcome.error
    first = next(e for e in events if e["type"] == "assistant")
    assert [(c["name"], c["arguments"], c["parsed_from_text"]) for c in first["tool_calls"]] == [
        ("read_skill", {"name": "demo-skill"}, True)]
    assert next(m for m in srv.requests[1]["messages"] if m["role"] == "tool")["content"].endswith("Use los.\n")


def test_several_calls_written_in_a_row_are_each_made(workspace, tmp_path):
    outcome, srv, events = _run(workspace, tmp_path, [{"text": SEVERAL_IN_A_ROW}, WRITE, {"text": "Saved."}])
    assert outcome.status == "ok", outcome.error
    results = [e for e in events if e["type"] == "tool_result"]
    assert [r["name"] for r in results] == ["list_tables", "describe_table", "write_output"]
    assert results[1]["content"].startswith("subject_id INTEGER")


def test_the_bare_functions_line_of_llama_cpp_pythons_chatml_function_calling_is_a_call(workspace, tmp_path):
    outcome, srv, events = _run(workspace, tmp_path, [{"text": "functions.list_tables:"}, WRITE, {"text": "Saved."}])
    assert outcome.status == "ok" and [e["name"] for e in events if e["type"] == "tool_result"][0] == "list_tables"


def test_an_empty_reply_gets_one_corrective_turn_and_the_run_goes_on(workspace, tmp_path):
    outcome, srv, events = _run(workspace, tmp_path, [{"text": ""}, LIST, WRITE, {"text": "Saved."}])
    assert outcome.status == "ok" and outcome.output_csv is not None
    repair = next(e for e in events if e.get("repair"))
    assert repair["type"] == "user" and repair["repair"].startswith("the model returned an empty reply")
    assert repair["content"].startswith("Your last reply was empty. Reply with one tool call")
    assert srv.requests[1]["messages"][-1] == {"role": "user", "content": repair["content"]}
    # both attempts are in the transcript and in the usage
    assert [e["text"] for e in events if e["type"] == "assistant"][0] == ""
    assert (outcome.usage.requests, outcome.usage.http_requests) == (4, 4)


def test_a_hanging_server_is_cut_at_the_runs_remaining_time(workspace, tmp_path):
    outcome, srv, events = _run(workspace, tmp_path, [LIST, {"hang": 30}], timeout=1.5)
    assert outcome.status == "timeout" and outcome.limit == "timeout"
    assert outcome.error.startswith("run timed out after 1.5 s: the model had not answered")
    assert outcome.elapsed < 4  # not 30 s, nor a fresh timeout for the second request
    assert (outcome.usage.requests, outcome.usage.http_requests) == (1, 2)
    assert events[-1]["limit"] == "timeout"


def test_unbounded_generation_stops_at_max_tokens_and_says_so(workspace, tmp_path):
    outcome, srv, events = _run(workspace, tmp_path, [{"unbounded": True}], max_tokens=50)
    assert srv.requests[0]["max_tokens"] == 50
    assert outcome.status == "error" and outcome.limit == "max_tokens"
    assert outcome.error == "the model's reply was cut at max_tokens=50 (finish_reason length) without a tool call"
    assert outcome.usage.output_tokens == 50 and outcome.usage.requests == 1


def test_a_token_budget_ends_a_looping_run(workspace, tmp_path):
    outcome, srv, _ = _run(workspace, tmp_path, [LIST] * 10, token_budget=100)
    assert outcome.status == "error" and outcome.limit == "token_budget"
    assert outcome.error == "token budget of 100 tokens used up (120 tokens in 4 requests)"
    assert len(srv.requests) == 4


def test_an_html_page_with_status_200_is_a_one_line_error_with_usage_kept(workspace, tmp_path):
    outcome, _, events = _run(workspace, tmp_path, [LIST, {"html": "<!doctype html><html><body>llama.cpp</body></html>"}])
    assert outcome.status == "error" and "\n" not in outcome.error
    assert outcome.error.startswith("endpoint answered HTTP 200 with a text/html body that is not a chat completion")
    assert "check --base-url" in outcome.error
    assert (outcome.usage.requests, outcome.usage.input_tokens, outcome.usage.http_requests) == (1, 20, 2)
    assert not (tmp_path / "ev" / "harness_error.txt").exists()


def test_a_null_message_is_a_one_line_error(workspace, tmp_path):
    outcome, _, _ = _run(workspace, tmp_path, [{**LIST, "message_null": True}])
    assert outcome.status == "error"
    assert outcome.error == "reply's choices[0].message is null, not a message object"
    assert outcome.usage.http_requests == 1


def test_bad_tool_arguments_go_back_to_the_model_which_can_recover(workspace, tmp_path):
    script = [{"tool": "describe_table", "arguments": {"table": 5}},
              {"tool": "run_sql", "raw_arguments": "{sql: select 1"},
              {"tool": "run_sql", "arguments": {"query": "select 1"}},
              WRITE, {"text": "Saved."}]
    outcome, srv, events = _run(workspace, tmp_path, script)
    results = [e["content"] for e in events if e["type"] == "tool_result"]
    assert results[0] == "error: describe_table: argument 'table' must be a string, not int (5)"
    assert results[1] == "error: arguments of run_sql are not valid JSON: '{sql: select 1'"
    assert results[2] == "error: run_sql: missing argument sql"
    assert outcome.status == "ok" and outcome.output_csv is not None and outcome.usage.requests == 5


def test_an_empty_reply_and_a_text_only_answer_after_a_corrective_turn_are_recorded_as_what_they_are(workspace, tmp_path):
    empty, _, _ = _run(workspace, tmp_path, [{"text": ""}, {"text": ""}])
    assert empty.status == "error" and empty.error == ("the model returned an empty reply (no text, no tool call; "
                                                       "finish_reason stop), again after a corrective message")
    chat, _, _ = _run(workspace, tmp_path / "b", [{"text": "The answer is 42."}])
    assert chat.status == "error" and chat.error == ("the model answered with text only and wrote no output.csv: "
                                                     "'The answer is 42.', again after a corrective message")
    assert chat.usage.requests == 2
