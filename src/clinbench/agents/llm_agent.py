"""The built-in tool-using agent (``--agent llm``): a model, the workspace tools and a step limit.

It runs in the harness process, but its only reach is the workspace through
``WorkspaceTools`` (read-only database without file access, the given skills, output.csv),
so it needs no sandbox. Its model endpoint comes from the options or the environment
(OPENAI_BASE_URL / OPENAI_API_KEY, ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY).
"""

from __future__ import annotations

import time
from typing import Any

from clinbench.agents.base import Agent, AgentOutcome, RunContext, TranscriptWriter, Workspace, output_if_written
from clinbench.agents.llm_clients import Message, ModelClient, RetryPolicy, make_client
from clinbench.agents.sql_tools import TOOL_SPECS, WorkspaceTools
from clinbench.campaign.store import Usage
from clinbench.errors import AgentError

SYSTEM_PROMPT = (
    "You are a clinical data engineer working on a DuckDB database. Use the tools to explore "
    "the tables, read any skill documents given, and answer the task by calling write_output "
    "with one SQL query whose result is the requested table. Reply with a short summary when done."
)
TOOL_RESULT_CHARS = 20_000  # keep one huge result from filling the context


class LLMAgent(Agent):
    name = "llm"
    external = False

    def __init__(self, provider: str = "openai", model: str | None = None, *, base_url: str | None = None,
                 api_key: str | None = None, max_steps: int = 40, max_rows: int = 100,
                 sql_time_limit: float = 60.0, retry: RetryPolicy | None = None,
                 reasoning_effort: str | None = None, client: ModelClient | None = None):
        self.provider = provider
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.max_steps = max_steps
        self.max_rows = max_rows
        self.sql_time_limit = sql_time_limit
        self.retry = retry
        self.reasoning_effort = reasoning_effort
        self._client = client

    def describe(self) -> str:
        return f"llm:{self.provider}"

    def _client_for(self, ctx: RunContext) -> ModelClient:
        if self._client is not None:
            return self._client
        model = self.model or ctx.model
        if not model:
            raise AgentError("the llm agent needs a model: pass --model NAME")
        return make_client(self.provider, model, base_url=self.base_url, api_key=self.api_key,
                           retry=self.retry, reasoning_effort=self.reasoning_effort)

    def run(self, workspace: Workspace, ctx: RunContext) -> AgentOutcome:
        deadline = time.monotonic() + ctx.timeout_seconds
        client = self._client_for(ctx)
        tools = WorkspaceTools(workspace.database, workspace.output_csv, workspace.skills,
                               max_rows=self.max_rows, time_limit_seconds=self.sql_time_limit)
        usage = Usage()
        messages = [Message("user", workspace.prompt + _skill_note(workspace))]
        status, error, final = "ok", None, None
        with TranscriptWriter(ctx.transcript) as log:
            log.event("start", agent=self.describe(), model=client.model, max_steps=self.max_steps)
            log.event("user", content=messages[0].content)
            try:
                for step in range(self.max_steps):
                    if time.monotonic() > deadline:
                        status, error = "timeout", f"run timed out after {ctx.timeout_seconds:g} s"
                        break
                    turn = client.complete(SYSTEM_PROMPT, messages, TOOL_SPECS)
                    usage = usage.add(turn.usage)
                    log.event("assistant", step=step, text=turn.text,
                              tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments} for c in turn.tool_calls],
                              usage=vars(turn.usage))
                    messages.append(Message("assistant", turn.text, turn.tool_calls))
                    if not turn.tool_calls:
                        final = turn.text
                        break
                    for call in turn.tool_calls:
                        result = tools.call(call.name, call.arguments)[:TOOL_RESULT_CHARS]
                        log.event("tool_result", id=call.id, name=call.name, content=result)
                        messages.append(Message("tool", result, tool_call_id=call.id))
                else:
                    error = f"stopped at the step limit ({self.max_steps})"
                    log.event("step_limit", max_steps=self.max_steps)
            except AgentError as exc:
                status, error = "error", str(exc)
            finally:
                tools.close()
            log.event("end", status=status, error=error, usage=vars(usage), retries=client.retries_used)
        return AgentOutcome(status=status, output_csv=output_if_written(workspace), transcript=ctx.transcript,
                            usage=usage, isolated=False, error=error, final_message=final)


def _skill_note(workspace: Workspace) -> str:
    if not workspace.skills:
        return ""
    names = ", ".join(p.name for p in workspace.skills)
    return f"\n\nSkill documents available through read_skill: {names}."


def llm_agent_from_options(options: dict[str, Any]) -> LLMAgent:
    return LLMAgent(
        provider=options.get("provider", "openai"),
        model=options.get("model"),
        base_url=options.get("base_url"),
        api_key=options.get("api_key"),
        max_steps=int(options.get("max_steps", 40)),
        reasoning_effort=options.get("reasoning_effort"),
    )
