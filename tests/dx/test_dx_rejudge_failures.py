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


def test_a_failure_whose_evidence_cannot_be_read_is_carried_and_hostile_evidence_stops_nothing(tmp_path, cases):
    """Six encounters, one answered right, five the agent failed; the failures' score.json is missing, not JSON,
    over the 16 MiB cap, a FIFO, and a symbolic link to a file outside the evidence. `dx rejudge` waited on the
    FIFO for ever; without it, it skipped the three unreadable ones and carried the linked file's text into the new
    evidence: the re-judged group held 2 runs at 50.0% against the original's 6 at 16.7%. Now each failure is
    carried as agent-failed: 6 runs, 16.7%, the same mean judge, within 60 s, with no traceback; an answered
    encounter whose score.json is a symlink becomes a harness error saying why, nothing of the linked file copied."""
    import os
    import subprocess
    import sys

    from clinbench.untrusted import MAX_CHARS

    out = tmp_path / "c"
    script = tmp_path / "guess.txt"
    script.write_text("<diagnosis>Appendicitis</diagnosis>\n")
    run_dx(cases[:6], DxConfig(agent=f"scripted:{script}"), out)
    outside = tmp_path / "outside.json"
    outside.write_text('{"case_id": "1", "reference": "SECRET-OUTSIDE", "diagnosis": "SECRET-OUTSIDE"}')
    with Store.open(out).connect() as con:
        con.execute("UPDATE runs SET status = 'agent-failed', error = 'no diagnosis', reward = 0, judge_score = NULL")
        right = con.execute("SELECT min(run_id) FROM runs").fetchone()[0]
        con.execute("UPDATE runs SET status = 'ok', reward = 1, judge_score = 5 WHERE run_id = ?", [right])
        failed = [r[0] for r in con.execute("SELECT evidence_dir FROM runs WHERE status = 'agent-failed' "
                                            "ORDER BY run_id").fetchall()]
    scores = [out / ev / "score.json" for ev in failed]
    for score in scores:
        score.unlink()
    scores[1].write_text("{not json")
    with scores[2].open("wb") as fh:
        fh.truncate(MAX_CHARS + 1)
    os.mkfifo(scores[3])
    scores[4].symlink_to(outside)
    before = {s.agent: (s.runs, s.accuracy, s.mean_judge) for s in accuracy.summarise(accuracy.dx_runs(out))}
    assert before["scripted-guess"] == (6, 1 / 6, 10 / 6)
    cli = subprocess.run([sys.executable, "-m", "clinbench", "dx", "rejudge", str(out), "--judge", "offline"],
                         capture_output=True, text=True, timeout=60)
    assert cli.returncode == 0 and "Traceback" not in cli.stderr, cli.stderr
    after = {s.agent: (s.runs, s.accuracy, s.mean_judge) for s in accuracy.summarise(accuracy.dx_runs(out))}
    assert after["scripted-guess (judge=offline (rejudged))"] == before["scripted-guess"]
    rejudged = [r for r in Store.open(out).runs() if r["run_id"].startswith(tuple(f.split("/")[-1] for f in failed))
                and "~judge-" in r["run_id"]]
    assert len(rejudged) == 5 and all(r["status"] == "agent-failed" and r["reward"] == 0 for r in rejudged)

    # an answered encounter whose score.json links outside its evidence: a harness error, never the linked bytes
    answered = tmp_path / "answered"
    (row,) = [r.to_json() for r in run_dx(cases[:1], DxConfig(agent=f"scripted:{script}"), answered)]
    link = answered / row["evidence_dir"] / "score.json"
    link.unlink()
    link.symlink_to(outside)
    (new,) = rejudge(answered, "offline")
    assert str(new.status) == "harness-error" and "score.json cannot be read" in new.error
    written = "".join((answered / new.evidence_dir / name).read_text() for name in ("score.json", "manifest.json"))
    assert "SECRET-OUTSIDE" not in written
