"""Ctrl-C in the long commands that are not campaigns (issue 29): each says on one line what it
kept and how to go on, exits 130, and prints no traceback. `data synth` is interrupted for real
(tests/ehr/test_synth_cli.py); here the interrupt lands inside the library call each command makes."""

from __future__ import annotations

import sys

import pytest


def _interrupt(*_args, **_kwargs):
    raise KeyboardInterrupt


@pytest.mark.parametrize(("argv", "target", "kept"), [
    (["rescore", "CAMP"], "clinbench.campaign.rescore.rescore_campaign",
     "interrupted: the runs re-scored before it are recorded and resealed, the others keep their earlier scores; "
     "rerun the same command to re-score every run"),
    (["store", "rebuild", "CAMP"], "clinbench.campaign.rebuild.rebuild_store",
     "interrupted: the store is unchanged (the new one is built beside it and renamed over it at the end); "
     "rerun the same command"),
    (["report", "CAMP", "--html", "CAMP/r.html"], "clinbench.report.build.write_report",
     "interrupted: no report file was changed (each is computed first, then written whole and renamed); "
     "rerun the same command"),
])
def test_ctrl_c_says_what_was_kept_and_exits_130(argv, target, kept, tmp_path, monkeypatch, capsys):
    from clinbench.cli import main

    module, name = target.rsplit(".", 1)
    monkeypatch.setattr(__import__(module, fromlist=[name]), name, _interrupt)
    (tmp_path / "camp").mkdir()
    monkeypatch.setattr(sys, "argv", ["clinbench", *[a.replace("CAMP", str(tmp_path / "camp")) for a in argv]])
    with pytest.raises(SystemExit) as exc:
        main()
    out = capsys.readouterr()
    assert exc.value.code == 130
    assert out.err.strip() == kept  # one line, nothing else
    assert "Traceback" not in out.out + out.err


def test_ctrl_c_inside_a_query_that_a_library_call_reports_as_its_failure_is_still_an_interrupt(tmp_path, monkeypatch,
                                                                                                 capsys):
    # A load wraps DuckDB's errors in its own one-line error; Ctrl-C inside one of its queries is DuckDB's
    # InterruptException, which was then printed as "error: ..." with exit 2 instead of 130
    import duckdb

    from clinbench.cli import main
    from clinbench.errors import ClinbenchError

    def interrupted_load(*_args, **_kwargs):
        try:
            raise duckdb.InterruptException("INTERRUPT Error: Interrupted!")
        except duckdb.Error as exc:
            raise ClinbenchError(f"load failed: {exc}") from exc

    monkeypatch.setattr("clinbench.ehr.synth.synth_mimic_iv", interrupted_load)
    monkeypatch.setattr(sys, "argv", ["clinbench", "data", "synth", "mimic-iv", "--patients", "5",
                                      "--out", str(tmp_path / "s.duckdb")])
    with pytest.raises(SystemExit) as exc:
        main()
    out = capsys.readouterr()
    assert exc.value.code == 130 and "error" not in out.err
    assert out.err.strip() == ("interrupted: nothing was written: the database appears at --out only when complete; "
                               "rerun the same command")
    assert not (tmp_path / "s.duckdb").exists()
