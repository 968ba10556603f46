"""What each condition puts in front of the agent, read from the workspace it builds."""

from __future__ import annotations

from clinbench.derive.catalogue import CONDITIONS, SKILLS_DIR
from clinbench.derive.workspace import prepare_workspace


def test_with_skill_all_gives_every_skill_of_the_benchmark(source_db, tmp_path):
    ws = prepare_workspace("mimic-kdigo-48h", "with-skill-all", "native", source_db, tmp_path / "ws")
    given = sorted(p.name for p in (ws / "skills").iterdir())
    assert len(given) == 15 and given == sorted(p.name for p in SKILLS_DIR.iterdir() if (p / "SKILL.md").is_file())
    # the task's own skill is one among many, byte for byte the with-skill copy
    assert (ws / "skills" / "kdigo-aki-staging" / "SKILL.md").read_text() == (
        SKILLS_DIR / "kdigo-aki-staging" / "SKILL.md").read_text()
    prompt = (ws / "prompt.md").read_text()
    assert prompt.count("- `skills/") == 15 and "`skills/sofa-score/SKILL.md`" in prompt


def test_six_conditions_are_offered():
    assert CONDITIONS == ("no-skill", "with-skill", "with-skill-all", "with-skill-decoy",
                          "with-skill-rawsql", "operational-spec")
