"""Download the open-access PhysioNet demos (MIMIC-IV demo, eICU-CRD demo) with resume.

``SHA256SUMS.txt`` is read first; every file it lists is downloaded to ``<file>.part``
(resumed with an HTTP Range request when a partial file exists), checked against its
sha256 and only then renamed into place. A file already in place with the right checksum
is not downloaded again, so re-running an interrupted fetch finishes it.

Behaviour on trouble, chosen so that what is on disk can always be trusted:
- a checksum mismatch stops the fetch with an error naming the file, and the bad file is
  deleted (it is never left where ``data load`` would read it);
- a listed file the server does not have (HTTP 404) is reported and skipped; the fetch
  goes on with the others, and the report lists what is missing so ``data load --partial``
  can be used knowingly. If the server has none of the files, the fetch fails.

The base URL defaults to PhysioNet (``https://physionet.org/files``) and is replaced by
the environment variable ``CLINBENCH_PHYSIONET_URL``; a demo lives under
``<base>/<project>/<version>/`` as on PhysioNet.
"""

from __future__ import annotations

import http.client
import os
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Literal

from clinbench.atomic import atomic_path
from clinbench.ehr.load import CHECKSUMS, read_checksums, sha256_of
from clinbench.errors import DataError

PHYSIONET_FILES = "https://physionet.org/files"
BASE_URL_ENV = "CLINBENCH_PHYSIONET_URL"
_CHUNK = 1 << 16
_TIMEOUT_SECONDS = 60


@dataclass(frozen=True)
class Demo:
    name: str  # the name users type: mimic-iv-demo, eicu-demo
    project: str  # PhysioNet project slug
    version: str
    dataset: str  # what `data load` calls it: mimic-iv, eicu
    licence: str
    citations: tuple[str, ...]

    @property
    def folder(self) -> str:
        return f"{self.project}-{self.version}"


_PHYSIONET_CITATION = ("Goldberger A, et al. PhysioBank, PhysioToolkit, and PhysioNet: Components of a new "
                       "research resource for complex physiologic signals. Circulation 101(23):e215-e220 (2000).")
_ODBL = "Open Data Commons Open Database License v1.0 (ODbL); see LICENSE.txt in the downloaded folder"

DEMOS: dict[str, Demo] = {
    "mimic-iv-demo": Demo(
        "mimic-iv-demo", "mimic-iv-demo", "2.2", "mimic-iv", _ODBL,
        ("Johnson A, Bulgarelli L, Pollard T, Horng S, Celi LA, Mark R. MIMIC-IV Clinical Database Demo "
         "(version 2.2). PhysioNet (2023). https://doi.org/10.13026/dp1f-ex47", _PHYSIONET_CITATION),
    ),
    "eicu-demo": Demo(
        "eicu-demo", "eicu-crd-demo", "2.0.1", "eicu", _ODBL,
        ("Johnson A, Pollard T, Badawi O, Raffa J. eICU Collaborative Research Database Demo (version 2.0.1). "
         "PhysioNet (2021). https://physionet.org/content/eicu-crd-demo/2.0.1/", _PHYSIONET_CITATION),
    ),
}


@dataclass(frozen=True)
class FetchEvent:
    """A step of a fetch for a progress display: a file starts, advances, ends, or a warning."""

    kind: Literal["start", "advance", "done", "skip", "warning"]
    file: str = ""
    bytes: int = 0  # start: total size when known (0 if not); advance: bytes just received
    resumed_from: int = 0
    message: str = ""


FetchProgress = Callable[[FetchEvent], None]


@dataclass
class FetchReport:
    demo: Demo
    path: Path  # the folder to give to `clinbench data load`
    downloaded: list[str] = field(default_factory=list)
    already_present: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)  # listed, but the server lacks them
    resumed: list[str] = field(default_factory=list)
    bytes_received: int = 0


def base_url() -> str:
    return os.environ.get(BASE_URL_ENV, "").strip() or PHYSIONET_FILES


def demo_url(demo: Demo) -> str:
    return f"{base_url().rstrip('/')}/{demo.project}/{demo.version}/"


def fetch_demo(name: str, dest: str | Path, *, progress: FetchProgress | None = None) -> FetchReport:
    """Download demo ``name`` into ``dest/<project>-<version>/``, verified; see the module doc."""
    demo = DEMOS.get(name)
    if demo is None:
        raise DataError(f"unknown demo {name!r}: choose one of {', '.join(DEMOS)}")
    root = Path(dest) / demo.folder
    created = [p for p in (root, *root.parents) if not p.exists()]  # removed again if the fetch gets nothing
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"cannot create {root} ({exc.strerror}): choose another --out") from exc
    try:
        return _fetch_into(demo, root, progress)
    except BaseException:
        _remove_if_nothing_kept(root, created)
        raise


def _remove_if_nothing_kept(root: Path, created: list[Path]) -> None:
    """After a failed fetch: remove the folders it created when no download is kept in them (a partial
    file is kept: the next fetch resumes it); a listing alone is not worth keeping."""
    files = [p for p in root.rglob("*") if p.is_file()] if root.is_dir() else []
    if any(p.name != CHECKSUMS or p.parent != root for p in files):
        return
    for p in files:
        p.unlink(missing_ok=True)
    for folder in created:  # deepest first
        try:
            folder.rmdir()
        except OSError:
            return


def _fetch_into(demo: Demo, root: Path, progress: FetchProgress | None) -> FetchReport:
    url = demo_url(demo)
    report = FetchReport(demo=demo, path=root)

    def emit(event: FetchEvent) -> None:
        if progress is not None:
            progress(event)

    listing = root / CHECKSUMS
    try:
        with atomic_path(listing) as tmp:  # the listing is not resumed: whole or absent
            _download(url + CHECKSUMS, tmp, resume=False, emit=emit, rel=CHECKSUMS)
    except _NotOnServer as exc:
        raise DataError(f"{url}{CHECKSUMS} was not found: check {BASE_URL_ENV} or the demo name") from exc
    sums = read_checksums(listing)
    if not sums:
        raise DataError(f"{url}{CHECKSUMS} lists no files: check {BASE_URL_ENV} or try again later")

    for rel, expected in sums.items():
        target = _safe_target(root, rel)
        if target.exists() and sha256_of(target) == expected:
            report.already_present.append(rel)
            emit(FetchEvent("skip", rel, message="already present and verified"))
            continue
        target.unlink(missing_ok=True)
        part = target.with_name(target.name + ".part")
        try:
            received, resumed_from = _download(url + urllib.parse.quote(rel), part, resume=True, emit=emit, rel=rel)
        except _NotOnServer:
            report.unavailable.append(rel)
            part.unlink(missing_ok=True)
            emit(FetchEvent("warning", rel, message=f"{rel} is listed in {CHECKSUMS} but not on the server: skipped"))
            continue
        report.bytes_received += received
        if resumed_from:
            report.resumed.append(rel)
        actual = sha256_of(part)
        if actual != expected:
            part.unlink(missing_ok=True)
            raise DataError(f"checksum mismatch for {rel} downloaded from {url}: expected {expected[:12]}…, got "
                            f"{actual[:12]}…; the bad file was deleted, run the fetch again (or check {BASE_URL_ENV})")
        os.replace(part, target)
        report.downloaded.append(rel)
        emit(FetchEvent("done", rel))

    if len(report.unavailable) == len(sums):
        raise DataError(f"none of the {len(sums)} files listed in {CHECKSUMS} is on {url}: check {BASE_URL_ENV}")
    return report


class _NotOnServer(Exception):
    pass


def _safe_target(root: Path, rel: str) -> Path:
    parts = PurePosixPath(rel).parts
    if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
        raise DataError(f"{CHECKSUMS} lists an unsafe path {rel!r}: refusing to write outside {root}")
    return root.joinpath(*parts)


def _download(url: str, part: Path, *, resume: bool, emit: Callable[[FetchEvent], None], rel: str) -> tuple[int, int]:
    """Fetch ``url`` into ``part``, continuing a partial file; return (bytes received, resumed from)."""
    offset = part.stat().st_size if resume and part.exists() else 0
    headers = {"User-Agent": "clinbench-fetch"}
    if offset:
        headers["Range"] = f"bytes={offset}-"
    request = urllib.request.Request(url, headers=headers)
    try:
        response = urllib.request.urlopen(request, timeout=_TIMEOUT_SECONDS)
    except urllib.error.HTTPError as exc:
        if exc.code == 404:
            raise _NotOnServer(url) from exc
        if exc.code == 416 and offset:
            return 0, offset  # the partial file is already complete; the checksum decides
        raise DataError(f"downloading {url} failed: HTTP {exc.code} {exc.reason}; try again later") from exc
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DataError(f"cannot reach {url} ({reason}): check the network or {BASE_URL_ENV}") from exc

    with response:
        if offset and response.status != 206:
            offset = 0  # the server ignored the range: start over
        length = int(response.headers.get("Content-Length") or 0)
        emit(FetchEvent("start", rel, bytes=offset + length if length else 0, resumed_from=offset))
        received = 0
        part.parent.mkdir(parents=True, exist_ok=True)  # only now: a file the server lacks leaves no folder
        try:
            with open(part, "ab" if offset else "wb") as fh:
                while chunk := response.read(_CHUNK):
                    fh.write(chunk)
                    received += len(chunk)
                    emit(FetchEvent("advance", rel, bytes=len(chunk)))
        except (OSError, http.client.HTTPException) as exc:
            raise DataError(f"downloading {url} was interrupted ({exc}): run the fetch again to resume") from exc
    if length and received < length:
        raise DataError(f"downloading {url} stopped after {offset + received} bytes: run the fetch again to resume")
    return received, offset
