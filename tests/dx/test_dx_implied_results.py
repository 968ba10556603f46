"""A test the record does not hold gets no normal result the record's own findings contradict: a stool
guaiac after black tarry stools, CSF xanthochromia after a CT showing subarachnoid blood. Such an order
gets the harness's "not available for this patient" refusal, never charged. Found by a review of the
normal rows added in cff01fa: case 10's "stool guaiac" was "negative", case 18's "CSF xanthochromia" was
"no xanthochromia"."""

from clinbench.dx.agents import ScriptedAgent
from clinbench.dx.costs import PriceTable
from clinbench.dx.encounter import run_encounter
from clinbench.dx.gatekeeper import UNAVAILABLE_REFUSAL, OfflineGatekeeper, normal_results

# (case, normal row) pairs whose normal result the case's vignette, history, examination or results contradict
CONTRADICTED = {
    (3, "CT chest without contrast"), (3, "CT chest abdomen and pelvis without contrast"),  # pleural effusion
    (3, "Fibrin degradation products"), (23, "Fibrin degradation products"), (29, "Fibrin degradation products"),
    (4, "CT chest with contrast"), (4, "CT chest without contrast"), (4, "CT chest abdomen and pelvis without contrast"),
    (6, "CT abdomen and pelvis with contrast"), (6, "CT abdomen and pelvis without contrast"),
    (6, "CT chest abdomen and pelvis without contrast"), (7, "CT abdomen and pelvis with contrast"),
    (7, "CT abdomen and pelvis without contrast"), (7, "CT chest abdomen and pelvis without contrast"),
    (10, "Fecal occult blood test"), (12, "CT chest with contrast"), (12, "CT chest without contrast"),
    (12, "CT chest abdomen and pelvis without contrast"), (18, "MRI brain"), (18, "Lumbar puncture"),
    (18, "CSF xanthochromia"), (18, "CSF opening pressure"), (20, "Colonoscopy"),
    (21, "CT abdomen and pelvis with contrast"), (21, "CT abdomen and pelvis without contrast"),
    (21, "CT chest abdomen and pelvis without contrast"), (23, "Abdominal ultrasound"), (31, "Colonoscopy"),
}


def test_a_normal_result_the_record_contradicts_is_not_given_in_any_demo_case(cases):
    # before: each of these 28 of the 4,608 replies was the row's normal result
    replies = {(case.case_id, row.test): gatekeeper.answer("test", row.test)
               for case in cases for gatekeeper in [OfflineGatekeeper(case)] for row in normal_results()}
    assert len(replies) == 4608
    assert {k for k, r in replies.items() if r.text == UNAVAILABLE_REFUSAL} == CONTRADICTED
    assert all(replies[k].source == "REFUSED" for k in CONTRADICTED)


def test_the_named_orders_are_refused_free_where_the_record_implies_them_abnormal(case_by_id, tmp_path):
    for case, order in ((10, "stool guaiac"), (10, "hemoccult"), (18, "CSF xanthochromia"), (18, "opening pressure")):
        script = tmp_path / "script.txt"
        script.write_text(f"<test>{order}</test>\n<diagnosis>x</diagnosis>\n")
        result = run_encounter(case_by_id[case], ScriptedAgent(script), OfflineGatekeeper(case_by_id[case]),
                               PriceTable.bundled())
        (event,) = [e for e in result.transcript if e["event"] == "test"]
        assert event["reply"] == UNAVAILABLE_REFUSAL and event["cost"] == 0.0
    # where nothing implies them abnormal they keep their normal result; a negated finding implies nothing
    assert OfflineGatekeeper(case_by_id[1]).answer("test", "stool guaiac").text == "Fecal occult blood test: negative."
    assert OfflineGatekeeper(case_by_id[4]).answer("test", "renal ultrasound").source == "SYNTHETIC"
