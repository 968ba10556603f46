"""The catalogue matches the public M4Bench v1 facts and rejects bad task files clearly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from clinbench.derive.catalogue import TASKS_DIR, get_task, load_catalogue
from clinbench.errors import TaskError


def test_catalogue_has_28_tasks_in_15_families():
    cat = load_catalogue()
    assert len(cat) == 28
    assert len({t.family for t in cat.values()}) == 15
    assert sum(t.database == "eicu" for t in cat.values()) == 2
    # every task has an operational spec; a standard/raw pair shares its family's one file
    assert all(t.operational_spec for t in cat.values())
    owners = {t.reference: t.operational_spec_owner for t in cat.values()}
    assert sum(t.operational_spec is True for t in cat.values()) == len(owners) == 17
    assert all(t.operational_spec_owner == owners[t.reference] for t in cat.values())


def test_catalogue_facts_from_tasks_md():
    cat = load_catalogue()
    sofa_raw = cat["mimic-sofa-24h-raw"]
    assert sofa_raw.reference == "sofa-24h" and sofa_raw.mode == "raw"
    assert sofa_raw.accuracy_threshold == 0.9 and sofa_raw.coverage_threshold == 1.0
    assert cat["mimic-meld-24h"].tolerance("meld") == 1.0
    assert cat["mimic-meld-24h"].tolerance("subject_id") == 0.0
    assert cat["mimic-urine-output-rate"].keys == ["stay_id", "charttime"]
    assert cat["mimic-sepsis3-raw"].skills == ["sepsis-3-cohort", "sofa-score", "suspicion-of-infection"]
    assert cat["eicu-gcs"].target_table == "eicu_derived.target_eicu_gcs"
    assert cat["mimic-kdigo-48h"].target_table == "mimiciv_derived.target_kdigo_48h"
    assert cat["mimic-ventilation-raw"].coverage_threshold == 0.9
    # raw tasks reuse the standard twin's reference
    for t in cat.values():
        twin = cat.get(t.id.removesuffix("-raw"))
        if t.mode == "raw" and twin is not None and twin.id != t.id:
            assert twin.reference == t.reference


def test_fifteen_skills_referenced():
    skills = {s for t in load_catalogue().values() for s in t.skills}
    assert len(skills) == 15


def _copy_one(tmp_path: Path, task: str = "mimic-meld-24h") -> Path:
    spec = get_task(task)
    dest = tmp_path / spec.family / spec.id
    shutil.copytree(spec.task_dir, dest)
    return dest / "task.toml"


def test_bad_field_error_names_file_and_field(tmp_path):
    path = _copy_one(tmp_path)
    path.write_text(path.read_text().replace('mode = "standard"', 'mode = "fast"'))
    with pytest.raises(TaskError, match=r"task\.toml: field 'mode'"):
        load_catalogue(tmp_path)


def test_scored_column_must_be_required(tmp_path):
    path = _copy_one(tmp_path)
    path.write_text(path.read_text().replace('scored_columns = ["meld"]', 'scored_columns = ["meld_score"]'))
    with pytest.raises(TaskError, match="meld_score"):
        load_catalogue(tmp_path)


def test_unknown_field_rejected(tmp_path):
    path = _copy_one(tmp_path)
    path.write_text(path.read_text().replace("[tolerances]", 'colour = "red"\n[tolerances]'))
    with pytest.raises(TaskError, match="field 'colour'"):
        load_catalogue(tmp_path)


def test_unknown_task_suggests():
    with pytest.raises(TaskError, match="mimic-sofa-24h"):
        get_task("sofa-24h")


def test_tasks_dir_is_package_data():
    assert (TASKS_DIR / "sofa" / "mimic-sofa-24h" / "task.toml").is_file()


def test_one_task_is_read_from_its_own_file_alone_and_equals_the_catalogue_s():
    from clinbench.derive import catalogue

    catalogue._cached_catalogue.cache_clear()
    catalogue._single_task.cache_clear()
    try:
        spec = get_task("mimic-urine-output-rate")
        assert catalogue._cached_catalogue.cache_info().currsize == 0  # the other 27 files were not parsed
        assert spec.id == "mimic-urine-output-rate" and spec.family == "urine-output-rate"
        for hostile in ("../sofa", "sofa/mimic-sofa-24h", "", "mimic-sofa-24h\x00", ".."):
            with pytest.raises(TaskError, match="unknown task"):
                get_task(hostile)
        every = load_catalogue()
        assert spec == every["mimic-urine-output-rate"]
        catalogue._cached_catalogue.cache_clear()
        assert all(get_task(task_id) == every[task_id] for task_id in every)
    finally:
        catalogue._cached_catalogue.cache_clear()
        catalogue._single_task.cache_clear()
