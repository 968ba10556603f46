"""A run's evidence verifies only as it was sealed: every file added since is named, whatever it is."""

from __future__ import annotations

import os

from clinbench.campaign import evidence


def _sealed_run(tmp_path):
    folder = tmp_path / "campaign" / evidence.RUNS_DIR / "r1"
    (folder / "skills" / "sofa").mkdir(parents=True)
    (folder / "output.csv").write_text("stay_id\n1\n")
    (folder / "skills" / "sofa" / "SKILL.md").write_text("# sofa\n")
    evidence.write_manifest(folder, {"run": "r1"})
    evidence.seal_manifest(folder, tmp_path / "campaign", "r1")
    return folder


def test_intact_evidence_verifies(tmp_path):
    assert evidence.verify_manifest(_sealed_run(tmp_path)) == []


def test_every_kind_of_addition_is_named_at_any_depth_in_path_order(tmp_path):
    folder = _sealed_run(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "hidden.csv").write_text("x\n")
    (folder / "a").mkdir()
    (folder / "a" / "b.csv").write_text("x\n")  # a folder's file sorts before a sibling file "a.txt"
    (folder / "a.txt").write_text("x\n")
    (folder / ".hidden").write_text("x\n")
    (folder / "skills" / "sofa" / "extra.md").write_text("x\n")
    os.symlink(outside, folder / "linked")  # a link to a folder is named, never followed
    os.symlink(outside / "hidden.csv", folder / "skills" / "link.csv")
    os.mkfifo(folder / "pipe")
    (folder / "empty").mkdir()  # an empty folder holds nothing added
    assert evidence.verify_manifest(folder) == [
        ".hidden (added)", "a/b.csv (added)", "a.txt (added)", "linked (added)", "pipe (added)",
        "skills/link.csv (added)", "skills/sofa/extra.md (added)"]


def test_a_changed_or_replaced_file_is_named(tmp_path):
    folder = _sealed_run(tmp_path)
    (folder / "output.csv").write_text("stay_id\n2\n")
    (folder / "skills" / "sofa" / "SKILL.md").unlink()
    os.symlink(folder / "output.csv", folder / "skills" / "sofa" / "SKILL.md")
    assert evidence.verify_manifest(folder) == ["output.csv", "skills/sofa/SKILL.md"]
