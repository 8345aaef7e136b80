"""What a finished hand means for an episode of one hand or a whole match (RULES.md R1.9-R1.12, R2.9-R2.12):
:func:`end_hand` decides it for the env, the tournament and the decision loop alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, get_args

from goboom_env.config import check_choice
from goboom_env.engine import Match
from goboom_env.scoring import REWARDS, score_deltas

Episode = Literal["hand", "match"]
EPISODES: tuple[str, ...] = get_args(Episode)


def check_episode(episode: str, reward: str | None = None) -> None:
    """ValueError naming the choices unless ``episode`` (and ``reward``, when given) is a known one."""
    check_choice("episode", episode, EPISODES)
    if reward is not None:
        check_choice("reward", reward, REWARDS)


@dataclass(frozen=True)
class EpisodeResult:
    """How an episode (one hand, or a whole match) ended."""

    episode: str
    winners: tuple[int, ...]
    """Hand: who went out, or the fewest points after a blocked round (R2.10); match: R1.11, R1.12, R2.12."""
    points: tuple[int, ...]
    """Per seat: what the scoring added to its total over the episode (a match: the final scores)."""
    hands: int
    hand_points: tuple[int, ...]
    """Points left in each hand at the end of the last hand (R1.10, R2.11)."""
    last_hand_winners: tuple[int, ...]
    standing: tuple[int, ...]
    """Per seat, lower is better (hand points left, or the final score signed so): ranks the seats that did not
    win."""

    def info(self) -> dict[str, Any]:
        """The env's ``infos`` entry at the end of the episode."""
        if self.episode == "hand":
            return {"winners": list(self.winners), "hand_points": list(self.hand_points)}
        return {"winners": list(self.winners), "scores": list(self.points), "hands": self.hands,
                "last_hand_winners": list(self.last_hand_winners)}


def end_hand(match: Match, episode: str) -> EpisodeResult | None:
    """Settle the finished hand of ``match``; the result once the episode is over, else None. With
    ``episode="hand"`` the match is left as it is (its generator draws nothing); with ``"match"`` the hand is
    scored by :meth:`Match.finish_hand`, which deals the next one unless the match is over."""
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
