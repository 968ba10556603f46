"""The synthetic databases give every one of the 28 derivation tasks a non-trivial reference.

Builds the concepts and task targets (clinbench.concepts) on a copy of the 500-patient MIMIC-IV
and a 300-patient eICU database, then checks each task's reference: rows exist, and every scored
column takes at least two values (a reference that is constant could be matched without reading
the data). Sepsis-3's reference keeps only the stays that meet the definition, so its ``sepsis3``
column is constant by design.
"""

from __future__ import annotations

import shutil

import duckdb
import pytest

from clinbench.ehr.synth import synth_eicu

from clinbench.concepts import build
from clinbench.derive import catalogue

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)

pytest_plugins = ["synth_fixtures"]
CONSTANT_BY_DESIGN = {("sepsis3", "sepsis3")}


@pytest.fixture(scope="module")
def built(synth_mimic500, tmp_path_factory):
    folder = tmp_path_factory.mktemp("synth_tasks")
    mimic = shutil.copy(synth_mimic500, folder / "mimic.duckdb")
    eicu = synth_eicu(folder / "eicu.duckdb", patients=300, seed=0)
    for path in (mimic, eicu):
        build.build_concepts(path)  # raises ConceptError naming the failing SQL file and line
    return {"mimic-iv": mimic, "eicu": eicu}


@pytest.mark.slow
def test_every_task_reference_is_non_trivial(built):
    tasks = catalogue.load_catalogue()
    assert len(tasks) == 28
    for spec in tasks.values():
        table = f"{spec.derived_schema}.target_{spec.reference.replace('-', '_')}"
        with duckdb.connect(str(built[spec.database]), read_only=True) as con:
            rows = con.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
            assert rows >= 50, spec.id
            for column in spec.scored_columns:
                distinct = con.execute(f'SELECT count(DISTINCT "{column}") FROM {table}').fetchone()[0]
                if (spec.family, column) in CONSTANT_BY_DESIGN:
                    assert distinct == 1, (spec.id, column)
                else:
                    assert distinct >= 2, (spec.id, column)


def test_convention_edges_occur_in_the_references(built):
    with duckdb.connect(str(built["mimic-iv"]), read_only=True) as con:
        one = lambda sql: con.execute(sql).fetchone()[0]  # noqa: E731
        # every KDIGO stage, and a CRRT stage
        assert one("SELECT count(DISTINCT aki_stage) FROM mimiciv_derived.target_kdigo_48h") == 4
        assert one("SELECT count(*) FROM mimiciv_derived.target_kdigo_48h WHERE aki_stage_crrt = 3") > 0
        # all five ventilation statuses and more than one episode in some stays
        assert one("SELECT count(DISTINCT ventilation_status) FROM mimiciv_derived.target_ventilation") == 5
        assert one("SELECT max(ventilation_seq) FROM mimiciv_derived.target_ventilation") >= 2
        # suspicion of infection with and without a culture, positive and negative
        assert one("SELECT count(DISTINCT suspected_infection) FROM mimiciv_derived.target_suspicion_infection") == 2
        assert one("SELECT count(DISTINCT positive_culture) FROM mimiciv_derived.target_suspicion_infection") == 2
        # SOFA cardiovascular from norepinephrine at and above 0.1 (scores 3 and 4)
        assert one("SELECT count(DISTINCT cardiovascular) FROM mimiciv_derived.target_sofa_24h "
                   "WHERE cardiovascular >= 3") == 2
        # every OASIS pre-ICU length-of-stay band
        assert one("SELECT count(DISTINCT preiculos_score) FROM mimiciv_derived.target_oasis_24h") == 5
