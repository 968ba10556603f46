"""The built-in tool-using agent (``--agent llm``): a model, the workspace tools and hard limits.

It runs in the harness process, but its only reach is the workspace through
``WorkspaceTools`` (read-only database without file access, the given skills, output.csv),
so it needs no sandbox. Its model endpoint comes from the options or the environment
(OPENAI_BASE_URL / OPENAI_API_KEY, ANTHROPIC_BASE_URL / ANTHROPIC_API_KEY).

Limits, each recorded in the transcript's ``start`` event and, when hit, named in the
outcome (``limit``) and its reason: the run's wall-clock deadline bounds every model request,
retry wait and SQL query (the time left, never a fresh timeout); ``max_tokens`` is sent with
every request; ``token_budget`` caps the run's input + output tokens; ``max_steps`` caps turns.

A tool call the model wrote as text, because the server did not parse it, is used (unless
``text_tool_calls=False``) and marked ``parsed_from_text`` in the transcript
(``agents/text_tool_calls.py``). An empty reply, or a text-only one before output.csv is
written, gets one short corrective message (a ``user`` event with ``repair``: the reason) and the run goes on; a second
in a row ends the run as what it is (empty reply, text-only answer), as does a reply cut at
``max_tokens`` or a malformed reply. Every attempt is in the transcript and the usage. A bug in
the harness is an ``error`` with a one-line reason and the traceback in ``harness_error.txt``;
the usage counted so far is kept in every case.
"""

from __future__ import annotations

import time
import traceback
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from clinbench.agents.base import Agent, AgentOutcome, RunContext, TranscriptWriter, Workspace, output_if_written
from clinbench.agents.llm_clients import Message, ModelClient, ModelTimeout, RetryPolicy, Turn, make_client, one_line
from clinbench.agents.sql_tools import TOOL_SPECS, WorkspaceTools
from clinbench.agents.text_tool_calls import find_text_tool_calls
from clinbench.records import RunStatus, Usage
from clinbench.errors import AgentError, EndpointError

SYSTEM_PROMPT = (
    "You are a clinical data engineer working on a DuckDB database. Use the tools to explore "
    "the tables, read any skill documents given, and answer the task by calling write_output "
    "with one SQL query whose result is the requested table. Reply with a short summary when done."
)
REPAIR_MESSAGE = ("Your last reply {problem}. Reply with one tool call (list_tables, describe_table, run_sql, "
                  "read_skill or write_output), through the tool-call API or as one JSON object "
                  '{{"name": TOOL, "arguments": {{...}}}}; once write_output has saved the answer, reply with a short summary.')
TOOL_RESULT_CHARS = 20_000  # keep one huge result from filling the context
DEFAULT_MAX_TOKENS = 4096
HARNESS_ERROR_FILE = "harness_error.txt"


class _Stop(Exception):
    """Ends the loop with a status, a reason and the limit hit (if any)."""

    def __init__(self, status: str, reason: str, limit: str | None = None):
        super().__init__(reason)
        self.status, self.reason, self.limit = status, reason, limit


@dataclass(eq=False)
class LLMAgent(Agent):
    """clinbench's own tool-calling agent over a chat-completions or messages endpoint."""

    name = "llm"
    external = False

    provider: str = "openai"
    model: str | None = None
    _: KW_ONLY
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    max_steps: int = 40
    max_rows: int = 100
    sql_time_limit: float = 60.0
    retry: RetryPolicy | None = None
    reasoning_effort: str | None = None
    client: ModelClient | None = field(default=None, repr=False)  # a given client (tests); else one per run
    max_tokens: int | None = DEFAULT_MAX_TOKENS
    token_budget: int | None = None
    text_tool_calls: bool = True

    def describe(self) -> str:
        return f"llm:{self.provider}"

    def limits(self, ctx: RunContext) -> dict[str, Any]:
        return {"timeout_seconds": ctx.timeout_seconds, "max_tokens": self.max_tokens,
                "token_budget": self.token_budget, "max_steps": self.max_steps, "sql_time_limit": self.sql_time_limit}

    def _client_for(self, ctx: RunContext) -> ModelClient:
        if self.client is not None:
            return self.client
        model = self.model or ctx.model
        if not model:
            raise AgentError("the llm agent needs a model: pass --model NAME")
        return make_client(self.provider, model, base_url=self.base_url, api_key=self.api_key,
                           retry=self.retry, reasoning_effort=self.reasoning_effort, max_tokens=self.max_tokens)

    def run(self, workspace: Workspace, ctx: RunContext) -> AgentOutcome:
        t_start = time.monotonic()
        client = self._client_for(ctx)
        tools = WorkspaceTools(workspace.database, workspace.output_csv, workspace.skills,
                               max_rows=self.max_rows, time_limit_seconds=self.sql_time_limit)
        self._usage = Usage()
        self._served: set[str] = set()
        messages = [Message("user", workspace.prompt + _skill_note(workspace))]
        status, error, final, limit = "ok", None, None, None
        with TranscriptWriter(ctx.transcript) as log:
            log.event("start", agent=self.describe(), model=client.model, limits=self.limits(ctx),
                      text_tool_calls=self.text_tool_calls)
            log.event("user", content=messages[0].content)
            try:
                final = self._loop(client, tools, messages, ctx, log, workspace)
            except _Stop as stop:
                status, error, limit = stop.status, stop.reason, stop.limit
            except ModelTimeout as exc:
                status, error, limit = "timeout", f"run timed out after {ctx.timeout_seconds:g} s: {exc}", "timeout"
            except EndpointError as exc:  # the endpoint failed, not the agent
                status, error = RunStatus.HARNESS_ERROR, one_line(exc, 500)
            except AgentError as exc:
                status, error = "error", one_line(exc, 500)
            except Exception as exc:  # a harness bug: the run is a harness error with its usage, the campaign goes on
                status, error = RunStatus.HARNESS_ERROR, f"harness error in the llm agent: {type(exc).__name__}: {one_line(exc, 300)}"
                (ctx.evidence_dir / HARNESS_ERROR_FILE).write_text(traceback.format_exc(), encoding="utf-8")
            finally:
                tools.close()
            usage = self._usage
            usage.http_requests = client.http_requests
            usage.model_seconds = client.model_seconds
            usage.harness_seconds = max(0.0, time.monotonic() - t_start - client.model_seconds)
            log.event("end", status=status, error=error, limit=limit, usage=vars(usage), retries=client.retries_used)
        from clinbench import __version__

        return AgentOutcome(status=status, output_csv=output_if_written(workspace), transcript=ctx.transcript,
                            usage=usage, isolated=False, error=error, final_message=final, limit=limit,
                            agent_version=f"clinbench llm agent {__version__}", served_models=tuple(sorted(self._served)))

    def _loop(self, client: ModelClient, tools: WorkspaceTools, messages: list[Message], ctx: RunContext,
              log: TranscriptWriter, workspace: Workspace) -> str | None:
        names = [t.name for t in TOOL_SPECS]
        repaired = False  # the previous turn was a corrective message
        for step in range(self.max_steps):
            if ctx.remaining() <= 0:
                raise _Stop("timeout", f"run timed out after {ctx.timeout_seconds:g} s", "timeout")
            turn = client.complete(SYSTEM_PROMPT, messages, TOOL_SPECS, deadline=ctx.deadline, max_tokens=self.max_tokens)
            self._usage = self._usage.add(turn.usage)
            if turn.served_model:
                self._served.add(turn.served_model)
            from_text = None
            if not turn.tool_calls:
                calls, style = find_text_tool_calls(turn.text, names)
                if calls and not self.text_tool_calls:
                    log.event("assistant", step=step, text=turn.text, tool_calls=[], finish_reason=turn.finish_reason,
                              usage=vars(turn.usage), seconds=round(turn.seconds, 3))
                    raise _Stop("error", f"the model wrote a tool call as text ({style} style, {calls[0].name}) that the server did "
                                "not parse into tool_calls: start the server with tool-call parsing (llama-server --jinja; "
                                "vllm --enable-auto-tool-choice --tool-call-parser NAME) or drop --no-text-tool-calls")
                if calls:
                    turn.tool_calls, from_text = calls, style
            log.event("assistant", step=step, text=turn.text, finish_reason=turn.finish_reason,
                      tool_calls=[{"id": c.id, "name": c.name, "arguments": c.arguments, **({"error": c.error} if c.error else {}),
                                   **({"parsed_from_text": True} if c.from_text else {})} for c in turn.tool_calls],
                      text_style=from_text, usage=vars(turn.usage), seconds=round(turn.seconds, 3))
            self._check_budget()
            messages.append(Message("assistant", "" if from_text else turn.text, turn.tool_calls))
            if not turn.tool_calls:
                problem = self._problem(turn, workspace)
                if problem is None:
                    return turn.text
                if repaired or turn.finish_reason == "length":
                    raise _Stop("error", problem.reason + (", again after a corrective message" if repaired else ""),
                                problem.limit)
                repair = REPAIR_MESSAGE.format(problem=problem.told)
                log.event("user", content=repair, repair=problem.reason)
                messages.append(Message("user", repair))
                repaired = True
                continue
            repaired = False
            for call in turn.tool_calls:
                if call.error:
                    result = f"error: {call.error}"
                else:
                    tools.time_limit_seconds = max(0.01, min(self.sql_time_limit, ctx.remaining()))
                    result = tools.call(call.name, call.arguments)[:TOOL_RESULT_CHARS]
                log.event("tool_result", id=call.id, name=call.name, content=result)
                messages.append(Message("tool", result, tool_call_id=call.id))
        log.event("step_limit", max_steps=self.max_steps)
        raise _Stop("ok" if output_if_written(workspace) else "error",
                    f"stopped at the step limit ({self.max_steps})", "max_steps")

    def _check_budget(self) -> None:
        used = self._usage.total_tokens
        if self.token_budget is not None and used > self.token_budget:
            raise _Stop("error", f"token budget of {self.token_budget} tokens used up ({used} tokens in "
                        f"{self._usage.requests} requests)", "token_budget")

    def _problem(self, turn: Turn, workspace: Workspace) -> _Problem | None:
        """Why a reply without a tool call is not a proper ending (None when it is one)."""
        text = turn.text.strip()
        if turn.finish_reason == "length":
            return _Problem(f"the model's reply was cut at max_tokens={self.max_tokens} (finish_reason length) "
                            "without a tool call", "was cut at max_tokens", "max_tokens")
        if not text:
            return _Problem(f"the model returned an empty reply (no text, no tool call; finish_reason {turn.finish_reason})",
                            "was empty")
        if output_if_written(workspace) is None:
            return _Problem(f"the model answered with text only and wrote no output.csv: {one_line(text, 160)!r}",
                            "had no tool call and output.csv is not written yet")
        return None


@dataclass
class _Problem:
    reason: str  # the run's error if it ends here
    told: str  # what the corrective message tells the model
    limit: str | None = None


def _skill_note(workspace: Workspace) -> str:
    if not workspace.skills:
        return ""
    names = ", ".join(p.name for p in workspace.skills)
    return f"\n\nSkill documents available through read_skill: {names}."
