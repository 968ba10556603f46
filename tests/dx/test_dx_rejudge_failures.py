"""dx rejudge keeps the agent's failures: a re-judged group counts the encounters the agent failed
(as agent-failed, reward 0, no judge request), as the original group does."""

from clinbench.dx.rejudge import rejudge
from clinbench.dx.run import DxConfig, run_dx
from clinbench.records.store import Store
from clinbench.stats import accuracy


def test_rejudged_group_keeps_agent_failures(tmp_path, cases):
    script = tmp_path / "guess.txt"
    script.write_text("<diagnosis>Appendicitis</diagnosis>\n")
    out = tmp_path / "c"
    run_dx(cases[:4], DxConfig(agent=f"scripted:{script}"), out)
    with Store.open(out).connect() as con:  # the wrong runs become the agent's failures (one as an older store's 'error')
        con.execute("UPDATE runs SET status = 'agent-failed', error = 'no diagnosis' WHERE reward = 0")
        con.execute("UPDATE runs SET status = 'error', reward = NULL, judge_score = NULL "
                    "WHERE run_id = (SELECT min(run_id) FROM runs WHERE status = 'agent-failed')")
    new = rejudge(out, "offline")
    assert len(new) == 4 and sum(r.status == "agent-failed" for r in new) == 3
    assert all(r.reward == 0.0 and r.judge_score is None for r in new if r.status == "agent-failed")
    after = {s.agent: (s.runs, s.accuracy) for s in accuracy.summarise(accuracy.dx_runs(out))}
    # before the fix: the re-judged group held the 1 answered run, 100.0%
    assert after["scripted-guess (judge=offline (rejudged))"] == (4, 0.25)
    assert rejudge(out, "offline") == []  # carried failures are done ones too


def test_a_rejudge_whose_llm_judge_cannot_grade_is_graded_offline_as_in_dx_run(tmp_path, cases):
    # one rule for dx run and dx rejudge (dx.run.grade): before, the re-judged run became agent-failed, 0
    import json
    import sys
    from pathlib import Path

    from clinbench.dx.judge import make_judge
    from clinbench.dx.models import RoleSpec
    from clinbench.dx.run import JUDGE_FALLBACK

    sys.path.insert(0, str(Path(__file__).parent))
    from model_server import ModelServer, text

    case = cases[0]
    script = tmp_path / "oracle.txt"
    script.write_text(f"<diagnosis>{case.final_diagnosis}</diagnosis>\n")
    out = tmp_path / "c"
    run_dx([case], DxConfig(agent=f"scripted:{script}"), out)
    with ModelServer([text("A fine diagnosis."), text("Still prose.")]) as j:
        (new,) = rejudge(out, "llm", RoleSpec("judge", "j", base_url=j.base_url, api_key="k"))
    assert (str(new.status), new.judge_score) == ("ok", make_judge("offline").score(case.final_diagnosis,
                                                                                   case.final_diagnosis).score)
    assert json.loads((out / new.evidence_dir / "score.json").read_text())["judge_reason"].startswith(JUDGE_FALLBACK)


def test_a_rejudge_keeps_the_audits_verdict(tmp_path, cases):
    # found by a review: the re-judged rows were all publishable and uncharged, so a charged agent got its
    # accuracy back in the re-judged group (59.4% of 64 against 46.7% of 60)
    script = tmp_path / "guess.txt"
    script.write_text("<diagnosis>Appendicitis</diagnosis>\n")
    out = tmp_path / "c"
    run_dx(cases[:4], DxConfig(agent=f"scripted:{script}"), out)
    with Store.open(out).connect() as con:
        right = con.execute("SELECT min(run_id) FROM runs WHERE reward = 1").fetchone()[0]
        con.execute("UPDATE runs SET publishable = false, flag_charged = true, flag_reason = 'wrote outside' "
                    "WHERE run_id = ?", [right])
    before = {s.agent: (s.runs, s.accuracy) for s in accuracy.summarise(accuracy.dx_runs(out))}
    rejudge(out, "offline")
    after = {s.agent: (s.runs, s.accuracy) for s in accuracy.summarise(accuracy.dx_runs(out))}
    assert after["scripted-guess (judge=offline (rejudged))"] == before["scripted-guess"] == (4, 0.0)
    flagged = [r for r in Store.open(out).runs() if r["flag_reason"] == "wrote outside"]
    assert len(flagged) == 2 and all(r["flag_charged"] and not r["publishable"] for r in flagged)
