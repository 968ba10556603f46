"""Model clients for the built-in tool-using agent: OpenAI-compatible chat completions and Anthropic messages.

Both speak one neutral conversation (a list of ``Message``) and return a ``Turn``. Provider
errors that are worth retrying (429, 5xx, connection failures) are retried here with
exponential backoff and full jitter, so the agent loop sees either a turn or an
``AgentError`` whose message is one line and keeps the server's own error text.

Limits: ``complete(..., deadline=, max_tokens=)`` bounds each request (and the waits between
retries) by the time left before ``deadline`` (a ``time.monotonic()`` value), raising
``ModelTimeout`` when it runs out, and asks for at most ``max_tokens`` output tokens.
Every HTTP request is counted (``http_requests``) and timed (``model_seconds``), failed ones
included.

The chat client is written against what real local servers do (llama.cpp ``llama-server``,
llama-cpp-python, vLLM, Ollama): assistant messages never carry ``"content": null`` (llama-cpp-python
answers HTTP 500 to it), ``tool_choice: "auto"`` is sent with the tools, and a reply that is not
a chat completion (an HTML page with status 200, ``"message": null``, a malformed tool call)
is a ``ModelReplyError`` naming what was wrong.
"""

from __future__ import annotations

import abc
import json
import os
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

from clinbench import untrusted
from clinbench.records import Usage, token_count
from clinbench.errors import AgentError, EndpointError

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}
ENDPOINT_STATUS = {401, 403, 404}  # wrong key or model: the harness's failure, not the agent's
DEFAULT_REQUEST_TIMEOUT = 600.0
_SNIPPET = 300


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]
    error: str | None = None  # the call's arguments could not be read (sent back to the model)
    from_text: str | None = None  # the model wrote the call as text, in this style (agents/text_tool_calls.py)


@dataclass
class Message:
    role: str  # 'system' | 'user' | 'assistant' | 'tool'
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None  # for role 'tool'


@dataclass
class Turn:
    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    finish_reason: str | None = None  # 'stop' | 'tool_calls' | 'length' | ... as the server said
    seconds: float = 0.0  # time the request took
    served_model: str | None = None  # the reply's own "model" field: what the endpoint says answered


@dataclass
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class RetryPolicy:
    max_attempts: int = 6
    base_seconds: float = 1.0
    cap_seconds: float = 60.0
    sleep: Callable[[float], None] = time.sleep

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        """Full jitter: uniform in [0, min(cap, base·2^attempt)]; a server's Retry-After is a floor."""
        wait = random.uniform(0, min(self.cap_seconds, self.base_seconds * 2**attempt))
        if retry_after is not None:
            wait = max(wait, min(retry_after, self.cap_seconds))
        return wait


class ModelTimeout(AgentError):
    """The run's time ran out while waiting for the model."""


class ModelReplyError(AgentError):
    """The endpoint answered, but not with a usable reply (the message says what was wrong)."""


class _RetryableError(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


def one_line(text: Any, limit: int = _SNIPPET) -> str:
    """``text`` squeezed onto one line and cut to ``limit`` characters."""
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def error_body(resp: httpx.Response) -> str:
    """The server's own words about an error: ``error.message`` of a JSON body, else the body text."""
    try:
        data = untrusted.loads(resp.text)
    except ValueError:  # not JSON, or too deep to read
        return one_line(resp.text) or "(empty body)"
    if isinstance(data, dict):
        err = data.get("error", data)
        if isinstance(err, dict) and err.get("message"):
            return one_line(err["message"])
        if isinstance(err, str):
            return one_line(err)
    return one_line(json.dumps(data))


def _retry_after(headers: Any) -> float | None:
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return float(ms) / 1000
        except ValueError:
            return None
    value = headers.get("retry-after")
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def json_reply(resp: httpx.Response, what: str) -> dict[str, Any]:
    """The JSON object of a 2xx reply; an HTML page or other non-JSON body is a ``ModelReplyError``."""
    kind = resp.headers.get("content-type", "").split(";")[0].strip() or "no content type"
    try:
        data = untrusted.loads(resp.text)
    except untrusted.UntrustedJSONError as exc:
        raise ModelReplyError(f"endpoint answered HTTP {resp.status_code} with a {what} that cannot be read: {exc}") from None
    except ValueError:
        raise ModelReplyError(
            f"endpoint answered HTTP {resp.status_code} with a {kind} body that is not a {what} "
            f"({one_line(resp.text, 120)!r}); check --base-url (an OpenAI-compatible URL usually ends in /v1)"
        ) from None
    if not isinstance(data, dict):
        raise ModelReplyError(f"endpoint answered a JSON {type(data).__name__}, not a {what} object")
    return data


def _decode_arguments(name: str, raw: Any) -> tuple[dict[str, Any], str | None]:
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):  # Ollama sends an object
        return raw, None
    if not isinstance(raw, str):
        return {}, f"arguments of {name} must be a JSON object, not {type(raw).__name__}"
    try:
        value = untrusted.loads(raw)
    except untrusted.UntrustedJSONError as exc:
        return {}, f"arguments of {name} are not valid JSON: {exc}"
    except json.JSONDecodeError:
        return {}, f"arguments of {name} are not valid JSON: {one_line(raw, 120)!r}"
    if not isinstance(value, dict):
        return {}, f"arguments of {name} must be a JSON object, not {type(value).__name__}"
    return value, None


def parse_chat_completion(data: dict[str, Any]) -> Turn:
    """A chat completion body as a ``Turn``; anything unusable is a one-line ``ModelReplyError``."""
    if "error" in data and not data.get("choices"):
        err = data["error"]
        raise ModelReplyError(f"endpoint answered an error object: {one_line(err.get('message') if isinstance(err, dict) else err)}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise ModelReplyError(f"reply has no choices: {one_line(json.dumps(data), 160)}")
    msg = choices[0].get("message")
    if not isinstance(msg, dict):
        raise ModelReplyError(f"reply's choices[0].message is {json.dumps(msg)}, not a message object")
    content = msg.get("content")
    if isinstance(content, list):  # content parts
        content = "".join(p.get("text", "") for p in content if isinstance(p, dict))
    elif content is not None and not isinstance(content, str):
        raise ModelReplyError(f"reply's message content is a {type(content).__name__}, not text")
    calls = []
    raw_calls = msg.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise ModelReplyError(f"reply's tool_calls is a {type(raw_calls).__name__}, not a list")
    for i, c in enumerate(raw_calls):
        fn = c.get("function") if isinstance(c, dict) else None
        if not isinstance(fn, dict) or not isinstance(fn.get("name"), str) or not fn["name"]:
            raise ModelReplyError(f"reply's tool call {i} has no function name: {one_line(json.dumps(c), 160)}")
        args, err = _decode_arguments(fn["name"], fn.get("arguments"))
        calls.append(ToolCall(str(c.get("id") or f"call_{i}"), fn["name"], args, err))
    served = data.get("model") if isinstance(data.get("model"), str) else None
    return Turn(content or "", calls, chat_usage(data.get("usage")), choices[0].get("finish_reason"),
                served_model=served)


def chat_usage(u: Any) -> Usage:
    """Usage of a chat completion (``prompt_tokens``, ``completion_tokens``, cached prompt tokens)."""
    if not isinstance(u, dict):
        return Usage(0, 0, 1)
    details = u.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return Usage(token_count(u.get("prompt_tokens")), token_count(u.get("completion_tokens")), 1, token_count(cached))


class ModelClient(abc.ABC):
    """Shared retry loop, limits and counters; subclasses implement ``_complete_once``."""

    provider = "model"
    temperature: float | None = None  # sent only when set (reasoning models refuse it)

    def __init__(self, model: str, retry: RetryPolicy | None = None, timeout: float = DEFAULT_REQUEST_TIMEOUT,
                 max_tokens: int | None = None):
        self.model = model
        self.retry = retry or RetryPolicy()
        self.timeout = timeout
        self.max_tokens = max_tokens
        self.retries_used = 0
        self.http_requests = 0
        self.model_seconds = 0.0

    def complete(self, system: str, messages: list[Message], tools: list[ToolSpec], *,
                 deadline: float | None = None, max_tokens: int | None = None) -> Turn:
        """One model turn, retried on transient failures; bounded by ``deadline`` (monotonic seconds)."""
        max_tokens = max_tokens if max_tokens is not None else self.max_tokens
        last = ""
        for attempt in range(self.retry.max_attempts):
            timeout = self.timeout
            if deadline is not None:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ModelTimeout("the run's time ran out before the next model request")
                timeout = min(timeout, remaining)
            t0 = time.monotonic()
            self.http_requests += 1
            try:
                turn = self._complete_once(system, messages, tools, timeout=timeout, max_tokens=max_tokens)
                turn.seconds = time.monotonic() - t0
                return turn
            except httpx.TimeoutException as exc:
                if deadline is not None and time.monotonic() >= deadline - 0.05:
                    raise ModelTimeout(f"the model had not answered when the run's time ran out "
                                       f"({time.monotonic() - t0:.1f} s into the request)") from exc
                last, retry_after = f"no answer within the {timeout:g} s request timeout", None
            except _RetryableError as exc:
                last, retry_after = str(exc), exc.retry_after
            finally:
                self.model_seconds += time.monotonic() - t0
            if attempt + 1 >= self.retry.max_attempts:
                break
            wait = self.retry.delay(attempt, retry_after)
            if deadline is not None and time.monotonic() + wait >= deadline:
                raise ModelTimeout(f"the run's time ran out while retrying the model (last failure: {last})")
            self.retries_used += 1
            self.retry.sleep(wait)
        raise EndpointError(
            f"{self.provider} endpoint kept failing after {self.retry.max_attempts} attempts ({last}); "
            "check the endpoint, the model name and rate limits"
        )

    @abc.abstractmethod
    def _complete_once(self, system: str, messages: list[Message], tools: list[ToolSpec], *,
                       timeout: float, max_tokens: int | None) -> Turn:
        """One request; raise ``_RetryableError`` for failures worth retrying."""


def chat_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    """The conversation in chat-completions form; content is always a string (never null)."""
    wire: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for m in messages:
        if m.role == "tool":
            wire.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content or ""})
        elif m.role == "assistant" and m.tool_calls:
            wire.append({
                "role": "assistant",
                "content": m.content or "",
                "tool_calls": [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for c in m.tool_calls
                ],
            })
        else:
            wire.append({"role": m.role, "content": m.content or ""})
    return wire


class OpenAIChatClient(ModelClient):
    """Chat completions over HTTP (``POST {base}/chat/completions``): vLLM, Ollama, llama.cpp, hosted APIs."""

    provider = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 retry: RetryPolicy | None = None, timeout: float = DEFAULT_REQUEST_TIMEOUT,
                 reasoning_effort: str | None = None, max_tokens: int | None = None):
        super().__init__(model, retry, timeout, max_tokens)
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1").rstrip("/")
        key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._http = httpx.Client(headers={"Authorization": f"Bearer {key}"})
        self.reasoning_effort = reasoning_effort
        self._max_tokens_key = "max_tokens"  # switched to max_completion_tokens if the server asks for it

    def _complete_once(self, system, messages, tools, *, timeout, max_tokens):
        body: dict[str, Any] = {"model": self.model, "messages": chat_messages(system, messages)}
        if tools:
            body["tools"] = [{"type": "function", "function": {"name": t.name, "description": t.description,
                                                               "parameters": t.parameters}} for t in tools]
            body["tool_choice"] = "auto"
        if self.reasoning_effort:
            body["reasoning_effort"] = self.reasoning_effort
        if max_tokens:
            body[self._max_tokens_key] = max_tokens
        if self.temperature is not None:
            body["temperature"] = self.temperature
        resp = self._post(body, timeout)
        if resp.status_code == 400 and max_tokens and self._max_tokens_key == "max_tokens" \
                and "max_completion_tokens" in resp.text:
            self._max_tokens_key = "max_completion_tokens"
            body["max_completion_tokens"] = body.pop("max_tokens")
            resp = self._post(body, timeout)
        if resp.status_code in RETRY_STATUS:
            raise _RetryableError(f"HTTP {resp.status_code}: {error_body(resp)}", _retry_after(resp.headers))
        if resp.status_code >= 400:
            error = EndpointError if resp.status_code in ENDPOINT_STATUS else AgentError
            raise error(f"openai endpoint refused the request: HTTP {resp.status_code}: {error_body(resp)}")
        return parse_chat_completion(json_reply(resp, "chat completion"))

    def _post(self, body: dict[str, Any], timeout: float) -> httpx.Response:
        try:
            return self._http.post(f"{self.base_url}/chat/completions", json=body, timeout=timeout)
        except httpx.TimeoutException:
            raise
        except httpx.HTTPError as exc:
            raise _RetryableError(f"connection failed: {one_line(exc, 160)}") from exc


class AnthropicClient(ModelClient):
    """Anthropic Messages over HTTP (``POST {base}/v1/messages``)."""

    provider = "anthropic"
    API_VERSION = "2023-06-01"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 retry: RetryPolicy | None = None, timeout: float = DEFAULT_REQUEST_TIMEOUT, max_tokens: int | None = None):
        super().__init__(model, retry, timeout, max_tokens)
        self.base_url = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com").rstrip("/")
        if self.base_url.endswith("/v1"):
            self.base_url = self.base_url[:-3]
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise AgentError("the anthropic provider needs an API key: set ANTHROPIC_API_KEY")
        self._http = httpx.Client(headers={"x-api-key": key, "anthropic-version": self.API_VERSION})

    def _complete_once(self, system, messages, tools, *, timeout, max_tokens):
        wire: list[dict[str, Any]] = []
        for m in messages:
            if m.role == "tool":
                block = {"type": "tool_result", "tool_use_id": m.tool_call_id, "content": m.content}
                if wire and wire[-1]["role"] == "user" and isinstance(wire[-1]["content"], list):
                    wire[-1]["content"].append(block)  # results of one turn's calls go in one user message
                else:
                    wire.append({"role": "user", "content": [block]})
            elif m.role == "assistant":
                content: list[dict[str, Any]] = [{"type": "text", "text": m.content}] if m.content else []
                content += [{"type": "tool_use", "id": c.id, "name": c.name, "input": c.arguments} for c in m.tool_calls]
                wire.append({"role": "assistant", "content": content})
            else:
                wire.append({"role": "user", "content": m.content})
        body = {
            "model": self.model,
            "max_tokens": max_tokens or 8192,
            "system": system,
            "messages": wire,
        }
        if tools:
            body["tools"] = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]
        if self.temperature is not None:
            body["temperature"] = self.temperature
        try:
            resp = self._http.post(f"{self.base_url}/v1/messages", json=body, timeout=timeout)
        except httpx.TimeoutException:
            raise
        except httpx.HTTPError as exc:
            raise _RetryableError(f"connection failed: {one_line(exc, 160)}") from exc
        if resp.status_code in RETRY_STATUS:
            raise _RetryableError(f"HTTP {resp.status_code}: {error_body(resp)}", _retry_after(resp.headers))
        if resp.status_code >= 400:
            error = EndpointError if resp.status_code in ENDPOINT_STATUS else AgentError
            raise error(f"anthropic endpoint refused the request: HTTP {resp.status_code}: {error_body(resp)}")
        data = json_reply(resp, "Messages API reply")
        blocks = data.get("content")
        if not isinstance(blocks, list):
            raise ModelReplyError(f"reply's content is {one_line(json.dumps(blocks), 80)}, not a list of blocks")
        blocks = [b for b in blocks if isinstance(b, dict)]
        text = "".join(str(b.get("text", "")) for b in blocks if b.get("type") == "text")
        calls = []
        for b in blocks:
            if b.get("type") == "tool_use":
                args = b.get("input")
                calls.append(ToolCall(str(b.get("id")), str(b.get("name")), args if isinstance(args, dict) else {},
                                      None if isinstance(args, dict) else f"input of {b.get('name')} is not an object"))
        u = data.get("usage")
        served = data.get("model") if isinstance(data.get("model"), str) else None
        return Turn(text, calls, Usage.from_tokens(u if isinstance(u, dict) else {}), data.get("stop_reason"),
                    served_model=served)


def make_client(provider: str, model: str, *, base_url: str | None = None, api_key: str | None = None,
                retry: RetryPolicy | None = None, reasoning_effort: str | None = None,
                max_tokens: int | None = None, timeout: float = DEFAULT_REQUEST_TIMEOUT,
                temperature: float | None = None) -> ModelClient:
    """A client for ``provider`` ('openai' for any OpenAI-compatible server, or 'anthropic');
    ``temperature`` is sent only when given."""
    client: ModelClient
    if provider == "openai":
        client = OpenAIChatClient(model, base_url, api_key, retry, timeout, reasoning_effort=reasoning_effort,
                                  max_tokens=max_tokens)
    elif provider == "anthropic":
        client = AnthropicClient(model, base_url, api_key, retry, timeout, max_tokens=max_tokens)
    else:
        raise AgentError(f"unknown provider {provider!r}: use 'openai' (any OpenAI-compatible server) or 'anthropic'")
    client.temperature = temperature
    return client
