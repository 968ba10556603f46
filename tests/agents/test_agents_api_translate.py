"""Responses (Codex) and Messages (Claude Code) requests rewritten as chat completions, and the
answers written back, on hand-made requests shaped like the real CLIs' (see docs/agents.md)."""

from __future__ import annotations

import pytest
import json

from clinbench.agents.api_translate import (ChatTranslator, chat_to_messages, chat_to_responses, messages_to_chat,
                                            responses_to_chat)
from clinbench.agents.llm_clients import ToolCall, Turn
from tests.agents.scripted_server import ScriptedServer
from clinbench.records import Usage

RESPONSES = {
    "model": "gpt-5.5", "instructions": "You are Codex.", "stream": True, "max_output_tokens": 9000,
    "input": [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "Skill roots: ..."}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "Write output.csv"}]},
        {"type": "reasoning", "summary": []},
        {"type": "function_call", "call_id": "call_1", "name": "exec_command", "arguments": "{\"cmd\":\"duckdb db -c '.tables'\"}"},
        {"type": "function_call_output", "call_id": "call_1", "output": [{"type": "input_text", "text": "mimiciv_icu.icustays"}]},
        {"type": "custom_tool_call", "call_id": "call_2", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "custom_tool_call_output", "call_id": "call_2", "output": "Done"},
    ],
    "tools": [{"type": "function", "name": "exec_command", "description": "run", "parameters": {"type": "object"}},
              {"type": "custom", "name": "apply_patch", "description": "patch", "format": {"type": "grammar"}},
              {"type": "web_search"}],
    "tool_choice": "auto", "parallel_tool_calls": False,
}


def test_a_responses_request_becomes_one_chat_conversation():
    chat, custom = responses_to_chat(RESPONSES)
    roles = [m["role"] for m in chat["messages"]]
    assert roles == ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert chat["messages"][0]["content"] == "You are Codex.\n\nSkill roots: ..."  # one leading system message
    assert chat["messages"][2]["tool_calls"][0]["function"] == {"name": "exec_command", "arguments": "{\"cmd\":\"duckdb db -c '.tables'\"}"}
    assert chat["messages"][3] == {"role": "tool", "tool_call_id": "call_1", "content": "mimiciv_icu.icustays"}
    assert json.loads(chat["messages"][4]["tool_calls"][0]["function"]["arguments"]) == {"input": "*** Begin Patch"}
    assert [t["function"]["name"] for t in chat["tools"]] == ["exec_command", "apply_patch"] and custom == {"apply_patch"}
    assert (chat["max_tokens"], chat["tool_choice"], chat["parallel_tool_calls"]) == (9000, "auto", False)
    assert all(isinstance(m["content"], str) for m in chat["messages"])


def test_a_chat_turn_answers_as_responses_events_with_usage():
    turn = Turn("", [ToolCall("c9", "exec_command", {"cmd": "ls"}), ToolCall("c10", "apply_patch", {"input": "p"})],
                Usage(100, 7, 1, cached_input_tokens=60), "tool_calls")
    reply, events = chat_to_responses(turn, "gpt-5.5", {"apply_patch"})
    assert [o["type"] for o in reply["output"]] == ["function_call", "custom_tool_call"]
    assert reply["output"][0]["arguments"] == '{"cmd": "ls"}' and reply["output"][1]["input"] == "p"
    assert reply["usage"]["input_tokens_details"]["cached_tokens"] == 60 and reply["usage"]["total_tokens"] == 107
    assert [name for name, _ in events][0] == "response.created" and events[-1][0] == "response.completed"


def test_a_messages_request_keeps_tool_results_next_to_their_calls():
    body = {"model": "claude-sonnet-4-5", "max_tokens": 32000, "system": [{"type": "text", "text": "You are Claude Code."}],
            "messages": [
                {"role": "user", "content": "Write output.csv"},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": "..."}, {"type": "text", "text": "Listing."},
                                                  {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": [{"type": "text", "text": "no such file"}], "is_error": True},
                                             {"type": "text", "text": "go on"}]},
            ],
            "tools": [{"name": "Bash", "description": "shell", "input_schema": {"type": "object"}},
                      {"type": "web_search_20250305", "name": "web_search"}],
            "tool_choice": {"type": "any"}}
    chat = messages_to_chat(body)
    assert [m["role"] for m in chat["messages"]] == ["system", "user", "assistant", "tool", "user"]
    assistant = chat["messages"][2]
    assert assistant["content"] == "Listing." and assistant["tool_calls"][0]["function"]["arguments"] == '{"command": "ls"}'
    assert chat["messages"][3] == {"role": "tool", "tool_call_id": "toolu_1", "content": "error: no such file"}
    assert [t["function"]["name"] for t in chat["tools"]] == ["Bash"] and chat["tool_choice"] == "required"
    reply, events = chat_to_messages(Turn("cut", [], Usage(5, 9, 1), "length"), "claude-sonnet-4-5")
    assert reply["stop_reason"] == "max_tokens" and events[-2][1]["usage"]["output_tokens"] == 9


def test_the_translator_caps_max_tokens_and_passes_the_servers_error_back():
    with ScriptedServer([{"text": "hi"}, {"status": 400, "body": {"error": {"message": "context too long"}}}]) as srv:
        tr = ChatTranslator(srv.base_url, max_tokens=256)
        ok = tr.handle("POST", "/v1/messages?beta=true", {"x-api-key": "k"}, json.dumps(
            {"model": "m", "max_tokens": 32000, "messages": [{"role": "user", "content": "q"}]}).encode())
        bad = tr.handle("POST", "/v1/responses", {}, json.dumps({"model": "m", "input": "q"}).encode())
        broken = tr.handle("POST", "/v1/messages", {}, json.dumps({"model": "m", "messages": [{"role": "user", "content": 5}]}).encode())
    assert ok.status == 200 and json.loads(ok.body)["content"] == [{"type": "text", "text": "hi"}]
    assert srv.requests[0]["max_tokens"] == 256 and srv.log[0]["headers"]["Authorization"] == "Bearer k"
    assert bad.status == 400 and json.loads(bad.body)["error"]["message"] == "chat endpoint answered HTTP 400: context too long"
    assert broken.status == 500 and json.loads(broken.body)["error"]["message"].startswith("clinbench translator error: TypeError")
    assert (tr.usage.requests, tr.usage.input_tokens) == (2, 20)


@pytest.mark.slow
def test_a_slow_streamed_answer_starts_at_once_and_sends_keepalives(monkeypatch):
    monkeypatch.setattr(ChatTranslator, "first_byte_seconds", 0.1)
    monkeypatch.setattr(ChatTranslator, "keepalive_seconds", 0.2)
    with ScriptedServer([{"text": "late", "hang": 1.0}, {"status": 400, "hang": 1.0}]) as srv:
        tr = ChatTranslator(srv.base_url)
        body = json.dumps({"model": "m", "stream": True, "max_tokens": 10, "messages": [{"role": "user", "content": "q"}]}).encode()
        ok = tr.handle("POST", "/v1/messages", {}, body)
        names = [c.decode().split("\n")[0] for c in ok.chunks]
        failed = tr.handle("POST", "/v1/responses", {}, json.dumps({"model": "m", "stream": True, "input": "q"}).encode())
        last = list(failed.chunks)[-1].decode()
    assert names[0] == "event: message_start" and names.count("event: ping") >= 3
    assert names[-1].startswith("event: content_block_start")  # then the answer's events, in one chunk
    assert ok.status == 200 and failed.status == 200  # the stream had started: the failure is an event
    assert last.startswith("event: response.failed") and "chat endpoint answered HTTP 400" in last
