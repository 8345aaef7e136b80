"""The :class:`Policy` protocol that every agent satisfies, the :class:`Agent` base with its defaults, the
:class:`SearchAgent` base of the search agents, and :class:`RandomAgent`, the floor every other agent must beat."""

from __future__ import annotations

import abc
import random
from typing import Protocol, runtime_checkable

import numpy as np

from goboom_env.config import GameConfig
from goboom_env.player_view import PlayerView

Observation = dict[str, np.ndarray]
"""What ``raw_env.observe`` returns: ``observation`` and ``action_mask``."""


@runtime_checkable
class Policy(Protocol):
    """Anything that picks a legal action for one seat: all that tournaments, trainers and ``goboom play`` use of
    an agent. ``name`` is how reports call it; with ``needs_view`` the caller passes the seat's
    :class:`~goboom_env.player_view.PlayerView` (R4.1) to :meth:`act`, else None."""

    name: str
    needs_view: bool

    def act(self, observation: Observation, view: PlayerView | None = None) -> int:
        """A legal action for the observation."""

    def reseed(self, seed: int | None) -> None:
        """Restart the agent's randomness (runners do before each game, so results do not depend on the process)."""


POLICY_MEMBERS: tuple[str, ...] = ("name", "needs_view", "act", "reseed")
"""The members of :class:`Policy`, in the order error messages list them."""


def missing_members(agent: object) -> list[str]:
    """The :class:`Policy` members that ``agent`` lacks (empty when it satisfies the protocol)."""
    return [member for member in POLICY_MEMBERS if not hasattr(agent, member)]


class Agent(abc.ABC):
    """A base for agents: no view, and a seeded generator ``self.rng`` (all their randomness) that :meth:`reseed`
    starts and restarts; subclasses implement :meth:`act`."""

    name = "agent"
    needs_view = False

    def __init__(self, config: GameConfig | None = None, seed: int | None = None) -> None:
        self.config = config
        self.reseed(seed)

    def reseed(self, seed: int | None) -> None:
        """Restart ``self.rng`` (runners call this before each game)."""
        self.rng = np.random.default_rng(seed)

    def legal_actions(self, observation: Observation) -> list[int]:
        """The legal actions of the observation; ValueError naming the agent when there is none."""
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        if not legal:
            raise ValueError(f"{self.name}: the action_mask has no legal action (is this seat to move?)")
        return legal

    @abc.abstractmethod
    def act(self, observation: Observation, view: PlayerView | None = None) -> int:
        """A legal action for the observation."""


class SearchAgent(Agent):
    """A base for search agents: they need the seat's view, play a forced move at once and search only a choice
    (:meth:`choose`); ``self.py_rng``, seeded from ``self.rng``, is the search's faster per-draw generator."""

    needs_view = True

    def reseed(self, seed: int | None) -> None:
        """Restart ``self.rng`` and ``self.py_rng`` (runners call this before each game)."""
        super().reseed(seed)
        self.py_rng = random.Random(int(self.rng.integers(2**63)))

    def act(self, observation: Observation, view: PlayerView | None = None) -> int:
        """The forced move, else :meth:`choose`'s; ValueError when there is a choice to search but no ``view``."""
        legal = self.legal_actions(observation)
        if len(legal) == 1:
            return legal[0]
        if view is None:
            raise ValueError(f"{self.name} needs the seat's PlayerView (needs_view=True): pass act(obs, view)")
        return self.choose(observation, view, legal)

    @abc.abstractmethod
    def choose(self, observation: Observation, view: PlayerView, legal: list[int]) -> int:
        """The move of a decision among the ``legal`` actions (more than one)."""


class RandomAgent(Agent):
    """Uniform over the legal actions: the floor every other agent must beat."""

    name = "random"

    def act(self, observation: Observation, view: PlayerView | None = None) -> int:
        return int(self.rng.choice(self.legal_actions(observation)))

    def action_distribution(self, observation: Observation) -> dict[int, float]:
        """Every legal action, equally likely (what :meth:`act` draws from)."""
        legal = np.flatnonzero(observation["action_mask"]).tolist()
        return {a: 1.0 / len(legal) for a in legal}
