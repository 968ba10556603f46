"""The identity of the files a view's SQL names: what its rows change with."""

from __future__ import annotations

import os

from clinbench.fileid import named_files_identity


def test_the_files_a_view_reads_are_named_by_path_or_glob_and_a_rewrite_changes_their_identity(tmp_path, monkeypatch):
    (tmp_path / "pq").mkdir()
    for name in ("a.parquet", "b.parquet", "notes.txt"):
        (tmp_path / "pq" / name).write_bytes(b"x")
    view = f"SELECT * FROM read_parquet('{tmp_path}/pq/*.parquet') WHERE label LIKE '**' OR label = 'o''neil'"
    before = named_files_identity(view)
    assert [entry[0] for entry in before] == [f"{tmp_path}/pq/a.parquet", f"{tmp_path}/pq/b.parquet"]

    (tmp_path / "pq" / "b.new").write_bytes(b"yy")
    os.replace(tmp_path / "pq" / "b.new", tmp_path / "pq" / "b.parquet")  # replaced in place, as a re-download does
    assert named_files_identity(view) != before

    # a pattern or a label is no path: '**' in the working directory is not walked
    monkeypatch.chdir(tmp_path)
    assert named_files_identity("SELECT 1 WHERE 'a' LIKE '**' OR 'b' = 'x'") == ()
