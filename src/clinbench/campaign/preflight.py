"""Before a campaign with an LLM-backed agent or referee: one cheap request to its endpoint.

A campaign whose endpoint is down would otherwise spend every run's retries (tens of seconds
each) and record nothing useful. ``--agent llm`` sends one tiny completion to the endpoint and
model it will use (no retries, a short timeout), as ``dx run`` does for each model role; codex,
claude and gemini with ``--base-url`` check that the endpoint answers HTTP at all. A failure is an ``EndpointError`` carrying the endpoint's answer.
"""

from __future__ import annotations

import os

from clinbench.agents.factory import AgentOptions
from clinbench.errors import EndpointError

TIMEOUT_SECONDS = 10.0


def check_endpoints(agents: list[str], models: list[str], options: AgentOptions) -> None:
    """Raise EndpointError when an LLM-backed agent's endpoint or model does not answer."""
    if "llm" in agents:
        for model in models:
            _check_llm(model, options)
    if options.base_url and any(a in ("codex", "claude", "gemini") for a in agents):
        _check_http(options.base_url)


def _check_llm(model: str, options: AgentOptions) -> None:
    key_env = options.api_key_env or ("ANTHROPIC_API_KEY" if options.provider == "anthropic" else "OPENAI_API_KEY")
    check_model(options.provider, model, options.base_url, os.environ.get(key_env), "--agent llm")


def check_model(provider: str, model: str, base_url: str | None, api_key: str | None, what: str) -> None:
    """One tiny completion (no retries, a short timeout); EndpointError naming ``what`` when it fails."""
    from clinbench.agents.llm_clients import AnthropicClient, Message, OpenAIChatClient, RetryPolicy
    from clinbench.errors import AgentError

    once = RetryPolicy(max_attempts=1)
    where = base_url or ("ANTHROPIC_BASE_URL" if provider == "anthropic" else "OPENAI_BASE_URL")
    try:
        if provider == "anthropic":
            client = AnthropicClient(model, base_url, api_key, once, timeout=TIMEOUT_SECONDS, max_tokens=16)
        else:
            client = OpenAIChatClient(model, base_url, api_key, once, timeout=TIMEOUT_SECONDS, max_tokens=16)
        client.complete("Reply with the word ok.", [Message("user", "ok?")], [])
    except AgentError as exc:
        raise EndpointError(f"endpoint check failed for {what}, model {model} at {where}: {exc}; "
                            "nothing was run: fix the endpoint, model or key and rerun") from exc


def _check_http(base_url: str) -> None:
    import httpx

    try:
        httpx.get(base_url, timeout=TIMEOUT_SECONDS)
    except httpx.HTTPError as exc:
        raise EndpointError(f"endpoint check failed: {base_url} does not answer ({exc}); nothing was run: "
                            "start the endpoint or fix --base-url and rerun") from exc
