"""rescore scores outputs of the same bytes once and a reference's outputs together; every run's score is its own."""

from __future__ import annotations

from clinbench.campaign.rescore import _score_outputs
from clinbench.derive.score import Scorer

HEADER = "subject_id,hadm_id,stay_id,sofa,respiration,coagulation,liver,cardiovascular,cns,renal\n"


class Counting(Scorer):
    def __init__(self) -> None:
        super().__init__()
        self.scored: list[str] = []

    def many(self, task_id, outputs, db_path, *, scored_columns="value"):
        self.scored += [str(o) for o in outputs]
        return super().many(task_id, outputs, db_path, scored_columns=scored_columns)


def test_identical_outputs_are_scored_once_and_a_reason_naming_the_file_stays_its_own(tiny_db, tmp_path):
    texts = {"a": HEADER + "1,10,100,2,0,0,0,0,0,2\n", "b": None, "twin": None, "bad1": None, "bad2": None}
    texts["b"], texts["twin"] = texts["a"], texts["a"]
    paths = {}
    for name, text in texts.items():
        (tmp_path / name).mkdir()
        paths[name] = tmp_path / name / "output.csv"
        if text is not None:  # bad1 and bad2, recorded with one digest, are gone: each message names its path
            paths[name].write_text(text)
    sofa = "mimic-sofa-24h"
    wanted = [(sofa, "value", "sha-good", paths["a"]), (sofa, "value", "sha-good", paths["b"]),
              (sofa, "required", "sha-good", paths["b"]), (sofa, "value", "sha-bad", paths["bad1"]),
              (sofa, "value", "sha-bad", paths["bad2"]),
              (sofa + "-raw", "value", "sha-good", paths["twin"])]  # its raw-mode twin: scored with a, by its rules
    with Counting() as scorer:
        scored = _score_outputs(scorer, str(tiny_db), wanted)
        # b's copy of a under the same columns is not read; bad2 is, its message names the file
        assert sorted(scorer.scored) == sorted(str(paths[n]) for n in ("a", "b", "bad1", "bad2", "twin"))
        alone = {(t, c, str(p)): scorer(t, p, tiny_db, scored_columns=c).as_dict() for t, c, _, p in wanted}
    assert {k: r.as_dict() for k, r in scored.items()} == alone
    assert str(paths["bad2"]) in scored[(sofa, "value", str(paths["bad2"]))].reason  # not bad1's path
    assert scored[(sofa + "-raw", "value", str(paths["twin"]))].task_id == sofa + "-raw"
