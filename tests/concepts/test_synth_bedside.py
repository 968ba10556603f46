"""`data synth` writes the source rows of acei, arb, nsaid, code_status, icp, rhythm and neuroblock
(ehr/synth/mimic_bedside.py), with the edges those concepts decide on, so the anchor comparisons
on synthetic databases compare them on rows instead of on two empty tables."""

from __future__ import annotations

import duckdb
import pytest


@pytest.fixture(scope="module")
def con(synth_db):
    c = duckdb.connect(str(synth_db), read_only=True)
    yield c
    c.close()


def _one(con, sql):
    return con.execute(sql).fetchone()


def test_drug_classes_match_by_name_and_ketorolac_is_in_none(con):
    acei, arb, nsaid, ketorolac = _one(con, """SELECT
        count(*) FILTER (drug IN ('Lisinopril', 'Captopril', 'Enalapril Maleate', 'Ramipril', 'Benazepril', 'Quinapril', 'Trandolapril')),
        count(*) FILTER (drug IN ('Losartan Potassium', 'Valsartan', 'Irbesartan', 'Sacubitril-Valsartan', 'Candesartan', 'Entresto')),
        count(*) FILTER (drug LIKE 'Aspirin%' OR drug IN ('Ibuprofen', 'Naproxen', 'Celecoxib', 'Indomethacin', 'Meloxicam', 'Diclofenac Sodium')),
        count(*) FILTER (drug = 'Ketorolac')
        FROM mimiciv_hosp.prescriptions""")
    assert min(acei, arb, nsaid, ketorolac) > 0
    assert _one(con, "SELECT count(*) FROM mimiciv_derived.acei")[0] == acei
    assert _one(con, "SELECT count(*) FROM mimiciv_derived.arb")[0] == arb
    assert _one(con, "SELECT count(*) FROM mimiciv_derived.nsaid")[0] == nsaid
    assert _one(con, "SELECT count(*) FROM mimiciv_derived.nsaid WHERE nsaid = 'Ketorolac'")[0] == 0


def test_code_status_from_charting_and_orders_with_both_flags_for_dnr_dni(con):
    charted, ordered = _one(con, """SELECT
        (SELECT count(*) FROM mimiciv_icu.chartevents WHERE itemid = 223758),
        (SELECT count(*) FROM mimiciv_hosp.poe WHERE order_type = 'General Care' AND order_subtype = 'Code status')""")
    assert charted > 0 and ordered > 0
    assert _one(con, "SELECT count(*) FROM mimiciv_derived.code_status")[0] == charted + ordered
    both = _one(con, "SELECT count(*) FROM mimiciv_icu.chartevents WHERE itemid = 223758 AND value = 'DNR / DNI'")[0]
    assert both > 0
    # the order text with a trailing space is DNR only; every 'DNR / DNI' charting sets both flags
    assert _one(con, "SELECT count(*) FROM mimiciv_derived.code_status WHERE dnr = 1 AND dni = 1")[0] >= both


def test_icp_outside_0_100_is_missing_and_boluses_are_not_infusions(con):
    out_of_range = _one(con, "SELECT count(DISTINCT (stay_id, charttime)) FROM mimiciv_icu.chartevents "
                             "WHERE itemid = 220765 AND NOT (valuenum > 0 AND valuenum < 100)")[0]
    assert out_of_range > 0
    assert _one(con, "SELECT count(*) FROM mimiciv_derived.icp WHERE icp IS NULL")[0] > 0
    assert _one(con, "SELECT max(icp) FROM mimiciv_derived.icp")[0] < 100
    drips, boluses = _one(con, "SELECT count(*) FILTER (rate IS NOT NULL), count(*) FILTER (rate IS NULL) "
                               "FROM mimiciv_icu.inputevents WHERE itemid IN (221555, 222062)")
    assert drips > 0 and boluses > 0
    assert _one(con, "SELECT count(*) FROM mimiciv_derived.neuroblock")[0] == drips


def test_rhythm_one_row_per_charting_time(con):
    times = _one(con, "SELECT count(DISTINCT (stay_id, charttime)) FROM mimiciv_icu.chartevents "
                      "WHERE itemid IN (220048, 224650, 224651, 226479, 226480)")[0]
    assert times > 0
    assert _one(con, "SELECT count(*) FROM mimiciv_derived.rhythm")[0] == times
    assert _one(con, "SELECT count(*) FROM mimiciv_derived.rhythm WHERE ectopy_type_secondary IS NOT NULL")[0] > 0
