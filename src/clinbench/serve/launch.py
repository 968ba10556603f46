"""What `clinbench serve` sets up before it listens: the stores to show and the clinician mode's dx store."""

from __future__ import annotations

from pathlib import Path

from clinbench.errors import ClinbenchError
from clinbench.serve.sources import Source, find_stores


def _dx_only(source: Source) -> bool:
    from clinbench.serve.campaigns import benchmarks

    return set(benchmarks(source)) == {"dx"}


def prepare(folders: list[Path], *, cases: str = "demo", play_out: Path | None = None, gatekeeper: str = "offline",
            judge: str = "offline", roles: dict | None = None):
    """The served sources and the ``Play`` of the clinician mode (its dx store is created and served too).

    The clinicians' store is ``play_out``, else the one given store that holds only dx runs, else
    ``FIRST_FOLDER/play``; a store holding derivation runs is never written to."""
    from clinbench.records.store import Store
    from clinbench.serve.campaigns import benchmarks
    from clinbench.serve.play import Play, default_cache

    sources = find_stores(folders)
    if play_out is None:
        dx_only = [s for s in sources if _dx_only(s)]
        play_out = dx_only[0].root if len(dx_only) == 1 else Path(folders[0]) / "play"
    play_out = Path(play_out).resolve()
    known = next((s for s in sources if s.root == play_out), None)
    if known is not None and not _dx_only(known) and benchmarks(known):
        raise ClinbenchError(f"--play-out {play_out} holds derivation runs; give a folder for dx encounters only")
    play = Play(play_out, cases, gatekeeper=gatekeeper, judge=judge, roles=roles, cache_dir=default_cache())
    play.cases(None)  # a bad --cases fails now, in one line
    if known is None:
        Store.create(play_out)
        sources = [*sources, Source(len(sources), play_out, f"{play_out.name} (clinician encounters)")]
    return sources, play
