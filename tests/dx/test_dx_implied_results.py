"""A test the record does not hold gets no normal result the record's own findings contradict: a stool
guaiac after black tarry stools, CSF xanthochromia after a CT showing subarachnoid blood. Such an order
gets the harness's "not available for this patient" refusal, never charged. Found by a review of the
normal rows added in cff01fa: case 10's "stool guaiac" was "negative", case 18's "CSF xanthochromia" was
"no xanthochromia"."""

from clinbench.dx.gatekeeper import UNAVAILABLE_REFUSAL, OfflineGatekeeper, normal_results
from tests.dx.orders import ordered_test

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
    # free fluid (case 21's ruptured ectopic pregnancy), ascites (cases 23 and 25); an aortic dissection (case 29)
    (21, "Focused assessment with sonography for trauma"), (23, "Focused assessment with sonography for trauma"),
    (25, "Focused assessment with sonography for trauma"), (29, "Aorta ultrasound"),
    (27, "MRI orbits"),  # bilateral proptosis with lid retraction (Graves disease)
}
# (case, row) pairs whose order would get a recorded study that also images other body regions, refused as not
# available too (test_dx_region_orders): case 23's CT of chest, abdomen and pelvis, case 29's aortic CT angiogram
WIDER_STUDY = {
    (23, "CT abdomen and pelvis with contrast"), (23, "CT abdomen and pelvis without contrast"),
    (23, "CT chest with contrast"), (23, "CT chest without contrast"), (23, "CT pulmonary angiogram"),
    (29, "CT abdomen and pelvis with contrast"), (29, "CT chest with contrast"), (29, "CT pulmonary angiogram"),
}
# (case, row) pairs whose organ ultrasound would get a recorded ultrasound of its region silent on the organ, refused
# as not available too (test_dx_organ_orders): case 25's abdominal ultrasound of the liver
SILENT_STUDY = {(25, "Renal ultrasound"), (25, "Aorta ultrasound")}


def test_a_normal_result_the_record_contradicts_is_not_given_in_any_demo_case(cases):
    # before: each of these 28 of the 4,608 replies was the row's normal result (the FAST and aorta ultrasound rows,
    # 64 replies, were added with their findings, as were the MRI orbits and serum drug screen rows, 64 more)
    replies = {(case.case_id, row.test): gatekeeper.answer("test", row.test)
               for case in cases for gatekeeper in [OfflineGatekeeper(case)] for row in normal_results()}
    assert len(replies) == 4736
    refused = CONTRADICTED | WIDER_STUDY | SILENT_STUDY
    assert {k for k, r in replies.items() if r.text == UNAVAILABLE_REFUSAL} == refused
    assert all(replies[k].source == "REFUSED" for k in refused)


def test_the_named_orders_are_refused_free_where_the_record_implies_them_abnormal(case_by_id, tmp_path):
    for case, order in ((10, "stool guaiac"), (10, "hemoccult"), (18, "CSF xanthochromia"), (18, "opening pressure")):
        event = ordered_test(case_by_id[case], tmp_path, order)
        assert event["reply"] == UNAVAILABLE_REFUSAL and event["cost"] == 0.0
    # where nothing implies them abnormal they keep their normal result; a negated finding implies nothing
    assert OfflineGatekeeper(case_by_id[1]).answer("test", "stool guaiac").text == "Fecal occult blood test: negative."
    assert OfflineGatekeeper(case_by_id[4]).answer("test", "renal ultrasound").source == "SYNTHETIC"


def test_a_study_the_tables_do_not_know_of_a_site_the_record_images_gets_no_blanket_normal(cases):
    # before: 162 of these 2,048 orders (4 modalities x 16 sites x 32 cases) were "no abnormality detected" beside a
    # recorded study of the same site: "MRI abdomen" beside case 1's appendicitis CT, "ultrasound chest" beside
    # case 4's consolidation. Now refused free; an order of a site the record does not image keeps its normal
    orders = [f"{m} {s}" for m in ("CT", "MRI", "X-ray", "ultrasound") for s in (
        "hip", "knee", "lumbar spine", "chest", "abdomen", "head", "pelvis", "shoulder", "wrist", "ankle", "neck",
        "femur", "kidney", "liver", "brain", "heart")]
    replies = {(case.case_id, o): gatekeeper.answer("test", o)
               for case in cases for gatekeeper in [OfflineGatekeeper(case)] for o in orders}
    refused = {k for k, r in replies.items() if r.text == UNAVAILABLE_REFUSAL}
    # the other 11 refused were already: a normal row whose result the record's findings contradict; and 17 CTs of
    # fewer body regions than a recorded CT ("CT pelvis" beside case 1's CT of abdomen and pelvis, "CT chest" beside
    # case 23's of chest, abdomen and pelvis, "CT neck" beside case 8's CT angiogram of head and neck) are refused
    # rather than served that study (test_dx_region_orders), as is an ultrasound of an organ its region's recorded
    # ultrasound does not mention (case 25's "ultrasound kidney"; test_dx_organ_orders). "Ultrasound heart", refused
    # beside a recorded chest study in 13 cases (12 of the 162, and case 26's lung ultrasound), is the
    # echocardiogram: the record's where it holds one, else a normal one, as "echocardiogram" (test_dx_site_words)
    # less case 7's "MRI liver", now served its MRCP: an MRI of the bile ducts and pancreas (test_dx_quadrants); and 15
    # femur orders once "femur" named a site (the thigh's and the hip's bone): the four in each of the leg duplex cases
    # 3, 16 and 23, and case 15's CT, MRI and ultrasound beside its hip radiograph, whose "X-ray femur" is now that
    # radiograph (test_dx_order_prices_more)
    assert len(replies) == 2048 and len(refused) == 150 + 11 + 17 + 1 - 1 + 15
    assert replies[(15, "X-ray femur")].text.startswith("Left hip radiograph: cortical discontinuity")
    assert {(1, "MRI abdomen"), (4, "ultrasound chest"), (8, "X-ray head"), (25, "ultrasound kidney")} <= refused
    assert replies[(26, "ultrasound heart")].text.startswith("Transthoracic echocardiogram: normal left ventricular")
    assert replies[(1, "MRI knee")].text == "MRI knee: no abnormality detected."
