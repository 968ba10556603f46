"""The hand-written records of the score path (clinbench.plain) behave as the dataclasses they replaced."""

import pytest

from clinbench.column_score import ColumnScore
from clinbench.derive.catalogue import TaskError, get_task, load_task_file
from clinbench.derive.score_reference import Reference
from clinbench.records import ColumnScore as StoredColumnScore


def test_equal_by_value_unhashable_and_shown_with_their_fields():
    a, b = ColumnScore("dose", 0.5, 0.1), ColumnScore("dose", 0.5, 0.1)
    assert a == b and a != ColumnScore("dose", 0.25, 0.1) and a != ("dose", 0.5, 0.1)
    assert ColumnScore is StoredColumnScore  # one class: the store's and the scorer's
    with pytest.raises(TypeError):
        hash(a)
    assert repr(a) == ("ColumnScore(name='dose', match_rate=0.5, nmae=0.1, matched=None, denominator=None, kind='', "
                       "tolerance=None, examples=[])")
    a.examples.append({"key": {}})
    assert b.examples == []  # each record its own list


def test_a_task_spec_is_frozen_and_replace_checks_the_copy_again():
    spec = get_task("mimic-sofa-24h")
    with pytest.raises(AttributeError, match="cannot assign to field 'keys' of a frozen TaskSpec"):
        spec.keys = ["x"]
    with pytest.raises(AttributeError, match="frozen"):
        del spec.id
    copy = spec.replace(operational_spec=False)
    assert copy.operational_spec is False and spec.operational_spec is not False
    assert copy.replace(operational_spec=spec.operational_spec) == spec
    from clinbench.derive.catalogue import SpecError

    with pytest.raises(SpecError, match="Input should be less than or equal to 1"):
        spec.replace(coverage_threshold=2)
    ref = Reference("__ref", {"a": "numeric"}, 3, {"a": 1.0}, ("a",), "t")
    assert ref.replace(unique_keys=True).unique_keys and not ref.unique_keys


def test_a_task_file_with_a_missing_or_an_extra_field_names_it(tmp_path):
    text = get_task("mimic-sofa-24h").task_dir.joinpath("task.toml").read_text()
    folder = tmp_path / "sofa" / "mimic-sofa-24h"
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text('flavour = "x"\n' + text)  # before any [table]
    with pytest.raises(TaskError, match="field 'flavour': Extra inputs are not permitted"):
        load_task_file(folder / "task.toml")
    (folder / "task.toml").write_text("\n".join(line for line in text.splitlines() if not line.startswith("decoy_skill")))
    with pytest.raises(TaskError, match="field 'decoy_skill': Field required"):
        load_task_file(folder / "task.toml")
