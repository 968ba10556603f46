"""PNG copies of the SVG figures, rendered by a local headless Chromium (no Python imaging deps).

Optional: only ``--png`` asks for it, and a machine without Chromium gets a one-line error
saying what to install. The browser runs offline with a throw-away profile.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from clinbench.atomic import atomic_path
from clinbench.stats.errors import StatsError

_BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")
_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
    "--disable-sync", "--no-first-run", "--disable-extensions", "--hide-scrollbars", "--mute-audio",
)


def find_browser() -> str | None:
    return next((p for p in (shutil.which(n) for n in _BROWSERS) if p), None)


def svg_size(svg: str) -> tuple[int, int]:
    m = re.search(r'<svg[^>]*\swidth="(\d+)"[^>]*\sheight="(\d+)"', svg)
    if not m:
        raise StatsError("figure has no width/height; cannot size its PNG")
    return int(m.group(1)), int(m.group(2))


def svg_to_png(svg_path: Path, png_path: Path, *, scale: int = 2, timeout: float = 60.0) -> Path:
    """Render ``svg_path`` to ``png_path`` at ``scale``× its pixel size (written atomically)."""
    browser = find_browser()
    if browser is None:
        raise StatsError("PNG figures need a headless Chromium (Debian: apt-get install chromium); the SVG figures are written")
    width, height = svg_size(Path(svg_path).read_text(encoding="utf-8"))
    png_path = Path(png_path)
    png_path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(png_path) as tmp, tempfile.TemporaryDirectory(prefix="clinbench-chromium-") as profile:
        try:
            proc = subprocess.run(
                [browser, *_FLAGS, f"--user-data-dir={profile}", f"--window-size={width},{height}",
                 f"--force-device-scale-factor={scale}", f"--screenshot={tmp}", Path(svg_path).resolve().as_uri()],
                capture_output=True, text=True, timeout=timeout,
            )
        except subprocess.TimeoutExpired as exc:
            raise StatsError(f"chromium took over {timeout:g} s to render {svg_path}; retry without --png") from exc
        if proc.returncode != 0 or not tmp.is_file() or tmp.stat().st_size == 0:
            last = (proc.stderr.strip().splitlines() or ["no message"])[-1]
            raise StatsError(f"chromium could not render {svg_path} ({last}); retry without --png")
    return png_path
