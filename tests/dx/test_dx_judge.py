"""The judge: rubric verdicts, calibration agreement, the LLM judge over a scripted server."""

import pytest

from tests.agents.scripted_server import ScriptedServer
from clinbench.dx.judge import LLMJudge, OfflineJudge, calibrate, calibration_pairs, cohen_kappa
from clinbench.dx.models import RoleModel, RoleSpec


@pytest.fixture(scope="module")
def judge():
    return OfflineJudge()


def test_calibration_set_is_large_and_spans_the_rubric():
    pairs = calibration_pairs()
    assert len(pairs) >= 150
    assert {p.expected for p in pairs} == {1, 2, 3, 4, 5}
    kinds = {p.kind for p in pairs}
    assert {"synonym", "more_specific", "less_specific", "wrong_site", "wrong_etiology", "unrelated"} <= kinds


@pytest.mark.slow
def test_offline_judge_agrees_with_calibration_set(judge):
    cal = calibrate(judge, calibration_pairs())
    assert cal.kappa_correct >= 0.6
    assert cal.exact_agreement >= 0.5


@pytest.mark.parametrize("reference,candidate,low,high", [
    ("Acute pulmonary embolism", "Acute PE", 5, 5),
    ("Acute inferior ST-elevation myocardial infarction", "Inferior STEMI", 5, 5),
    ("Acute appendicitis", "Acute suppurative appendicitis", 5, 5),
    ("Aneurysmal subarachnoid hemorrhage", "Subarachnoid hemorrhage", 4, 4),
    ("Community-acquired pneumonia of the right lower lobe", "Left lower lobe pneumonia", 3, 3),
    ("Acute type B aortic dissection", "Acute type A aortic dissection", 3, 3),
    ("Acute inferior ST-elevation myocardial infarction", "NSTEMI", 2, 3),
    ("Acute calculous cholecystitis", "Pulmonary embolism", 1, 2),
])
def test_rubric_examples(judge, reference, candidate, low, high):
    assert low <= judge.score(reference, candidate).score <= high


def test_empty_diagnosis_scores_one(judge):
    assert judge.score("Acute appendicitis", "").score == 1


def test_cohen_kappa_by_hand():
    # 10 items: agree on 4 yes and 4 no, disagree on 2 -> po = 0.8; pa = pb = 0.5 -> pe = 0.5; kappa = 0.6
    a = [True] * 5 + [False] * 5
    b = [True] * 4 + [False] + [True] + [False] * 4
    assert cohen_kappa(a, b) == pytest.approx(0.6)


def test_llm_judge_through_the_openai_client():
    script = [{"tool": "grade", "arguments": {"score": 4, "reason": "site qualifier missing"}}]
    with ScriptedServer(script) as server:
        chat = RoleModel(RoleSpec("judge", "judge-model", base_url=server.base_url, api_key="test"))
        verdict = LLMJudge(chat).score("Left lower lobe pneumonia", "Pneumonia")
        body = server.requests[-1]
    assert verdict.score == 4 and verdict.correct and verdict.reason == "site qualifier missing"
    assert body["model"] == "judge-model"
    assert "Left lower lobe pneumonia" in body["messages"][-1]["content"]
    assert chat.usage.requests == 1 and "temperature" not in body  # sent only when set


def _set(name):
    from clinbench.dx.judge import LABELLED_SETS

    return calibration_pairs(LABELLED_SETS[name])


@pytest.mark.slow
def test_held_out_check_set_has_kappa_at_least_0_8(judge):
    # Issue 24: 61 pairs written after the judge's rules (synonyms, more and less specific,
    # wrong organ, right organ wrong cause); kappa was 0.57 before the ICD-10-CM rule and
    # the diagnosis abbreviations, 0.83 after.
    pairs = _set("check")
    assert len(pairs) >= 60 and {"synonym", "more_specific", "less_specific", "wrong_organ", "wrong_cause"} <= {
        p.kind for p in pairs}
    assert calibrate(judge, pairs).kappa_correct >= 0.8


def test_specificity_is_one_icd_rule_on_40_hand_labelled_pairs(judge):
    # Issue 29 item 8: a broader code is "less specific" (4), a narrower one correct (5), a
    # sibling under another parent not correct. Before: peptic ulcer 3, DVT of the lower
    # extremity 3, cellulitis of the lower limb 5, pulmonary embolism for COPD 3.
    pairs = _set("specificity")
    assert len(pairs) == 40
    cal = calibrate(judge, pairs)
    assert cal.kappa_correct >= 0.8 and len(cal.disagreements) <= 2
    assert judge.score("Bleeding duodenal ulcer", "bleeding peptic ulcer").score == 4
    assert judge.score("Acute deep vein thrombosis of the left femoral and popliteal veins",
                       "DVT of the lower extremity").score == 4
    assert judge.score("Cellulitis of the right lower leg", "cellulitis of the lower limb").score == 4
    assert judge.score("Acute exacerbation of chronic obstructive pulmonary disease", "pulmonary embolism").score <= 2


def test_the_llm_judge_reads_the_rubric_from_one_versioned_file():
    from clinbench.dx.prompts import prompt

    rubric = prompt("judge")
    assert rubric.version == "judge-2" and "| 3 | partially correct |" in rubric.text
    script = [{"tool": "grade", "arguments": {"score": 3, "reason": "wrong site"}}]
    with ScriptedServer(script) as server:
        chat = RoleModel(RoleSpec("judge", "judge-model", base_url=server.base_url, api_key="test"))
        verdict = LLMJudge(chat).score("Left lower lobe pneumonia", "Right lower lobe pneumonia")
        system = server.requests[-1]["messages"][0]["content"]
    assert system == rubric.text and verdict.prompt == "judge-2"


def test_the_judges_words_fold_spelling_and_name_body_parts_as_icd_10_cm_does():
    # traced by hand: British spellings folded (haem, oe), then ICD-10-CM's wording (bleeding and hemorrhagic ->
    # hemorrhage, arms -> upper limb, extremities -> limb, leg -> lower limb, clot -> thrombosis, emboli ->
    # embolism), stop words dropped, each word stemmed ('hemorrhage' -> 'hemorrhag')
    from clinbench.dx.specificity import words

    assert words("Hemorrhagic bleeding of the arms, extremities; clot emboli") == {
        "hemorrhag", "upper", "limb", "thrombosis", "embolism"}
    assert words("Haemorrhage of the oesophagus, leg oedema") == {"hemorrhag", "esophagus", "lower", "limb", "edema"}
    assert words("Embolism and thrombosis of the legs") == {"thrombosis", "lower", "limb"}
    assert words("bleeding") == words("hemorrhagic") == words("hemorrhage") == {"hemorrhag"}
    assert words("armchair legend") == {"armchair", "legend"}  # a word holding 'arm' or 'leg' is not a limb


@pytest.mark.parametrize("score, grade", [(5, 5), ("5", 5), (" 4 ", 4), (3.0, 3), ("\uff15", 5), ("\u00b2", None),
                                          (True, None), ("6", None), (2.5, None), ("five", None), (None, None)])
def test_a_judge_models_score_is_a_whole_number_from_1_to_5_or_no_grade(score, grade):
    # '²' is a digit (str.isdigit) that int() cannot read: it raised ValueError out of the judge, where a grade
    # without a score is the model's bad reply, asked again
    from clinbench.dx.judge import _grade

    assert _grade({"score": score}) == grade
