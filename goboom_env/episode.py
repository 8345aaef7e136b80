"""What a finished hand means for an episode: one hand (``episode="hand"``) or a whole match
(``episode="match"``), its winners and points (RULES.md R1.9-R1.12, R2.9-R2.12).

:func:`end_hand` is the one place that decides it: the env, the tournament and the decision loop
(:mod:`goboom_env.game_loop`) all call it, so the three cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from goboom_env.config import check_choice
from goboom_env.engine import Match
from goboom_env.scoring import REWARDS, score_deltas

EPISODES = ("hand", "match")
"""What one episode is: a single hand or a whole match."""


def check_episode(episode: str, reward: str | None = None) -> None:
    """ValueError naming the choices unless ``episode`` is one of :data:`EPISODES` (and ``reward``, when
    given, one of :data:`~goboom_env.scoring.REWARDS`)."""
    check_choice("episode", episode, EPISODES)
    if reward is not None:
        check_choice("reward", reward, REWARDS)


@dataclass(frozen=True)
class EpisodeResult:
    """How an episode (one hand, or a whole match) ended."""

    episode: str
    """``"hand"`` or ``"match"``."""
    winners: tuple[int, ...]
    """Hand: who went out, or the fewest points after a blocked round (R2.10); match: R1.11, R1.12, R2.12."""
    points: tuple[int, ...]
    """Per seat: what the scoring added to its total over the episode (a match: the final scores)."""
    hands: int
    """Hands played in the episode."""
    hand_points: tuple[int, ...]
    """Points left in each hand at the end of the last hand (R1.10, R2.11)."""
    last_hand_winners: tuple[int, ...]
    """The winners of the last hand (the episode's winners when it is one hand)."""
    standing: tuple[int, ...]
    """Per seat, lower is better: hand points left (a hand), or the final score with the sign that
    makes a lower value better (a match). Ranks the seats that did not win."""

    def info(self) -> dict[str, Any]:
        """The env's ``infos`` entry at the end of the episode."""
        if self.episode == "hand":
            return {"winners": list(self.winners), "hand_points": list(self.hand_points)}
        return {"winners": list(self.winners), "scores": list(self.points), "hands": self.hands,
                "last_hand_winners": list(self.last_hand_winners)}


def end_hand(match: Match, episode: str) -> EpisodeResult | None:
    """Settle the finished current hand of ``match``; the result once the episode is over, else None.

    ``episode="hand"``: the episode ends with the hand, and the match is left as it is (no hand is
    scored or dealt, so the match's generator draws nothing). ``episode="match"``: the hand is scored
    with :meth:`Match.finish_hand`, which deals the next hand unless the match is over.
    """
    check_episode(episode)
    hand = match.hand
    if not hand.over:
        raise RuntimeError("end_hand() called while the hand is still being played")
    if episode == "hand":
        points = tuple(hand.hand_points())
        winners = tuple(hand.winners())
        deltas = tuple(score_deltas(match.config, hand.winner, points))
        return EpisodeResult("hand", winners, deltas, 1, points, winners, points)
    result = match.finish_hand()
    if not match.over:
        return None
    scores = tuple(match.scores)
    standing = tuple(-s for s in scores) if match.config.scoring == "standard" else scores
    return EpisodeResult("match", tuple(match.winners), scores, match.hands_played, result.hand_points,
                         result.winners, standing)
