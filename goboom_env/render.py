"""Text rendering of a hand (``render_mode="ansi"`` / ``"human"``) and of its public event log.

Events are phrased by :func:`goboom_env.events.describe_event` (re-exported here).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

from goboom_env.cards import DRAW_OR_PASS, SUIT_SYMBOLS, face_of, pretty
from goboom_env.engine import PASSED, Hand
from goboom_env.events import describe_event

if TYPE_CHECKING:
    from goboom_env.config import GameConfig
    from goboom_env.engine import Match


def render_text(hand: Hand, match: Match | None = None, seat: int | None = None, last: int = 8,
                reveal: bool = False) -> str:
    """A readable view of the table; ``seat`` also shows that player's private hand, ``reveal`` every hand
    (at the end of a hand, or a replay with the cards face up)."""
    cfg = hand.config
    lines = [f"Go Boom ({cfg.variant}, {cfg.num_players} players) - dealer P{hand.dealer}, "
             f"stock {len(hand.stock)}"]
    if match is not None:
        lines.append("scores: " + "  ".join(f"P{s}={v}" for s, v in enumerate(match.scores))
                     + f"  (hand {match.hands_played + 1})")
    if hand.classic:
        if hand.led >= 0:
            plays = []
            for s in range(hand.n):
                t = hand.trick[s]
                if t >= 0:
                    plays.append(f"P{s}:{pretty(t)}")
                elif t == PASSED:
                    plays.append(f"P{s}:pass")
            lines.append(f"trick (led {pretty(hand.led)} by P{hand.leader}): " + " ".join(plays))
        else:
            lines.append("trick: (new trick, waiting for the lead)")
    else:
        top = pretty(hand.top)
        lines.append(f"discard pile: {top}" + (f" over match card {pretty(hand.match_face)}"
                                                if hand.top != hand.match_face else ""))
    for s in range(hand.n):
        mark = "->" if s == hand.current and not hand.over else "  "
        cards = f"  [{' '.join(pretty(f) for f in hand.hand_faces(s))}]" if reveal or s == seat else ""
        lines.append(f"{mark} P{s}: {count_text(hand.sizes[s], 'card')}{cards}")
    if hand.over:
        who = "blocked round" if hand.blocked else f"P{hand.winner} went out"
        lines.append(f"hand over: {who}; winners {hand.winners()}; points {hand.hand_points()}")
    recent = hand.events[-last:] if last else []
    if recent:
        lines.append("last: " + "; ".join(describe_event(e) for e in recent))
    return "\n".join(lines)


def count_text(count: int, noun: str) -> str:
    """``1 card``, ``3 cards``: a count with its noun in the right number."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def scores_text(deltas: Sequence[int], totals: Sequence[int]) -> str:
    """What a hand did to a match's scores: ``hand scores: P0=+12  P1=+0; totals: P0=40  P1=7``."""
    return ("hand scores: " + "  ".join(f"P{s}={d:+d}" for s, d in enumerate(deltas))
            + "; totals: " + "  ".join(f"P{s}={v}" for s, v in enumerate(totals)))


def move_text(action: int) -> str:
    """An action as people read and type it: the card as shown everywhere (``10♣``, ``K♠``, ``JK``) or ``draw``."""
    return "draw" if action == DRAW_OR_PASS else pretty(action)


DRAW_WORDS = frozenset({"draw", "pass", "d", "p"})
"""Typed words that mean the draw/pass action (R3.1's action 53)."""
SUIT_LETTERS = {symbol: letter for letter, symbol in SUIT_SYMBOLS.items()} | {
    "\u2667": "C", "\u2662": "D", "\u2661": "H", "\u2664": "S"}  # the white (outline) suit symbols too
"""The suit letter of each suit symbol people may type."""


def parse_move(text: str) -> int:
    """The action id of a typed move, the inverse of :func:`move_text`: a card as shown (``10♣``, ``K♠``) or as
    a code (``KC``, ``10c``, ``JK``), a draw/pass word or an action number 0..53 (R3.1); ValueError naming
    the text otherwise."""
    word = text.strip().lower()
    if word in DRAW_WORDS:
        return DRAW_OR_PASS
    if word.isdigit():
        value = int(word)
        if not 0 <= value <= DRAW_OR_PASS:
            raise ValueError(f"action numbers are 0..{DRAW_OR_PASS}, got {value}")
        return value
    card = text.strip()
    if card and card[-1] in SUIT_LETTERS:
        card = card[:-1] + SUIT_LETTERS[card[-1]]
    try:
        return face_of(card)
    except ValueError:
        raise ValueError(f"not a move: {text!r}; type a card as shown (10♣, K♠) or as a code (TC, KS, JK), "
                         "draw, or an action number") from None


_PLAY_RULES = {
    "classic": "Classic Go Boom: the leader plays any card; each other player in turn must play a card of the suit "
               "or the rank of the card led if they can. Who cannot, draws (draw) until a card matches and plays "
               "it; an empty stock means a pass. The highest card of the suit led wins the trick and leads next. "
               "Empty your hand first to win the hand: Boom!",
    "jokers": "Jokers Go Boom: play a card of the suit or the rank of the match card (the top non-joker card of "
              "the pile). {boom} may be played on any turn: BOOM, everyone else draws a card. With no matching "
              "card, draw one card (draw) and your turn ends; on an empty stock, pass. Empty your hand first to "
              "win the round.",
}
_SCORING_RULES = {
    "standard": "Scoring: the hand's winner scores the points left in the other hands (A=1, K Q J 10=10, 2-9 at "
                "face value); the first to {target} wins the match.",
    "reverse": "Scoring: everyone adds the points left in their own hand (A=1, K Q J 10=10, 2-9 at face value); "
               "once a total reaches {target}, the lowest total wins the match.",
    "penalty": "Scoring: everyone but the winner adds the points left in their hand (joker 20, ace 15, "
               "K Q J 10=10, 2-9 at face value); after {rounds} rounds the lowest total wins.",
}


def rules_summary(config: GameConfig) -> str:
    """The rules of ``config`` in a few sentences (RULES.md R1, R2), wrapped for a terminal."""
    boom = "An ace (aces mode: there are no jokers)" if config.aces_mode else "A joker"
    text = (_PLAY_RULES[config.variant].format(boom=boom) + " "
            + _SCORING_RULES[config.scoring].format(target=config.target_score, rounds=config.rounds))
    return textwrap.fill(text, width=100)


__all__ = ["count_text", "describe_event", "move_text", "render_text", "rules_summary"]
