"""Encounters: parsing, per-turn limits, turn limit, transcript and the cost ledger."""

import json

from clinbench.dx.agents import ScriptedAgent
from clinbench.dx.costs import PriceTable
from clinbench.dx.encounter import parse_turn, run_encounter, transcript_jsonl
from clinbench.dx.gatekeeper import OfflineGatekeeper


def play(case, tmp_path, lines, **kw):
    script = tmp_path / "script.txt"
    script.write_text("\n".join(lines) + "\n")
    return run_encounter(case, ScriptedAgent(script), OfflineGatekeeper(case), PriceTable.bundled(), **kw)


def test_parse_tags_and_json():
    t = parse_turn("I will ask. <question>Any fever?</question>\n<question>Smoker?</question>")
    assert t.questions == ["Any fever?", "Smoker?"] and not t.tests and t.diagnosis is None
    assert parse_turn("<TEST>CBC</TEST><test> lipase </test>").tests == ["CBC", "lipase"]
    assert parse_turn('{"tests": ["CBC", "CRP"]}').tests == ["CBC", "CRP"]
    assert parse_turn('Sure: {"action": "diagnosis", "content": "Pneumonia"}').diagnosis == "Pneumonia"
    assert parse_turn('{"action": "question", "content": "Any cough?"}').questions == ["Any cough?"]
    assert parse_turn("I think it is pneumonia.").empty


def test_scripted_encounter_hand_computed_cost(case_by_id, tmp_path):
    # Visits: turns 1-2 (questions) are one visit, turn 4 a second one -> 2 x $300.
    # Tests: CBC 85025 $30 + CRP 86140 $20 (turn 3), CT abdomen/pelvis with contrast 74177 $800 (turn 5).
    # Total = 600 + 30 + 20 + 800 = $1,450.
    result = play(case_by_id[1], tmp_path, [
        "# appendicitis work-up",
        "<question>Does he smoke?</question><question>Any allergies?</question>",
        "<question>Where did the pain start?</question>",
        "<test>CBC</test><test>C-reactive protein</test>",
        "<question>Any urinary symptoms?</question>",
        "<test>CT abdomen and pelvis with contrast</test>",
        "<diagnosis>Acute appendicitis</diagnosis>",
    ])
    assert result.diagnosis == "Acute appendicitis" and not result.forced and result.turns == 6
    assert result.ledger.visits == 2
    assert [t.price for t in result.ledger.tests] == [30.0, 20.0, 800.0]
    assert result.cost == 1450.0
    assert result.ledger.coverage == 1.0
    events = [json.loads(line) for line in transcript_jsonl(result).splitlines()]
    assert [e["event"] for e in events].count("visit") == 2
    assert sum(e["cost"] for e in events if "cost" in e) == 1450.0
    answers = [e for e in events if e["event"] in ("question", "test")]
    assert all(e["source"] in ("REAL", "SYNTHETIC", "REFUSED") for e in answers)
    assert answers[0]["source"] == "REAL" and "does not smoke" in answers[0]["reply"]


def test_refused_and_unmatched_orders(case_by_id, tmp_path):
    result = play(case_by_id[1], tmp_path, [
        "<test>blood work</test><test>Zyglorp assay</test>",
        "<diagnosis>Appendicitis</diagnosis>",
    ])
    # the vague order is refused and free; the unknown one is answered and charged the default
    assert [t.order for t in result.ledger.tests] == ["Zyglorp assay"]
    assert result.cost == 100.0 and result.ledger.unmatched == 1 and result.ledger.coverage == 0.0


def test_per_turn_limits_and_mixed_turns(case_by_id, tmp_path):
    result = play(case_by_id[1], tmp_path, [
        "".join(f"<question>Question {i}?</question>" for i in range(7)),
        "".join(f"<test>{t}</test>" for t in ["CBC", "lipase", "urinalysis", "CRP", "BMP"]),
        "<question>Any fever?</question><test>CBC</test>",
        "<diagnosis>Appendicitis</diagnosis>",
    ])
    events = result.transcript
    assert sum(e["event"] == "question" for e in events) == 5
    assert sum(e["event"] == "test" for e in events) == 3
    assert any(e["event"] == "format_error" and "not both" in e["text"] for e in events)
    assert result.ledger.visits == 1 and len(result.ledger.tests) == 3


def test_turn_limit_forces_a_diagnosis(case_by_id, tmp_path):
    result = play(case_by_id[1], tmp_path, ["<question>Any fever?</question>"] * 10, max_turns=3)
    assert result.forced and result.diagnosis == "" and result.turns == 4
    assert result.ledger.visits == 1  # three consecutive question turns
    assert result.transcript[-1] == {"turn": 4, "event": "diagnosis", "content": "", "forced": True}
