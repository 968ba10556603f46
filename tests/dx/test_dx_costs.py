"""Prices and visit counting."""

import csv

import pytest

from clinbench.dx.costs import DEFAULT_UNMATCHED_PRICE, VISIT_FEE, PriceTable, count_visits
from clinbench.errors import DataError


def test_price_table_has_250_documented_rows():
    rows = PriceTable.bundled().rows
    assert len(rows) >= 250
    for r in rows:
        assert r.code and r.price > 0 and r.source, r
        assert all(part.isdigit() and len(part) == 5 for part in r.code.split("+")), r.code
    kinds = {r.code[:2] for r in rows}
    assert {"80", "85", "87", "70", "71", "74", "93", "43", "45", "88"} <= kinds  # labs, micro, imaging, cardio, endoscopy, pathology


@pytest.mark.parametrize("order,code", [
    ("CBC", "85025"), ("cxr", "71045"), ("CT abd/pelvis w contrast", "74177"),
    ("CT abdomen and pelvis without contrast", "74176"), ("CT head", "70450"), ("echo", "93306"),
    ("EKG", "93000"), ("troponin", "84484"), ("LP", "62270"), ("EGD with biopsy", "43239"),
    ("blood cultures", "87040"), ("MRCP", "74181"), ("liver biopsy", "47000"),
])
def test_orders_map_to_codes(order, code):
    assert PriceTable.bundled().price(order).code == code


def test_every_demo_test_is_priced(cases):
    table = PriceTable.bundled()
    missing = [(c.case_id, t) for c in cases for t in c.test_names if not table.price(t).matched]
    assert missing == []


def test_unmatched_order_gets_the_stated_default():
    p = PriceTable.bundled().price("quantum flux assay")
    assert not p.matched and p.price == DEFAULT_UNMATCHED_PRICE


def test_user_price_file_overrides_by_code(tmp_path):
    path = tmp_path / "prices.csv"
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["code", "description", "price"])
        w.writerow(["85025", "CBC w diff", "12.5"])
        w.writerow(["99999", "Whole-genome sequencing", "3000"])
    table = PriceTable.load(path)
    assert table.price("CBC").price == 12.5
    assert table.price("troponin").price == PriceTable.bundled().price("troponin").price
    assert table.price("whole-genome sequencing").code == "99999"
    assert "prices.csv" in table.label


def test_bad_price_file_names_the_line(tmp_path):
    path = tmp_path / "prices.csv"
    path.write_text("code,description,price\n85025,CBC,twelve\n")
    with pytest.raises(DataError, match="line 2: price 'twelve' is not a number"):
        PriceTable.load(path)
    path.write_text("code,price\n85025,12\n")
    with pytest.raises(DataError, match="lacks column"):
        PriceTable.load(path)


def test_visit_counting_follows_the_paper():
    # consecutive question turns are one visit; a test ends it
    assert count_visits(["question", "question", "test", "question", "test", "test", "question"]) == 3
    assert count_visits(["test", "test"]) == 0
    assert count_visits(["question", "invalid", "question", "diagnosis"]) == 1
    assert VISIT_FEE == 300.0
