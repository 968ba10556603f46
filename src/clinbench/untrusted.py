"""Reading and showing what an agent or a model wrote: every such byte is untrusted.

* ``loads``: JSON with its nesting depth and size bounded. A value nested deeper than
  ``MAX_DEPTH`` (which would otherwise exhaust the interpreter's recursion, there or in the
  next ``json.dumps``), longer than the caller's limit, or past one of Python's own limits (an
  integer of more than 4,300 digits) is a ``json.JSONDecodeError`` like
  any malformed JSON, so every reader treats it as the agent's bad output, never as a
  harness failure.
* ``read_json``: a JSON file of an evidence folder, read only when it is a regular file (neither it
  nor its folder a symbolic link, never waiting on a FIFO) of at most ``MAX_CHARS`` bytes; anything else
  is an ``OSError`` saying what it is, bad JSON a ``json.JSONDecodeError``.
* ``printable``: text with its control characters (terminal escape sequences, carriage
  returns, bidirectional overrides) shown as ``\\xNN`` escapes, for anything printed.
* ``markdown``: one line of text for a Markdown document, its HTML and Markdown syntax
  shown literally.
"""

from __future__ import annotations

import errno
import html
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

MAX_DEPTH = 64  # tool-call arguments and CLI events nest a handful of levels; 64 leaves room
MAX_CHARS = 16 << 20  # one JSON document (a line of a CLI's stdout, a reply body, tool-call arguments)


class UntrustedJSONError(json.JSONDecodeError):
    """JSON that is well-formed but too deep or too large to be read safely."""

    def __init__(self, message: str, doc: str):
        super().__init__(message, doc, 0)
        self.reason = message

    def __str__(self) -> str:
        return self.reason


def loads(text: str | bytes, *, max_depth: int = MAX_DEPTH, max_chars: int = MAX_CHARS) -> Any:
    """``json.loads`` for untrusted text; too deep or too long is an ``UntrustedJSONError``."""
    if isinstance(text, (bytes, bytearray)):
        text = text.decode("utf-8", errors="replace")
    if len(text) > max_chars:
        raise UntrustedJSONError(f"JSON of {len(text):,} characters is over the {max_chars:,} limit", text)
    try:
        value = json.loads(text)
    except RecursionError:
        raise UntrustedJSONError(f"JSON nested deeper than {max_depth} levels", text) from None
    except json.JSONDecodeError:
        raise
    except ValueError as exc:  # Python's own limits, e.g. an integer of more than 4,300 digits
        raise UntrustedJSONError(f"JSON Python cannot read ({exc})", text) from None
    if text.count("[") + text.count("{") > max_depth and too_deep(value, max_depth):
        raise UntrustedJSONError(f"JSON nested deeper than {max_depth} levels", text)
    return value


def read_json(path: Path, *, max_bytes: int = MAX_CHARS) -> Any:
    """``loads`` of the file ``path``. The file and its folder are opened without following a symbolic
    link (links higher up ``path``, the campaign folder's own, are followed), without blocking (a FIFO is
    never waited on) and checked on the open descriptor: a file that is not regular or holds over
    ``max_bytes`` is an ``OSError`` saying so."""
    path = Path(path)
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC
    folder = os.open(path.parent, flags | os.O_DIRECTORY)
    try:
        fd = os.open(path.name, flags | os.O_NONBLOCK, dir_fd=folder)
    finally:
        os.close(folder)
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        if st.st_size > max_bytes:
            raise OSError(errno.EFBIG, f"over {max_bytes:,} bytes", str(path))
        data = fh.read(max_bytes + 1)  # it may have grown since
    if len(data) > max_bytes:
        raise OSError(errno.EFBIG, f"over {max_bytes:,} bytes", str(path))
    return loads(data, max_chars=max_bytes)


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether a parsed JSON value nests lists and objects deeper than ``limit``."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))
    return False


_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: Any) -> str:
    """``text`` safe for a terminal: control characters (but newline and tab) as ``\\xNN``/``\\uNNNN``."""
    return _CONTROL.sub(_escape, str(text))


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group(0))
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_MARKDOWN = re.compile(r"([\\`*_\[\]|~!#])")


def markdown(text: Any) -> str:
    """One line of untrusted text for a Markdown paragraph or table cell: HTML escaped, Markdown
    syntax (emphasis, links, images, code, table pipes) backslash-escaped, whitespace folded."""
    flat = printable(" ".join(str(text).split()))
    return _MARKDOWN.sub(r"\\\1", html.escape(flat, quote=False))
