"""The one configuration type of the project: a frozen, validated :class:`GameConfig`.

Defaults follow RULES.md; ``None`` fields are derived from the variant, the player count and
the scoring (R1.1: two decks for 7+ players; R2.1: two jokers; R2.2: one round per player).
A config remembers which derived fields were set explicitly, so :meth:`GameConfig.replace`
derives the others again: the result always equals a config built from scratch with the same
explicit fields. Invalid values raise :class:`ValueError` naming the field and the allowed range.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from goboom_env.hints import did_you_mean, shown

Variant = Literal["classic", "jokers"]
Scoring = Literal["standard", "reverse", "penalty"]
AfterJoker = Literal["match", "any"]

MAX_PLAYERS = 12
MAX_JOKERS = 200
MAX_DECKS = 4
_DEFAULT_TARGETS = {"standard": 200, "reverse": 100}
DERIVED_FIELDS = ("num_decks", "num_jokers", "scoring", "target_score", "rounds")
"""Fields whose default (``None``) is derived from the others; see :meth:`GameConfig.replace`."""


@dataclass(frozen=True)
class GameConfig:
    """Rules configuration of one Go Boom game (a match of one or more hands).

    Example:
        >>> GameConfig(variant="classic", num_players=7).num_decks
        2
        >>> GameConfig(variant="jokers", num_players=3).rounds
        3
    """

    variant: Variant = "classic"
    """``"classic"`` (R1, trick taking) or ``"jokers"`` (R2, discard pile and booms)."""
    num_players: int = 4
    """Seats, 2..12 in classic (R1.1), 2..12 in jokers as long as the stock keeps a card (R2.1)."""
    hand_size: int = 7
    """Cards dealt to each player (R1.3, R2.3)."""
    num_decks: int | None = None
    """52-card decks: classic 1 for 2-6 players, 2 for 7-12 (R1.1); jokers 1 (R2.1)."""
    num_jokers: int | None = None
    """Jokers added (jokers variant only; default 2; 0 = aces mode, R2.8). Classic has none."""
    scoring: Scoring | None = None
    """Classic: ``"standard"`` (R1.11) or ``"reverse"`` (R1.12); jokers: ``"penalty"`` (R2.11)."""
    target_score: int | None = None
    """Classic match end: 200 for standard, 100 for reverse. Jokers has no target (R2.2)."""
    rounds: int | None = None
    """Jokers match length in rounds, default one per player (R2.2). Classic plays to a target."""
    after_joker: AfterJoker = "match"
    """Jokers: ``"match"`` = follow the card under a joker (R2.6); ``"any"`` = anything follows."""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    _explicit: frozenset[str] = field(default=frozenset(), init=False, compare=False, repr=False)
    """The derived fields given a value (not ``None``) when the config was built."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "_explicit", frozenset(f for f in DERIVED_FIELDS if getattr(self, f) is not None))
        check_choice("variant", self.variant, ("classic", "jokers"))
        _check_int(self, "num_players", 2, MAX_PLAYERS)
        _check_int(self, "hand_size", 1, 52 * MAX_DECKS)
        check_choice("after_joker", self.after_joker, ("match", "any"))
        classic = self.variant == "classic"
        defaults = {"num_decks": 2 if classic and self.num_players >= 7 else 1, "num_jokers": 0 if classic else 2,
                    "scoring": "standard" if classic else "penalty"}
        for name, value in defaults.items():
            if getattr(self, name) is None:
                object.__setattr__(self, name, value)
        _check_int(self, "num_decks", 1, MAX_DECKS)
        if classic:
            self._check_classic()
        else:
            self._check_jokers()
        if self.extra:
            names = ", ".join(shown(k) for k in sorted(self.extra, key=str)[:5])
            more = f" and {len(self.extra) - 5} more" if len(self.extra) > 5 else ""
            raise ValueError(f"unknown configuration fields: [{names}]{more}")

    def _check_classic(self) -> None:
        if as_int(self.num_jokers) != 0:
            raise ValueError(f"num_jokers must be 0 in classic Go Boom (R1.1), got {shown(self.num_jokers)}")
        object.__setattr__(self, "num_jokers", 0)
        check_choice("scoring", self.scoring, ("standard", "reverse"), "for variant='classic'")
        if self.rounds is not None:
            raise ValueError("rounds applies to variant='jokers' only; classic plays to target_score")
        if self.after_joker != "match":
            raise ValueError("after_joker applies to variant='jokers' only")
        if self.target_score is None:
            object.__setattr__(self, "target_score", _DEFAULT_TARGETS[self.scoring])
        _check_int(self, "target_score", 1, 1_000_000)
        cards = 52 * self.num_decks
        self._check_deal_fits(cards, f"needs {self.num_players * self.hand_size} cards but {self.num_decks} "
                                     f"deck(s) hold {cards}")

    def _check_jokers(self) -> None:
        _check_int(self, "num_jokers", 0, MAX_JOKERS)
        check_choice("scoring", self.scoring, ("penalty",), "for variant='jokers' (R2.11)")
        if self.target_score is not None:
            raise ValueError("target_score applies to variant='classic' only; jokers plays `rounds` rounds")
        if self.rounds is None:
            object.__setattr__(self, "rounds", self.num_players)
        _check_int(self, "rounds", 1, 10_000)
        limit = 52 * self.num_decks - 1
        self._check_deal_fits(limit, f"= {self.num_players * self.hand_size} cards, but jokers Go Boom must leave "
                                     f"a non-joker card in the stock (R2.1), so num_players x hand_size must be "
                                     f"<= {limit}")

    def _check_deal_fits(self, cards: int, why: str) -> None:
        """ValueError saying ``why`` when the deal takes more than ``cards`` (non-joker) cards."""
        if self.num_players * self.hand_size > cards:
            raise ValueError(f"hand_size={self.hand_size} x num_players={self.num_players} {why}: "
                             f"hand_size must be in 1..{cards // self.num_players}")

    # -- derived facts used by the engine and the encoders -------------------------------

    @property
    def is_classic(self) -> bool:
        """True for classic Go Boom (R1), False for jokers Go Boom (R2)."""
        return self.variant == "classic"

    @property
    def aces_mode(self) -> bool:
        """Jokers Go Boom with no jokers: aces are the boom cards (R2.8)."""
        return self.variant == "jokers" and self.num_jokers == 0

    @property
    def anything_after_joker(self) -> bool:
        """Jokers Go Boom where any card may follow a joker (``after_joker="any"``); aces mode has no jokers."""
        return self.after_joker == "any" and not self.aces_mode

    @property
    def deck_size(self) -> int:
        """Cards in play: 52 per deck plus the jokers."""
        return 52 * self.num_decks + self.num_jokers

    def explicit_fields(self) -> dict[str, Any]:
        """The fields that rebuild this config: the rule fields (variant, num_players, hand_size, after_joker) and
        the derived fields that were set explicitly. ``GameConfig(**explicit)`` equals this config, and derived
        fields left out are derived again.

        >>> GameConfig(num_players=7, target_score=50).explicit_fields()["target_score"]
        50
        >>> "num_decks" in GameConfig(num_players=7).explicit_fields()
        False
        """
        return {name: getattr(self, name) for name in field_names()
                if name not in DERIVED_FIELDS or name in self._explicit}

    def replace(self, **changes: Any) -> GameConfig:
        """A copy with some fields changed, validated again; derived fields not set explicitly (or changed to
        ``None``) are derived again: ``GameConfig(**{**self.explicit_fields(), **changes})``.

        >>> GameConfig(num_players=7).replace(num_players=4).num_decks
        1
        >>> GameConfig(num_players=7, num_decks=2).replace(num_players=4).num_decks
        2
        """
        return GameConfig.from_dict({**self.explicit_fields(), **changes})

    def to_dict(self) -> dict[str, Any]:
        """Every field as a JSON-friendly dict, derived ones with their values, so that a saved config keeps them
        even if derivation rules change (:meth:`explicit_fields` keeps derived fields derived)."""
        return {name: getattr(self, name) for name in field_names()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> GameConfig:
        """Build from a dict of fields (``None`` = derive); unknown keys are an error, not dropped."""
        if not isinstance(data, dict):
            raise ValueError(f"a config must be a dict of GameConfig fields, got {type(data).__name__}")
        names = field_names()
        known = {k: v for k, v in data.items() if k in names}
        unknown = {k: v for k, v in data.items() if k not in names}
        return cls(**known, extra=unknown)

    @classmethod
    def preset(cls, name: str, **overrides: Any) -> GameConfig:
        """A named preset from :data:`PRESETS`, optionally with fields overridden."""
        if name not in PRESETS:
            raise ValueError(f"unknown preset {shown(name)}; choose one of {sorted(PRESETS)}"
                             f"{did_you_mean(name, PRESETS)}")
        return cls.from_dict({**PRESETS[name], **overrides})


PRESETS: dict[str, dict[str, Any]] = {
    "classic": {"variant": "classic", "num_players": 4},
    "classic-2p": {"variant": "classic", "num_players": 2},
    "classic-reverse": {"variant": "classic", "num_players": 4, "scoring": "reverse"},
    "classic-12p": {"variant": "classic", "num_players": 12},
    "jokers": {"variant": "jokers", "num_players": 4},
    "jokers-3p": {"variant": "jokers", "num_players": 3},
    "jokers-aces": {"variant": "jokers", "num_players": 4, "num_jokers": 0},
    "jokers-any": {"variant": "jokers", "num_players": 4, "after_joker": "any"},
}
"""Named configurations; ``GameConfig.preset("jokers", num_players=3)``."""


def as_int(value: Any) -> int | None:
    """``value`` as a Python int if it is an integer: an ``int``, a numpy integer scalar or a 0-d integer array (what
    ``model.predict`` returns); ``None`` for anything else, bools included (never a card, a seat or a count here).

    >>> as_int(3), as_int(np.int8(3)), as_int(np.array(3)), as_int(True), as_int(3.0)
    (3, 3, 3, None, None)
    """
    if type(value) is int:
        return value
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)) or (
            isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu"):
        return int(value)
    return None


def field_docs(cls: type) -> dict[str, str]:
    """The docstring under each field of the class ``cls`` and of its bases, read from their source (the nearest
    class's wins; a class made at run time has none): the ``--help`` text of each option."""
    import ast
    import inspect
    import itertools
    import textwrap

    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):
        try:
            source = inspect.getsource(klass)
        except (OSError, TypeError):
            continue
        body = ast.parse(textwrap.dedent(source)).body[0].body  # type: ignore[attr-defined]
        docs |= {node.target.id: after.value.value for node, after in itertools.pairwise(body)
                 if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                 and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)}
    return docs


def field_names() -> tuple[str, ...]:
    """The rules fields of :class:`GameConfig`, in order (what ``to_dict`` holds and ``from_dict`` reads)."""
    return tuple(f.name for f in dataclasses.fields(GameConfig) if f.init and f.name != "extra")


def check_int(name: str, value: Any, lo: int, hi: int | None = None) -> int:
    """``value`` as a Python int (see :func:`as_int`) if it is an integer in ``lo..hi`` (no upper
    bound when ``hi`` is None); otherwise ValueError naming ``name`` and the allowed range.

    >>> check_int("games", np.int64(3), 1)
    3
    """
    number = as_int(value)
    if number is None or number < lo or (hi is not None and number > hi):
        raise ValueError(f"{name} must be {_integer_range(lo, hi)}, got {shown(value)}")
    return number


def check_number(name: str, value: Any, *, allow_zero: bool = False) -> float:
    """``value`` as a float if it is a positive (with ``allow_zero``, non-negative) finite number; otherwise
    ValueError naming ``name`` (bools, strings, NaN and infinity are refused).

    >>> check_number("c", 2), check_number("c", 0, allow_zero=True)
    (2.0, 0.0)
    """
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise ValueError(f"{name} must be a number, got {shown(value)}")
    number = float(value)
    if not np.isfinite(number) or number < 0 or (number == 0 and not allow_zero):
        raise ValueError(f"{name} must be a {'non-negative' if allow_zero else 'positive'} number, got {shown(value)}")
    return number


def _integer_range(lo: int, hi: int | None) -> str:
    if hi is not None:
        return f"an integer in {lo}..{hi}"
    return {0: "a non-negative integer", 1: "a positive integer"}.get(lo, f"an integer >= {lo}")


def _check_int(config: GameConfig, name: str, lo: int, hi: int) -> None:
    """Check that field ``name`` is an integer in ``lo..hi``; store it as a Python int."""
    object.__setattr__(config, name, check_int(name, getattr(config, name), lo, hi))


@contextmanager
def errors_prefixed(where: str, kind: type[Exception] = ValueError,
                    raised: type[Exception] | None = None) -> Iterator[None]:
    """Raise a ``kind`` error of the block again as ``raised`` (``kind`` itself by default) with ``where:`` in front of
    its message, so an error names the place (a record's line, a seat, a file) its bad value came from. An OSError
    says only its reason: ``cannot read x.json: Permission denied``."""
    try:
        yield
    except kind as exc:
        problem = (exc.strerror or exc) if isinstance(exc, OSError) else exc
        raise (raised or kind)(f"{where}: {problem}") from None


def check_choice(name: str, value: Any, allowed: tuple[str, ...], where: str = "") -> None:
    """ValueError naming ``name``, the choices and ``where`` they apply, unless ``value`` is one of ``allowed``."""
    if value not in allowed:
        suffix = f" {where}" if where else ""
        raise ValueError(f"{name} must be one of {list(allowed)}{suffix}, got {shown(value)}")
