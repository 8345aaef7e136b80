"""Bounds on what the server says back (:func:`public`): input echoed as a short excerpt, a server path reduced to
its file name (the full error goes to the server's log)."""

from __future__ import annotations

import re
from typing import Any

from goboom_env.hints import EXCERPT, short_repr

MAX_MESSAGE = 500
_SCANNED = 100 * MAX_MESSAGE  # how much of a message is looked at (the rest is cut anyway)


def excerpt(value: Any) -> str:
    """:func:`~goboom_env.hints.short_repr` cut to about :data:`EXCERPT` characters, ``…`` where it was cut."""
    text = short_repr(value)
    return text if len(text) <= EXCERPT + 20 else text[:EXCERPT] + "…"


_LONG_LITERAL = re.compile(rf"""(['"])((?:(?!\1)[^\\\n]|\\.){{{EXCERPT + 20},}})(\1|$)""")
_ABSOLUTE_PATH = re.compile(r"""(?<![\w.~/\\-])(?:~|[A-Za-z]:)?[/\\](?:[^\s'"/\\,;:()\[\]{}<>]+[/\\])*"""
                            r"""([^\s'"/\\,;:()\[\]{}<>]+)""")
_RELATIVE_FILE = re.compile(r"""(?<![\w.~/\\-])(?:[\w.-]+/)+([\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]*)\b""")


def without_paths(message: str) -> str:
    """``message`` with each file path (absolute, or relative with a suffix) reduced to its last part."""
    return _RELATIVE_FILE.sub(r"\1", _ABSOLUTE_PATH.sub(r"\1", message))


def public(message: str) -> str:
    """A message as the page may see it: no server path, every quoted literal longer than an excerpt cut, and at most
    :data:`MAX_MESSAGE` long."""
    message = _LONG_LITERAL.sub(lambda m: f"{m.group(1)}{m.group(2)[:EXCERPT]}…{m.group(1)}",
                                without_paths(message[:_SCANNED]))
    return message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE] + "…"
