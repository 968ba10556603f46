"""Model clients for the built-in tool-using agent: OpenAI-compatible chat completions and Anthropic messages.

Both speak one neutral conversation (a list of ``Message``) and return a ``Turn``. Provider
errors that are worth retrying (429, 5xx, connection failures) are retried here with
exponential backoff and full jitter, so the agent loop sees either a turn or an
``AgentError``.
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

from clinbench.campaign.store import Usage
from clinbench.errors import AgentError

RETRY_STATUS = {408, 409, 429, 500, 502, 503, 504, 529}


@dataclass
class ToolCall:
    id: str
    name: str
    arguments: dict[str, Any]


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


class _RetryableError(Exception):
    def __init__(self, message: str, retry_after: float | None = None):
        super().__init__(message)
        self.retry_after = retry_after


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


class ModelClient(abc.ABC):
    """Shared retry loop; subclasses implement ``_complete_once``."""

    provider = "model"

    def __init__(self, model: str, retry: RetryPolicy | None = None):
        self.model = model
        self.retry = retry or RetryPolicy()
        self.retries_used = 0

    def complete(self, system: str, messages: list[Message], tools: list[ToolSpec]) -> Turn:
        last = ""
        for attempt in range(self.retry.max_attempts):
            try:
                return self._complete_once(system, messages, tools)
            except _RetryableError as exc:
                last = str(exc)
                if attempt + 1 >= self.retry.max_attempts:
                    break
                self.retries_used += 1
                self.retry.sleep(self.retry.delay(attempt, exc.retry_after))
        raise AgentError(
            f"{self.provider} endpoint kept failing after {self.retry.max_attempts} attempts ({last}); "
            "check the endpoint, the model name and rate limits"
        )

    @abc.abstractmethod
    def _complete_once(self, system: str, messages: list[Message], tools: list[ToolSpec]) -> Turn:
        """One request; raise ``_RetryableError`` for failures worth retrying."""


class OpenAIChatClient(ModelClient):
    """Chat completions through the ``openai`` package (vLLM, Ollama, llama.cpp, hosted APIs)."""

    provider = "openai"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 retry: RetryPolicy | None = None, timeout: float = 600.0, reasoning_effort: str | None = None):
        super().__init__(model, retry)
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise AgentError("the llm agent needs the openai package: pip install 'clinbench[llm]'") from exc
        self._openai = openai
        key = api_key or os.environ.get("OPENAI_API_KEY") or "not-needed"
        self._client = openai.OpenAI(base_url=base_url or os.environ.get("OPENAI_BASE_URL"), api_key=key,
                                     max_retries=0, timeout=timeout)
        self.reasoning_effort = reasoning_effort

    def _complete_once(self, system: str, messages: list[Message], tools: list[ToolSpec]) -> Turn:
        openai = self._openai
        wire: list[dict[str, Any]] = [{"role": "system", "content": system}]
        for m in messages:
            if m.role == "tool":
                wire.append({"role": "tool", "tool_call_id": m.tool_call_id, "content": m.content})
            elif m.role == "assistant" and m.tool_calls:
                wire.append({
                    "role": "assistant",
                    "content": m.content or None,
                    "tool_calls": [
                        {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                        for c in m.tool_calls
                    ],
                })
            else:
                wire.append({"role": m.role, "content": m.content})
        kwargs: dict[str, Any] = {
            "model": self.model,
            "messages": wire,
            "tools": [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}} for t in tools],
        }
        if self.reasoning_effort:
            kwargs["reasoning_effort"] = self.reasoning_effort
        try:
            reply = self._client.chat.completions.create(**kwargs)
        except openai.APIStatusError as exc:
            if exc.status_code in RETRY_STATUS:
                raise _RetryableError(f"HTTP {exc.status_code}", _retry_after(exc.response.headers)) from exc
            raise AgentError(f"openai endpoint refused the request: HTTP {exc.status_code} {str(exc)[:200]}") from exc
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise _RetryableError(f"connection failed: {exc}") from exc
        if not reply.choices:
            raise _RetryableError("reply had no choices")
        msg = reply.choices[0].message
        calls = []
        for c in msg.tool_calls or []:
            try:
                args = json.loads(c.function.arguments or "{}")
            except json.JSONDecodeError:
                args = {"_unparsed": c.function.arguments}
            calls.append(ToolCall(c.id, c.function.name, args if isinstance(args, dict) else {"_value": args}))
        u = reply.usage
        usage = Usage(u.prompt_tokens or 0, u.completion_tokens or 0, 1) if u else Usage(0, 0, 1)
        return Turn(msg.content or "", calls, usage)


class AnthropicClient(ModelClient):
    """Anthropic Messages over HTTP (``POST {base}/v1/messages``)."""

    provider = "anthropic"
    API_VERSION = "2023-06-01"

    def __init__(self, model: str, base_url: str | None = None, api_key: str | None = None,
                 retry: RetryPolicy | None = None, timeout: float = 600.0, max_tokens: int = 8192):
        super().__init__(model, retry)
        self.base_url = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or "https://api.anthropic.com").rstrip("/")
        if self.base_url.endswith("/v1"):
            self.base_url = self.base_url[:-3]
        key = api_key or os.environ.get("ANTHROPIC_API_KEY")
        if not key:
            raise AgentError("the anthropic provider needs an API key: set ANTHROPIC_API_KEY")
        self._http = httpx.Client(timeout=timeout, headers={"x-api-key": key, "anthropic-version": self.API_VERSION})
        self.max_tokens = max_tokens

    def _complete_once(self, system: str, messages: list[Message], tools: list[ToolSpec]) -> Turn:
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
            "max_tokens": self.max_tokens,
            "system": system,
            "messages": wire,
            "tools": [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools],
        }
        try:
            resp = self._http.post(f"{self.base_url}/v1/messages", json=body)
        except httpx.HTTPError as exc:
            raise _RetryableError(f"connection failed: {exc}") from exc
        if resp.status_code in RETRY_STATUS:
            raise _RetryableError(f"HTTP {resp.status_code}", _retry_after(resp.headers))
        if resp.status_code >= 400:
            raise AgentError(f"anthropic endpoint refused the request: HTTP {resp.status_code} {resp.text[:200]}")
        data = resp.json()
        text = "".join(b.get("text", "") for b in data.get("content", []) if b.get("type") == "text")
        calls = [ToolCall(b["id"], b["name"], b.get("input") or {}) for b in data.get("content", []) if b.get("type") == "tool_use"]
        u = data.get("usage") or {}
        return Turn(text, calls, Usage.from_tokens(u))


def make_client(provider: str, model: str, *, base_url: str | None = None, api_key: str | None = None,
                retry: RetryPolicy | None = None, reasoning_effort: str | None = None) -> ModelClient:
    """A client for ``provider`` ('openai' for any OpenAI-compatible server, or 'anthropic')."""
    if provider == "openai":
        return OpenAIChatClient(model, base_url, api_key, retry, reasoning_effort=reasoning_effort)
    if provider == "anthropic":
        return AnthropicClient(model, base_url, api_key, retry)
    raise AgentError(f"unknown provider {provider!r}: use 'openai' (any OpenAI-compatible server) or 'anthropic'")
