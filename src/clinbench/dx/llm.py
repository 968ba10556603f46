"""A small JSON-answering chat helper over the ``openai`` client, for the LLM gatekeeper and judge.

Endpoint and model come from explicit options or from OPENAI_BASE_URL / OPENAI_API_KEY /
CLINBENCH_DX_MODEL. Replies must be one JSON object; a reply wrapped in prose or a code
fence is accepted if it contains one.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from clinbench.errors import AgentError

_OBJECT = re.compile(r"\{.*\}", re.S)


def parse_json_object(text: str) -> dict:
    m = _OBJECT.search(text or "")
    if not m:
        raise AgentError(f"model reply is not JSON: {text[:80]!r}; use a model that follows JSON instructions")
    try:
        data = json.loads(m.group(0))
    except json.JSONDecodeError as exc:
        raise AgentError(f"model reply is not valid JSON ({exc.msg}); retry or use another model") from exc
    if not isinstance(data, dict):
        raise AgentError("model reply is JSON but not an object")
    return data


@dataclass
class JsonChat:
    model: str
    base_url: str | None = None
    api_key: str | None = None
    temperature: float = 0.0
    usage: dict = field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0, "requests": 0})

    @classmethod
    def from_env(cls, model: str | None = None, base_url: str | None = None, api_key: str | None = None) -> "JsonChat":
        model = model or os.environ.get("CLINBENCH_DX_MODEL")
        if not model:
            raise AgentError("no model for the LLM gatekeeper/judge: pass --model or set CLINBENCH_DX_MODEL")
        return cls(model=model, base_url=base_url or os.environ.get("OPENAI_BASE_URL"),
                   api_key=api_key or os.environ.get("OPENAI_API_KEY"))

    def _client(self):
        try:
            import openai
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise AgentError("the openai package is missing: pip install 'clinbench[llm]'") from exc
        if not hasattr(self, "_cached"):
            self._cached = openai.OpenAI(base_url=self.base_url, api_key=self.api_key or "not-needed")
        return self._cached

    def create(self, **kwargs):
        import openai

        try:
            resp = self._client().chat.completions.create(model=self.model, temperature=self.temperature, **kwargs)
        except openai.OpenAIError as exc:
            raise AgentError(f"model endpoint failed: {type(exc).__name__}: {str(exc)[:120]}") from exc
        self.usage["requests"] += 1
        if resp.usage is not None:
            self.usage["input_tokens"] += resp.usage.prompt_tokens or 0
            self.usage["output_tokens"] += resp.usage.completion_tokens or 0
        return resp.choices[0].message

    def complete(self, messages: list[dict]) -> str:
        return self.create(messages=messages).content or ""

    def ask(self, system: str, user: str, *, tool: str = "answer", schema: dict | None = None) -> dict:
        """One structured answer: offered as a function call (``tool`` with ``schema``), so
        servers with tool calling return arguments; a plain JSON reply is accepted too."""
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        spec = {"type": "function", "function": {
            "name": tool, "description": "Submit your answer.",
            "parameters": schema or {"type": "object", "properties": {}, "additionalProperties": True}}}
        msg = self.create(messages=messages, tools=[spec])
        for call in msg.tool_calls or []:
            if call.function and call.function.name == tool:
                return parse_json_object(call.function.arguments or "{}")
        return parse_json_object(msg.content or "")
