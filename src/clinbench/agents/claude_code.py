"""Claude Code adapter: ``claude -p --output-format stream-json --verbose`` inside the sandbox
(facts: docs/agents.md).

``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1`` stops its own network lookups. Tools are
granted with ``--allowedTools`` (configurable); ``--dangerously-skip-permissions`` is used
only when asked, with ``IS_SANDBOX=1`` because it refuses to run as root otherwise. Skills go
to ``<workspace>/.claude/skills``.
"""

from __future__ import annotations

from clinbench.agents import toolbox
from clinbench.agents.base import RunContext, Workspace, place_skills
from clinbench.agents.external import ExternalAgent, Launch, Parsed, json_events
from clinbench.records import Usage, token_count

DEFAULT_ALLOWED_TOOLS = "Bash,Read,Write,Edit,Glob,Grep"


class ClaudeCodeAgent(ExternalAgent):
    name = "claude"
    executable = "claude"

    def __init__(self, *, allowed_tools: str | None = DEFAULT_ALLOWED_TOOLS, skip_permissions: bool = False, **kw):
        super().__init__(**kw)
        self.allowed_tools = allowed_tools
        self.skip_permissions = skip_permissions

    def command(self, workspace: Workspace, ctx: RunContext, home: str, base_url: str | None, root: str) -> Launch:
        place_skills(workspace.skills, workspace.root / ".claude" / "skills")
        model = self.model or ctx.model or "claude-sonnet-4-5"
        prompt = workspace.prompt + toolbox.note(workspace.database, workspace.root)
        argv = [self.executable, "-p", prompt, "--output-format", "stream-json", "--verbose",
                "--model", model, "--no-session-persistence"]
        env = {
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }
        if self.skip_permissions:
            argv.append("--dangerously-skip-permissions")
            env["IS_SANDBOX"] = "1"
        elif self.allowed_tools:
            argv += ["--allowedTools", self.allowed_tools]
        if base_url:
            env["ANTHROPIC_BASE_URL"] = base_url.rstrip("/").removesuffix("/v1")
        env["ANTHROPIC_API_KEY"] = self.api_key or ("not-needed" if base_url else "")
        return Launch(argv, env)

    def parse(self, stdout: str) -> Parsed:
        return parse_claude_stream(stdout)

    def run(self, workspace: Workspace, ctx: RunContext):
        outcome = super().run(workspace, ctx)
        # what Claude Code says when the endpoint has no /v1/messages
        if outcome.error and self.base_url and self.endpoint_api == "native" and "issue with the selected model" in outcome.error:
            outcome.error += CHAT_HINT
        return outcome


CHAT_HINT = " (if the endpoint speaks only chat completions, pass --endpoint-api chat)"


def parse_claude_stream(stdout: str) -> Parsed:
    """Usage, Claude Code's own cost estimate (kept as ``reported_cost``, never as the run's cost),
    the result text and, from an error ``result`` event, the failure."""
    parsed = Parsed()
    per_message = Usage()
    result_usage = None
    for event in json_events(stdout):
        parsed.events.append(event)
        try:
            kind = event.get("type")
            if kind == "assistant":
                served = (event.get("message") or {}).get("model")
                if isinstance(served, str) and served:
                    parsed.served_models.add(served)  # a model-slot override shows as another name here
                u = (event.get("message") or {}).get("usage") or {}
                per_message = per_message.add(Usage.from_tokens(u))
            elif kind == "result":
                parsed.final_message = event.get("result")
                if isinstance(event.get("total_cost_usd"), (int, float)):
                    parsed.cost = float(event["total_cost_usd"])
                if event.get("is_error") or str(event.get("subtype", "success")) != "success":
                    said = " ".join(str(event.get("result") or event.get("errors") or "").split())[:300]
                    subtype = str(event.get("subtype") or "error")
                    parsed.error = f"claude {'error' if subtype == 'success' else subtype}: {said}"
                u = event.get("usage")
                if isinstance(u, dict):
                    turns = event.get("num_turns")
                    result_usage = Usage.from_tokens(u, token_count(turns) or per_message.requests)
        except (AttributeError, TypeError, ValueError, KeyError, OverflowError):
            continue  # an event of a shape the CLI never writes (a tool's bytes on its stdout): skipped
    # the result event carries the session's totals; per-message usage is the fallback
    parsed.usage = result_usage or per_message
    return parsed
