"""Open a page in headless Chromium over the DevTools pipe and report what a reader would see.

The browser gets no network (offline flags, a fresh profile) and talks to us over
``--remote-debugging-pipe`` (fds 3 and 4: NUL-terminated JSON messages), so nothing listens
on a port. We collect console errors, uncaught exceptions, log-domain errors (failed loads)
and the values of a few JavaScript expressions evaluated after the load event.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-extensions",
    "--disable-default-apps", "--mute-audio", "--remote-debugging-pipe",
]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageResult:
    errors: list[str] = field(default_factory=list)
    values: dict[str, object] = field(default_factory=dict)


class _Pipe:
    def __init__(self, to_browser: int, from_browser: int):
        self.w = os.fdopen(to_browser, "wb", buffering=0)
        self.r = os.fdopen(from_browser, "rb", buffering=0)
        self.buf = b""
        self.next_id = 0

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> int:
        self.next_id += 1
        msg: dict = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        self.w.write(json.dumps(msg).encode() + b"\0")
        return self.next_id

    def read(self, deadline: float) -> dict:
        while b"\0" not in self.buf:
            if time.monotonic() > deadline:
                raise TimeoutError("chromium did not answer in time")
            chunk = os.read(self.r.fileno(), 1 << 16)
            if not chunk:
                raise EOFError("chromium closed the DevTools pipe")
            self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)


def open_page(url: str, expressions: dict[str, str], *, timeout: float = 60.0) -> PageResult:
    """Load ``url``; return console/log errors and the value of each JS expression."""
    binary = find_chromium()
    if binary is None:
        raise FileNotFoundError("chromium is not installed")
    to_r, to_w = os.pipe()  # we write, chromium reads on fd 3
    from_r, from_w = os.pipe()  # chromium writes on fd 4, we read
    profile = tempfile.mkdtemp(prefix="clinbench-chromium-")
    result = PageResult()
    deadline = time.monotonic() + timeout
    proc = subprocess.Popen(
        [binary, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        pass_fds=(3, 4), preexec_fn=lambda: (os.dup2(to_r, 3), os.dup2(from_w, 4)) and None,
    )
    os.close(to_r)
    os.close(from_w)
    pipe = _Pipe(to_w, from_r)
    try:
        def call(method: str, params: dict | None = None, session: str | None = None) -> dict:
            mid = pipe.send(method, params, session)
            while True:
                msg = pipe.read(deadline)
                _collect(msg, result)
                if msg.get("id") == mid:
                    if "error" in msg:
                        raise RuntimeError(f"{method}: {msg['error']}")
                    return msg.get("result", {})

        target = call("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page.enable", "Runtime.enable", "Log.enable"):
            call(domain, session=session)
        call("Page.navigate", {"url": url}, session=session)
        while True:  # wait for the load event
            msg = pipe.read(deadline)
            _collect(msg, result)
            if msg.get("method") == "Page.loadEventFired":
                break
        for name, expr in expressions.items():
            res = call("Runtime.evaluate", {"expression": expr, "returnByValue": True}, session=session)
            if "exceptionDetails" in res:
                result.errors.append(f"evaluating {name}: {res['exceptionDetails'].get('text')}")
            else:
                result.values[name] = res["result"].get("value")
        try:
            pipe.send("Browser.close")
        except OSError:
            pass
    finally:
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        for fh in (pipe.w, pipe.r):
            try:
                fh.close()
            except OSError:
                pass
        shutil.rmtree(profile, ignore_errors=True)
    return result


def _collect(msg: dict, result: PageResult) -> None:
    method = msg.get("method")
    params = msg.get("params", {})
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        result.errors.append("console: " + " ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
    elif method == "Runtime.exceptionThrown":
        result.errors.append("exception: " + str(params.get("exceptionDetails", {}).get("text")))
    elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
        entry = params["entry"]
        result.errors.append(f"log: {entry.get('text')} {entry.get('url', '')}".strip())


def file_url(path: Path) -> str:
    return Path(path).resolve().as_uri()
