"""What exactly ran: the agent program's version, and the models the endpoint said answered.

The M4Bench replication mixed Claude Code versions by condition and had model-slot overrides
in a share of its runs; a comparison is only clean when every run of an agent ran the same
program version and every run of a requested model was answered by one served model.
``records.mixed`` finds what a set of runs mixes; ``run`` and ``stats`` refuse it unless --allow-mixed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable


def version_line(stdout: str, stderr: str, returncode: int) -> str | None:
    """The first line a ``--version`` printed (e.g. ``codex-cli 0.171.0``), or None if it failed or said nothing."""
    lines = [line.strip() for line in (stdout or stderr).splitlines() if line.strip()]
    return lines[0][:120] if returncode == 0 and lines else None


_PROGRAMS = ("codex", "claude", "gemini")  # agents whose program reports its own version


def current_version(agent: str, options=None) -> str | None:
    """The version an agent would run as now (None for agents with no program of their own). A CLI
    is asked inside the sandbox its runs get (``options``), never on the host with its environment."""
    if agent == "llm":
        from clinbench import __version__

        return f"clinbench llm agent {__version__}"
    if agent not in _PROGRAMS:
        return None
    from clinbench.agents.factory import AgentOptions, make_agent
    from clinbench.errors import ClinbenchError

    try:
        return make_agent(agent, options or AgentOptions()).version()
    except ClinbenchError:
        return None


def version_changes(recorded: Iterable[dict], agents: Iterable[str], options=None) -> list[str]:
    """For each agent about to run: a line when the campaign's runs of it were made by another version."""
    before: dict[str, set[str]] = defaultdict(set)
    for r in recorded:
        if r.get("agent_version"):
            before[r["agent"]].add(r["agent_version"])
    problems = []
    for agent in sorted(set(agents)):
        if not before.get(agent):
            continue  # nothing to compare with: no program is run
        now = current_version(agent, options)
        if now and before.get(agent) and now not in before[agent]:
            problems.append(f"its {agent} runs were made by {' and '.join(sorted(before[agent]))}, this machine runs {now}")
    return problems
