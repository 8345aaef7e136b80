"""Scoring and episode results (RULES.md R1.10-R1.12, R2.10-R2.12): pure functions, no RL imports.

* :func:`score_deltas` and :func:`match_winners` are the scoring rules a :class:`~goboom_env.engine.Match`
  applies after every hand.
* :func:`win_rewards` and :func:`points_rewards` turn winners and hand points into the env's rewards.
* :func:`end_hand` is the one place that decides what a finished hand means for an *episode*: one
  hand (``episode="hand"``) or a whole match (``episode="match"``). The env, the tournament and the
  decision loop (:mod:`goboom_env.game_loop`) all call it, so the three cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from goboom_env.config import GameConfig

if TYPE_CHECKING:
    from goboom_env.engine import Match

EPISODES = ("hand", "match")
"""What one episode is: a single hand or a whole match."""
REWARDS = ("win", "points")
"""The env's reward modes (see the Rewards section of :mod:`goboom_env.env`)."""


def score_deltas(config: GameConfig, winner: int | None, points: Sequence[int]) -> list[int]:
    """What each seat adds to its total after a hand (R1.11, R1.12, R2.11)."""
    if config.scoring == "standard":
        deltas = [0] * len(points)
        if winner is not None:
            deltas[winner] = sum(points)
        return deltas
    return list(points)  # reverse and penalty: own points; the player who went out holds 0


def match_winners(config: GameConfig, scores: Sequence[int], hands_played: int) -> list[int]:
    """The match's winners if it is over, else ``[]`` (R1.11, R1.12, R2.2, R2.12)."""
    if config.scoring == "standard":
        return [s for s, v in enumerate(scores) if v >= config.target_score]
    if config.scoring == "reverse":
        ended = max(scores) >= config.target_score
    else:
        ended = hands_played >= config.rounds
    if not ended:
        return []
    low = min(scores)
    return [s for s, v in enumerate(scores) if v == low]


def win_rewards(num_players: int, winners: Sequence[int]) -> list[float]:
    """Zero-sum win reward: each of k winners gets (n/k - 1)/(n - 1), the others -1/(n - 1)."""
    n, k = num_players, len(winners)
    if k == 0:
        return [0.0] * n
    rewards = [-1.0 / (n - 1)] * n
    for s in winners:
        rewards[s] = (n / k - 1.0) / (n - 1)
    return rewards


def points_rewards(config: GameConfig, winner: int | None, points: Sequence[int]) -> list[float]:
    """The ``reward="points"`` signal of one hand: each seat's gain (the points it scored, or minus
    the points it added under reverse and penalty scoring) minus the mean gain, divided by 100."""
    deltas = score_deltas(config, winner, points)
    gains = deltas if config.scoring == "standard" else [-d for d in deltas]
    mean = sum(gains) / len(gains)
    return [(g - mean) / 100.0 for g in gains]


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
    if episode not in EPISODES:
        raise ValueError(f"episode must be one of {list(EPISODES)}, got {episode!r}")
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
