"""Runs INSIDE the sandbox (standard library only): ``python3 stamp_lines.py PROGRAM ARGS...``.

Runs the program and copies its stdout line by line, adding ``"time"`` (ISO 8601 UTC, when the
line arrived) to every JSON-object line that has none, so the CLIs' transcript events carry
timestamps. Other lines pass unchanged; stderr and stdin are the program's own. The exit
status is the program's.
"""

import json
import os
import subprocess
import sys
import threading
from datetime import datetime, timezone


def stamp(line):
    text = line.rstrip("\n")
    if text.startswith("{"):
        try:
            event = json.loads(text)
        except (ValueError, RecursionError):  # malformed or nested too deep: passed on unchanged
            event = None
        if isinstance(event, dict) and "time" not in event:
            now = datetime.now(timezone.utc).isoformat(timespec="milliseconds")
            return json.dumps({"time": now, **event}) + "\n"
    return line


def main(argv):
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, encoding="utf-8", errors="replace")

    def copy():
        for line in proc.stdout:
            sys.stdout.write(stamp(line))
            sys.stdout.flush()

    copier = threading.Thread(target=copy, daemon=True)
    copier.start()
    status = proc.wait()
    # the program's last lines; a process it left behind holding its stdout does not keep the run alive
    copier.join(timeout=DRAIN_SECONDS)
    sys.stdout.flush()
    return status


DRAIN_SECONDS = 2.0

if __name__ == "__main__":
    try:
        code = main(sys.argv[1:])
        sys.stdout.flush()
        os._exit(code if code >= 0 else 128 - code)  # without waiting for a copier still blocked on a leftover's pipe
    except FileNotFoundError as exc:
        sys.stderr.write(f"cannot start {sys.argv[1]!r}: {exc}\n")
        sys.exit(127)
