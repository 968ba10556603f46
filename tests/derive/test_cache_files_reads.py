"""A shared cached database is read whole once per run, not twice, and a writer that puts the mtime back
between two runs is still caught: by the next run's own check after it, then by a rebuild."""

from __future__ import annotations

import hashlib
import os

import pytest

from clinbench.derive import cache_files
from clinbench.derive.cache_files import seal, sealed_sha256, sha256_file, verified


@pytest.fixture
def reads(monkeypatch):
    """How many times a file is hashed whole (hashlib.file_digest, as sha256_file reads)."""
    count = []
    real = hashlib.file_digest

    def counted(fh, digest):
        count.append(fh.name)
        return real(fh, digest)

    monkeypatch.setattr(hashlib, "file_digest", counted)
    monkeypatch.setattr(cache_files, "_READ", {})
    return count


def _sealed_file(tmp_path):
    path = tmp_path / "task.duckdb"
    path.write_bytes(os.urandom(3 << 20))
    seal(path)
    return path


def test_a_run_reads_the_shared_database_once(tmp_path, reads):
    path = _sealed_file(tmp_path)
    assert len(reads) == 1  # the seal hashed it
    for run in range(3):
        assert verified(path)  # the run's use: the bytes this process read last, at the same stamp
        link = tmp_path / f"ws{run}.duckdb"
        os.link(path, link)  # the run's workspace holds a hard link to it
        assert sha256_file(link) == sealed_sha256(path)  # the run's check after it ended
        link.unlink()
    assert len(reads) == 1 + 3  # before: 1 + 6, the file read before and after each run


def test_a_writer_that_puts_the_mtime_back_is_flagged_then_rebuilt(tmp_path, reads):
    path = _sealed_file(tmp_path)
    before = path.stat()
    os.chmod(path, 0o644)
    with path.open("r+b") as fh:  # same size, one byte changed, then mode and mtime as they were
        fh.seek(1 << 20)
        byte = fh.read(1)
        fh.seek(1 << 20)
        fh.write(bytes([byte[0] ^ 0xFF]))
    os.chmod(path, 0o444)
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert cache_files.intact(path)  # the stamp cannot tell
    # the next run's use trusts the bytes this process read last, at this stamp ...
    assert verified(path)
    # ... and its own check after it sees other bytes: the run is flagged (campaign.execute.database_changed)
    assert sha256_file(path) != sealed_sha256(path)
    # the use after that reads the file again and finds it changed: the cached database is rebuilt
    assert not verified(path)


def test_a_file_this_process_never_read_is_read(tmp_path, reads):
    path = _sealed_file(tmp_path)
    cache_files._READ.clear()  # another process sealed it
    assert verified(path) and len(reads) == 2
