"""The cached ICD-10-CM classification answers exactly as simple-icd-10-cm does, on every code
(with and without dots), and a damaged cache file is rebuilt rather than believed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from clinbench.dx import icd_index

pytestmark = pytest.mark.slow  # `make test-fast` leaves this file out (see docs/performance.md)


@pytest.fixture(scope="module")
def cm():
    """The package itself, imported by the tests that compare with it: its import parses the ICD-10-CM XML
    (2-3 s), which a module-level import spent in every worker's collection, even when this file is deselected."""
    import simple_icd_10_cm

    return simple_icd_10_cm


def _fresh(monkeypatch, tmp_path):
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path))
    icd_index.classification.cache_clear()
    return icd_index.classification()


def test_every_code_gets_the_packages_answers(cm, tmp_path, monkeypatch):
    _fresh(monkeypatch, tmp_path)
    icd_index.classification.cache_clear()
    ours = icd_index.classification()  # the second one is read back from the cache file
    codes = cm.get_all_codes(True)
    assert ours.get_all_codes(True) == codes and ours.get_all_codes(False) == cm.get_all_codes(False)
    assert len(codes) > 90_000
    undotted = [c.replace(".", "") for c in codes[::7]]
    for code in codes + undotted:
        for name in ("is_valid_item", "is_block", "is_category", "is_chapter_or_block", "get_description",
                     "get_includes", "get_inclusion_term", "get_parent", "get_children", "get_ancestors"):
            assert getattr(ours, name)(code) == getattr(cm, name)(code), (name, code)
    pairs = [("I21", "I21.0"), ("I21.0", "I21"), ("I21", "I21"), ("9", "I21.4"), ("I20-I25", "I21.4"), ("B99", "B99.8"),
             ("B99", "B99"), ("J44.1", "J45")]
    for a, b in pairs:
        assert (ours.is_ancestor(a, b), ours.is_descendant(a, b)) == (cm.is_ancestor(a, b), cm.is_descendant(a, b)), (a, b)
    for bad in ("", "XYZ", "I21.99999"):
        assert ours.is_valid_item(bad) == cm.is_valid_item(bad) and not ours.is_block(bad)


def test_a_damaged_cache_file_is_rebuilt(cm, tmp_path, monkeypatch):
    first = _fresh(monkeypatch, tmp_path)
    (path,) = (tmp_path / "icd10cm").iterdir()
    path.write_text('{"format": 1, "nodes": [')  # cut short (a full disk)
    icd_index.classification.cache_clear()
    again = icd_index.classification()
    assert again.get_description("I21.4") == first.get_description("I21.4") == cm.get_description("I21.4")
    assert json.loads(path.read_text())["format"] == icd_index.FORMAT
    icd_index.classification.cache_clear()


def test_the_names_normal_forms_are_kept_named_by_the_rules_and_a_damaged_copy_is_rebuilt(cm, tmp_path, monkeypatch):
    # a case without a code (SDBench's dataset.json layout) is looked up among every name's normal form: each
    # dx worker process normalised all 110,000 names (3-4 s) before they were kept
    import hashlib

    import shutil

    from clinbench.dx import icd, text

    icd_index.classification()  # the tree as this session has it, copied (building it is the tests above)
    tree = icd_index._cache_file()
    monkeypatch.setenv("CLINBENCH_CACHE", str(tmp_path))
    (tmp_path / "icd10cm").mkdir()
    shutil.copyfile(tree, tmp_path / "icd10cm" / tree.name)
    icd_index.classification.cache_clear()
    icd._term_table.cache_clear()
    forms, owners = icd._term_table()
    path = icd.terms_cache_file()
    assert path.is_file() and hashlib.sha256(Path(text.__file__).read_bytes()).hexdigest()[:12] in path.name
    assert forms[owners.index("K35.80")] == text.normal_form(cm.get_description("K35.80"))
    icd._term_table.cache_clear()
    assert icd._term_table() == (forms, owners)  # read back
    assert icd.lookup("Acute appendicitis") == "K35"
    path.write_text('[["acute appendicitis"')  # cut short (a full disk)
    icd._term_table.cache_clear()
    assert icd._term_table() == (forms, owners)
    assert json.loads(path.read_text()) == [forms, owners]
    icd._term_table.cache_clear()
    icd_index.classification.cache_clear()
