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
