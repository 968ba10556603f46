"""Gemini CLI: its API translated to chat completions, and its stream-json read back.

The request and event shapes are the ones the real Gemini CLI 0.61 sent and printed against
a loopback server (tests/agents/test_agents_real_clis.py drives the CLI itself).
"""

from __future__ import annotations

import json

import pytest

from clinbench.agents.api_gemini import GeminiTranslationError, parse_path, sse_body, to_chat_request, turn_to_gemini
from clinbench.agents.llm_clients import parse_chat_completion
from clinbench.agents.gemini_cli import parse_gemini_stream

SECOND_REQUEST = {
    "contents": [
        {"role": "user", "parts": [{"text": "<session_context>...</session_context>"}, {"text": "write output.csv"}]},
        {"role": "model", "parts": [{"functionCall": {"id": "run_shell_command_1_0", "name": "run_shell_command",
                                                       "args": {"command": "printf 'a\\n' > output.csv"}},
                                      "thoughtSignature": "skip_thought_signature_validator"}]},
        {"role": "user", "parts": [{"functionResponse": {"id": "run_shell_command_1_0", "name": "run_shell_command",
                                                          "response": {"output": "Output: (empty)"}}}]},
    ],
    "systemInstruction": {"parts": [{"text": "You are a non-interactive CLI agent."}]},
    "tools": [{"functionDeclarations": [{"name": "run_shell_command", "description": "Run a command",
                                         "parametersJsonSchema": {"type": "object",
                                                                  "properties": {"command": {"type": "string"}},
                                                                  "required": ["command"]}}]}],
    "generationConfig": {"temperature": 1, "topP": 0.95, "maxOutputTokens": 512,
                         "thinkingConfig": {"includeThoughts": True, "thinkingBudget": 8192}},
}


def test_path_names_the_model_and_the_streaming_method():
    assert parse_path("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse") == ("gemini-2.5-flash", True)
    assert parse_path("/v1beta/models/m:generateContent") == ("m", False)
    with pytest.raises(GeminiTranslationError):
        parse_path("/v1/chat/completions")


def test_a_tool_turn_becomes_the_chat_conversation_with_matching_call_ids():
    chat = to_chat_request(SECOND_REQUEST, "qwen")
    roles = [m["role"] for m in chat["messages"]]
    assert roles == ["system", "user", "assistant", "tool"]
    call = chat["messages"][2]["tool_calls"][0]
    assert call["id"] == chat["messages"][3]["tool_call_id"] == "run_shell_command_1_0"
    assert json.loads(call["function"]["arguments"]) == {"command": "printf 'a\\n' > output.csv"}
    assert chat["messages"][2]["content"] == ""  # never null: llama.cpp rejects null content
    assert chat["messages"][3]["content"] == "Output: (empty)"
    assert chat["tools"][0]["function"]["parameters"]["required"] == ["command"]
    assert (chat["max_tokens"], chat["temperature"], chat["top_p"], chat["tool_choice"]) == (512, 1, 0.95, "auto")


def test_calls_without_ids_are_paired_by_order():
    body = {"contents": [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}},
                                    {"functionCall": {"name": "run_shell_command", "args": {"command": "pwd"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "run_shell_command", "response": {"output": "a"}}},
                                   {"functionResponse": {"name": "run_shell_command", "response": {"output": "b"}}}]},
    ]}
    chat = to_chat_request(body, "m")
    ids = [c["id"] for c in chat["messages"][1]["tool_calls"]]
    assert [m["tool_call_id"] for m in chat["messages"][2:]] == ids == ["call_1", "call_2"]


def test_chat_reply_becomes_a_gemini_response_and_its_sse_event():
    chat = {"model": "qwen", "choices": [{"finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": None,
        "tool_calls": [{"id": "c1", "type": "function",
                        "function": {"name": "run_shell_command", "arguments": "{\"command\": \"ls\"}"}}]}}],
        "usage": {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127,
                  "prompt_tokens_details": {"cached_tokens": 100}}}
    g = turn_to_gemini(parse_chat_completion(chat), "gemini-2.5-flash")
    assert g["candidates"][0]["content"]["parts"] == [
        {"functionCall": {"id": "c1", "name": "run_shell_command", "args": {"command": "ls"}}}]
    assert g["usageMetadata"] == {"promptTokenCount": 120, "candidatesTokenCount": 7, "totalTokenCount": 127,
                                  "cachedContentTokenCount": 100}
    event = sse_body(g).decode()
    assert event.startswith("data: ") and json.loads(event[6:]) == g


def test_stream_json_gives_usage_message_and_the_clis_own_error():
    ok = "\n".join(json.dumps(e) for e in [
        {"type": "init", "session_id": "s", "model": "gemini-2.5-flash"},
        {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "t1", "parameters": {"command": "ls"}},
        {"type": "tool_result", "tool_id": "t1", "status": "success", "output": ""},
        {"type": "message", "role": "assistant", "content": "Done.", "delta": True},
        {"type": "result", "status": "success", "stats": {"input_tokens": 40, "output_tokens": 20, "cached": 0}},
    ])
    parsed = parse_gemini_stream("YOLO mode is enabled.\n" + ok)
    assert (parsed.usage.input_tokens, parsed.usage.output_tokens, parsed.usage.requests) == (40, 20, 2)
    assert parsed.final_message == "Done." and parsed.error is None
    failed = json.dumps({"type": "result", "status": "error", "error": {"type": "unknown", "message": "[API Error: stub]"},
                         "stats": {"input_tokens": 0, "output_tokens": 0}})
    assert parse_gemini_stream(failed).error == "gemini result error: [API Error: stub]"
