"""Skill-use audit, read from transcripts in each agent's own format."""

from __future__ import annotations

import pytest
import json

from clinbench.campaign.audit import agent_authored_text
from clinbench.campaign.skill_use import flag_reason, skill_use, summarise

KNOWN = {"sofa-score", "kdigo-aki-staging", "reference-sql"}


def _evidence(tmp_path, name, skills, events):
    folder = tmp_path / name
    for s in skills:
        (folder / "skills" / s).mkdir(parents=True)
        (folder / "skills" / s / "SKILL.md").write_text("# skill\n")
    folder.mkdir(exist_ok=True)
    (folder / "transcript.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    return folder, agent_authored_text(folder / "transcript.jsonl")


def test_codex_reading_its_skill_counts_and_claude_ignoring_it_does_not(tmp_path):
    codex, text = _evidence(tmp_path, "codex", ["sofa-score"], [
        {"type": "item.started", "item": {"type": "command_execution",
                                          "command": "/bin/bash -lc 'cat .codex/skills/sofa-score/SKILL.md'"}}])
    use = skill_use(codex, text, KNOWN)
    assert use.read_given and use.opened == ("sofa-score",) and flag_reason("with-skill", use) is None
    claude, text = _evidence(tmp_path, "claude", ["sofa-score"], [
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "name": "Bash", "input": {"command": "duckdb database.duckdb -c 'SHOW TABLES'"}}]}}])
    assert not skill_use(claude, text, KNOWN).read_given


def test_skill_tools_count_as_opening(tmp_path):
    claude, text = _evidence(tmp_path, "c", ["kdigo-aki-staging"], [
        {"type": "assistant", "message": {"content": [
            {"type": "tool_use", "name": "Skill", "input": {"skill": "kdigo-aki-staging"}}]}}])
    assert skill_use(claude, text, KNOWN).read_given
    llm, text = _evidence(tmp_path, "l", ["kdigo-aki-staging"], [
        {"type": "assistant", "text": "", "tool_calls": [{"name": "read_skill", "arguments": {"name": "kdigo-aki-staging"}}]}])
    assert skill_use(llm, text, KNOWN).read_given


def test_a_no_skill_run_that_finds_a_skill_is_flagged(tmp_path):
    folder, text = _evidence(tmp_path, "n", [], [
        {"type": "item.started", "item": {"type": "command_execution",
                                          "command": "find / -name SKILL.md; cat /opt/x/skills/sofa-score/SKILL.md"}}])
    use = skill_use(folder, text, KNOWN)
    assert flag_reason("no-skill", use) == "no-skill run opened benchmark skill(s) sofa-score"
    # Codex's own built-in skills are not benchmark skills
    folder, text = _evidence(tmp_path, "m", [], [
        {"type": "item.started", "item": {"type": "command_execution", "command": "cat ~/.codex/skills/.system/imagegen/SKILL.md"}}])
    assert flag_reason("no-skill", skill_use(folder, text, KNOWN)) is None


def test_counts_per_condition(tmp_path):
    a, ta = _evidence(tmp_path, "a", ["sofa-score"], [{"type": "stdout", "line": "cat skills/sofa-score/SKILL.md"}])
    b, tb = _evidence(tmp_path, "b", ["sofa-score"], [{"type": "stdout", "line": "ls"}])
    c, tc = _evidence(tmp_path, "c", [], [{"type": "stdout", "line": "ls"}])
    rows = [("with-skill", skill_use(a, ta, KNOWN)), ("with-skill", skill_use(b, tb, KNOWN)),
            ("no-skill", skill_use(c, tc, KNOWN))]
    assert summarise(rows) == {"with-skill": {"runs": 2, "given": 2, "read_given": 1, "opened_not_given": 0},
                               "no-skill": {"runs": 1, "given": 0, "read_given": 0, "opened_not_given": 0}}


@pytest.mark.slow
def test_audit_counts_with_skill_runs_that_opened_their_skill(tmp_path, monkeypatch):
    """Two llm-agent runs given the SOFA skill: one reads it through read_skill, one does not."""
    from typer.testing import CliRunner

    from clinbench.agents.factory import AgentOptions
    from tests.agents.scripted_server import ScriptedServer
    from clinbench.campaign.audit import audit_campaign
    from clinbench.campaign.campaign import run_campaign
    from clinbench.campaign.execute import CampaignConfig
    from clinbench.campaign.matrix import RunSpec
    from clinbench.cli import app

    from campaign_fixtures import build_tiny_db
    from test_campaign_runs import SOFA_SQL

    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    db = build_tiny_db(tmp_path / "tiny.duckdb")
    out = tmp_path / "camp"
    script = [{"tool": "read_skill", "arguments": {"name": "sofa-score"}},
              {"tool": "write_output", "arguments": {"sql": SOFA_SQL}}, {"text": "done"},
              {"tool": "write_output", "arguments": {"sql": SOFA_SQL + " WHERE i.stay_id = 100"}}, {"text": "done"}]
    with ScriptedServer(script) as srv:
        config = CampaignConfig(db=str(db), out=str(out), options=AgentOptions(base_url=srv.base_url))
        run_campaign([RunSpec("mimic-sofa-24h", "with-skill", "native", "llm", "m", t) for t in range(2)], config)
    verdicts = {v.run_id.rsplit(".", 1)[-1]: v for v in audit_campaign(out)}
    assert verdicts["t0"].skill_use.read_given and not verdicts["t1"].skill_use.read_given
    assert verdicts["t0"].skill_use.given == ("sofa-score",)
    assert all(v.publishable for v in verdicts.values()), [v.reasons for v in verdicts.values()]
    printed = CliRunner().invoke(app, ["audit", str(out)]).output
    assert "skill use, with-skill: 2 runs; 1/2 opened a skill they were given; 0 opened a skill not given" in printed
