"""The rule-based agents: each decodes its observation into a :class:`Table` and applies its rule of
:mod:`goboom_env.agents.batched` to a batch of one, ties broken with its seeded generator. They read only the
observation, so they also play inside the PettingZoo env.
"""

from __future__ import annotations

import abc
from dataclasses import dataclass, field

import numpy as np

from goboom_env.agents import batched
from goboom_env.agents.batched import Choice, Tables, TablesDecoder
from goboom_env.agents.policy import Agent, Observation, Policy
from goboom_env.cards import DRAW_OR_PASS, NUM_ACTIONS
from goboom_env.config import GameConfig
from goboom_env.player_view import PlayerView


@dataclass(frozen=True)
class Table:
    """An observation decoded into card counts and public facts, seen from the observer (R4.1): the fields of
    :class:`~goboom_env.agents.batched.Tables` for one observation."""

    hand: np.ndarray
    unseen: np.ndarray
    legal: list[int]
    sizes: np.ndarray
    stock: int
    led: int
    best: int
    decoded: Tables | None = field(default=None, compare=False, repr=False)
    """The same facts as a batch of one, when the table was decoded."""

    def rows(self) -> Tables:
        """This table as a batch of one, as the rules read it."""
        if self.decoded is not None:
            return self.decoded
        legal = np.zeros((1, NUM_ACTIONS), bool)
        legal[0, self.legal] = True
        return Tables(hand=np.asarray(self.hand)[None], unseen=np.asarray(self.unseen)[None], legal=legal,
                      sizes=np.asarray(self.sizes)[None], stock=np.array([self.stock]), led=np.array([self.led]),
                      best=np.array([self.best]))


class TableDecoder:
    """Turns observation dicts of one configuration into :class:`Table` objects."""

    def __init__(self, config: GameConfig) -> None:
        self.decoder = TablesDecoder(config)

    def decode(self, observation: Observation) -> Table:
        mask = np.asarray(observation["action_mask"])
        t = self.decoder.decode(np.asarray(observation["observation"])[None], mask[None])
        return Table(hand=t.hand[0], unseen=t.unseen[0], legal=np.flatnonzero(mask).tolist(), sizes=t.sizes[0],
                     stock=int(t.stock[0]), led=int(t.led[0]), best=int(t.best[0]), decoded=t)


class HeuristicAgent(Agent):
    """Base of the rule-based agents: decodes the observation, plays forced moves, breaks ties at random."""

    name = "heuristic"
    variant = ""
    _ties: list[int] | None = None  # while action_distribution runs: the tied best cards found so far

    def __init__(self, config: GameConfig, seed: int | None = None) -> None:
        if config.variant != self.variant:
            raise ValueError(f"agent {self.name!r} plays variant={self.variant!r} but the config has "
                             f"variant={config.variant!r}; use 'heuristic' for the best agent of any variant")
        super().__init__(config, seed)
        self.config: GameConfig = config
        self.decoder = TableDecoder(config)

    def act(self, observation: Observation, view: PlayerView | None = None) -> int:
        legal = self.legal_actions(observation)
        return legal[0] if len(legal) == 1 else int(self.choose(self.decoder.decode(observation)))

    def action_distribution(self, observation: Observation) -> dict[int, float]:
        """What :meth:`act` may play here, each tied best-scored card equally likely (for luck-adjusted evaluation);
        the agent's generator is left untouched."""
        table = self.decoder.decode(observation)
        if len(table.legal) <= 1:
            return {a: 1.0 for a in table.legal}
        self._ties = []
        try:
            best = int(self.choose(table))
            ties = self._ties or [best]
        finally:
            self._ties = None
        return {a: 1.0 / len(ties) for a in ties}

    @abc.abstractmethod
    def choice(self, t: Tables) -> Choice:
        """The heuristic's rule on decoded rows (one row: this agent's move; many: the batched env's)."""

    def choose(self, table: Table) -> int:
        """Pick among two or more legal actions: a best-scored card of the rule's :meth:`choice` (DRAW_OR_PASS for
        none), ties at random."""
        choice = self.choice(table.rows())
        cards = np.flatnonzero(choice.pool[0]).tolist()
        return self._argmax(cards, choice.score[0, cards]) if cards else DRAW_OR_PASS

    def _argmax(self, cards: list[int], scores: np.ndarray) -> int:
        scores = np.asarray(scores, np.float64)
        top = np.flatnonzero(scores == scores.max())
        if self._ties is not None:  # action_distribution asks for every tied card, without drawing
            self._ties += [cards[int(i)] for i in top]
            return cards[int(top[0])]
        pick = top[0] if len(top) == 1 else top[self.rng.integers(len(top))]
        return cards[int(pick)]


class ClassicCoverAgent(HeuristicAgent):
    """Classic: keep a flexible hand, because a player who cannot follow must draw (R1.6)
    (:func:`~goboom_env.agents.batched.classic_cover`)."""

    name = "classic-cover"
    variant = "classic"
    choice = staticmethod(batched.classic_cover)


class ClassicTricksAgent(ClassicCoverAgent):
    """Classic: win tricks cheaply (R1.7, R1.8) and keep a flexible hand
    (:func:`~goboom_env.agents.batched.classic_tricks`)."""

    name = "classic-tricks"
    choice = staticmethod(batched.classic_tricks)


class JokersShedAgent(HeuristicAgent):
    """Jokers: shed high-point cards early (R2.11), keep the next turn playable (R2.5), boom rather than draw
    (R2.6, R2.7) (:func:`~goboom_env.agents.batched.jokers_shed`)."""

    name = "jokers-shed"
    variant = "jokers"
    rule = staticmethod(batched.jokers_shed)

    def __init__(self, config: GameConfig, seed: int | None = None) -> None:
        super().__init__(config, seed)
        self.boom = batched.boom_faces(config)

    def choice(self, t: Tables) -> Choice:
        return self.rule(t, self.boom)


class JokersBoomAgent(JokersShedAgent):
    """Jokers: boom a player about to go out and play cards the others can hardly match (R2.5-R2.9)
    (:func:`~goboom_env.agents.batched.jokers_boom`)."""

    name = "jokers-boom"
    rule = staticmethod(batched.jokers_boom)


HEURISTIC_AGENTS: dict[str, type[HeuristicAgent]] = {
    agent.name: agent for agent in (ClassicTricksAgent, ClassicCoverAgent, JokersShedAgent, JokersBoomAgent)
}
BEST_HEURISTIC: dict[str, str] = {"classic": "classic-tricks", "jokers": "jokers-boom"}
"""The ``heuristic`` alias per variant: the heuristic that scored best in docs/evaluation.md."""
HEURISTICS: dict[str, tuple[str, ...]] = {"classic": ("classic-tricks", "classic-cover"),
                                          "jokers": ("jokers-shed", "jokers-boom")}


def make_heuristic(config: GameConfig, seed: int | None = None) -> Policy:
    """The ``heuristic`` alias: the best rule-based agent for ``config.variant``."""
    return HEURISTIC_AGENTS[BEST_HEURISTIC[config.variant]](config, seed)
