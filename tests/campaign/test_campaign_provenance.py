"""Frozen provenance: each run records the agent program's version and the model that answered;
a campaign refuses another version of an agent, and a comparison refuses runs that mix them."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from clinbench.agents import provenance
from clinbench.agents.claude_code import parse_claude_stream
from clinbench.agents.factory import AgentOptions
from tests.agents.scripted_server import ScriptedServer
from clinbench.campaign.campaign import CampaignError, run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.records import mixed
from clinbench.campaign.matrix import RunSpec
from clinbench.records.store import Store
from clinbench.cli import app


def test_program_version_is_the_first_line_the_program_prints(tmp_path, monkeypatch):
    from clinbench.agents.codex import CodexAgent
    from clinbench.agents.sandbox import NoSandbox

    fake = tmp_path / "bin" / "codex"
    fake.parent.mkdir()
    fake.write_text("#!/bin/sh\necho 'codex-cli 1.2.3 (build 7)'\necho more\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake.parent}:/usr/bin:/bin")
    assert CodexAgent(sandbox=NoSandbox()).version() == "codex-cli 1.2.3 (build 7)"
    assert provenance.version_line("", "", 1) is None and provenance.version_line("\n  \n", "", 0) is None


def test_claude_model_slot_overrides_show_as_served_models():
    events = [{"type": "assistant", "message": {"model": "claude-sonnet-4-5", "content": [], "usage": {}}},
              {"type": "assistant", "message": {"model": "claude-haiku-4-5", "content": [], "usage": {}}},
              {"type": "result", "result": "done", "usage": {"input_tokens": 1, "output_tokens": 1}}]
    parsed = parse_claude_stream("\n".join(json.dumps(e) for e in events))
    assert parsed.served_models == {"claude-sonnet-4-5", "claude-haiku-4-5"}


def test_mixed_names_what_a_set_of_runs_mixes():
    runs = [{"agent": "claude", "model": "sonnet", "agent_version": "2.1.119 (Claude Code)", "served_model": "sonnet"},
            {"agent": "claude", "model": "sonnet", "agent_version": "2.1.220 (Claude Code)", "served_model": "sonnet,haiku"},
            {"agent": "codex", "model": "gpt-5.5", "agent_version": "codex-cli 0.171.0", "served_model": None}]
    assert mixed(runs) == ["claude ran as 2.1.119 (Claude Code) and 2.1.220 (Claude Code)",
                                      "claude model sonnet was answered by sonnet / sonnet,haiku"]
    assert mixed(runs[2:]) == []


def _campaign(db, out, script, specs, **kw):
    with ScriptedServer(script) as srv:
        config = CampaignConfig(db=str(db), out=str(out), options=AgentOptions(base_url=srv.base_url))
        return run_campaign(specs, config, **kw)


@pytest.mark.slow
def test_runs_record_version_and_served_model_and_a_mixed_comparison_is_refused(tiny_db, tmp_path):
    out = tmp_path / "camp"
    write = {"tool": "write_output", "arguments": {"sql": "SELECT 1 AS stay_id"}}
    script = [write, {"text": "done"},  # no-skill: answered as asked
              {**write, "served_model": "m-routed"}, {"text": "done", "served_model": "m-routed"}]
    _campaign(tiny_db, out, script, [RunSpec("mimic-sofa-24h", c, "native", "llm", "m", 0)
                                     for c in ("no-skill", "with-skill")])
    runs = {r["condition"]: r for r in Store.open(out).runs()}
    from clinbench import __version__

    assert {r["agent_version"] for r in runs.values()} == {f"clinbench llm agent {__version__}"}
    assert (runs["no-skill"]["served_model"], runs["with-skill"]["served_model"]) == ("m", "m-routed")
    refused = CliRunner().invoke(app, ["stats", str(out), "--compare", "no-skill:with-skill"])
    assert "mix what ran: llm model m was answered by m / m-routed" in str(refused.exception)
    allowed = CliRunner().invoke(app, ["stats", str(out), "--compare", "no-skill:with-skill", "--allow-mixed", "--json"])
    assert allowed.exit_code == 0 and json.loads(allowed.output)["condition_b"] == "with-skill"
    # the report applies the same rule: no page is written for the refused comparison
    page = tmp_path / "report.html"
    refused = CliRunner().invoke(app, ["report", str(out), "--html", str(page)])
    assert "mix what ran: llm model m was answered by m / m-routed" in str(refused.exception) and not page.exists()
    written = CliRunner().invoke(app, ["report", str(out), "--html", str(page), "--allow-mixed"])
    assert written.exit_code == 0 and "m-routed" in page.read_text()


@pytest.mark.slow
def test_a_campaign_refuses_runs_of_another_agent_version(tiny_db, tmp_path, monkeypatch):
    out = tmp_path / "camp"
    script = [{"text": "nothing"}] * 4
    _campaign(tiny_db, out, script, [RunSpec("mimic-sofa-24h", "no-skill", "native", "llm", "m", 0)])
    monkeypatch.setattr(provenance, "current_version", lambda agent, options=None: "clinbench llm agent 9.9")
    later = [RunSpec("mimic-sofa-24h", "no-skill", "native", "llm", "m", 1)]
    with pytest.raises(CampaignError, match=r"its llm runs were made by clinbench llm agent .+, this machine runs "
                                            r"clinbench llm agent 9.9; pass --out a new folder, or --allow-mixed"):
        _campaign(tiny_db, out, script, later)
    assert len(Store.open(out).runs()) == 1  # nothing was recorded
    _campaign(tiny_db, out, script, later, allow_mixed=True)
    assert len(Store.open(out).runs()) == 2
