"""The scoring rules (RULES.md R1.10-R1.12, R2.10-R2.12) and the env's rewards: pure functions, no RL imports."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

from goboom_env.config import GameConfig

Reward = Literal["win", "points"]
REWARDS: tuple[str, ...] = get_args(Reward)
"""The env's reward modes (see the Rewards section of the env's page)."""


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
class HandResult:
    """How one hand ended and what it did to the scores."""

    winner: int | None
    """Seat that went out, or None for a blocked round (R2.10)."""
    blocked: bool
    winners: tuple[int, ...]
    hand_points: tuple[int, ...]
    """Points left in each hand (R1.10 / R2.11)."""
    score_deltas: tuple[int, ...]
    """What each seat added to its total (R1.11, R1.12, R2.11)."""
    dealer: int
