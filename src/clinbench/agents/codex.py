"""Codex CLI adapter: ``codex exec --json`` inside the sandbox (facts: docs/agents.md).

Codex speaks only the OpenAI Responses API (``wire_api = "responses"``); a custom endpoint is
declared as a model provider through ``-c`` overrides. ``--disable plugins`` and
``analytics.enabled=false`` stop its own network lookups; Codex's bundled sandbox is
bypassed because ours already isolates it. Skills go to ``<workspace>/.codex/skills``.
"""

from __future__ import annotations

import json

from clinbench.agents import toolbox
from clinbench.agents.base import RunContext, Workspace, place_skills
from clinbench.agents.external import ExternalAgent, Launch, Parsed, json_events
from clinbench.records import Usage

PROVIDER = "clinbench"
KEY_ENV = "CLINBENCH_MODEL_API_KEY"


def _toml_str(value: str) -> str:
    return json.dumps(value)  # a JSON string is a valid TOML basic string


class CodexAgent(ExternalAgent):
    name = "codex"
    executable = "codex"

    def __init__(self, *, reasoning_effort: str | None = None, **kw):
        super().__init__(**kw)
        self.reasoning_effort = reasoning_effort

    def command(self, workspace: Workspace, ctx: RunContext, home: str, base_url: str | None, root: str) -> Launch:
        place_skills(workspace.skills, workspace.root / ".codex" / "skills")
        model = self.model or ctx.model or "gpt-5.5"
        codex_home = f"{home}/.codex"
        argv = [self.executable, "exec", "--json", "--skip-git-repo-check", "--ephemeral", "--color", "never", "-m", model]
        if self.reasoning_effort:
            argv += ["-c", f"model_reasoning_effort={_toml_str(self.reasoning_effort)}"]
        env = {"CODEX_HOME": codex_home}
        if base_url:
            argv += [
                "-c", f"model_provider={_toml_str(PROVIDER)}",
                "-c", f"model_providers.{PROVIDER}.name={_toml_str(PROVIDER)}",
                "-c", f"model_providers.{PROVIDER}.base_url={_toml_str(base_url)}",
                "-c", f"model_providers.{PROVIDER}.wire_api={_toml_str('responses')}",
                "-c", f"model_providers.{PROVIDER}.env_key={_toml_str(KEY_ENV)}",
            ]
            env[KEY_ENV] = self.api_key or "not-needed"
        elif self.api_key:
            env["OPENAI_API_KEY"] = self.api_key
        argv += ["--disable", "plugins", "-c", "analytics.enabled=false",
                 "--dangerously-bypass-approvals-and-sandbox", "-C", root,
                 workspace.prompt + toolbox.note(workspace.database, workspace.root)]
        # CODEX_HOME must exist before codex starts; HOME is fresh in every run.
        wrapped = ["/bin/sh", "-c", 'mkdir -p "$CODEX_HOME" && exec "$@"', "sh", *argv]
        return Launch(wrapped, env)

    def parse(self, stdout: str) -> Parsed:
        return parse_codex_events(stdout)

    def run(self, workspace: Workspace, ctx: RunContext):
        outcome = super().run(workspace, ctx)
        if outcome.error and self.base_url and self.endpoint_api == "native" and "404" in outcome.error \
                and "/responses" in outcome.error:  # the endpoint has no Responses API
            outcome.error += CHAT_HINT
        return outcome


CHAT_HINT = " (if the endpoint speaks only chat completions, pass --endpoint-api chat)"


def parse_codex_events(stdout: str) -> Parsed:
    """Usage (summed over turns), last agent message and the failure, if any, from ``codex exec --json``.

    A ``turn.failed`` event is the failure; otherwise the last ``error`` event is, but only when no
    turn completed (Codex also reports retried stream errors as ``error`` events)."""
    parsed = Parsed()
    usage = Usage()
    failed, last_error, completed = None, None, False
    for event in json_events(stdout):
        parsed.events.append(event)
        try:
            kind = event.get("type")
            if kind == "turn.completed":
                completed = True
                u = event.get("usage") or {}
                usage = usage.add(Usage.from_tokens(u))
            elif kind == "item.completed":
                item = event.get("item") or {}
                if item.get("type") == "agent_message":
                    parsed.final_message = item.get("text")
            elif kind in ("turn.failed", "error"):
                err = event.get("error") or {}
                message = (err.get("message") if isinstance(err, dict) else None) or event.get("message") or "codex turn failed"
                message = "codex " + " ".join(str(message).split())[:400]
                if kind == "turn.failed":
                    failed = message
                else:
                    last_error = message
        except (AttributeError, TypeError, ValueError, KeyError, OverflowError):
            continue  # an event of a shape the CLI never writes (a tool's bytes on its stdout): skipped
    parsed.error = failed or (None if completed else last_error)
    parsed.usage = usage
    return parsed
