"""Any program as an agent: ``--agent command --agent-command 'TEMPLATE'``.

The template is split like a shell command line (no shell runs it) and may use
``{workspace}``, ``{prompt_file}``, ``{model}``, ``{task}`` (the task id) and ``{trial}`` (the run's
trial number: a scripted agent varies its answer by it, reproducibly). It runs in the sandbox with
the workspace as its working folder; its stdout becomes the transcript.
"""

from __future__ import annotations

import json
import shlex

from clinbench import untrusted
from clinbench.agents.base import RunContext, Workspace
from clinbench.agents.external import ExternalAgent, Launch, Parsed
from clinbench.errors import AgentError

PLACEHOLDERS = ("workspace", "prompt_file", "model", "task", "trial")


class CommandAgent(ExternalAgent):
    name = "command"

    def __init__(self, template: str, **kw):
        if not template or not template.strip():
            raise AgentError("the command agent needs --agent-command 'PROGRAM {workspace} {prompt_file}'")
        self.template = template
        self.executable = shlex.split(template)[0]
        super().__init__(**kw)

    def command(self, workspace: Workspace, ctx: RunContext, home: str, base_url: str | None, root: str) -> Launch:
        values = {"workspace": root, "prompt_file": f"{root}/{workspace.prompt_file.relative_to(workspace.root)}",
                  "model": self.model or ctx.model or "", "task": ctx.task_id, "trial": str(ctx.trial)}
        try:
            argv = [part.format(**values) for part in shlex.split(self.template)]
        except (KeyError, IndexError) as exc:
            raise AgentError(f"unknown placeholder {exc} in --agent-command; use {', '.join('{' + p + '}' for p in PLACEHOLDERS)}") from exc
        env = {}
        if base_url:
            env["OPENAI_BASE_URL"] = base_url
            if self.api_key:
                env["OPENAI_API_KEY"] = self.api_key
        return Launch(argv, env)

    def transcript_lines(self, stdout: str) -> list[str]:
        lines = []
        for line in stdout.splitlines():
            try:
                untrusted.loads(line)
                lines.append(line)
            except json.JSONDecodeError:
                lines.append(json.dumps({"type": "stdout", "line": line}))
        return lines

    def parse(self, stdout: str) -> Parsed:
        lines = [line for line in stdout.splitlines() if line.strip()]
        return Parsed(final_message=lines[-1] if lines else None)
