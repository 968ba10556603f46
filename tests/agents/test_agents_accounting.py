"""Per-run accounting in a campaign: usage of failed runs is kept (also across --retry-agent-failed),
the cost comes from the price table, model seconds and harness seconds add up to the run."""

from __future__ import annotations

import json

import pytest

from clinbench.agents.factory import AgentOptions
from clinbench.agents.prices import cost_of, load_prices
from tests.agents.scripted_server import ScriptedServer
from clinbench.campaign.campaign import run_campaign
from clinbench.campaign.execute import CampaignConfig
from clinbench.campaign.matrix import RunSpec
from clinbench.records import Usage
from clinbench.records.store import Store
from clinbench.errors import AgentError

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

TASK = "mimic-sofa-24h"
PRICES = '[models."my-local*"]\ninput = 2.0\ncached_input = 0.5\noutput = 8.0\n'


def test_price_table_prices_cached_input_apart_and_knows_no_other_model(tmp_path):
    table = tmp_path / "prices.toml"
    table.write_text(PRICES)
    usage = Usage(input_tokens=1000, output_tokens=100, requests=2, cached_input_tokens=400)
    assert cost_of("my-local-7b", usage, table) == pytest.approx((600 * 2.0 + 400 * 0.5 + 100 * 8.0) / 1e6)
    assert cost_of("claude-sonnet-4-5", usage, table) is None  # not in this table: no guess
    assert cost_of("claude-sonnet-4-5", usage) == pytest.approx((600 * 3.0 + 400 * 0.3 + 100 * 15.0) / 1e6)
    table.write_text('[models."x"]\ninput = "cheap"\n')
    with pytest.raises(AgentError, match="model 'x' needs numeric input and output prices"):
        load_prices(table)


def test_a_failed_run_keeps_its_usage_and_a_retry_keeps_the_failed_attempts(sofa_db, tmp_path, monkeypatch):
    from clinbench.concepts.build import target_sql

    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path / "cache"))
    table = tmp_path / "prices.toml"
    table.write_text(PRICES)
    out = tmp_path / "camp"
    specs = [RunSpec(TASK, "no-skill", "native", "llm", "my-local-7b", 0), RunSpec(TASK, "no-skill", "native", "reference", "-", 0)]
    bad = [{"tool": "list_tables", "arguments": {}}, {"html": "<html><body>web UI</body></html>"}]
    with ScriptedServer(bad) as srv:
        config = CampaignConfig(db=str(sofa_db), out=str(out), options=AgentOptions(base_url=srv.base_url, prices=str(table)))
        summary = run_campaign(specs, config)
    assert summary.by_status == {"agent-failed": 1, "ok": 1}  # the campaign went on after the failure
    failed = next(r for r in Store.open(out).runs() if r["agent"] == "llm")
    assert (failed["status"], failed["requests"], failed["http_requests"], failed["input_tokens"]) == ("agent-failed", 1, 2, 20)
    assert failed["cost"] == pytest.approx((20 * 2.0 + 10 * 8.0) / 1e6)
    score = json.loads((out / failed["evidence_dir"] / "score.json").read_text())
    assert score["run_error"].startswith("endpoint answered HTTP 200 with a text/html body")
    manifest = json.loads((out / failed["evidence_dir"] / "manifest.json").read_text())
    assert manifest["limits"]["max_tokens"] == 4096 and set(manifest["timings"]) >= {"workspace", "agent", "score"}

    good = [{"tool": "write_output", "arguments": {"sql": target_sql("sofa-24h")}}, {"text": "Done."}]
    with ScriptedServer(good) as srv:
        config = CampaignConfig(db=str(sofa_db), out=str(out), options=AgentOptions(base_url=srv.base_url, prices=str(table)))
        summary = run_campaign(specs, config, retry_agent_failed=True)  # the server fixed: the user redoes its failures
    assert summary.by_status == {"ok": 1} and summary.skipped == 1
    redone = next(r for r in Store.open(out).runs() if r["agent"] == "llm")
    assert (redone["status"], redone["reward"], redone["requests"], redone["input_tokens"]) == ("ok", 1.0, 2, 40)
    assert (redone["earlier_requests"], redone["earlier_input_tokens"], redone["earlier_output_tokens"]) == (1, 20, 10)
    assert redone["model_seconds"] + redone["harness_seconds"] == pytest.approx(redone["elapsed_seconds"], rel=1e-6)
