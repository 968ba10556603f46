"""The model roles of a diagnosis run (agent, gatekeeper, judge) over the shared clients.

Each role is a ``RoleSpec`` (provider, model, endpoint, key, optional temperature and
max_tokens, optional USD prices per million input/output tokens) and becomes a
``RoleModel`` that talks through ``clinbench.agents.llm_clients`` (OpenAI-compatible or
Anthropic, with that module's retry policy). ``RoleModel`` adds, for the diagnosis
benchmark:

* **errors**: whatever a call raises (an endpoint that keeps failing, a body that is not
  JSON, no choices, ``message: null``) becomes one ``ModelError`` naming the role, so an
  encounter can record it and the campaign go on;
* **usage** per role (tokens, model requests, HTTP requests and seconds waiting for the
  model, failed requests included; cache hits) and its cost when prices are given;
* **tool calls written as text** (``agents/text_tool_calls.py``, the llm agent's parser):
  when a server did not parse a call, the call in the reply text is used, marked ``from_text``;
* **structured answers** (``answer``, ``ask``): a function call whose arguments are the
  answer, or one JSON object in the text; a reply that is neither, or that the caller's
  ``check`` rejects, gets one corrective message before it is this role's error. Each rejected
  reply is kept (``rejected``, cut at ``REPLY_CHARS``) and reported in roles.json, with the count
  of calls read from text (``parsed_from_text``);
* **a cache** (``ModelCache``, off unless given a folder): replies keyed on the sha256 of
  (provider, model, system prompt, messages, tools, parameters), so a rerun or a re-judge
  with the same inputs is reproducible and makes no request.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from clinbench.agents.llm_clients import Message, ModelClient, RetryPolicy, ToolCall, ToolSpec, Turn, make_client
from clinbench.agents.text_tool_calls import find_text_tool_calls, first_object
from clinbench.atomic import write_text_atomic
from clinbench.errors import ClinbenchError, EndpointError
from clinbench.records import Usage

ROLES = ("agent", "gatekeeper", "judge")
REPLY_CHARS = 4000  # a rejected reply is kept this long (in the error, the transcript and roles.json)
REPAIR_MESSAGE = ("Your last reply {problem}. Reply with one call of the function `{tool}` whose arguments hold "
                  "every required field, through the tool-call API or as one JSON object "
                  '{{"name": "{tool}", "arguments": {{...}}}}, and nothing else.')
PROVIDERS = ("openai", "anthropic")


class ModelError(ClinbenchError):
    """A model call of one role failed or returned something unusable."""

    def __init__(self, role: str, message: str, *, unusable: bool = False):
        super().__init__(f"{role} model: {message}")
        self.role = role
        self.unusable = unusable  # the model answered, but no reply was a usable answer (after the corrective message)


@dataclass(frozen=True)
class RoleSpec:
    role: str
    model: str
    provider: str = "openai"
    base_url: str | None = None
    api_key: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    price_in: float | None = None  # USD per million input tokens
    price_out: float | None = None

    def __post_init__(self) -> None:
        if self.provider not in PROVIDERS:
            raise ClinbenchError(f"unknown provider {self.provider!r} for the {self.role} model: "
                                 f"use {' or '.join(PROVIDERS)}")
        if not self.model:
            raise ClinbenchError(f"no {self.role} model: pass --{self.role}-model")

    @property
    def label(self) -> str:
        return self.model if self.provider == "openai" else f"{self.provider}:{self.model}"

    def same_model(self, other: RoleSpec) -> bool:
        """One model behind both roles (same provider and model name, wherever it is served)."""
        return (self.provider, self.model.strip().lower()) == (other.provider, other.model.strip().lower())

    def parameters(self) -> dict:
        return {k: v for k, v in (("temperature", self.temperature), ("max_tokens", self.max_tokens)) if v is not None}

    def public(self) -> dict:
        """What evidence may record (never the key)."""
        return {"role": self.role, "provider": self.provider, "model": self.model, "base_url": self.base_url,
                **self.parameters(), "price_in_per_mtok": self.price_in, "price_out_per_mtok": self.price_out}


class ModelCache:
    """Model replies on disk, one JSON file per request key."""

    def __init__(self, directory: str | os.PathLike[str]):
        self.dir = Path(directory)

    @staticmethod
    def key(spec: RoleSpec, system: str, messages: list[Message], tools: list[ToolSpec]) -> str:
        payload = {"provider": spec.provider, "model": spec.model, "parameters": spec.parameters(),
                   "system": system, "messages": [asdict(m) for m in messages], "tools": [asdict(t) for t in tools]}
        return hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()

    def get(self, key: str) -> Turn | None:
        path = self.dir / key[:2] / f"{key}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        return Turn(data["text"], [ToolCall(**c) for c in data["tool_calls"]], Usage(**data["usage"]))

    def put(self, key: str, turn: Turn) -> None:
        write_text_atomic(self.dir / key[:2] / f"{key}.json",
                          json.dumps({"text": turn.text, "tool_calls": [asdict(c) for c in turn.tool_calls],
                                      "usage": asdict(turn.usage)}))


def clip(text: str, limit: int = REPLY_CHARS) -> str:
    """A reply kept for evidence: whole up to ``limit`` characters."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit:,} more characters)"


def structured_answer(turn: Turn, tool: str) -> dict | None:
    """The arguments of the reply's ``tool`` call (through the API or written as text), else the
    first JSON object in its text (a server without function calling), else None."""
    for call in turn.tool_calls:
        if call.name == tool and call.error is None:
            return call.arguments
    return first_object(turn.text)


@dataclass
class RoleModel:
    spec: RoleSpec
    client: ModelClient | None = None
    cache: ModelCache | None = None
    usage: Usage = field(default_factory=Usage)
    cache_hits: int = 0
    errors: int = 0
    repairs: int = 0  # corrective messages sent
    text_calls: int = 0  # tool calls read from a reply's text (parsed_from_text)
    rejected: list[dict] = field(default_factory=list)  # replies that were not a usable answer
    unreachable: str | None = None  # why the endpoint could not be reached (the harness's failure, not the model's)

    def __post_init__(self) -> None:
        if self.client is None:
            s = self.spec
            self.client = make_client(s.provider, s.model, base_url=s.base_url, api_key=s.api_key,
                                      retry=RetryPolicy(max_attempts=4, base_seconds=0.5, cap_seconds=20.0),
                                      temperature=s.temperature, max_tokens=s.max_tokens)

    @property
    def model(self) -> str:
        return self.spec.model

    def complete(self, system: str, messages: list[Message], tools: list[ToolSpec] | None = None) -> Turn:
        tools = tools or []
        key = ModelCache.key(self.spec, system, messages, tools) if self.cache else ""
        if self.cache:
            hit = self.cache.get(key)
            if hit is not None:
                self.cache_hits += 1
                return self._read_text_calls(hit, tools)  # read as a live reply is: the same answer
        requests, seconds = self.client.http_requests, self.client.model_seconds
        try:
            turn = self.client.complete(system, messages, tools)
        except Exception as exc:  # noqa: BLE001 - any failure of one call is this role's recorded error
            self.errors += 1
            self._count_http(requests, seconds)
            detail = str(exc).strip() or type(exc).__name__
            if isinstance(exc, EndpointError):
                self.unreachable = detail
            if not isinstance(exc, ClinbenchError):
                detail = f"malformed reply ({type(exc).__name__}: {detail[:160]})"
            raise ModelError(self.spec.role, detail) from exc
        self.usage = self.usage.add(turn.usage)
        self._count_http(requests, seconds)
        if self.cache:
            self.cache.put(key, turn)
        return self._read_text_calls(turn, tools)

    def _read_text_calls(self, turn: Turn, tools: list[ToolSpec]) -> Turn:
        turn = _with_text_calls(turn, tools)
        self.text_calls += sum(1 for c in turn.tool_calls if c.from_text)
        return turn

    def _count_http(self, requests: int, seconds: float) -> None:
        """The client's HTTP requests and seconds since (``requests``, ``seconds``), retries included."""
        self.usage.http_requests += self.client.http_requests - requests
        self.usage.model_seconds += self.client.model_seconds - seconds

    def answer(self, system: str, messages: list[Message], tool: ToolSpec, *,
               check: Callable[[dict], str | None] | None = None) -> dict:
        """One structured answer (``structured_answer``); ``check`` returns what is wrong with one, or
        None. A reply without a usable answer gets one corrective message, then is a ``ModelError``."""
        conversation = list(messages)
        for attempt in (1, 2):
            turn = self.complete(system, conversation, [tool])
            data = structured_answer(turn, tool.name)
            problem = f"is neither a {tool.name} call nor a JSON object" if data is None else (check(data) if check else None)
            if problem is None:
                return data
            self.rejected.append({"tool": tool.name, "attempt": attempt, "problem": problem, "reply": clip(turn.text),
                                  "tool_calls": [asdict(c) for c in turn.tool_calls]})
            if attempt == 1:
                self.repairs += 1
                # the reply goes back as text, so that any provider can replay it
                said = turn.text.strip() or json.dumps([{"name": c.name, "arguments": c.arguments} for c in turn.tool_calls])
                conversation += [Message("assistant", said if said != "[]" else "(empty reply)"),
                                 Message("user", REPAIR_MESSAGE.format(problem=problem, tool=tool.name))]
        self.errors += 1
        raise ModelError(self.spec.role, f"reply {problem}, again after a corrective message: {clip(turn.text)!r}",
                         unusable=True)

    def ask(self, system: str, user: str, *, tool: str, schema: dict,
            check: Callable[[dict], str | None] | None = None) -> dict:
        """One structured answer to one user message (see ``answer``)."""
        return self.answer(system, [Message("user", user)], ToolSpec(tool, "Submit your answer.", schema), check=check)

    def cost(self) -> float | None:
        if self.spec.price_in is None and self.spec.price_out is None:
            return None
        return (self.usage.input_tokens * (self.spec.price_in or 0.0)
                + self.usage.output_tokens * (self.spec.price_out or 0.0)) / 1e6

    def report(self) -> dict:
        return {**self.spec.public(), "input_tokens": self.usage.input_tokens,
                "output_tokens": self.usage.output_tokens, "requests": self.usage.requests,
                "http_requests": self.usage.http_requests, "model_seconds": round(self.usage.model_seconds, 3),
                "cache_hits": self.cache_hits, "errors": self.errors, "repairs": self.repairs,
                "parsed_from_text": self.text_calls,
                "rejected": self.rejected, "model_cost_usd": self.cost()}


def _with_text_calls(turn: Turn, tools: list[ToolSpec]) -> Turn:
    """``turn`` with the calls its text holds when the server parsed none (marked ``from_text``)."""
    if tools and not turn.tool_calls:
        calls, _ = find_text_tool_calls(turn.text, [t.name for t in tools])
        if calls:
            return replace(turn, tool_calls=calls)
    return turn


def check_self_judge(agent: RoleSpec | None, judge: RoleSpec | None, allow: bool) -> bool:
    """True when the judge is the agent's own model; refused unless ``allow``."""
    same = agent is not None and judge is not None and agent.same_model(judge)
    if same and not allow:
        raise ClinbenchError(f"the judge model {judge.model!r} is the agent's own model: a model grading itself "
                             "inflates accuracy; pass another --judge-model, or --allow-self-judge to mark it")
    return same
