"""Rendering of a hand as text (``render_mode="ansi"`` / ``"human"``) and as an RGB image (``"rgb_array"``), drawn
with numpy alone (rectangles and a 5x7 bitmap font); events are phrased by :func:`goboom_env.events.describe_event`.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from goboom_env.cards import DRAW_OR_PASS, JOKER, SUIT_SYMBOLS, face_of, pretty
from goboom_env.engine import NOT_PLAYED, PASSED, Hand
from goboom_env.events import describe_event

if TYPE_CHECKING:
    from goboom_env.config import GameConfig
    from goboom_env.engine import Match


def render_text(hand: Hand, match: Match | None = None, seat: int | None = None, last: int = 8,
                reveal: bool = False) -> str:
    """A readable view of the table; ``seat`` also shows that player's private hand, ``reveal`` every hand."""
    cfg = hand.config
    lines = [f"Go Boom ({cfg.variant}, {cfg.num_players} players) - dealer P{hand.dealer}, "
             f"stock {len(hand.stock)}"]
    if match is not None:
        lines.append("scores: " + "  ".join(f"P{s}={v}" for s, v in enumerate(match.scores))
                     + f"  (hand {match.hands_played + 1})")
    if hand.classic:
        if hand.led >= 0:
            plays = [f"P{s}:{pretty(t) if t >= 0 else 'pass'}" for s, t in enumerate(hand.trick) if t != NOT_PLAYED]
            lines.append(f"trick (led {pretty(hand.led)} by P{hand.leader}): " + " ".join(plays))
        else:
            lines.append("trick: (new trick, waiting for the lead)")
    else:
        under = f" over match card {pretty(hand.match_face)}" if hand.top != hand.match_face else ""
        lines.append(f"discard pile: {pretty(hand.top)}{under}")
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


DRAW_WORDS = frozenset({"draw", "pass", "d", "p"})  # typed words for action 53
SUIT_LETTERS = {symbol: letter for letter, symbol in SUIT_SYMBOLS.items()} | {
    "\u2667": "C", "\u2662": "D", "\u2661": "H", "\u2664": "S"}  # the white (outline) suit symbols too


def parse_move(text: str) -> int:
    """The action id of a typed move (the inverse of :func:`move_text`): a card as shown (``10♣``) or as a code
    (``KC``, ``10c``, ``JK``), a draw/pass word or an action number 0..53 (R3.1); ValueError otherwise."""
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


# -- the RGB image (render_mode="rgb_array") ------------------------------------------------------------------------

IMAGE_SIZE = (360, 640)
"""Height and width of :func:`render_rgb`'s image, whatever the table size."""

_FONT_ROWS = {  # 5x7 glyphs, one string of 5 bits per row
    "A": "01110 10001 10001 11111 10001 10001 10001", "B": "11110 10001 10001 11110 10001 10001 11110",
    "C": "01110 10001 10000 10000 10000 10001 01110", "D": "11110 10001 10001 10001 10001 10001 11110",
    "E": "11111 10000 10000 11110 10000 10000 11111", "F": "11111 10000 10000 11110 10000 10000 10000",
    "G": "01110 10001 10000 10111 10001 10001 01111", "H": "10001 10001 10001 11111 10001 10001 10001",
    "I": "01110 00100 00100 00100 00100 00100 01110", "J": "00111 00010 00010 00010 00010 10010 01100",
    "K": "10001 10010 10100 11000 10100 10010 10001", "L": "10000 10000 10000 10000 10000 10000 11111",
    "M": "10001 11011 10101 10101 10001 10001 10001", "N": "10001 10001 11001 10101 10011 10001 10001",
    "O": "01110 10001 10001 10001 10001 10001 01110", "P": "11110 10001 10001 11110 10000 10000 10000",
    "Q": "01110 10001 10001 10001 10101 10010 01101", "R": "11110 10001 10001 11110 10100 10010 10001",
    "S": "01111 10000 10000 01110 00001 00001 11110", "T": "11111 00100 00100 00100 00100 00100 00100",
    "U": "10001 10001 10001 10001 10001 10001 01110", "V": "10001 10001 10001 10001 10001 01010 00100",
    "W": "10001 10001 10001 10101 10101 10101 01010", "X": "10001 10001 01010 00100 01010 10001 10001",
    "Y": "10001 10001 10001 01010 00100 00100 00100", "Z": "11111 00001 00010 00100 01000 10000 11111",
    "0": "01110 10001 10011 10101 11001 10001 01110", "1": "00100 01100 00100 00100 00100 00100 01110",
    "2": "01110 10001 00001 00010 00100 01000 11111", "3": "11111 00010 00100 00010 00001 10001 01110",
    "4": "00010 00110 01010 10010 11111 00010 00010", "5": "11111 10000 11110 00001 00001 10001 01110",
    "6": "00110 01000 10000 11110 10001 10001 01110", "7": "11111 00001 00010 00100 01000 01000 01000",
    "8": "01110 10001 10001 01110 10001 10001 01110", "9": "01110 10001 10001 01111 00001 00010 01100",
    " ": "00000 00000 00000 00000 00000 00000 00000", ":": "00000 01100 01100 00000 01100 01100 00000",
    "-": "00000 00000 00000 11111 00000 00000 00000", "+": "00000 00100 00100 11111 00100 00100 00000",
    "/": "00001 00001 00010 00100 01000 10000 10000", ".": "00000 00000 00000 00000 00000 01100 01100",
    ",": "00000 00000 00000 00000 01100 00100 01000", "(": "00010 00100 01000 01000 01000 00100 00010",
    ")": "01000 00100 00010 00010 00010 00100 01000", "=": "00000 00000 11111 00000 11111 00000 00000",
    ">": "01000 00100 00010 00001 00010 00100 01000", "!": "00100 00100 00100 00100 00100 00000 00100",
    "?": "01110 10001 00001 00010 00100 00000 00100", ";": "00000 01100 01100 00000 01100 00100 01000",
    "*": "00000 10101 01110 11111 01110 10101 00000",
    "\u2660": "00100 01110 11111 11111 10101 00100 01110", "\u2665": "00000 01010 11111 11111 01110 00100 00000",
    "\u2666": "00000 00100 01110 11111 01110 00100 00000", "\u2663": "01110 01110 10101 11111 10101 00100 01110",
}
_FONT = {char: np.array([[bit == "1" for bit in row] for row in rows.split()]) for char, rows in _FONT_ROWS.items()}
_FELT, _SEAT, _INK, _WHITE = (0, 96, 48), (0, 70, 35), (235, 235, 220), (250, 250, 245)
_RED, _BLACK, _PURPLE, _BACK = (200, 20, 30), (20, 20, 20), (120, 40, 160), (40, 60, 150)
_TURN, _SHOWN, _WON = (250, 210, 40), (120, 200, 255), (250, 170, 40)
_CARD = (44, 62)  # width, height


def render_rgb(hand: Hand, match: Match | None = None, seat: int | None = None) -> np.ndarray:
    """The table as an ``IMAGE_SIZE + (3,)`` ``uint8`` RGB image: the card counts, the trick or the discard pile,
    and the cards of ``seat`` (the player to move when None) face up."""
    cfg = hand.config
    img = np.empty((*IMAGE_SIZE, 3), np.uint8)
    img[:] = _FELT
    shown = hand.current if seat is None else seat
    _text(img, 10, 8, f"{cfg.variant} {cfg.num_players}P - DEALER P{hand.dealer} - STOCK {len(hand.stock)}", _INK, 2)
    if match is not None:
        scores = " ".join(f"P{s}={v}" for s, v in enumerate(match.scores))
        _text(img, 10, 28, f"HAND {match.hands_played + 1}  SCORES {scores}", _INK, 1)
    _seats(img, hand, shown)
    if hand.classic:
        _trick(img, hand)
    else:
        _text(img, 10, 128, "PILE", _INK, 2)
        _card(img, 10, 148, hand.top)
        if hand.top != hand.match_face and hand.match_face >= 0:
            _text(img, 70, 128, "MATCH", _INK, 2)
            _card(img, 70, 148, hand.match_face)
        _text(img, 150, 128, "STOCK", _INK, 2)
        if hand.stock:
            _card(img, 150, 148, None)
        _text(img, 200, 170, str(len(hand.stock)), _INK, 2)
    faces = hand.hand_faces(shown)
    _text(img, 10, 232, f"HAND OF P{shown}: {count_text(len(faces), 'card')}", _SHOWN, 2)
    step = min(_CARD[0] + 4, (IMAGE_SIZE[1] - 20 - _CARD[0]) // max(1, len(faces) - 1))
    for i, face in enumerate(faces):
        _card(img, 10 + i * step, 252, face)
    if hand.over:
        who = "BLOCKED ROUND" if hand.blocked else f"P{hand.winner} WENT OUT"
        _text(img, 10, 324, f"HAND OVER: {who}", _WON, 2)
    elif hand.events:
        _text(img, 10, 340, "LAST: " + describe_event(hand.events[-1]), _INK, 1)
    return img


def _seats(img: np.ndarray, hand: Hand, shown: int) -> None:
    """One box per seat (two rows beyond 6 seats): ``P2: 5``, the player to move outlined, winners filled."""
    per_row = min(hand.n, 6)
    width = (IMAGE_SIZE[1] - 20) // per_row
    winners = set(hand.winners()) if hand.over else set()
    for s in range(hand.n):
        x, y = 10 + (s % per_row) * width, 44 + (s // per_row) * 36
        if s == hand.current and not hand.over:
            _fill(img, x, y, width - 6, 32, _TURN)
        _fill(img, x + 2, y + 2, width - 10, 28, _WON if s in winners else _SEAT)
        colour = _BLACK if s in winners else _SHOWN if s == shown else _INK
        _text(img, x + 8, y + 9, f"P{s}: {hand.sizes[s]}", colour, 2)


def _trick(img: np.ndarray, hand: Hand) -> None:
    """The classic trick: each seat's card under its name, the card led outlined, ``PASS`` for a pass."""
    if hand.led < 0:
        _text(img, 10, 128, f"NEW TRICK: P{hand.current} LEADS", _INK, 2)
        return
    _text(img, 10, 122, f"TRICK: {pretty(hand.led)} LED BY P{hand.leader}", _INK, 2)
    pitch = min(52, (IMAGE_SIZE[1] - 20) // hand.n)
    for s in range(hand.n):
        x, played = 10 + s * pitch, hand.trick[s]
        if played >= 0:
            if s == hand.leader:
                _fill(img, x - 2, 140, _CARD[0] + 4, _CARD[1] + 4, _TURN)
            _card(img, x, 142, played)
        elif played == PASSED:
            _text(img, x + 4, 164, "PASS", _INK, 1)
        _text(img, x + 14, 208, f"P{s}", _INK, 1)


def _card(img: np.ndarray, x: int, y: int, face: int | None) -> None:
    """A card face up (its rank and suit in the suit's colour), or face down when ``face`` is None."""
    w, h = _CARD
    _fill(img, x, y, w, h, _BLACK)
    if face is None or face < 0:
        _fill(img, x + 2, y + 2, w - 4, h - 4, _BACK)
        _fill(img, x + 6, y + 6, w - 12, h - 12, (70, 90, 180))
        return
    _fill(img, x + 2, y + 2, w - 4, h - 4, _WHITE)
    text = pretty(face)
    rank, suit, suit_x = ("JK", "*", x + 12) if face == JOKER else (text[:-1], text[-1], x + 17)
    colour = _PURPLE if face == JOKER else _RED if suit in ("\u2665", "\u2666") else _BLACK
    _text(img, x + 5, y + 6, rank, colour, 2)
    _text(img, suit_x, y + 30, suit, colour, 4)


def _fill(img: np.ndarray, x: int, y: int, w: int, h: int, colour: tuple[int, int, int]) -> None:
    """A filled rectangle, clipped to the image."""
    img[max(y, 0):max(y + h, 0), max(x, 0):max(x + w, 0)] = colour


def _text(img: np.ndarray, x: int, y: int, text: str, colour: tuple[int, int, int], scale: int) -> None:
    """``text`` in the 5x7 font (upper case, unknown characters as ``?``), ``scale`` times, clipped to the image."""
    height, width = img.shape[:2]
    for char in text.upper():
        if x >= width or y >= height:
            return
        glyph = np.kron(_FONT.get(char, _FONT["?"]), np.ones((scale, scale), bool))
        area = img[y:y + glyph.shape[0], x:x + glyph.shape[1]]
        area[glyph[:area.shape[0], :area.shape[1]]] = colour
        x += glyph.shape[1] + scale


__all__ = ["IMAGE_SIZE", "count_text", "move_text", "render_rgb", "render_text", "rules_summary"]
