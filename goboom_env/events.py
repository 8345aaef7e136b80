"""The public events of a hand (RULES.md R4.1): one typed record per kind, and one formatter table.

Each kind is a :class:`~typing.NamedTuple` whose first field is its :class:`EventKind` (a :class:`enum.StrEnum`), so
an event compares equal to the plain tuple ``("play", 0, 5)`` and reads as ``event.seat``:

=============  ======================  ========================================================
kind           fields                  meaning
=============  ======================  ========================================================
``play``       seat, face              a card goes to the trick or the discard pile
``draw``       seat, count             cards drawn from the stock (the cards stay hidden, R4.1)
``pass``       seat                    a draw that found nothing to play (R1.6), or a pass (R2.7)
``trick``      seat                    classic: the seat wins the trick and leads next (R1.7)
``out``        seat                    the seat went out (R1.9, R2.9)
``upcard``     face                    jokers: the card turned up to start the pile (R2.3)
``bury``       face                    jokers: a joker turned up and put under the stock (R2.3)
``boom``       seat                    jokers: a boom card makes everyone else draw (R2.6, R2.8)
``blocked``                            jokers: every player passed on an empty stock (R2.10)
=============  ======================  ========================================================

Three renderings share :data:`EVENT_FORMATS`: :func:`event_to_json`, :func:`event_text` and :func:`describe_event`.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from goboom_env.cards import JOKER, MATCH_MASKS, NUM_FACES, boom_mask, code_of, pretty
from goboom_env.config import GameConfig
from goboom_env.hints import shown
from goboom_env.untrusted import Fields


class EventKind(enum.StrEnum):
    """What happened; the value is the name written in saved states and playthroughs."""

    PLAY = "play"
    DRAW = "draw"
    PASS = "pass"
    TRICK = "trick"
    OUT = "out"
    UPCARD = "upcard"
    BURY = "bury"
    BOOM = "boom"
    BLOCKED = "blocked"


class Play(NamedTuple):
    kind: EventKind
    seat: int
    face: int


class Draw(NamedTuple):
    kind: EventKind
    seat: int
    count: int


class SeatEvent(NamedTuple):
    """``pass``, ``trick``, ``out`` and ``boom``: something one seat did or got."""

    kind: EventKind
    seat: int


class CardEvent(NamedTuple):
    """``upcard`` and ``bury``: a card turned up from the stock."""

    kind: EventKind
    face: int


class Blocked(NamedTuple):
    kind: EventKind


Event = Play | Draw | SeatEvent | CardEvent | Blocked


class EventFormat(NamedTuple):
    """One row of the formatter table: the event's type and its English phrase over its fields."""

    type: type
    phrase: str


EVENT_FORMATS: dict[EventKind, EventFormat] = {
    EventKind.PLAY: EventFormat(Play, "P{seat} plays {face}"),
    EventKind.DRAW: EventFormat(Draw, "P{seat} draws {count}"),  # count: "a card", "3 cards"
    EventKind.PASS: EventFormat(SeatEvent, "P{seat} passes"),
    EventKind.TRICK: EventFormat(SeatEvent, "P{seat} wins the trick"),
    EventKind.OUT: EventFormat(SeatEvent, "P{seat} goes out: Boom!"),
    EventKind.UPCARD: EventFormat(CardEvent, "up-card {face}"),
    EventKind.BURY: EventFormat(CardEvent, "joker turned up and buried"),
    EventKind.BOOM: EventFormat(SeatEvent, "P{seat}: BOOM!"),
    EventKind.BLOCKED: EventFormat(Blocked, "round blocked"),
}
"""Every event kind with its type and its English phrase: the one place that lists them."""


def fields_of(kind: EventKind) -> tuple[str, ...]:
    """The fields of an event of ``kind`` after the kind itself, e.g. ``("seat", "face")``."""
    return EVENT_FORMATS[kind].type._fields[1:]


def make_event(kind: EventKind | str, *args: int) -> Event:
    """An event of ``kind`` (an :class:`EventKind` or its name) with its fields in order."""
    kind = EventKind(kind)
    return EVENT_FORMATS[kind].type(kind, *args)


def event_to_json(event: tuple) -> list:
    """An event as a JSON list with faces as card codes: ``["play", 0, "7S"]`` (saved states, records)."""
    kind = EventKind(event[0])
    return [kind.value, *(code_of(v) if name == "face" else v for name, v in zip(fields_of(kind), event[1:]))]


CLASSIC_EVENTS = frozenset({EventKind.PLAY, EventKind.DRAW, EventKind.PASS, EventKind.TRICK, EventKind.OUT})
JOKERS_EVENTS = frozenset({EventKind.UPCARD, EventKind.BURY, EventKind.PLAY, EventKind.DRAW, EventKind.PASS,
                           EventKind.BOOM, EventKind.OUT, EventKind.BLOCKED})


def event_from_json(fields: Fields, name: str, raw: Any, config: GameConfig) -> Event:
    """The event :func:`event_to_json` wrote as ``raw`` (field ``name`` of ``fields``), checked against the variant's
    kinds, the seats and the draw counts (R1.6, R2.7); ValueError naming the field."""
    if not isinstance(raw, (list, tuple)) or not raw:
        raise fields.error(name, f"an event must be a list like ['play', 0, '7S'], got {shown(raw)}")
    kinds = CLASSIC_EVENTS if config.is_classic else JOKERS_EVENTS
    if not isinstance(raw[0], str) or raw[0] not in kinds:
        raise fields.error(name, f"unknown event kind {shown(raw[0])}; the kinds of {config.variant} Go Boom: "
                                 f"{sorted(kind.value for kind in kinds)}")
    kind = EventKind(raw[0])
    names = fields_of(kind)
    if len(raw) != 1 + len(names):
        raise fields.error(name, f"a {kind.value!r} event has fields {list(names)}, got {shown(raw)}")
    values = []
    for field, value in zip(names, raw[1:]):
        if field == "seat":
            values.append(fields.seat(name, config.num_players, raw=value))
        elif field == "face":
            values.append(fields.card(name, value))
        else:
            values.append(fields.integer(name, 1, config.deck_size if config.is_classic else 1, raw=value))
    return make_event(kind, *values)


def event_text(event: tuple) -> str:
    """An event in the compact playthrough form: ``play P0 7S``, ``draw P1 3``, ``upcard 7D``."""
    kind = EventKind(event[0])
    return " ".join([kind.value, *(f"P{value}" if name == "seat" else code_of(value) if name == "face" else str(value)
                                   for name, value in zip(fields_of(kind), event[1:]))])


def describe_event(event: tuple) -> str:
    """An event as a short English phrase for people: ``P0 plays 7♠``, ``P1 draws 3 cards``, ``P2 goes out: Boom!``."""
    kind = EventKind(event[0])
    values = dict(zip(fields_of(kind), event[1:]))
    if "face" in values:
        values["face"] = pretty(values["face"])
    if "count" in values:  # "draws 3 cards", not "draws 3" (which reads like drawing a three)
        values["count"] = "a card" if values["count"] == 1 else f"{values['count']} cards"
    return EVENT_FORMATS[kind].phrase.format(**values)


def drawn_cards(before: Iterable[int], after: Iterable[int], events: Sequence[tuple], seat: int,
                classic: bool) -> Counter[int]:
    """The cards that reached ``seat``'s hand from the stock during ``events``: what it holds ``after``, less what
    it held ``before`` and did not play (in classic, a card played right after its draw came from the stock, R1.6)."""
    played: Counter[int] = Counter()
    after_draw = False
    for event in events:
        kind, mine = event[0], len(event) > 1 and event[1] == seat
        if kind == EventKind.PLAY and mine and not (classic and after_draw):
            played[event[2]] += 1
        after_draw = kind == EventKind.DRAW and mine
    return Counter(after) - (Counter(before) - played)


PLAIN_CARDS = (1 << 52) - 1  # every non-joker face
DREW, PASSED_MOVE = 1, 2
"""The bits of a move's kind in the history layout's window: it drew cards, it did not play a card."""
MOVE_WIDTH = NUM_FACES + 2
"""A window row after its mover block: card played (53), drew, passed."""


def mark_move(row: Any, start: int, n: int, mover: int, face: int, kind: int) -> None:
    """Set the ones of the window row at ``row[start:]``: ``mover`` (a relative seat of ``n``), the card played
    (``face``; -1: none) and the ``kind`` bits. Plain Python that the batched engine compiles as it is."""
    row[start + mover] = 1
    if face >= 0:
        row[start + n + face] = 1
    if kind & DREW:
        row[start + n + NUM_FACES] = 1
    if kind & PASSED_MOVE:
        row[start + n + NUM_FACES + 1] = 1


class VoidProofs:
    """Reads one hand's public events in order and reports what they prove about the hidden hands (R4.1), through
    the hooks that subclasses fill (the determinizer's card slots, the history observation's void masks):

    * classic (R1.5, R1.6): a player who draws (or passes on an empty stock) holds no card matching the led card,
      nor do the cards it draws and keeps; a card it plays right after its draw came from the stock;
    * jokers (R2.6, R2.7): a draw or a pass proves that no matching non-boom card was held (no non-boom card at all
      with ``after_joker="any"`` and a joker on top); a drawn card is unknown, as are those a boom makes others draw.
    """

    __slots__ = ("_after_any", "_boomer", "_classic", "_hit", "_led", "_match", "_n", "_pending", "_plain", "_top")

    def __init__(self, config: GameConfig) -> None:
        self._n = config.num_players
        self._classic = config.is_classic
        self._plain = PLAIN_CARDS & ~boom_mask(config.aces_mode)
        self._after_any = config.anything_after_joker
        self._led = self._top = self._match = -1
        self._pending: tuple[int, int, int] | None = None  # classic: (seat, cards drawn, void) of a draw
        self._boomer, self._hit = -1, 0  # jokers: the seat whose boom makes the others draw, and how many drew

    def on_proof(self, seat: int, void: int) -> None:
        """``seat`` holds none of the faces of the bitmask ``void`` now."""

    def on_take(self, seat: int, count: int, void: int) -> None:
        """``seat`` took ``count`` unknown cards from the stock, each none of ``void`` (0: nothing known)."""

    def on_play(self, seat: int, face: int, from_hand: bool) -> None:
        """``seat`` played ``face``: from its hand, or (classic) the card it had just drawn."""

    def on_move(self, seat: int, face: int, drew: bool, passed: bool) -> None:
        """``seat`` ended its move: the card it played (-1: none), whether it drew, whether it passed."""

    def read(self, event: tuple) -> None:
        (self._read_classic if self._classic else self._read_jokers)(event)

    def _read_classic(self, event: tuple) -> None:
        kind = event[0]
        pending = self._pending
        if pending is not None and kind in (EventKind.PLAY, EventKind.PASS) and event[1] == pending[0]:
            seat, drawn, void = pending
            self._pending = None
            played = kind == EventKind.PLAY
            self.on_take(seat, drawn - 1 if played else drawn, void)
            if played:
                self.on_play(seat, event[2], False)
            self.on_move(seat, event[2] if played else -1, True, not played)
        elif kind == EventKind.PLAY:
            seat, face = event[1], event[2]
            self.on_play(seat, face, True)
            if self._led < 0:
                self._led = face
            self.on_move(seat, face, False, False)
        elif kind == EventKind.DRAW:
            void = MATCH_MASKS[self._led]
            self.on_proof(event[1], void)
            self._pending = (event[1], event[2], void)
        elif kind == EventKind.PASS:  # no draw first: the stock was already empty
            self.on_proof(event[1], MATCH_MASKS[self._led])
            self.on_move(event[1], -1, False, True)
        elif kind == EventKind.TRICK:
            self._led = -1

    def _read_jokers(self, event: tuple) -> None:
        kind = event[0]
        if (kind == EventKind.DRAW and self._boomer >= 0 and self._hit < self._n - 1
                and event[1] == (self._boomer + self._hit + 1) % self._n):
            self.on_take(event[1], event[2], 0)  # a card drawn because of the boom
            self._hit += 1
            return
        self._boomer = -1
        if kind == EventKind.UPCARD:
            self._top = self._match = event[1]
        elif kind == EventKind.PLAY:
            seat, face = event[1], event[2]
            self.on_play(seat, face, True)
            self._top = face
            if face != JOKER:
                self._match = face
            self.on_move(seat, face, False, False)
        elif kind == EventKind.BOOM:
            self._boomer, self._hit = event[1], 0
        elif kind in (EventKind.DRAW, EventKind.PASS):
            plain = self._plain
            void = plain if self._after_any and self._top == JOKER else MATCH_MASKS[self._match] & plain
            self.on_proof(event[1], void)
            drew = kind == EventKind.DRAW
            if drew:
                self.on_take(event[1], event[2], 0)
            self.on_move(event[1], -1, drew, not drew)


__all__ = [
    "DREW", "EVENT_FORMATS", "MOVE_WIDTH", "PASSED_MOVE", "PLAIN_CARDS", "Blocked", "CardEvent", "Draw", "Event",
    "EventFormat", "EventKind", "Play", "SeatEvent", "VoidProofs", "describe_event", "drawn_cards", "event_text",
    "event_to_json", "fields_of", "make_event", "mark_move",
]
