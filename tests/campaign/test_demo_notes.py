"""The demo's table of conventions says how many reference rows each moves on the database, and says
so when one moves none (two of the six moved nothing on the demo database, silently)."""

from __future__ import annotations

import duckdb

from clinbench.campaign.demo import variant_notes


def test_a_convention_that_moves_no_row_says_so_and_one_that_moves_rows_counts_them(tiny_db):
    with duckdb.connect(str(tiny_db)) as con:
        con.execute("CREATE TABLE mimiciv_derived.variant_sofa_24h__missing_as_null AS "
                    "SELECT * FROM mimiciv_derived.target_sofa_24h")
        con.execute("CREATE TABLE mimiciv_derived.variant_sofa_24h__ventilated_pf AS SELECT * REPLACE "
                    "(CASE WHEN stay_id = 200 THEN 4 ELSE respiration END AS respiration) FROM mimiciv_derived.target_sofa_24h")
    header, rows = variant_notes({"mimic-sofa-24h": "missing_as_null"}, tiny_db)
    assert header[-1] == "rows it moves on this database"
    assert rows[0][-1] == "none: this convention changes nothing on this database"
    _, rows = variant_notes({"mimic-sofa-24h": "ventilated_pf"}, tiny_db)
    assert rows[0][-1] == "1 of 2"
    assert len(variant_notes({"mimic-sofa-24h": "missing_as_null"})[0]) == 3  # no database: no count
