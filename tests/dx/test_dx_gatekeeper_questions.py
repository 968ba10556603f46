"""Free questions do not tell which tests the hospital did."""

from clinbench.dx.gatekeeper import RESULT_IN_QUESTION, OfflineGatekeeper


def test_asking_whether_a_test_was_done_reads_the_same_with_or_without_it(case_by_id):
    # "Was a <name> done?" answered "That is a test result..." only in the case whose
    # record holds the test (knee arthrocentesis in case 22, coronary angiography in case 2,
    # the hip radiograph in case 15) and "No, nothing of that kind is reported." elsewhere.
    for name, holder in [("Knee arthrocentesis", 22), ("Coronary angiography", 2), ("Left hip radiograph", 15)]:
        q = f"Was a {name} done?"
        replies = {cid: OfflineGatekeeper(case_by_id[cid]).answer("question", q).text for cid in (holder, 1, 3)}
        assert set(replies.values()) == {RESULT_IN_QUESTION}, (name, replies)
