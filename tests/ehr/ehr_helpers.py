"""Helpers shared by the ehr tests (a uniquely named module, importable from the test files)."""

from __future__ import annotations

import gzip
from http.server import SimpleHTTPRequestHandler
from pathlib import Path


def write_gz(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(path, "wt", encoding="utf-8", newline="") as fh:
        fh.write(text)
    return path


PATIENTS_CSV = (
    "subject_id,gender,anchor_age,anchor_year,anchor_year_group,dod\n"
    "1,F,52,2150,2011 - 2013,\n"
    "2,M,91,2160,2017 - 2019,2161-03-04\n"
    "3,F,18,2170,2008 - 2010,\n"
)


class RangeHandler(SimpleHTTPRequestHandler):
    """Static files with single-range ``Range: bytes=N-`` support (http.server has none).

    Every request's path and Range header is recorded in ``server.requests``. Knobs on the
    server: ``honour_ranges`` (False: answer 200 with the whole file, as some servers do) and
    ``cut_once`` (URL path -> bytes: the next response for it stops after that many bytes and
    the connection closes, as when a network drops)."""

    def log_message(self, format, *args):  # keep test output quiet
        pass

    def send_head(self):
        self.server.requests.append((self.path, self.headers.get("Range")))
        path = Path(self.translate_path(self.path))
        wanted = self.headers.get("Range")
        if not wanted or not path.is_file() or not self.server.honour_ranges:
            return super().send_head()
        start = int(wanted.removeprefix("bytes=").split("-")[0])
        size = path.stat().st_size
        if start >= size:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.end_headers()
            return None
        fh = open(path, "rb")
        fh.seek(start)
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{size - 1}/{size}")
        self.send_header("Content-Length", str(size - start))
        self.end_headers()
        return fh

    def copyfile(self, source, outputfile):
        cut = self.server.cut_once.pop(self.path, None)
        if cut is None:
            return super().copyfile(source, outputfile)
        outputfile.write(source.read(cut))
        self.close_connection = True
