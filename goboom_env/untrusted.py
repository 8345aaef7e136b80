"""Data from outside the process: the one bounded JSON reader and checked reads of its fields.

Every JSON text the package reads goes through :func:`parse_json` (or :func:`read_json`, a file within a size limit),
so a crafted file costs bounded work and answers with a ValueError. :class:`Fields` reads one JSON object's fields
with their types and ranges, every error naming the field by its path (``hands[0].moves[3].seat: must be ...``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO, Any

from goboom_env.cards import face_of
from goboom_env.config import as_int, errors_prefixed
from goboom_env.hints import shown

MAX_DEPTH = 32
"""The deepest nesting of JSON arrays and objects :func:`parse_json` reads (a game record needs 7 levels)."""
MAX_INT_DIGITS = 20
"""The most digits of a JSON integer :func:`parse_json` reads (enough for any 64-bit seed)."""
MAX_JSON_BYTES = 256 * 2**20
"""The largest JSON file :func:`read_json` reads by default (a tournament's ``results.json`` of a million games)."""

_TOO_DEEP = f"not JSON we read: nested more than {MAX_DEPTH} levels deep"


class _RefusedError(ValueError):
    """A refused JSON value: it stands in for the value while parsing, then :func:`_check_tree` raises it with its
    path filled in."""

    def __init__(self, problem: str) -> None:
        super().__init__(problem)
        self.problem, self.keys = problem, []

    def __str__(self) -> str:
        path = "".join(f"[{k}]" if isinstance(k, int) else f".{key_text(k)}" for k in self.keys).lstrip(".")
        return f"{path}: {self.problem}" if path else self.problem


def _constant(name: str) -> _RefusedError:
    return _RefusedError(f"{name} is not a JSON number (JSON has no NaN or Infinity)")


def _integer(text: str) -> int | _RefusedError:
    digits = len(text) - text.startswith("-")
    if digits > MAX_INT_DIGITS:
        return _RefusedError(f"an integer of {digits} digits (at most {MAX_INT_DIGITS})")
    return int(text)


def _float(text: str) -> float | _RefusedError:
    value = float(text)
    return value if math.isfinite(value) else _RefusedError(f"{text[:40]} is not a finite number")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any] | _RefusedError:
    data = dict(pairs)
    if len(data) < len(pairs):  # a repeated key: find the first one
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                return _RefusedError(f"the key {shown(key)} appears twice")
            seen.add(key)
    return data


def parse_json(text: str | bytes, source: str = "") -> Any:
    """JSON data from ``text``, refusing what no file we read holds: NaN and Infinity, numbers too large to be finite,
    integers of more than :data:`MAX_INT_DIGITS` digits, nesting deeper than :data:`MAX_DEPTH` and repeated keys.
    ValueError names the problem and where it is, after ``source: `` when given."""
    prefix = f"{source}: " if source else ""
    try:
        data = json.loads(text, parse_constant=_constant, parse_int=_integer, parse_float=_float,
                          object_pairs_hook=_object)
        _check_tree(data, 1)
    except RecursionError:
        raise ValueError(prefix + _TOO_DEEP) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        problem = f"not UTF-8 text ({exc.reason} at byte {exc.start})" if isinstance(exc, UnicodeDecodeError) else exc
        raise ValueError(f"{prefix}not JSON: {problem}") from None
    except ValueError as exc:  # a refused value, or nesting deeper than MAX_DEPTH
        raise ValueError(prefix + str(exc)) from None
    return data


def read_json(path: str | Path, max_bytes: int = MAX_JSON_BYTES) -> Any:
    """The JSON data of the file at ``path``, read within ``max_bytes``; ValueError naming the file otherwise."""
    return parse_json(read_file(path, max_bytes), str(path))


def read_file(path: str | Path, max_bytes: int, name: str = "") -> bytes:
    """The bytes of the file at ``path`` within ``max_bytes``; ValueError naming it (or ``name``) otherwise."""
    name = name or str(path)
    with errors_prefixed(f"cannot read {name}", OSError, ValueError), Path(path).open("rb") as fh:
        return read_limited(fh, max_bytes, name)


def read_limited(fh: IO[bytes], max_bytes: int, name: str) -> bytes:
    """All of the stream ``fh``; ValueError naming ``name`` when it holds more than ``max_bytes`` (``/dev/zero``)."""
    data = fh.read(max_bytes + 1)
    if len(data) > max_bytes:
        size = f"{max_bytes // 2**20} MiB" if max_bytes >= 2**20 else f"{max_bytes:,} bytes"
        raise ValueError(f"{name} is larger than {size}, more than any file goboom-env writes; refused, not read")
    return data


def key_text(key: str) -> str:
    """A field name as an error message shows it: as is when it is a name, else quoted."""
    return key if key.isidentifier() else shown(key)


def _check_tree(value: Any, depth: int) -> None:
    """Raise the first refused value (:class:`_RefusedError`), ValueError at a container nested deeper than
    :data:`MAX_DEPTH` (``depth`` counts the containers around ``value``, itself included)."""
    if isinstance(value, _RefusedError):
        raise value
    if isinstance(value, dict):
        children: Iterable[tuple[str | int, Any]] = value.items()
    elif isinstance(value, list):
        children = enumerate(value)
    else:
        return
    if depth > MAX_DEPTH:
        raise ValueError(_TOO_DEEP)
    for key, child in children:
        try:
            _check_tree(child, depth + 1)
        except _RefusedError as exc:
            exc.keys.insert(0, key)
            raise


_MISSING: Any = object()  # a reader's ``raw`` default: read the value from the object


class Fields:
    """Typed reads of one JSON object whose fields are ``names`` (and maybe ``optional``); every error is a
    ValueError ``"<prefix>: <path>: <problem>"``. The readers take the field's name and, for an item of a list, its
    value as ``raw`` (``integer("drawn[2]", 0, 9, raw=item)``)."""

    def __init__(self, data: Any, names: Sequence[str], optional: Sequence[str] = (), *, path: str = "",
                 prefix: str = "") -> None:
        self.where, self.prefix = path, prefix
        if not isinstance(data, dict):
            raise self.error("", f"must be a JSON object, got {type(data).__name__}")
        if missing := [n for n in names if n not in data]:
            raise self.error(missing[0], "missing")
        if unknown := sorted((k for k in data if k not in names and k not in optional), key=str):
            raise self.error(key_text(str(unknown[0])), f"unknown field (known: {', '.join([*names, *optional])})")
        self.data = data

    def path(self, name: str) -> str:
        """The path of field ``name`` (which may end in ``[i]``)."""
        return ".".join(part for part in (self.where, name) if part)

    def error(self, name: str, problem: str) -> ValueError:
        """The ValueError of a bad field ``name`` ("" = the object itself)."""
        return ValueError(": ".join(part for part in (self.prefix, self.path(name), problem) if part))

    def child(self, name: str, names: Sequence[str], optional: Sequence[str] = (), raw: Any = _MISSING) -> Fields:
        """The object in field ``name`` (or ``raw``), read with its path."""
        return Fields(self.data[name] if raw is _MISSING else raw, names, optional, path=self.path(name),
                      prefix=self.prefix)

    def integer(self, name: str, lo: int, hi: int, raw: Any = _MISSING) -> int:
        """An integer in ``lo..hi`` (bools and floats are not integers)."""
        raw = self.data[name] if raw is _MISSING else raw
        value = as_int(raw)
        if value is None or not lo <= value <= hi:
            raise self.error(name, f"must be an integer in {lo}..{hi}, got {shown(raw)}")
        return value

    def seat(self, name: str, n: int, unset: Any = _MISSING, raw: Any = _MISSING) -> Any:
        """A seat in ``0..n-1``, or ``unset`` (``None`` or ``-1``) where the field may be empty."""
        raw = self.data[name] if raw is _MISSING else raw
        if unset is not _MISSING and (raw is unset if unset is None else as_int(raw) == unset):
            return unset
        value = as_int(raw)
        if value is None or not 0 <= value < n:
            allowed = "a seat" if unset is _MISSING else f"{'null' if unset is None else unset} or a seat"
            raise self.error(name, f"must be {allowed} in 0..{n - 1}, got {shown(raw)}")
        return value

    def flag(self, name: str, raw: Any = _MISSING) -> bool:
        raw = self.data[name] if raw is _MISSING else raw
        if not isinstance(raw, bool) and type(raw).__name__ != "bool_":
            raise self.error(name, f"must be true or false, got {shown(raw)}")
        return bool(raw)

    def text(self, name: str, raw: Any = _MISSING) -> str:
        raw = self.data[name] if raw is _MISSING else raw
        if not isinstance(raw, str):
            raise self.error(name, f"must be a string, got {shown(raw)}")
        return raw

    def card(self, name: str, raw: Any = _MISSING) -> int:
        """A card code (``"7D"``, ``"JK"``) as its face."""
        try:
            return face_of(self.data[name] if raw is _MISSING else raw)
        except ValueError as exc:
            raise self.error(name, str(exc)) from None

    def items(self, name: str, length: int | None = None, raw: Any = _MISSING) -> list:
        """A list (or tuple), of ``length`` entries when given."""
        raw = self.data[name] if raw is _MISSING else raw
        if not isinstance(raw, (list, tuple)):
            raise self.error(name, f"must be a list, got {type(raw).__name__}")
        if length is not None and len(raw) != length:
            raise self.error(name, f"must have {length} entries, got {len(raw)}")
        return list(raw)

    def ints(self, name: str, length: int | None, lo: int = -(10**9), hi: int = 10**9) -> tuple[int, ...]:
        """A list of integers in ``lo..hi``."""
        return tuple(self.integer(f"{name}[{i}]", lo, hi, raw) for i, raw in enumerate(self.items(name, length)))

    def seats(self, name: str, n: int) -> tuple[int, ...]:
        """A list of seats in ``0..n-1``."""
        return tuple(self.seat(f"{name}[{i}]", n, raw=raw) for i, raw in enumerate(self.items(name)))

    def number(self, name: str, raw: Any = _MISSING) -> float:
        """A finite number (an int or a float; a bool is not a number)."""
        raw = self.data[name] if raw is _MISSING else raw
        if type(raw) not in (int, float) or not math.isfinite(raw):
            raise self.error(name, f"must be a finite number, got {shown(raw)}")
        return float(raw)

    def numbers(self, name: str, length: int) -> tuple[float, ...]:
        """A list of finite numbers."""
        return tuple(self.number(f"{name}[{i}]", raw) for i, raw in enumerate(self.items(name, length)))

    def texts(self, name: str) -> dict[str, str]:
        """An object of strings."""
        raw = self.data[name]
        if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
            raise self.error(name, "must be an object of strings")
        return dict(raw)


__all__ = ["MAX_DEPTH", "MAX_INT_DIGITS", "MAX_JSON_BYTES", "Fields", "key_text", "parse_json", "read_file",
           "read_json", "read_limited"]
