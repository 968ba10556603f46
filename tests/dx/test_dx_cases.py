"""Demo cases and the dataset.json loader."""

import json

import pytest

from clinbench.dx.cases import load_cases, load_dataset
from clinbench.dx.record import parse_record
from clinbench.errors import DataError

SECTIONS = ("chief complaint", "history of present illness", "past medical history", "medications",
            "physical examination", "pertinent results", "imaging", "hospital course", "discharge diagnosis")


def test_at_least_30_demo_cases_with_every_field_and_section(cases):
    assert len(cases) >= 30
    assert len({c.case_id for c in cases}) == len(cases)
    for c in cases:
        rec = c.record()
        assert set(rec) == {"case_id", "mimic_note_id", "final_diagnosis", "case_title", "case_summary",
                            "full_text", "estimated_clinician_visits", "tests", "case_sets"}
        assert c.full_text.startswith(c.case_summary)
        assert c.tests and c.estimated_clinician_visits >= 1
        names = {s.name for s in parse_record(c.full_text, c.case_summary).sections}
        assert set(SECTIONS) <= names, (c.case_id, set(SECTIONS) - names)
        assert c.final_diagnosis.lower() not in c.case_summary.lower()


def test_demo_results_carry_values_with_units(cases):
    # Every demo case reports at least two numeric results with a unit.
    units = ("mg/dL", "mmol/L", "x10^9/L", "g/dL", "U/L", "ng/L", "mg/L", "mmHg", "%")
    for c in cases:
        results = parse_record(c.full_text, c.case_summary).results
        with_units = [r for r in results if any(u in r.text for u in units)]
        assert len(with_units) >= 2, c.case_id


def test_split_selection(cases):
    test = load_cases("demo", split="test")
    assert test and all("test" in c.case_sets for c in test)
    assert len(test) + len(load_cases("demo", split="validation")) + len(load_cases("demo", split="train")) == len(cases)
    with pytest.raises(DataError, match="unknown split 'dev'"):
        load_cases("demo", split="dev")


def test_dataset_json_round_trip(tmp_path, cases):
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps([c.record() for c in cases[:5]]))
    loaded = load_dataset(tmp_path)  # a folder holding dataset.json works too
    assert [c.record() for c in loaded] == [c.record() for c in cases[:5]]
    assert [c.case_id for c in load_dataset(path, split="test")] == [c.case_id for c in cases[:5] if "test" in c.case_sets]


def test_malformed_record_error_names_the_case(tmp_path, cases):
    records = [c.record() for c in cases[:3]]
    records[1]["tests"] = "CBC"  # must be a list of {"name": ...}
    path = tmp_path / "dataset.json"
    path.write_text(json.dumps(records))
    with pytest.raises(DataError, match=rf"case {cases[1].case_id} \(record 1\) is malformed: tests"):
        load_dataset(path)
    del records[1]
    records[0]["case_sets"] = ["dev"]
    path.write_text(json.dumps(records))
    with pytest.raises(DataError, match=rf"case {cases[0].case_id} \(record 0\) is malformed: case_sets"):
        load_dataset(path)


def test_missing_and_invalid_files(tmp_path):
    with pytest.raises(DataError, match="no dataset file"):
        load_dataset(tmp_path / "nope.json")
    bad = tmp_path / "dataset.json"
    bad.write_text("[{")
    with pytest.raises(DataError, match="not valid JSON"):
        load_dataset(bad)
