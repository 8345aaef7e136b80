"""The one decision loop: play a hand or a match on the engine with one agent per seat.

Every caller (tournaments, behaviour cloning, ``goboom play``) asks agents the same way: the seat to move gets
:func:`goboom_env.observation.observe` of the match (and its :class:`~goboom_env.player_view.PlayerView` when
its agent ``needs_view``); an optional hook sees every decision before it is applied.

    >>> import numpy as np
    >>> from goboom_env.agents import RandomAgent
    >>> from goboom_env.config import GameConfig
    >>> from goboom_env.engine import Match
    >>> config = GameConfig(variant="jokers", num_players=3)
    >>> match = Match(config, np.random.default_rng(0))
    >>> result = play_episode(match, [RandomAgent(config, seed=s) for s in range(3)], "match")
    >>> result.hands == config.rounds and match.over
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple

from goboom_env.agents.policy import Observation, Policy
from goboom_env.engine import Hand, Match, blamed_on
from goboom_env.episode import EpisodeResult, check_episode, end_hand
from goboom_env.observation import observe
from goboom_env.player_view import PlayerView


class Decision(NamedTuple):
    """One decision, as the hook sees it: before the action is applied to the hand."""

    match: Match
    hand: Hand
    seat: int
    observation: Observation
    view: PlayerView | None
    action: int
    """What the agent chose, as it returned it (an int or a numpy integer)."""


DecisionHook = Callable[[Decision], None]
"""Called with every :class:`Decision` before its action is applied."""

HUMAN = "you"
"""A human's seat name in a game against agents (``goboom play``, ``goboom serve``) and in its record."""


class HumanSeat:
    """A human's seat as a :class:`~goboom_env.agents.Policy`: the decision loop gets their move from ``ask()``, which
    reads it, or raises to stop the loop at their turn."""

    name = HUMAN
    needs_view = False

    def __init__(self, ask: Callable[[], int]) -> None:
        self.ask = ask

    def act(self, observation: Observation, view: PlayerView | None = None) -> int:
        return self.ask()

    def reseed(self, seed: int | None) -> None:
        """Nothing to restart: the human chooses."""


def agents_around(seat: int, specs: Sequence[str], seed: int | None,
                  make: Callable[[int, str, int | None], Policy]) -> dict[int, Policy]:
    """The agents of a game against a human in ``seat``: ``make(s, spec, seed + 1 + s)`` in each other seat ``s``,
    ``specs`` in seat order; the deal comes from ``seed``, so a seed plays the same game again (None: unseeded)."""
    others = [s for s in range(len(specs) + 1) if s != seat]
    return {s: make(s, spec, None if seed is None else seed + 1 + s) for s, spec in zip(others, specs)}


def play_hand(match: Match, agents: Sequence[Policy], on_decision: DecisionHook | None = None) -> Hand:
    """Play the match's current hand to its end, ``agents[s]`` in seat ``s``; returns the finished hand. An illegal
    action raises :class:`~goboom_env.engine.IllegalActionError` naming the agent and its seat."""
    if len(agents) != match.config.num_players:
        raise ValueError(f"need one agent per seat: {match.config.num_players} agents, got {len(agents)}")
    needs_view = [agent.needs_view for agent in agents]
    hand = match.hand
    while not hand.over:
        seat = hand.current
        observation = observe(match, seat)
        view = PlayerView.of(match, seat) if needs_view[seat] else None
        action = agents[seat].act(observation, view)
        if on_decision is not None:
            on_decision(Decision(match, hand, seat, observation, view, action))
        with blamed_on(f"agent {agents[seat].name!r} in seat {seat}"):
            hand.apply(action)
    return hand


def play_episode(match: Match, agents: Sequence[Policy], episode: str = "hand",
                 on_decision: DecisionHook | None = None) -> EpisodeResult:
    """Play that hand (``episode="hand"``) or the rest of the match (``"match"``); returns how it ended."""
    check_episode(episode)
    while True:
        play_hand(match, agents, on_decision)
        result = end_hand(match, episode)
        if result is not None:
            return result


__all__ = ["HUMAN", "Decision", "DecisionHook", "HumanSeat", "agents_around", "play_episode", "play_hand"]
