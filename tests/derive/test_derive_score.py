"""Each scoring rule of docs/tasks.md and docs/scoring.md, on small hand-made reference tables."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from clinbench.derive.catalogue import TaskSpec
from clinbench.derive.score import score_against, score_many_against, score_output
from clinbench.errors import TaskError


def spec(**over) -> TaskSpec:
    base = dict(
        id="t", family="f", database="mimic-iv", mode="standard", reference="t",
        keys=["stay_id"], scored_columns=["score", "dose"],
        required_columns=["stay_id", "score", "dose"], tolerances={"dose": 0.01},
        coverage_threshold=1.0, accuracy_threshold=1.0, skills=["s"], decoy_skill="d",
    )
    base.update(over)
    return TaskSpec(**base)


@pytest.fixture
def con():
    c = duckdb.connect()
    c.execute("CREATE TABLE ref (stay_id INTEGER, score INTEGER, dose DOUBLE)")
    c.execute("INSERT INTO ref VALUES (1, 3, 1.00), (2, 0, NULL), (3, 4, 0.25), (4, 1, 2.0)")
    yield c
    c.close()


def write(tmp_path: Path, text: str | bytes, name: str = "out.csv") -> Path:
    p = tmp_path / name
    p.write_bytes(text if isinstance(text, bytes) else text.encode())
    return p


def run(con, tmp_path, text, **over):
    return score_against(spec(**over), write(tmp_path, text), con, "ref")


PERFECT = "stay_id,score,dose\n1,3,1.0\n2,0,\n3,4,0.25\n4,1,2.0\n"


def test_perfect_output(con, tmp_path):
    r = run(con, tmp_path, PERFECT)
    assert r.reward == 1.0 and r.strict
    assert (r.key_precision, r.key_recall, r.key_f1, r.coverage) == (1.0, 1.0, 1.0, 1.0)
    assert r.ordered_value_nmae == 0.0
    assert r.columns["score"].examples == []


def test_missing_key_lowers_recall_and_rate(con, tmp_path):
    r = run(con, tmp_path, "stay_id,score,dose\n1,3,1.0\n2,0,\n3,4,0.25\n")
    assert r.columns["score"].match_rate == 3 / 4
    assert r.key_recall == 3 / 4 and r.key_precision == 1.0
    assert r.key_f1 == pytest.approx(2 * 0.75 / 1.75)
    assert not r.strict and "coverage" in r.reason
    assert r.columns["score"].examples[0]["agent"] == "(key missing)"


def test_extra_key_penalised_in_denominator(con, tmp_path):
    r = run(con, tmp_path, PERFECT + "99,1,1.0\n")
    assert r.extra_keys == 1
    assert r.columns["score"].match_rate == 4 / 5
    assert r.key_precision == 4 / 5 and r.key_recall == 1.0
    assert r.reward == pytest.approx(0.8)


def test_duplicates_keep_first_row_and_penalise(con, tmp_path):
    # second row for stay 1 is correct but the first (wrong) one is kept
    r = run(con, tmp_path, "stay_id,score,dose\n1,2,1.0\n1,3,1.0\n2,0,\n3,4,0.25\n4,1,2.0\n")
    assert r.duplicate_rows == 1
    assert r.columns["score"].matched == 3 and r.columns["score"].match_rate == 3 / 5
    assert r.columns["dose"].match_rate == 4 / 5
    assert r.key_precision == 1.0


def test_an_output_in_the_references_key_order_scores_as_the_same_rows_in_another_order(con, tmp_path):
    # in key order it is paired with the reference row by row, without a table of its rows; reversed, joined
    rows = ["1,2,1.5", "2,0,nan", "3,4,inf", "4,1,"]
    in_order = run(con, tmp_path, "stay_id,score,dose\n" + "\n".join(rows) + "\n")
    assert not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = '__parsed'").fetchone()[0]
    reversed_ = run(con, tmp_path, "stay_id,score,dose\n" + "\n".join(rows[::-1]) + "\n")
    assert con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = '__parsed'").fetchone()[0]
    assert in_order.as_dict() == reversed_.as_dict()
    assert in_order.columns["dose"].examples == [
        {"key": {"stay_id": "1"}, "reference": "1.0", "agent": "1.5"},
        {"key": {"stay_id": "3"}, "reference": "0.25", "agent": "(unparseable)"},
        {"key": {"stay_id": "4"}, "reference": "2.0", "agent": ""}]
    assert in_order.columns["score"].examples == [{"key": {"stay_id": "1"}, "reference": "3.0", "agent": "2.0"}]


def test_an_output_in_key_order_is_paired_whatever_its_columns_are_named(tmp_path):
    # the pass names the agent's row a, the reference's r and the reader's table __c: a task's columns of
    # those names neither shadow them nor send the output to the join
    c = duckdb.connect()
    c.execute('CREATE TABLE ref (r INTEGER, a INTEGER, "c" DOUBLE, __c DOUBLE)')
    c.execute("INSERT INTO ref VALUES (1, 3, 1.0, 7), (2, 0, NULL, 8), (3, 4, 0.25, 9)")
    s = spec(keys=["r"], scored_columns=["a", "c", "__c"], required_columns=["r", "a", "c", "__c"],
             tolerances={"c": 0.01, "__c": 0.5})
    rows = ["1,3,1.0,7", "2,1,,8.4", "3,4,0.5,10"]
    in_order = score_against(s, write(tmp_path, "r,a,c,__c\n" + "\n".join(rows) + "\n"), c, "ref")
    assert not c.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = '__parsed'").fetchone()[0]
    assert [in_order.columns[x].matched for x in ("a", "c", "__c")] == [2, 2, 2]
    assert in_order.columns["c"].examples == [{"key": {"r": "3"}, "reference": "0.25", "agent": "0.5"}]
    assert in_order.columns["__c"].examples == [{"key": {"r": "3"}, "reference": "9.0", "agent": "10.0"}]
    reversed_ = score_against(s, write(tmp_path, "r,a,c,__c\n" + "\n".join(rows[::-1]) + "\n"), c, "ref")
    assert c.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name = '__parsed'").fetchone()[0]
    assert reversed_.as_dict() == in_order.as_dict()


def test_tolerance_edges(con, tmp_path):
    # dose tolerance 0.01: 1.01 vs 1.00 is exactly at tolerance and matches; 0.2601 vs 0.25 does not
    r = run(con, tmp_path, "stay_id,score,dose\n1,3,1.01\n2,0,\n3,4,0.2601\n4,1,1.99\n")
    assert r.columns["dose"].matched == 3
    assert r.columns["dose"].examples[0]["key"] == {"stay_id": "3"}
    # score is exact: 3.0 written as a float still matches, 3.5 does not
    r = run(con, tmp_path, "stay_id,score,dose\n1,3.0,1\n2,0.5,\n3,4,0.25\n4,1,2\n")
    assert r.columns["score"].matched == 3


def test_both_empty_only_when_key_supplied(con, tmp_path):
    r = run(con, tmp_path, "stay_id,score,dose\n1,3,1.0\n2,0,NULL\n3,4,0.25\n4,1,2.0\n")
    assert r.columns["dose"].matched == 4
    # stay 2 absent: its empty reference dose is not a match
    r = run(con, tmp_path, "stay_id,score,dose\n1,3,1.0\n3,4,0.25\n4,1,2.0\n")
    assert r.columns["dose"].matched == 3
    # agent value where reference is empty: mismatch; garbage where reference has a value: mismatch
    r = run(con, tmp_path, "stay_id,score,dose\n1,3,abc\n2,0,0\n3,4,0.25\n4,1,2.0\n")
    assert r.columns["dose"].matched == 2


def test_timestamp_tolerance_and_formats(tmp_path):
    c = duckdb.connect()
    c.execute("CREATE TABLE ref (stay_id INTEGER, starttime TIMESTAMP, status VARCHAR)")
    c.execute("INSERT INTO ref VALUES (1, '2150-01-01 10:00:00', 'InvasiveVent'), (2, '2150-01-02 00:00:00', 'HFNC')")
    s = dict(keys=["stay_id"], scored_columns=["starttime", "status"], required_columns=["stay_id", "starttime", "status"], tolerances={})
    out = "stay_id,starttime,status\n1,2150-01-01T10:00:00,InvasiveVent\n2,2150-01-02 00:01:00,HFNC\n"
    r = score_against(spec(**s), write(tmp_path, out), c, "ref")
    assert r.columns["starttime"].matched == 1
    r = score_against(spec(**s, timestamp_tolerance_seconds=60), write(tmp_path, out), c, "ref")
    assert r.columns["starttime"].matched == 2
    assert r.columns["status"].match_rate == 1.0
    # strings are exact: case differs -> mismatch
    r = score_against(spec(**s), write(tmp_path, out.replace("HFNC", "hfnc")), c, "ref")
    assert r.columns["status"].matched == 1
    assert r.ordered_value_nmae is None  # no numeric scored column


def test_timestamp_key(tmp_path):
    c = duckdb.connect()
    c.execute("CREATE TABLE ref (stay_id INTEGER, charttime TIMESTAMP, uo DOUBLE)")
    c.execute("INSERT INTO ref VALUES (1, '2150-01-01 10:00:00', 5), (1, '2150-01-01 11:00:00', 7)")
    s = dict(keys=["stay_id", "charttime"], scored_columns=["uo"], required_columns=["stay_id", "charttime", "uo"], tolerances={})
    r = score_against(spec(**s), write(tmp_path, "stay_id,charttime,uo\n1,2150-01-01T11:00:00,7\n1,2150-01-01 10:00,5\n"), c, "ref")
    assert r.reward == 1.0 and r.strict


def test_forgiving_reading(con, tmp_path):
    text = '\ufeff Dose ,STAY_ID,Score\r\n"1.0", 1 ,"3"\r\n,2,false\r\n0.25,3,4\r\n2,4,true\r\n'
    r = run(con, tmp_path, text)
    assert r.reward == 1.0 and r.strict


def test_boolean_reference(tmp_path):
    c = duckdb.connect()
    c.execute("CREATE TABLE ref (stay_id INTEGER, sepsis3 BOOLEAN)")
    c.execute("INSERT INTO ref VALUES (1, true), (2, false)")
    s = dict(scored_columns=["sepsis3"], required_columns=["stay_id", "sepsis3"], tolerances={})
    for text in ("stay_id,sepsis3\n1,1\n2,0\n", "stay_id,sepsis3\n1,True\n2,FALSE\n"):
        assert score_against(spec(**s), write(tmp_path, text), c, "ref").reward == 1.0


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"", "empty"),
        (b"  \r\n", "empty"),
        (b"stay_id,score,dose\n", "no rows"),
        (b"stay_id,score,dose\n1,3,\xff\xfe\n", "UTF-8"),
        (b"score,dose\n3,1\n", "missing key column(s): stay_id"),
        # DuckDB's own first line says "CSV Error on Line: 1" (of its read block) and "Error when sniffing file"
        (b"stay_id,score,dose\n1,3,1.0\n2," + b"9" * 2_100_000 + b",1\n",
         "a line is longer than 2,000,000 bytes, DuckDB's limit for a CSV line"),
        (b'stay_id,score,dose\n1,3,1.0\n2,"4,1\n', "cannot split it into rows of comma-separated cells"),
        # a hostile width (330,000 columns in a 2 MB header held a score for over 300 s): refused before any read
        (b"stay_id,score,dose," + b",".join(b"c%d" % i for i in range(330_000)) + b"\n1,3,1.0\n",
         "output's header names more than 1,000 columns"),
    ],
)
def test_malformed_files_score_zero_with_reason(con, tmp_path, content, reason):
    r = run(con, tmp_path, content)
    assert r.reward == 0.0 and not r.strict
    assert reason in r.reason


def test_an_output_of_1000_columns_is_scored_as_its_task_columns(con, tmp_path):
    header = "stay_id,score,dose," + ",".join(f"c{i}" for i in range(997))  # 1,000 names: the widest read
    wide = run(con, tmp_path, PERFECT.replace("stay_id,score,dose", header, 1))
    assert wide.reward == 1.0 and wide.strict


def test_a_missing_scored_column_scores_0_while_the_others_count(con, tmp_path):
    # every key, every score right, no dose column: score 4/4, dose 0/4 -> reward (1 + 0) / 2
    r = run(con, tmp_path, "stay_id,score\n1,3\n2,0\n3,4\n4,1\n")
    assert r.columns["score"].match_rate == 1.0 and r.columns["dose"].match_rate == 0.0
    assert r.reward == 0.5 and not r.strict and not r.checks["required_columns"]
    assert r.missing_columns == ["dose"] and "scored 0: dose" in r.reason
    assert r.columns["dose"].nmae == 1.0


def test_a_missing_required_column_that_is_not_scored_fails_strict_only(con, tmp_path):
    r = run(con, tmp_path, PERFECT, required_columns=["stay_id", "score", "dose", "note"])
    assert r.reward == 1.0 and not r.strict
    assert r.checks == {"output_exists": True, "non_empty": True, "required_columns": False, "coverage": True, "accuracy": True}
    assert r.reason == "missing required column(s): note"


@pytest.fixture
def wide():
    """A reference with an identifier, a value column and two required clinical columns."""
    c = duckdb.connect()
    c.execute("CREATE TABLE ref (stay_id INTEGER, subject_id INTEGER, score INTEGER, dose DOUBLE, label VARCHAR)")
    c.execute("INSERT INTO ref VALUES (1, 10, 3, 1.0, 'a'), (2, 20, 0, 2.0, 'b'), (3, 30, 4, 3.0, 'c'), (4, 40, 1, 4.0, 'd')")
    yield c
    c.close()


WIDE = dict(scored_columns=["score"], required_columns=["stay_id", "subject_id", "score", "dose", "label"], tolerances={})
# score right in 4/4 rows, dose in 3/4, label in 2/4, subject_id in none
WIDE_OUT = "stay_id,subject_id,score,dose,label\n1,0,3,1.0,a\n2,0,0,2.0,b\n3,0,4,3.0,x\n4,0,1,9.0,y\n"


def test_scored_columns_value_scores_the_value_columns_only(wide, tmp_path):
    r = score_against(spec(**WIDE), write(tmp_path, WIDE_OUT), wide, "ref", scored_columns="value")
    assert list(r.columns) == ["score"] and r.reward == 1.0 and r.strict
    assert r.scored_columns == "value"


def test_scored_columns_required_also_scores_required_clinical_columns_not_ids(wide, tmp_path):
    r = score_against(spec(**WIDE), write(tmp_path, WIDE_OUT), wide, "ref", scored_columns="required")
    # subject_id is an identifier (M4Bench never scores it); score 1, dose 3/4, label 2/4
    assert list(r.columns) == ["score", "dose", "label"]
    assert r.reward == pytest.approx((1 + 0.75 + 0.5) / 3)
    assert not r.strict and r.scored_columns == "required"


def test_scored_columns_required_with_a_missing_required_column(wide, tmp_path):
    out = "stay_id,subject_id,score,dose\n1,10,3,1.0\n2,20,0,2.0\n3,30,4,3.0\n4,40,1,4.0\n"
    value = score_against(spec(**WIDE), write(tmp_path, out), wide, "ref", scored_columns="value")
    required = score_against(spec(**WIDE), write(tmp_path, out), wide, "ref", scored_columns="required")
    assert value.reward == 1.0 and not value.strict  # label is required but not scored
    assert required.reward == pytest.approx((1 + 1 + 0) / 3) and not required.strict  # label scored 0


def test_scored_columns_setting_must_be_known(wide, tmp_path):
    with pytest.raises(TaskError, match="value, required"):
        score_against(spec(**WIDE), write(tmp_path, WIDE_OUT), wide, "ref", scored_columns="all")


def test_missing_file(con, tmp_path):
    r = score_against(spec(), tmp_path / "nope.csv", con, "ref")
    assert r.reward == 0.0 and "does not exist" in r.reason


def test_unparseable_csv(con, tmp_path):
    r = run(con, tmp_path, 'stay_id,score,dose\n1,"3,1\n2,"0,,\n')
    assert r.reward < 1.0 and not r.strict


def test_ordered_nmae(con, tmp_path):
    # score scale = 4 - 0 = 4; dose scale = 2.0 - 0.25 = 1.75
    r = run(con, tmp_path, "stay_id,score,dose\n1,1,1.0\n2,0,5\n3,4,\n")
    # score costs: |1-3|/4 = .5, 0, 0 -> mean .5/3 ; dose: 0, 1 (ref empty), 1 (agent empty) -> 2/3
    assert r.columns["score"].nmae == pytest.approx(0.5 / 3)
    assert r.columns["dose"].nmae == pytest.approx(2 / 3)
    assert r.ordered_value_nmae == pytest.approx((0.5 / 3 + 2 / 3) / 2)


def test_accuracy_threshold(con, tmp_path):
    out = "stay_id,score,dose\n1,3,1.0\n2,0,\n3,4,0.25\n4,2,2.0\n"
    assert not run(con, tmp_path, out).strict
    r = run(con, tmp_path, out, accuracy_threshold=0.75)
    assert r.strict and r.reward == pytest.approx((0.75 + 1) / 2)


def test_score_output_needs_built_reference(tmp_path):
    db = tmp_path / "x.duckdb"
    duckdb.connect(str(db)).close()
    with pytest.raises(TaskError, match="holds no mimic-iv data"):  # building concepts cannot help here
        score_output("mimic-meld-24h", write(tmp_path, "a\n1\n"), db)
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE SCHEMA mimiciv_hosp; CREATE TABLE mimiciv_hosp.patients (subject_id INTEGER)")
    with pytest.raises(TaskError, match="concepts build"):
        score_output("mimic-meld-24h", write(tmp_path, "a\n1\n"), db)


def test_score_output_reads_target_table(tmp_path):
    db = tmp_path / "x.duckdb"
    c = duckdb.connect(str(db))
    c.execute("CREATE SCHEMA mimiciv_derived")
    c.execute("CREATE TABLE mimiciv_derived.target_meld_24h (subject_id INTEGER, hadm_id INTEGER, stay_id INTEGER, meld DOUBLE)")
    c.execute("INSERT INTO mimiciv_derived.target_meld_24h VALUES (1, 10, 100, 20.0), (2, 20, 200, 7.5)")
    c.close()
    out = write(tmp_path, "subject_id,hadm_id,stay_id,meld\n1,10,100,21\n2,20,200,9\n")
    r = score_output("mimic-meld-24h", out, db)  # meld tolerance 1.0 point
    assert r.columns["meld"].matched == 1 and r.reward == 0.5


def test_nan_is_empty_and_inf_is_not_a_value(con, tmp_path):
    # typed fast path (clean file) and text path (a 'NA' forces it) give the same answer, for every NaN
    # the typed reader reads (pandas, M4Bench's reader, reads '-nan' as missing too)
    for empty in ("nan", "NaN", "-nan", "+nan", "-NaN", " nan "):
        for other in ("4,1,2.0", "4,NA,2.0"):
            r = run(con, tmp_path, f"stay_id,score,dose\n1,3,1.0\n2,0,{empty}\n3,4,0.25\n{other}\n")
            assert r.columns["dose"].matched == 4, (empty, other)
            assert r.columns["score"].matched == (4 if other == "4,1,2.0" else 3)
        for filler in ("", "\n"):
            r = run(con, tmp_path, f"stay_id,score,dose\n1,3,1.0\n2,0,{empty}\n3,4,0.25\n4,1,2.0\n{filler}")
            assert r.columns["dose"].matched == 4
    r = run(con, tmp_path, "stay_id,score,dose\n1,3,1.0\n2,0,inf\n3,4,0.25\n4,1,2.0\n")
    assert r.columns["dose"].matched == 3
    r = run(con, tmp_path, "stay_id,score,dose\n1,3,1.0\n2,NA,inf\n3,4,0.25\n4,1,2.0\n")
    assert r.columns["dose"].matched == 3 and r.columns["score"].matched == 3
    assert r.columns["score"].examples[0]["agent"] == ""


def test_duplicate_null_keys_count_once(con, tmp_path):
    r = run(con, tmp_path, PERFECT + ",1,1\n,2,2\n")
    assert r.duplicate_rows == 1 and r.extra_keys == 1
    assert r.columns["score"].match_rate == 4 / 6


def test_empty_reference_is_named(tmp_path):
    c = duckdb.connect()
    c.execute("CREATE TABLE ref (stay_id INTEGER, score INTEGER, dose DOUBLE)")
    r = score_against(spec(), write(tmp_path, "stay_id,score,dose\n"), c, "ref")
    assert r.reward == 0.0 and "reference has no rows" in r.reason
    r = score_against(spec(), write(tmp_path, "stay_id,score,dose\n1,2,3\n"), c, "ref")
    assert not r.strict and "reference has no rows" in r.reason


def test_a_bad_byte_is_named_by_its_offset_in_the_file(con, tmp_path):
    # past the reader's first blocks (5.6 MB), after a run of plain ASCII rows
    body = PERFECT.encode() + b"4,1,2.0\n" * 700_000
    r = run(con, tmp_path, body + b"4,\xff,2.0\n")
    assert f"bad byte at offset {len(body) + 2}" in r.reason and r.reward == 0.0


def test_a_character_split_across_read_blocks_is_text(tmp_path):
    from clinbench.derive.score_read import file_problem

    # a 3-byte euro sign straddling every block boundary a reader of 2**14..2**22 bytes meets is valid
    # UTF-8; a bad byte after them is still named by its offset
    body = bytearray(b"stay_id,note\n")
    for power in range(14, 23):
        body += b"a" * ((1 << power) - 1 - len(body)) + "\u20ac".encode() + b"\n"
        assert body[(1 << power) - 1:(1 << power) + 2] == "\u20ac".encode()
    path = tmp_path / "split.csv"
    path.write_bytes(bytes(body))
    assert file_problem(path) == ""
    path.write_bytes(bytes(body) + b"1,\xff\n")
    assert file_problem(path) == f"output is not UTF-8 text (bad byte at offset {len(body) + 2}); save it as UTF-8"


# outputs of one header are read and scored together (rescore); the rest, and a batch with a hostile
# file, one by one: every output must get exactly what it gets alone
BATCH = [
    PERFECT,
    "stay_id,score,dose\n1,3,1.0\n2,0,\n3,4,0.25\n",  # a key missing
    PERFECT + "99,1,1.0\n",  # an extra key
    "stay_id,score,dose\n1,2,1.0\n1,3,1.0\n2,0,\n3,4,0.25\n4,1,2.0\n",  # a duplicate, first row wrong
    "stay_id,score,dose\n1,3,1.0\n2,0,nan\n3,4,inf\n4,1,2.004\n",
    "stay_id,score,dose\n1,3,1.0\n2,0,-nan\n3,4,0.25\n4,1,2.0\n",  # read as empty by the typed reader alone
    PERFECT + ",1,1\n,2,2\n",  # null keys
    "stay_id,score,dose\n1,3,1.0\n2,NA,\n3,4,0.25\n4,1,2.0\n",  # an 'NA': the whole batch takes the text path
    "stay_id,score,dose\n",  # header only
    "dose,score,stay_id\n1.0,3,1\n,0,2\n",  # another header: its own batch...
    "dose,score,stay_id\n1.0,3,1\n,NA,2\n0.25,4,3,7\n",  # ...that this file sends back one by one
    '"stay_id","score","dose"\n1,3,1.0\n',  # a header for DuckDB's sniffer
    "score,dose\n3,1\n",
    "",
    b"stay_id,score,dose\n1,3,\xff\n",
    "stay_id,dose\n1,1.0\n2,\n",  # a scored column missing
]


def test_outputs_scored_together_get_what_each_gets_alone(con, tmp_path):
    paths = [write(tmp_path, text, f"out{i}.csv") for i, text in enumerate(BATCH)]
    alone = [score_against(spec(), p, con, "ref").as_dict() for p in paths]
    together = [r.as_dict() for r in score_many_against(spec(), [*paths, tmp_path / "absent.csv"], con, "ref")]
    assert together[:-1] == alone
    assert list(alone[0]) == ["task_id", "reward", "strict", "key_precision", "key_recall", "key_f1", "coverage",
                              "ordered_value_nmae", "columns", "checks", "reference_rows", "agent_rows", "extra_keys",
                              "duplicate_rows", "missing_columns", "scored_columns", "reason"]  # score.json's fields
    assert list(alone[1]["columns"]["dose"]) == ["name", "match_rate", "nmae", "matched", "denominator", "kind",
                                                 "tolerance", "examples"]
    assert "does not exist" in together[-1]["reason"]
    assert [r["reward"] for r in alone[:4]] == [1.0, 0.75, 0.8, pytest.approx(0.7)]
    assert alone[5]["reward"] == 1.0  # '-nan' where the reference has no value


def test_out_of_memory_while_reading_an_output_is_never_its_score(con, tmp_path):
    """A 250,000-row output read by a DuckDB with 2 MB and no spill directory: DuckDB runs out of memory. That
    is this machine's failure, raised as such; it scored 0 as "not a readable CSV" before."""
    from clinbench.errors import ResourceError

    rows = "".join(f"{i},{i % 5},{i / 7:.4f}\n" for i in range(250_000, 0, -1))  # not in the reference's order
    path = write(tmp_path, "stay_id,score,dose\n" + rows)
    con.execute("SET memory_limit = '2MB'")
    con.execute("SET temp_directory = ''")
    with pytest.raises(ResourceError, match=r"^not scored: DuckDB ran out of memory \(.+\): close other programs, or "
                                            r"use a machine with more memory$"):
        score_against(spec(), path, con, "ref")
    con.execute("RESET memory_limit")
    assert score_against(spec(), path, con, "ref").reward < 1.0  # read, and scored, with memory


def test_a_full_spill_disk_is_the_machine_and_an_output_quoting_one_is_not(tmp_path, tmpfs):
    """The rule that keeps a run's failure the machine's: a real full disk under DuckDB's spill files (a query
    spilling 200 MB onto a 1 MB disk) is one; the same words in a cell that does not convert, the agent's
    bytes quoted in DuckDB's message, are not."""
    from clinbench.derive.score_read import machine_failure

    spilling = duckdb.connect()
    spilling.execute("SET memory_limit = '64MB'")
    spilling.execute("SET threads = 1")
    spilling.execute(f"SET temp_directory = '{tmpfs('spill', 'size=1m')}'")
    spilling.execute("SET max_temp_directory_size = '1GB'")  # DuckDB's own cap is 90% of the free space
    with pytest.raises(duckdb.IOException) as full:
        spilling.execute("SELECT range, md5(range::VARCHAR) || md5((range + 1)::VARCHAR) AS y FROM range(3000000) "
                         "ORDER BY y").fetchall()
    assert "No space left on device" in str(full.value) and machine_failure(full.value)
    with pytest.raises(duckdb.ConversionException) as quoted:
        duckdb.connect().execute("SELECT CAST('No space left on device; Out of Memory Error' AS INTEGER)")
    assert "No space left on device" in str(quoted.value) and not machine_failure(quoted.value)
