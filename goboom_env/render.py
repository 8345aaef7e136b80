"""Text rendering of a hand (``render_mode="ansi"`` / ``"human"``) and of its public event log.

Events are phrased by :func:`goboom_env.events.describe_event` (re-exported here).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from goboom_env.cards import pretty
from goboom_env.engine import PASSED, Hand
from goboom_env.events import describe_event

if TYPE_CHECKING:
    from goboom_env.engine import Match


def render_text(hand: Hand, match: Match | None = None, seat: int | None = None, last: int = 8) -> str:
    """A readable view of the table; ``seat`` also shows that player's private hand."""
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
        cards = f"  [{' '.join(pretty(f) for f in hand.hand_faces(s))}]" if s == seat else ""
        lines.append(f"{mark} P{s}: {hand.sizes[s]} cards{cards}")
    if hand.over:
        who = "blocked round" if hand.blocked else f"P{hand.winner} went out"
        lines.append(f"hand over: {who}; winners {hand.winners()}; points {hand.hand_points()}")
    recent = hand.events[-last:] if last else []
    if recent:
        lines.append("last: " + "; ".join(describe_event(e) for e in recent))
    return "\n".join(lines)


__all__ = ["describe_event", "render_text"]
