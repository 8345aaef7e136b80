"""The one decision loop: play a hand or a match on the engine with one agent per seat.

Tournaments, behaviour cloning, ``goboom play`` and the tests all drive games through
:func:`play_hand` / :func:`play_episode`, so every caller asks agents the same way: the seat to move
gets :func:`goboom_env.observation.observe` of the match (and its
:class:`~goboom_env.player_view.PlayerView` when the agent's ``needs_view`` is True), and its action is
applied to the hand. An optional hook sees every decision before it is applied (to record it, print
it or check it). How an episode ends (one hand or a whole match, its winners and points) is decided
by :func:`goboom_env.episode.end_hand`, the same function the env uses.

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
    """The hand being played (``match.hand``), in the state the agent saw."""
    seat: int
    observation: Observation
    view: PlayerView | None
    """The seat's view, when its agent asked for one (``needs_view``)."""
    action: int
    """What the agent chose (as it returned it: an int or a numpy integer)."""


DecisionHook = Callable[[Decision], None]
"""Called with every :class:`Decision` before its action is applied."""


def play_hand(match: Match, agents: Sequence[Policy], on_decision: DecisionHook | None = None) -> Hand:
    """Play the match's current hand to its end, ``agents[s]`` in seat ``s``; returns the finished hand.

    An action the rules do not allow raises :class:`~goboom_env.engine.IllegalActionError` naming the
    agent and its seat (the hand is left as it was before that action).
    """
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
    """Play one episode from the match's current hand: that hand (``episode="hand"``; the match is left
    as it is) or the rest of the match (``episode="match"``); returns how it ended."""
    check_episode(episode)
    while True:
        play_hand(match, agents, on_decision)
        result = end_hand(match, episode)
        if result is not None:
            return result


__all__ = ["Decision", "DecisionHook", "play_episode", "play_hand"]
