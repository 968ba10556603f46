"""Agents by name, from the options a campaign was started with."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from clinbench.agents.attribution import ENDPOINT_DOWN_SECONDS
from clinbench.agents.base import Agent
from clinbench.agents.limits import Limits
from clinbench.errors import AgentError

BUILTIN_AGENTS = ("reference", "variant", "empty", "replay")
AGENT_NAMES = ("codex", "claude", "gemini", "command", "llm", *BUILTIN_AGENTS)


@dataclass(frozen=True)
class AgentOptions:
    """Settings shared by every run of a campaign (picklable: they travel to workers and Ray)."""

    base_url: str | None = None
    api_key_env: str | None = None  # name of the environment variable holding the key
    provider: str = "openai"  # for the llm agent: 'openai' (any compatible server) or 'anthropic'
    reasoning_effort: str | None = None
    allowed_tools: str | None = None
    skip_permissions: bool = False
    agent_command: str | None = None
    max_steps: int = 40
    replay_from: str | None = None
    replay_agent: str | None = None  # which of the replayed campaign's agents (agent or agent:model)
    variant: str | None = None
    unsafe_no_isolation: bool = False
    sandbox: str | None = None  # force 'bwrap' or 'docker'
    max_tokens: int | None = 4096  # output tokens asked for per model request (every agent)
    token_budget: int | None = None  # input + output tokens per run (every agent)
    text_tool_calls: bool = True  # llm agent: use tool calls the model wrote as text (agents/text_tool_calls.py)
    endpoint_api: str = "native"  # codex/claude/gemini: 'chat' when the endpoint speaks only chat completions
    prices: str | None = None  # price table for the run's cost (default: agents/prices.toml)
    sandbox_limits: Limits = field(default_factory=Limits)  # memory, processes, disk... of a sandboxed run (--limit)
    mounts: tuple[str, ...] = ()  # host paths shown read-only to an external agent (--agent-mount)
    endpoint_down_seconds: float = ENDPOINT_DOWN_SECONDS  # codex/claude/gemini/command: stop a run whose endpoint answered nothing this long

    def limits(self) -> dict[str, int | None]:
        return {"max_tokens": self.max_tokens, "token_budget": self.token_budget}

    def api_key(self, default_env: str) -> str | None:
        return os.environ.get(self.api_key_env or default_env)


def make_agent(name: str, options: AgentOptions, model: str | None = None) -> Agent:
    """The agent called ``name``; external agents get the sandbox this machine offers (or refuse)."""
    model = None if model in (None, "", "-") else model
    if name in ("codex", "claude", "gemini", "command"):
        from clinbench.agents.sandbox import choose_sandbox

        sandbox = choose_sandbox(unsafe_no_isolation=options.unsafe_no_isolation, prefer=options.sandbox)
        common = {"sandbox": sandbox, "base_url": options.base_url, "model": model, "endpoint_api": options.endpoint_api,
                  **options.limits(), "limits": options.sandbox_limits, "mounts": options.mounts,
                  "endpoint_down_seconds": options.endpoint_down_seconds}
        if name == "codex":
            from clinbench.agents.codex import CodexAgent

            return CodexAgent(reasoning_effort=options.reasoning_effort, api_key=options.api_key("OPENAI_API_KEY"), **common)
        if name == "claude":
            from clinbench.agents.claude_code import DEFAULT_ALLOWED_TOOLS, ClaudeCodeAgent

            return ClaudeCodeAgent(allowed_tools=options.allowed_tools or DEFAULT_ALLOWED_TOOLS,
                                   skip_permissions=options.skip_permissions,
                                   api_key=options.api_key("ANTHROPIC_API_KEY"), **common)
        if name == "gemini":
            from clinbench.agents.gemini_cli import GeminiCliAgent

            return GeminiCliAgent(api_key=options.api_key("GEMINI_API_KEY"), **common)
        from clinbench.agents.command import CommandAgent

        return CommandAgent(options.agent_command or "", api_key=options.api_key("OPENAI_API_KEY"), **common)
    if name == "llm":
        from clinbench.agents.llm_agent import LLMAgent

        key_env = "ANTHROPIC_API_KEY" if options.provider == "anthropic" else "OPENAI_API_KEY"
        return LLMAgent(options.provider, model, base_url=options.base_url, api_key=options.api_key(key_env),
                        max_steps=options.max_steps, reasoning_effort=options.reasoning_effort,
                        max_tokens=options.max_tokens, token_budget=options.token_budget,
                        text_tool_calls=options.text_tool_calls)
    if name in BUILTIN_AGENTS:
        from clinbench.agents.builtin_agents import make_builtin

        return make_builtin(name, options)
    raise AgentError(f"unknown agent {name!r}; choose one of {', '.join(AGENT_NAMES)}")
