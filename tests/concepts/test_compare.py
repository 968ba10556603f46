"""table_mismatch: what "equals the anchor" means (multiset of rows, numbers to 1e-6)."""

from __future__ import annotations

import duckdb
import pytest

from clinbench.concepts.compare import table_mismatch


@pytest.fixture()
def con():
    c = duckdb.connect()
    c.execute("CREATE TABLE anchor AS SELECT * FROM (VALUES (1, 0.1::DOUBLE, 'a'), (2, NULL, 'b'), (3, 7.25, NULL)) t(id, x, s)")
    yield c
    c.close()


def test_the_same_rows_in_another_order_and_precision_agree(con):
    con.execute("CREATE TABLE ours AS SELECT * FROM (VALUES (3, 7.25::FLOAT, NULL), (1, 0.1::FLOAT, 'a'), (2, NULL, 'b')) t(id, x, s)")
    assert table_mismatch(con, "ours", "anchor") is None


def test_a_value_off_by_more_than_1e_6_is_named(con):
    con.execute("CREATE TABLE ours AS SELECT * FROM (VALUES (1, 0.1::DOUBLE, 'a'), (2, NULL, 'b'), (3, 7.2501, NULL)) t(id, x, s)")
    found = table_mismatch(con, "ours", "anchor")
    assert found.startswith("1 of 3 rows differ") and "x anchor 7.25 clinbench 7.2501" in found


def test_empty_is_not_zero_and_a_missing_row_is_counted(con):
    con.execute("CREATE TABLE ours AS SELECT * FROM (VALUES (1, 0.1::DOUBLE, 'a'), (2, 0.0, 'b'), (3, 7.25, NULL)) t(id, x, s)")
    assert "x anchor None clinbench 0.0" in table_mismatch(con, "ours", "anchor")
    con.execute("DELETE FROM ours WHERE id = 2")
    assert table_mismatch(con, "ours", "anchor") == "2 rows, anchor 3"


def test_columns_must_match_in_name_and_order(con):
    con.execute("CREATE TABLE ours AS SELECT id, s, x FROM anchor")
    assert table_mismatch(con, "ours", "anchor").startswith("columns differ")


def test_rows_pair_up_even_when_rounding_sorts_a_real_and_a_double_apart():
    """0.0645 as DOUBLE rounds to 0.065, as REAL (0.06449999...) to 0.064: a sort on rounded numbers
    paired the two rows of this order with each other's (found on a synthetic database, epinephrine)."""
    c = duckdb.connect()
    try:
        rows = "(1, 0.0654, TIMESTAMP '2179-06-07 21:44'), (1, 0.0645, TIMESTAMP '2179-06-07 22:57')"
        c.execute(f"CREATE TABLE anchor AS SELECT id, x::REAL AS x, t FROM (VALUES {rows}) v(id, x, t)")
        c.execute(f"CREATE TABLE ours AS SELECT id, x::DOUBLE AS x, t FROM (VALUES {rows}) v(id, x, t)")
        assert table_mismatch(c, "ours", "anchor") is None
        c.execute("UPDATE ours SET x = 0.0646 WHERE t = TIMESTAMP '2179-06-07 22:57'")
        found = table_mismatch(c, "ours", "anchor")
        assert found.startswith("1 of 2 rows differ") and "clinbench 0.0646" in found
    finally:
        c.close()
