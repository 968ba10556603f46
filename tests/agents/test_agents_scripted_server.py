"""The scripted server answers the real openai client over real HTTP on loopback."""

from __future__ import annotations

import json

import httpx
import openai
import pytest

from tests.agents.scripted_server import ScriptedServer, minimal_for_schema

TOOLS = [{"type": "function", "function": {"name": "run_sql", "parameters": {"type": "object", "properties": {"sql": {"type": "string"}}}}}]


def test_chat_tool_call_then_text_with_openai_client():
    script = [{"tool": "run_sql", "arguments": {"sql": "select 1"}}, {"text": "All done.", "usage": {"input_tokens": 7, "output_tokens": 3}}]
    with ScriptedServer(script) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="dummy", max_retries=0)
        first = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        assert call.function.name == "run_sql"
        assert json.loads(call.function.arguments) == {"sql": "select 1"}
        second = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS)
        assert second.choices[0].message.content == "All done."
        assert second.usage.prompt_tokens == 7 and second.usage.completion_tokens == 3
        # past the end the last text repeats
        third = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hi"}], tools=TOOLS)
        assert third.choices[0].message.content == "All done."
    assert len(srv.requests) == 3
    assert srv.requests[0]["messages"][0]["content"] == "hi"


def test_429_then_success_is_retried_by_openai_client():
    script = [{"status": 429, "headers": {"retry-after-ms": "10"}}, {"text": "ok after retry"}]
    with ScriptedServer(script) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="dummy", max_retries=2)
        reply = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], tools=TOOLS)
    assert reply.choices[0].message.content == "ok after retry"
    assert len(srv.requests) == 2


def test_status_step_surfaces_as_openai_error_without_retries():
    with ScriptedServer([{"status": 503}]) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="dummy", max_retries=0)
        with pytest.raises(openai.InternalServerError):
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], tools=TOOLS)


def test_streamed_chat_tool_call():
    with ScriptedServer([{"tool": "run_sql", "arguments": {"sql": "select 2"}}]) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="dummy", max_retries=0)
        chunks = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], tools=TOOLS, stream=True))
    calls = [tc for c in chunks for tc in (c.choices[0].delta.tool_calls or []) if c.choices]
    assert json.loads(calls[0].function.arguments) == {"sql": "select 2"}


@pytest.mark.slow
def test_responses_api_shell_step_uses_offered_exec_command():
    tools = [{"type": "function", "name": "exec_command", "parameters": {"type": "object"}}]
    with ScriptedServer([{"shell": "ls"}, {"text": "fin"}]) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="dummy", max_retries=0)
        r1 = client.responses.create(model="m", input="go", tools=tools)
        assert r1.output[0].type == "function_call"
        assert r1.output[0].name == "exec_command" and json.loads(r1.output[0].arguments) == {"cmd": "ls"}
        events = list(client.responses.create(model="m", input="go", tools=tools, stream=True))
    assert events[-1].type == "response.completed"
    assert events[-1].response.output[0].content[0].text == "fin"


def test_anthropic_messages_bash_tool_and_side_request_does_not_use_a_step():
    with ScriptedServer([{"shell": "echo hi"}, {"text": "bye"}], skip_toolless=True) as srv:
        side = httpx.post(
            f"{srv.url}/v1/messages?beta=true",
            json={"model": "c", "messages": [], "output_config": {"format": {"type": "json_schema", "schema": {"type": "object", "properties": {"title": {"type": "string"}}, "required": ["title"]}}}},
        ).json()
        assert json.loads(side["content"][0]["text"]) == {"title": "x"}
        tools = [{"name": "Bash", "input_schema": {"type": "object"}}]
        first = httpx.post(f"{srv.url}/v1/messages", json={"model": "c", "messages": [], "tools": tools}).json()
        assert first["stop_reason"] == "tool_use"
        assert first["content"][0]["name"] == "Bash" and first["content"][0]["input"] == {"command": "echo hi"}
        streamed = httpx.post(f"{srv.url}/v1/messages", json={"model": "c", "messages": [], "tools": tools, "stream": True}).text
    assert "event: message_stop" in streamed and '"text": "bye"' in streamed


def test_minimal_for_schema_fills_required_keys():
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"enum": ["y", "z"]}, "c": {"type": "array"}}, "required": ["a", "b"]}
    assert minimal_for_schema(schema) == {"a": 0, "b": "y"}


def test_by_default_plain_chat_calls_take_text_steps_in_order():
    script = [{"text": '{"answer": "pneumonia"}'}, {"status": 429, "headers": {"retry-after": "0"}}, {"text": "second"}]
    with ScriptedServer(script) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="dummy", max_retries=1)
        first = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}],
                                               response_format={"type": "json_object"})
        second = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "q"}])
    assert json.loads(first.choices[0].message.content) == {"answer": "pneumonia"}
    assert second.choices[0].message.content == "second" and srv.steps_used == 3


def test_a_call_written_as_text_reaches_the_openai_client_as_content_without_tool_calls():
    # what a server without tool-call parsing returns: the shapes the text-call tests replay
    from tests.agents.text_call_shapes import SHAPES

    texts = [shape("run_sql", {"sql": "select 1"}) for shape in SHAPES.values()]
    with ScriptedServer([{"text": t} for t in texts]) as srv:
        client = openai.OpenAI(base_url=srv.base_url, api_key="dummy", max_retries=0)
        for text in texts:
            message = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}],
                                                     tools=TOOLS).choices[0].message
            assert message.content == text and not message.tool_calls
