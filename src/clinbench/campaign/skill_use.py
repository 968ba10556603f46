"""Did a run use the skills its condition gave, and did a no-skill run find one anyway?

Read from what the agent itself wrote (``audit.agent_authored_text``): a skill counts as
opened when a command or tool call names its ``…/<skill>/SKILL.md`` (cat, sed, a Read tool,
any of the skill folders the CLIs use) or calls a skill tool with its name (Claude Code's
``Skill {skill}``, Gemini CLI's ``activate_skill {name}``, the llm agent's ``read_skill {name}``).

- A with-skill-* run that opened none of the skills it was given is counted (the skill could not
  have helped); it stays publishable.
- A no-skill run that opened a benchmark skill broke its condition: it is flagged.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# a match starts only where a run of name characters starts: "A" * 5,000,000 took minutes, each position rescanned
_SKILL_FILE = re.compile(r"(?<![a-z0-9-])-*([a-z0-9][a-z0-9-]*)/SKILL\.md", re.IGNORECASE)
_SKILL_TOOL = re.compile(r'"(?:skill|name)"\s*:\s*"([a-z0-9][a-z0-9-]*)"', re.IGNORECASE)


@dataclass(frozen=True)
class SkillUse:
    given: tuple[str, ...]
    opened: tuple[str, ...]

    @property
    def read_given(self) -> bool:
        return bool(set(self.given) & set(self.opened))

    @property
    def found_without_being_given(self) -> tuple[str, ...]:
        return tuple(s for s in self.opened if s not in self.given)


def known_skills() -> set[str]:
    from clinbench.derive.catalogue import SKILLS_DIR
    from clinbench.derive.conditions import RAWSQL_SKILL

    return {p.name for p in SKILLS_DIR.iterdir() if (p / "SKILL.md").is_file()} | {RAWSQL_SKILL}


def skills_opened(agent_text: str, known: set[str]) -> tuple[str, ...]:
    names = {m.group(1).lower() for m in _SKILL_FILE.finditer(agent_text)}
    names |= {m.group(1).lower() for m in _SKILL_TOOL.finditer(agent_text)}
    return tuple(sorted(names & known))


def given_skills(evidence_folder: Path) -> tuple[str, ...]:
    """The skills the run was given: the ``skills/<name>/SKILL.md`` its evidence keeps."""
    root = Path(evidence_folder) / "skills"
    if not root.is_dir():
        return ()
    return tuple(sorted(p.name for p in root.iterdir() if (p / "SKILL.md").is_file()))


def skill_use(evidence_folder: Path, agent_text: str, known: set[str] | None = None) -> SkillUse:
    return SkillUse(given_skills(evidence_folder), skills_opened(agent_text, known or known_skills()))


def flag_reason(condition: str, use: SkillUse) -> str | None:
    """Why the audit must flag this run, or None."""
    if condition == "no-skill" and use.opened:
        return f"no-skill run opened benchmark skill(s) {', '.join(use.opened)}"
    return None


def summarise(rows: list[tuple[str, SkillUse]]) -> dict[str, dict[str, int]]:
    """Per condition: runs, runs given skills that opened one, runs that opened a skill not given."""
    out: dict[str, dict[str, int]] = {}
    for condition, use in rows:
        c = out.setdefault(condition, {"runs": 0, "given": 0, "read_given": 0, "opened_not_given": 0})
        c["runs"] += 1
        if use.given:
            c["given"] += 1
            c["read_given"] += int(use.read_given)
        c["opened_not_given"] += int(bool(use.found_without_being_given))
    return out
