"""Gemini CLI adapter: ``gemini -p PROMPT --output-format stream-json --yolo`` inside the sandbox.

Facts from running the real CLI (``@google/gemini-cli`` 0.61) offline against a loopback server:

- ``GOOGLE_GEMINI_BASE_URL`` moves the Gemini API (``POST /v1beta/models/M:streamGenerateContent
  ?alt=sse``, key in ``x-goog-api-key`` from ``GEMINI_API_KEY``);
- without ``$HOME/.gemini/settings.json`` choosing ``security.auth.selectedType =
  "gemini-api-key"`` it stops with "Invalid auth method selected" (exit 41); with folder trust
  on, ``--yolo`` is downgraded to the default approval mode in an untrusted folder, so the
  settings turn folder trust, telemetry, usage statistics and update checks off;
- its shell tool is ``run_shell_command {command}``; skills are read from
  ``<workspace>/.gemini/skills/<name>/SKILL.md``;
- stream-json events: ``init`` (session, model), ``message``, ``tool_use``, ``tool_result``, and
  a final ``result`` with ``status`` (``success`` / ``error`` with ``error.message``) and
  ``stats`` (``input_tokens``, ``output_tokens``, ``cached``, ``tool_calls``, ``models``).

The Gemini API is translated to chat completions by the egress path when the endpoint
speaks only that (``clinbench.agents.api_gemini``).
"""

from __future__ import annotations

import json

from clinbench.agents.base import RunContext, Workspace, place_skills
from clinbench.agents.external import ExternalAgent, Launch, Parsed, json_events
from clinbench.records import Usage, token_count

DEFAULT_MODEL = "gemini-2.5-flash"
SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
}


class GeminiCliAgent(ExternalAgent):
    name = "gemini"
    executable = "gemini"

    def command(self, workspace: Workspace, ctx: RunContext, home: str, base_url: str | None, root: str) -> Launch:
        place_skills(workspace.skills, workspace.root / ".gemini" / "skills")
        model = self.model or ctx.model or DEFAULT_MODEL
        argv = [self.executable, "-p", workspace.prompt, "--output-format", "stream-json", "-m", model, "--yolo"]
        env = {"GEMINI_API_KEY": self.api_key or ("not-needed" if base_url else ""),
               "CLINBENCH_GEMINI_SETTINGS": json.dumps(SETTINGS)}
        if base_url:
            env["GOOGLE_GEMINI_BASE_URL"] = base_url.rstrip("/").removesuffix("/v1beta").removesuffix("/v1")
        # HOME is fresh in every run (a tmpfs inside the sandbox): write the settings there first.
        wrapped = ["/bin/sh", "-c", 'mkdir -p "$HOME/.gemini" && printf %s "$CLINBENCH_GEMINI_SETTINGS" '
                   '> "$HOME/.gemini/settings.json" && exec "$@"', "sh", *argv]
        return Launch(wrapped, env)

    def parse(self, stdout: str) -> Parsed:
        return parse_gemini_stream(stdout)


def parse_gemini_stream(stdout: str) -> Parsed:
    """Usage, the final message and the CLI's own error from Gemini CLI's stream-json output."""
    parsed = Parsed()
    texts: list[str] = []
    saw_result = False
    for event in json_events(stdout):
        parsed.events.append(event)
        try:
            kind = event.get("type")
            if kind == "message" and event.get("role") == "assistant":
                texts.append(str(event.get("content") or ""))
            elif kind == "result":
                saw_result = True
                stats = event.get("stats") or {}
                parsed.usage = Usage(token_count(stats.get("input_tokens")), token_count(stats.get("output_tokens")),
                                     sum(1 for e in parsed.events if e.get("type") == "tool_use") + 1)
                if event.get("status") != "success":
                    err = event.get("error") or {}
                    parsed.error = f"gemini result {event.get('status', 'error')}: {str(err.get('message', ''))[:300]}"
        except (AttributeError, TypeError, ValueError, KeyError, OverflowError):
            continue  # an event of a shape the CLI never writes (a tool's bytes on its stdout): skipped
    parsed.final_message = "".join(texts) or None
    if not saw_result and parsed.events:
        parsed.error = "gemini ended without a result event"
    return parsed
