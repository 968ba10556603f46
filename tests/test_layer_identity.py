"""benchmarks/layer_identity.py: what it reports when a rebuilt table is not the one the base revision built."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SPEC = importlib.util.spec_from_file_location("layer_identity", Path(__file__).resolve().parent.parent / "benchmarks" / "layer_identity.py")
identity = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(identity)


def _table(columns, rows=3, digest="17"):
    return {"columns": [list(c) for c in columns], "rows": rows, "digest": digest}


def test_identical_builds_report_nothing():
    built = {"mimiciv_derived.sofa": _table([("stay_id", "INTEGER"), ("sofa_24hours", "INTEGER")])}
    assert identity._differences(built, {k: dict(v) for k, v in built.items()}, frozenset()) == []


def test_each_kind_of_difference_is_one_line_naming_the_table():
    base = {
        "mimiciv_derived.vitalsign": _table([("stay_id", "INTEGER"), ("temperature", "DECIMAL(18,2)")]),
        "mimiciv_derived.kdigo_uo": _table([("stay_id", "INTEGER")], rows=10),
        "mimiciv_derived.oasis": _table([("stay_id", "INTEGER")], digest="1"),
        "mimiciv_derived.arb": _table([("stay_id", "INTEGER")]),
        "mimiciv_derived.sofa_points": _table([("stay_id", "INTEGER")]),  # a helper table the base built
    }
    ours = {
        "mimiciv_derived.vitalsign": _table([("stay_id", "INTEGER"), ("temperature", "DECIMAL(18,1)"), ("site", "VARCHAR")]),
        "mimiciv_derived.kdigo_uo": _table([("stay_id", "INTEGER")], rows=9),
        "mimiciv_derived.oasis": _table([("stay_id", "INTEGER")], digest="2"),
        "mimiciv_derived.crrt": _table([("stay_id", "INTEGER")]),
    }
    assert identity._differences(base, ours, frozenset({"mimiciv_derived.sofa_points"})) == [
        "mimiciv_derived.arb: only in the base build",
        "mimiciv_derived.crrt: only in this build",
        "mimiciv_derived.kdigo_uo: 9 rows, base 10",
        "mimiciv_derived.oasis: same 3 rows counted, different values",
        "mimiciv_derived.vitalsign: columns differ: temperature DECIMAL(18,2) -> DECIMAL(18,1), site - -> VARCHAR",
    ]
