"""Every number is from the data it claims, and failures say what happened (issue 14), through the CLI."""

from __future__ import annotations

import json
import subprocess
import sys

import duckdb
import pytest

from campaign_fixtures import build_tiny_db, stamp
from clinbench.records.store import Store

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)


def _cli(*args, timeout=300):
    return subprocess.run([sys.executable, "-m", "clinbench", *args], capture_output=True, text=True, timeout=timeout)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def test_a_different_database_is_refused_by_run_and_nothing_is_recorded(tiny_db, tmp_path):
    out = tmp_path / "c"
    first = _cli("run", "--db", str(tiny_db), "--out", str(out), "--tasks", "mimic-meld-24h", "--agent", "reference")
    assert first.returncode == 0, first.stderr
    other = build_tiny_db(tmp_path / "other.duckdb")
    with duckdb.connect(str(other)) as con:  # other data: one MELD value differs
        con.execute("UPDATE mimiciv_derived.target_meld_24h SET meld = 30 WHERE stay_id = 200")
        stamp(con)
    res = _cli("run", "--db", str(other), "--out", str(out), "--tasks", "mimic-meld-24h", "--agent", "reference,empty")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    msg = _one_line(res.stderr)
    assert f"error: campaign {out} is bound to other data: --db {other} is a different database" in msg
    assert "(reference mimiciv_derived.target_meld_24h differs); pass --out a new folder" in msg
    assert f"clinbench rescore {out} --db {other} --new-data" in msg
    assert [r["agent"] for r in Store.open(out).runs()] == ["reference"]  # the empty run was not recorded


def test_a_run_whose_agent_would_see_other_tables_than_the_campaigns_earlier_runs_is_refused(tiny_db, tmp_path):
    """The references are the same, but an agent would now see another derived table: pooling its runs with the
    earlier ones would compare two setups. A table no agent sees (a helper, a reference) changes nothing."""
    out = tmp_path / "c"
    assert _cli("run", "--db", str(tiny_db), "--out", str(out), "--tasks", "mimic-meld-24h",
                "--agent", "reference").returncode == 0
    [first] = Store.open(out).runs()
    assert len(first["workspace"]) == 32
    with duckdb.connect(str(tiny_db)) as con:  # tables no agent sees: a helper only a reference reads, a reference
        con.execute("CREATE OR REPLACE TABLE mimiciv_derived.antibiotic_culture_pairs (subject_id INTEGER)")
        con.execute("CREATE OR REPLACE TABLE mimiciv_derived.target_charlson (subject_id INTEGER)")
    res = _cli("run", "--db", str(tiny_db), "--out", str(out), "--tasks", "mimic-meld-24h", "--agent", "reference,empty")
    assert res.returncode == 0, res.stderr
    with duckdb.connect(str(tiny_db)) as con:  # a derived table an agent of a standard task would see
        con.execute("CREATE TABLE mimiciv_derived.my_cohort (stay_id INTEGER)")
    res = _cli("run", "--db", str(tiny_db), "--out", str(out), "--tasks", "mimic-meld-24h", "--agent", "reference,empty",
               "--trials", "2")
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert (f"error: campaign {out}: an agent of mimic-meld-24h@native would see other tables or columns in "
            f"{tiny_db} than the campaign's earlier runs of it saw") in _one_line(res.stderr)
    assert "pass --out a new folder" in _one_line(res.stderr)
    runs = Store.open(out).runs()
    assert sorted(r["agent"] for r in runs) == ["empty", "reference"]  # nothing new recorded
    assert {r["workspace"] for r in runs} == {first["workspace"]}


def test_a_changed_database_is_refused_by_rescore_until_new_data_marks_the_runs(tiny_db, tmp_path):
    out = tmp_path / "c"
    assert _cli("run", "--db", str(tiny_db), "--out", str(out), "--tasks", "mimic-meld-24h",
                "--agent", "reference").returncode == 0
    with duckdb.connect(str(tiny_db)) as con:  # the database at the same path re-made with other values
        con.execute("UPDATE mimiciv_derived.target_meld_24h SET meld = meld + 7")
        stamp(con)
    res = _cli("rescore", str(out))
    assert res.returncode == 2 and "Traceback" not in res.stderr
    assert (f"the database at {tiny_db} changed since the campaign's runs were scored against it "
            "(reference mimiciv_derived.target_meld_24h differs); pass --new-data") in _one_line(res.stderr)
    assert Store.open(out).runs()[0]["reward"] == 1.0  # untouched

    res = _cli("rescore", str(out), "--new-data")
    assert res.returncode == 0, res.stderr
    run = Store.open(out).runs()[0]
    assert run["reward"] == 0.0  # both MELD values are now 7 off
    assert run["rescored_against"].startswith(str(tiny_db))
    again = _cli("run", "--db", str(tiny_db), "--out", str(out), "--tasks", "mimic-meld-24h", "--agent", "reference")
    assert again.returncode == 0, again.stderr  # rebound: the new data is the campaign's data now


def test_harness_errors_are_excluded_from_the_headline_and_counted(tiny_db, tmp_path):
    out = tmp_path / "c"
    base = ("run", "--db", str(tiny_db), "--out", str(out), "--tasks", "mimic-meld-24h,mimic-sofa-24h")
    assert _cli(*base, "--conditions", "no-skill,with-skill", "--agent", "reference").returncode == 0
    # the endpoint answers the preflight, then refuses the key: a harness failure, not the agent's
    from tests.agents.scripted_server import ScriptedServer

    denied = {"status": 401, "body": {"error": {"message": "invalid api key", "type": "auth"}}}
    with ScriptedServer([{"text": "ok"}, denied, denied]) as srv:
        res = _cli(*base, "--conditions", "no-skill", "--agent", "llm", "--model", "m", "--base-url", srv.base_url)
    assert res.returncode == 0, res.stderr
    msg = _one_line(res.stdout)
    assert "2 run(s) done (2 harness-error)" in msg
    assert "2 harness error(s): not scored, left out of every statistic: 2 × openai endpoint refused the request: HTTP 401" in msg
    runs = Store.open(out).runs()
    llm = [r for r in runs if r["agent"] == "llm"]
    assert [r["status"] for r in llm] == ["harness-error"] * 2 and all(r["reward"] is None for r in llm)

    stats = _cli("stats", str(out), "--json", "--draws", "200", "--permutation-draws", "200")
    assert stats.returncode == 0, stats.stderr
    data = json.loads(stats.stdout)
    # the headline holds the 4 reference runs (reward 1.0 each); the 2 llm runs are counted apart
    assert (data["runs_a"], data["runs_b"], data["mean_a"], data["missing_reward"]) == (2, 2, 1.0, 0)
    assert data["harness_errors"] == 2
    text = _cli("stats", str(out), "--draws", "200", "--permutation-draws", "200")
    assert "0 agent failures without a reward counted as 0; 2 harness errors left out" in _one_line(text.stdout)


def test_operational_spec_on_a_task_without_one_is_refused_and_a_matrix_skips_it(tiny_db, tmp_path, monkeypatch, capsys):
    # every shipped task has an operational spec (issue 19): run in-process on a catalogue where MELD has none
    from clinbench.cli import main
    from clinbench.derive import catalogue

    shipped = catalogue.load_catalogue()
    without = {**shipped, "mimic-meld-24h": shipped["mimic-meld-24h"].replace(operational_spec=False)}
    monkeypatch.setattr(catalogue, "_cached_catalogue", lambda: tuple(without.items()))
    assert not catalogue.get_task("mimic-meld-24h").operational_spec

    def run(*args):
        monkeypatch.setattr(sys, "argv", ["clinbench", *args])
        try:
            main()
        except SystemExit as exc:
            code = exc.code
        else:
            code = 0
        out = capsys.readouterr()
        return code, _one_line(out.out + out.err)

    code, text = run("run", "--db", str(tiny_db), "--out", str(tmp_path / "c"), "--tasks", "mimic-meld-24h",
                     "--conditions", "operational-spec", "--agent", "reference")
    assert code == 2
    assert "error: no task offers the condition asked for: mimic-meld-24h × operational-spec cannot run" in text
    assert not (tmp_path / "c").exists()
    code, text = run("run", "--db", str(tiny_db), "--out", str(tmp_path / "m"), "--tasks", "mimic-meld-24h",
                     "--conditions", "no-skill,operational-spec", "--agent", "reference")
    assert code == 0, text
    assert "skipped 1 unsupported task × condition pair(s): mimic-meld-24h × operational-spec" in text
    assert [r["condition"] for r in Store.open(tmp_path / "m").runs()] == ["no-skill"]


def test_llm_preflight_stops_in_seconds_with_the_endpoints_answer(tiny_db, tmp_path):
    import time

    from tests.agents.scripted_server import ScriptedServer

    started = time.monotonic()
    res = _cli("run", "--db", str(tiny_db), "--out", str(tmp_path / "c"), "--tasks", "mimic-meld-24h",
               "--agent", "llm", "--model", "m", "--base-url", "http://127.0.0.1:9/v1")
    seconds = time.monotonic() - started
    assert res.returncode == 2 and seconds < 20, (seconds, res.stderr)  # 25.8 s per run before; ~3 s idle
    assert "error: endpoint check failed for --agent llm, model m at http://127.0.0.1:9/v1" in _one_line(res.stderr)
    assert "connection failed" in res.stderr and not (tmp_path / "c").exists()

    refused = [{"status": 404, "body": {"error": {"message": "model 'm' not found", "type": "invalid_request"}}}]
    with ScriptedServer(refused) as srv:
        res = _cli("run", "--db", str(tiny_db), "--out", str(tmp_path / "c"), "--tasks", "mimic-meld-24h",
                   "--agent", "llm", "--model", "m", "--base-url", srv.base_url)
    assert res.returncode == 2 and "HTTP 404" in res.stderr and "model 'm' not found" in res.stderr
    assert not (tmp_path / "c").exists()


def test_stats_and_report_refuse_a_store_pooling_runs_scored_against_different_data(tiny_db, tmp_path):
    out = tmp_path / "c"
    assert _cli("run", "--db", str(tiny_db), "--out", str(out), "--tasks", "mimic-meld-24h",
                "--conditions", "no-skill,with-skill", "--agent", "reference").returncode == 0
    with duckdb.connect(str(out / "results.duckdb")) as con:  # as a store merged from two campaigns would be
        con.execute("UPDATE runs SET data_digest = 'other' WHERE condition = 'with-skill'")
    for args in (["stats", str(out)], ["report", str(out), "--md", str(tmp_path / "r.md")]):
        res = _cli(*args)
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        assert (f"{out} pools runs scored against different data (2 versions of the reference of mimic-meld-24h)"
                in _one_line(res.stderr))
    assert not (tmp_path / "r.md").exists()


def test_runs_record_their_reference_profile_and_stats_and_report_refuse_to_pool_two(tiny_db, tmp_path):
    from clinbench.concepts.profiles import DEFAULT_PROFILE, PROFILES, label

    other = next(p for p in PROFILES if p != DEFAULT_PROFILE)
    out = tmp_path / "c"
    refused = _cli("run", "--db", str(tiny_db), "--out", str(out), "--task", "mimic-meld-24h", "--agent", "reference",
                   "--profile", other)
    assert refused.returncode == 2 and not out.exists()
    assert (f"built with reference profile {label(DEFAULT_PROFILE)}, not {label(other)}; run `clinbench concepts build "
            f"{tiny_db} --profile {other}`") in _one_line(refused.stderr)
    assert _cli("run", "--db", str(tiny_db), "--out", str(out), "--task", "mimic-meld-24h",
                "--condition", "no-skill,with-skill", "--agent", "reference").returncode == 0
    assert {r["profile"] for r in Store.open(out).runs()} == {label(DEFAULT_PROFILE)}
    with duckdb.connect(str(out / "results.duckdb")) as con:  # as a store merged from two campaigns would be
        con.execute("UPDATE runs SET profile = ? WHERE condition = 'with-skill'", [label(other)])
    pair = ", ".join(sorted([label(DEFAULT_PROFILE), label(other)]))
    for args in (["stats", str(out)], ["report", str(out), "--md", str(tmp_path / "r.md")]):
        res = _cli(*args)
        assert res.returncode == 2 and "Traceback" not in res.stderr, res.stderr
        assert f"{out} pools runs scored against different reference profiles ({pair})" in _one_line(res.stderr)
    assert not (tmp_path / "r.md").exists()
