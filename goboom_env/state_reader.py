"""Saved states: reading a :meth:`Hand.to_dict` / :meth:`Match.to_dict` dict back for :meth:`Hand.from_dict` and
:meth:`Match.from_dict`, each field with its type and range, then the state checked to hold together (every card
once, a phase, trick and pile that fit the variant, scores that add up); ValueError naming the field otherwise.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np

from goboom_env.cards import JOKER, JOKERS_POINTS, MATCH_MASKS, NUM_FACES, card_text, code_of, code_or_none, face_of
from goboom_env.config import GameConfig, as_int
from goboom_env.events import event_from_json
from goboom_env.hand_state import NOT_PLAYED, PASSED, Phase, card_points, check_deck
from goboom_env.hints import shown
from goboom_env.scoring import HandResult, match_winners, score_deltas
from goboom_env.untrusted import Fields

_LEAD, _FOLLOW, _DISCARD, _OVER = Phase

_HAND_FIELDS = (
    "config", "dealer", "hands", "stock", "seen", "drawn", "events", "current", "phase", "trick", "leader",
    "led", "best_face", "best_seat", "turns", "top", "match_face", "passes", "winner", "blocked",
)
_MATCH_FIELDS = ("config", "scores", "results", "over", "winners", "hand", "rng")
_RESULT_FIELDS = ("winner", "blocked", "winners", "hand_points", "score_deltas", "dealer")


def _face(r: Fields, field: str, raw: Any, optional: bool = False) -> int:
    """A card code (``"7D"``, ``"JK"``) as a face; ``None`` is -1 where ``optional``."""
    if raw is None and optional:
        return -1
    if not isinstance(raw, str):
        expected = "a card code like '7D' or null" if optional else "a card code like '7D'"
        raise r.error(field, f"must be {expected}, got {shown(raw)}")
    try:
        return face_of(raw)
    except ValueError as exc:
        raise r.error(field, f"is not a card: {exc}") from None


def _faces(r: Fields, field: str, raw: Any) -> list[int]:
    return [_face(r, f"{field}[{i}]", code) for i, code in enumerate(r.items(field, raw=raw))]


def _config(r: Fields) -> GameConfig:
    try:
        return GameConfig.from_dict(r.data["config"])
    except ValueError as exc:
        raise r.error("config", f"is not a valid GameConfig: {exc}") from None


def _read_trick_entry(r: Fields, field: str, raw: Any) -> int:
    if isinstance(raw, str):
        return _face(r, field, raw)
    if as_int(raw) in (NOT_PLAYED, PASSED):
        return as_int(raw)
    raise r.error(field, f"must be a card code, {NOT_PLAYED} (not played yet) or {PASSED} (passed), got {shown(raw)}")


def read_hand(data: Any) -> dict[str, Any]:
    """The hand saved in ``data`` as the arguments of :meth:`Hand.from_state`."""
    r = Fields(data, _HAND_FIELDS, prefix="malformed hand state")
    config = _config(r)
    n, classic = config.num_players, config.is_classic
    hands = r.items("hands", n)
    phases = ["LEAD", "FOLLOW", "OVER"] if classic else ["DISCARD", "OVER"]
    phase = data["phase"]
    if phase not in phases:
        raise r.error("phase", f"must be one of {phases} for variant {config.variant!r}, got {shown(phase)}")
    state = {
        "config": config,
        "dealer": r.seat("dealer", n),
        "hands": [_faces(r, f"hands[{seat}]", h) for seat, h in enumerate(hands)],
        "stock": _faces(r, "stock", data["stock"]),  # top first, as saved and as Hand.from_state takes it
        "seen": _faces(r, "seen", data["seen"]),
        "drawn": list(r.ints("drawn", n, 0, config.deck_size)),
        "events": [event_from_json(r, f"events[{i}]", e, config) for i, e in enumerate(r.items("events"))],
        "current": r.seat("current", n),
        "phase": Phase[phase],
        "trick": [_read_trick_entry(r, f"trick[{seat}]", t) for seat, t in enumerate(r.items("trick", n))],
        "leader": r.seat("leader", n, unset=-1),
        "led": _face(r, "led", data["led"], optional=True),
        "best_face": _face(r, "best_face", data["best_face"], optional=True),
        "best_seat": r.seat("best_seat", n, unset=-1),
        "turns": r.integer("turns", 0, n - 1),
        "top": _face(r, "top", data["top"], optional=True),
        "match_face": _face(r, "match_face", data["match_face"], optional=True),
        "passes": r.integer("passes", 0, n),
        "winner": r.seat("winner", n, unset=None),
        "blocked": r.flag("blocked"),
    }
    _check_cards(r, state)
    _check_progress(r, state)
    if classic:
        _check_classic_trick(r, state)
    else:
        _check_discard_pile(r, state)
    state["seen"] = bytearray(state["seen"].count(face) for face in range(NUM_FACES))
    return state


def _check_cards(r: Fields, state: dict[str, Any]) -> None:
    """Every card of the deck exactly once across the hands, the stock and the cards out of play."""
    config = state["config"]
    cards = [f for hand in state["hands"] for f in hand] + state["stock"] + state["seen"]
    try:
        check_deck(config, cards)
    except ValueError as exc:
        raise r.error("hands, stock, seen", f"do not make up the deck: {exc}") from None
    if sum(state["drawn"]) + len(state["stock"]) > config.deck_size:
        raise r.error("drawn", f"counts cards drawn from the stock: {state['drawn']} plus the "
                               f"{len(state['stock'])} cards left cannot exceed the deck's {config.deck_size}")


def _check_progress(r: Fields, state: dict[str, Any]) -> None:
    """Who holds cards, who won, and the pass count fit the phase."""
    n, phase, winner, blocked = state["config"].num_players, state["phase"], state["winner"], state["blocked"]
    if blocked and state["config"].is_classic:
        raise r.error("blocked", "must be false in classic Go Boom (only jokers rounds block, R2.10)")
    if phase == _OVER and (winner is None) == (not blocked):
        raise r.error("phase", "OVER needs either a winner or a blocked round (not both)")
    if phase != _OVER and (winner is not None or blocked):
        raise r.error("winner, blocked", f"must be null and false while the hand runs (phase {phase.name})")
    for seat, hand in enumerate(state["hands"]):
        if (seat == winner) != (not hand):
            problem = f"is empty but the winner is {winner}" if not hand else "holds cards but it is the winner's"
            raise r.error(f"hands[{seat}]", problem)
    if winner is not None and state["current"] != winner:
        raise r.error("current", f"must be the winner {winner} once the hand is over (the seat that went out)")
    if blocked != (state["passes"] == n):
        raise r.error("passes", f"must reach {n} (num_players) exactly when the round is blocked (R2.10), "
                                f"got {state['passes']} with blocked={blocked}")
    if state["passes"] and state["stock"]:
        raise r.error("passes", "must be 0 while the stock holds cards (passes happen on an empty stock, R2.7)")


def _check_classic_trick(r: Fields, state: dict[str, Any]) -> None:
    """Classic: the trick is played in seat order from its leader, each card follows (R1.5), the best is R1.7's."""
    n, trick, phase = state["config"].num_players, state["trick"], state["phase"]
    for name in ("top", "match_face"):
        if state[name] >= 0:
            raise r.error(name, "must be null in classic Go Boom (no discard pile)")
    if state["passes"]:
        raise r.error("passes", "must be 0 in classic Go Boom")
    if phase == _LEAD:
        _check_no_trick(r, state, "when a trick is about to be led (phase LEAD)")
        return
    leader, led = state["leader"], state["led"]
    if leader < 0 or led < 0 or trick[leader] != led:
        raise r.error("leader, led", f"must name the seat that led this trick and its card (trick[leader]) "
                                f"in phase {phase.name}; got leader {leader}, led {code_or_none(led)}")
    _check_out_of_play(r, state, [t for t in trick if t >= 0], "trick")  # so no joker in classic
    acted = 0
    while acted < n and trick[(leader + acted) % n] != NOT_PLAYED:
        acted += 1
    if any(trick[(leader + k) % n] != NOT_PLAYED for k in range(acted, n)):
        raise r.error("trick", f"must be filled in seat order from the leader {leader}, got {trick}")
    last = (leader + acted - 1) % n
    if phase == _FOLLOW and not (acted < n and state["turns"] == acted and state["current"] == (leader + acted) % n):
        raise r.error("turns, current", f"must count the {acted} seat(s) that acted in this trick, and be the next "
                               f"seat {(leader + acted) % n}; got turns {state['turns']}, current {state['current']}")
    if phase == _OVER and not (state["turns"] == acted - 1 and state["winner"] == last and trick[last] >= 0):
        raise r.error("turns, winner", f"must be {acted - 1} and the last seat that played ({last}) when a "
                               f"player went out in this trick; got turns {state['turns']}, winner {state['winner']}")
    best_face, best_seat = led, leader
    for k in range(1, acted):
        seat = (leader + k) % n
        face = trick[seat]
        if face == PASSED:
            continue
        if face == JOKER or not (MATCH_MASKS[led] >> face) & 1:
            raise r.error(f"trick[{seat}]", f"{code_of(face)} does not follow the led {code_of(led)} (R1.5)")
        if face // 13 == led // 13 and face > best_face:
            best_face, best_seat = face, seat
    if (state["best_face"], state["best_seat"]) != (best_face, best_seat):
        got = f"{card_text(state['best_face'])} of seat {state['best_seat']}"
        raise r.error("best_seat, best_face", f"must be the winning card so far, {code_of(best_face)} of seat "
                                   f"{best_seat} (R1.7), got {got}")


_NO_TRICK = {"leader": -1, "led": None, "best_face": None, "best_seat": -1, "turns": 0}  # as saved


def _check_no_trick(r: Fields, state: dict[str, Any], when: str) -> None:
    if any(t != NOT_PLAYED for t in state["trick"]):
        raise r.error("trick", f"must be {NOT_PLAYED} (not played) for every seat {when}, got {state['trick']}")
    for name, empty in _NO_TRICK.items():
        value = code_or_none(state[name]) if name in ("led", "best_face") else state[name]
        if value != empty:
            raise r.error(name, f"must be {'null' if empty is None else empty} {when}, got {shown(value)}")


def _check_discard_pile(r: Fields, state: dict[str, Any]) -> None:
    """Jokers: no trick; the top and match cards are on the pile, the same unless a joker covers it (R2.5, R2.6)."""
    _check_no_trick(r, state, "in jokers Go Boom (it has no tricks)")
    top, match = state["top"], state["match_face"]
    if top < 0 or match < 0:
        raise r.error("match_face, top", "must be cards: jokers needs a top and a match card")
    if match == JOKER:
        raise r.error("match_face", "cannot be a joker: it is the topmost non-joker of the pile (R2.5)")
    if top != match and top != JOKER:
        raise r.error("match_face", f"must be the top card {code_of(top)} unless a joker is on top (R2.6), "
                                    f"got {code_of(match)}")
    _check_out_of_play(r, state, [top, match] if top != match else [top], "top")


def _check_out_of_play(r: Fields, state: dict[str, Any], faces: list[int], field: str) -> None:
    seen = Counter(state["seen"])
    missing = Counter(faces) - seen
    if missing:
        raise r.error(field, f"holds {[code_of(f) for f in sorted(missing.elements())]}, which are not among "
                             "the seen cards (the cards out of play)")


def _read_result(r: Fields, field: str, raw: Any, config: GameConfig) -> HandResult:
    """One finished hand of a match, checked against the scoring rules."""
    n = config.num_players
    res = r.child(field, _RESULT_FIELDS, raw=raw)
    winner = res.seat("winner", n, unset=None)
    blocked = res.flag("blocked")
    most = config.deck_size * max(JOKERS_POINTS)
    points = list(res.ints("hand_points", n, 0, most))
    if blocked == (winner is not None) or (blocked and config.is_classic):
        raise res.error("blocked", f"must be true exactly when there is no winner, and only in jokers; got "
                                   f"winner {winner}, blocked {blocked}")
    if winner is not None and points[winner]:
        raise res.error("hand_points", f"must be 0 for the winner {winner} (an empty hand), got {points[winner]}")
    expected = [winner] if winner is not None else [s for s, p in enumerate(points) if p == min(points)]
    winners = list(res.seats("winners", n))
    if winners != expected:
        raise res.error("winners", f"must be {expected} (the seat that went out, or the fewest points), got {winners}")
    deltas = res.items("score_deltas", n)
    if deltas != score_deltas(config, winner, points) or any(as_int(d) is None for d in deltas):
        raise res.error("score_deltas", f"must be {score_deltas(config, winner, points)} for these hand points "
                                        f"and scoring {config.scoring!r}, got {deltas}")
    return HandResult(winner, blocked, tuple(winners), tuple(points), tuple(int(d) for d in deltas),
                      res.seat("dealer", n))


def _read_rng(r: Fields, raw: Any) -> np.random.Generator:
    """A generator in the saved ``bit_generator.state`` ``raw``."""
    rng = np.random.default_rng()
    kind = type(rng.bit_generator).__name__
    try:
        rng.bit_generator.state = raw
    except (TypeError, ValueError, KeyError, OverflowError) as exc:
        raise r.error("rng", f"is not a {kind} generator state: {exc}") from None
    if rng.bit_generator.state != raw or not _ints_and_names(raw):  # numpy coerced something (a float, a bool)
        raise r.error("rng", f"is not a {kind} generator state: its values must be integers in range")
    return rng


def _ints_and_names(value: Any) -> bool:
    """Whether ``value`` is built from dicts, strings and integers only."""
    if isinstance(value, dict):
        return all(isinstance(k, str) and _ints_and_names(v) for k, v in value.items())
    return isinstance(value, str) or (isinstance(value, int) and as_int(value) is not None)


def read_match(data: Any) -> dict[str, Any]:
    """The attributes of the match saved in ``data``, checked against its hands (``"hand"``: :func:`read_hand`'s)."""
    r = Fields(data, _MATCH_FIELDS, prefix="malformed match state")
    config = _config(r)
    n = config.num_players
    rng = _read_rng(r, data["rng"])
    results = [_read_result(r, f"results[{i}]", x, config) for i, x in enumerate(r.items("results"))]
    scores = list(r.ints("scores", n, 0, 2**62))
    winners = list(r.seats("winners", n))
    over = r.flag("over")
    hand = read_hand(data["hand"])
    if hand["config"] != config:
        raise r.error("hand", f"is a hand of another configuration: {hand['config']} vs the match's {config}")
    totals = [0] * n
    for i, result in enumerate(results):
        if match_winners(config, totals, i):
            raise r.error("results", f"go on after the match ended (after hand {i}, R1.11, R1.12, R2.2)")
        if result.dealer != (results[0].dealer + i) % n:
            raise r.error(f"results[{i}].dealer", "must move one seat left each hand (R1.2, R2.2)")
        totals = [t + d for t, d in zip(totals, result.score_deltas)]
    if scores != totals:
        raise r.error("scores", f"must be the sums of the hands' score deltas, {totals}, got {scores}")
    expected = match_winners(config, scores, len(results))
    if winners != expected or over != bool(expected):
        raise r.error("winners, over", f"must be {expected} and {bool(expected)} for these scores and "
                                 f"{len(results)} hand(s), got {winners} and {over}")
    if over:
        last = results[-1]
        points = card_points(config)  # of the cards left in each hand (R1.10, R2.11)
        left = tuple(sum(points[f] for f in faces) for faces in hand["hands"])
        if hand["phase"] != _OVER or (hand["dealer"], hand["winner"], hand["blocked"], left) != (
                last.dealer, last.winner, last.blocked, last.hand_points):
            raise r.error("hand", "must be the last finished hand once the match is over")
    elif results and hand["dealer"] != (results[-1].dealer + 1) % n:
        raise r.error("hand.dealer", f"must be {(results[-1].dealer + 1) % n}, one left of the last hand's (R1.2)")
    return {"config": config, "rng": rng, "scores": scores, "results": results, "over": over,
            "winners": winners, "hand": hand}

