"""The offline judge and lists or negations of diagnoses (review 49c, item 2).

Before the fix only "or"/"vs"/";" lists were split: over the 32 demo cases "A and B and C" (the
reference and two other cases' references) was judged correct in 28, "A, B, C" in 27, "A / B /
C" in 25, and "not A", "A excluded", "no evidence of A" scored 5 in all 32 ("more specific").
"""

from __future__ import annotations

import pytest

from clinbench.dx.cases import demo_cases
from clinbench.dx.judge import OfflineJudge, members


@pytest.fixture(scope="module")
def judge():
    return OfflineJudge()


@pytest.fixture(scope="module")
def refs():
    return [c.final_diagnosis for c in demo_cases()]


LISTS = {"and": "{a} and {b} and {c}", "comma": "{a}, {b}, {c}", "slash": "{a} / {b} / {c}",
         "plus": "{b} + {a}", "ampersand": "{a} & {b}", "sentences": "{b}. {a}.", "line": "{a}\u2028{b}"}


@pytest.mark.parametrize("form", sorted(LISTS))
def test_a_list_joined_without_or_is_a_list(judge, refs, form):
    correct = [f for i, a in enumerate(refs)
               if judge.score(a, f := LISTS[form].format(a=a, b=refs[(i + 7) % 32], c=refs[(i + 13) % 32])).correct]
    assert correct == []


NEGATIONS = ["not {a}", "{a} excluded", "no evidence of {a}", "{a} ruled out", "{a} unlikely", "{b} without {a}",
             "{b} rather than {a}"]


@pytest.mark.parametrize("form", NEGATIONS)
def test_a_negated_reference_scores_1(judge, refs, form):
    scores = {judge.score(a, form.format(a=a, b=refs[(i + 7) % 32])).score for i, a in enumerate(refs)}
    assert scores == {1}


def test_every_demo_reference_scores_5_against_itself(judge, refs):
    assert {a: judge.score(a, a).score for a in refs} == {a: 5 for a in refs}


def test_an_added_unrelated_disease_is_3_and_honest_specifics_stay_5(judge):
    assert judge.score("Acute appendicitis", "Acute appendicitis with acute cholecystitis").score == 3
    assert judge.score("Acute appendicitis", "Acute cholecystitis (appendicitis)").score == 3
    assert judge.score("Pulmonary embolism", "Acute pulmonary embolism").score == 5
    assert judge.score("Acute appendicitis", "Acute appendicitis without perforation").score == 5
    assert judge.score("Acute appendicitis", "Perforated appendicitis with abscess").score >= 4  # K35.33 names both
    assert judge.score("Hyperkalemia", "Hyperkalemia due to acute kidney injury").score == 5  # its cause
    assert judge.score("Crohn's disease", "Crohn's disease and regional ileitis").score == 5  # K50.0 names both


@pytest.mark.parametrize("name", ["Acute embolism and thrombosis of deep veins of left lower extremity",
                                  "Atrial fibrillation and flutter", "Calculus of gallbladder and bile duct with acute cholecystitis",
                                  "Acute deep vein thrombosis of the left femoral and popliteal veins",
                                  "Community-acquired pneumonia of the right lower lobe, with sepsis",
                                  "Septic arthritis due to Staph. aureus", "Acute appendicitis, not cholecystitis"])
def test_one_diagnosis_with_and_in_its_name_is_one_member(name):
    assert members(name) == [name]
