"""What error messages say: the extra that installs a missing optional module (every optional import goes through
:func:`needs_extra`), the name the user probably meant (:func:`did_you_mean`), and outside text made safe and short
to show (:func:`safe_text`, :func:`shown`, :func:`one_line`). It imports nothing of the package, so every layer may
use it.
"""

from __future__ import annotations

import difflib
import math
import re
import reprlib
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

EXTRAS: dict[str, tuple[str, ...]] = {
    # extra of pyproject.toml [project.optional-dependencies]: the top-level modules it installs itself
    "eval": ("matplotlib", "openskill", "scipy"),
    "vector": ("numba",),
    "fast": ("torch", "tensorboard", "threadpoolctl"),
    "train": ("stable_baselines3", "sb3_contrib"),
    "rllib": ("ray",),
    "torchrl": ("torchrl", "tensordict"),
    "tianshou": ("tianshou",),
    "openspiel": ("pyspiel", "open_spiel"),
    "web": ("starlette", "uvicorn", "websockets"),
}
"""The optional modules, by the extra that installs them (the smallest extra that brings a module is the one named)."""


INCLUDES: dict[str, tuple[str, ...]] = {"fast": ("eval", "vector"), "train": ("fast",), "rllib": ("train",),
                                        "torchrl": ("train",), "tianshou": ("train",)}
"""The extras an extra installs besides its own modules (``goboom-env[...]`` in its requirements)."""


def extra_modules(extra: str) -> list[str]:
    """Every module ``extra`` installs, those of the extras it includes first."""
    return [m for inner in INCLUDES.get(extra, ()) for m in extra_modules(inner)] + list(EXTRAS[extra])


def extra_of(module: str | None) -> str | None:
    """The extra that installs ``module`` (a dotted name counts by its top package); None for any other."""
    top = (module or "").partition(".")[0]
    return next((extra for extra, modules in EXTRAS.items() if top in modules), None)


class MissingExtraError(ModuleNotFoundError):
    """An optional module is missing; the message names the feature, the extra and its ``pip install`` line."""


@contextmanager
def needs_extra(what: str) -> Iterator[None]:
    """Import optional modules inside this block: a ModuleNotFoundError of an extra's module becomes a
    :class:`MissingExtraError` for ``what`` (``Result.paired() needs the 'eval' extra (scipy is not installed): pip
    install "goboom-env[eval]"``); any other error passes unchanged (a missing module of the package is a bug)."""
    try:
        yield
    except MissingExtraError:
        raise  # the message of an inner block names the feature that needs the module
    except ModuleNotFoundError as exc:
        extra = extra_of(exc.name)
        if extra is None:
            raise
        top = str(exc.name).partition(".")[0]
        raise MissingExtraError(f"{what} needs the '{extra}' extra ({top} is not installed): "
                                f'pip install "goboom-env[{extra}]"', name=exc.name) from exc


def close_matches(word: object, choices: Iterable[str], n: int = 3, cutoff: float = 0.6) -> list[str]:
    """The choices closest to ``word`` (difflib's ratio, case ignored), best first; empty when none is close."""
    if not isinstance(word, str) or not word:
        return []
    by_folded: dict[str, str] = {}
    for choice in choices:
        by_folded.setdefault(choice.casefold(), choice)
    found = difflib.get_close_matches(word.casefold(), list(by_folded), n=n, cutoff=cutoff)
    return [by_folded[f] for f in found if by_folded[f] != word]


def did_you_mean(word: object, choices: Iterable[str], quote: bool = True, about: str = "") -> str:
    """``" (did you mean 'iters'?)"`` (the closest choice, and any as close: ``" (did you mean 'a' or 'b'?)"``),
    or ``""`` when no choice is close: to append to a message that names ``word`` as unknown. ``quote=False``
    leaves the names bare (command-line options: ``--num-players``); ``about`` names the word in a message of
    several (``" (--num-player: did you mean --num-players?)"``)."""
    found = close_matches(word, choices)
    if not found:
        return ""
    folded = str(word).casefold()

    def ratio(choice: str) -> float:
        return difflib.SequenceMatcher(None, folded, choice.casefold()).ratio()

    best = max(map(ratio, found))
    close = sorted((m for m in found if ratio(m) >= best - TIE), key=lambda m: (-ratio(m), m))
    return f" ({about + ': ' if about else ''}did you mean {joined([repr(m) if quote else m for m in close], 'or')}?)"


TIE = 0.02
"""Choices whose closeness is within this of the closest one's are suggested with it."""


def joined(words: Sequence[str], last: str = "and") -> str:
    """``words`` as a sentence lists them: ``"a, b and c"`` (``last="or"``: ``"a, b or c"``)."""
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {last} {words[-1]}"


EXCERPT = 60
"""The most characters of a value :func:`shown` echoes."""
MAX_MESSAGE = 2000
"""The longest error message :func:`one_line` keeps (its middle is cut)."""


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")
"""Characters a terminal acts on rather than shows: C0 and C1 controls (ESC starts every escape sequence, CSI and
OSC among them), DEL, and the marks that reorder or break the text (bidirectional overrides, line separators)."""


def _escaped(match: re.Match[str]) -> str:
    char = match[0]
    return _SHORT_ESCAPES.get(char) or (f"\\x{ord(char):02x}" if ord(char) < 0x100 else f"\\u{ord(char):04x}")


_SHORT_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def safe_text(text: str) -> str:
    """``text`` with every control character written out as an escape (ESC as ``\\x1b``, a newline as ``\\n``):
    a string from a file shown in a terminal can then neither move the cursor, clear the screen, set the window
    title, write the clipboard, hide a hyperlink nor start a new line."""
    return _CONTROL.sub(_escaped, str(text))


_REPR = reprlib.Repr()  # the repr of shown(): a few items of a list, the ends of a long string
_REPR.maxstring = _REPR.maxother = _REPR.maxlong = EXCERPT
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = _REPR.maxset = 6
_REPR.maxlevel = 3


def short_repr(value: Any) -> str:
    """``repr(value)`` with a few items of each list and the ends of a long string or number, control characters
    escaped: what an error message may echo of a value however large it is."""
    try:
        return safe_text(_REPR.repr(value))
    except ValueError:  # an integer too long for Python to write out
        return f"<an integer of about {int(value.bit_length() * math.log10(2))} digits>"


def shown(value: Any, limit: int = EXCERPT) -> str:
    """:func:`short_repr` cut to about ``limit`` characters (``...`` where it was cut)."""
    text = short_repr(value)
    return text if len(text) <= limit else f"{text[:limit - 3]}..."


def one_line(message: str, limit: int = MAX_MESSAGE) -> str:
    """An error message as it may be printed: control characters escaped (:func:`safe_text`, a newline included)
    and at most about ``limit`` characters, its middle cut."""
    text = str(message)
    if len(text) > limit:
        keep = limit // 2
        text = f"{text[:keep]} ... ({len(text) - 2 * keep:,} characters left out) ... {text[-keep:]}"
    return safe_text(text)
