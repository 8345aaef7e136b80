"""The ``openspiel-ismcts:sims=100,rollouts=1,c=2`` agent (an entry point): OpenSpiel's own ``ISMCTSBot`` searching
the ``python_goboom`` game (one hand, ``reward="win"``) with random rollouts, as a :class:`~goboom_env.agents.Policy`.

Each decision hands the bot a state the seat cannot tell from the real one
(:func:`goboom_env.openspiel.state_from_view`); the bot resamples the hidden cards from the agent's seeded
generator, so a seeded game is played the same way again.
"""

from __future__ import annotations

import numpy as np

from goboom_env.agents.policy import Observation, SearchAgent
from goboom_env.config import GameConfig, check_int, check_number
from goboom_env.hints import needs_extra
from goboom_env.openspiel import SHORT_NAME, params_of, state_from_view
from goboom_env.player_view import PlayerView

with needs_extra("the openspiel-ismcts agent"):
    import pyspiel
    from open_spiel.python.algorithms import ismcts, mcts


class OpenSpielISMCTSAgent(SearchAgent):
    """OpenSpiel's ``ISMCTSBot`` with a random-rollout evaluator on ``python_goboom``."""

    def __init__(self, config: GameConfig, seed: int | None = None, sims: int = 100, rollouts: int = 1,
                 c: float = 2.0) -> None:
        self.sims = check_int("sims", sims, 1, 1_000_000)
        self.rollouts = check_int("rollouts", rollouts, 1, 10_000)
        self.c = check_number("c", c, allow_zero=True)
        self.game = pyspiel.load_game(SHORT_NAME, params_of(config, episode="hand", reward="win"))
        self.name = f"openspiel-ismcts:sims={self.sims},rollouts={self.rollouts},c={self.c:g}"
        super().__init__(config, seed)

    def reseed(self, seed: int | None) -> None:
        """Restart the deals of the root states and the bot's own generator (numpy's, seeded from ``self.rng``)."""
        self.rng = np.random.default_rng(seed)
        random_state = np.random.RandomState(int(self.rng.integers(2**31)))
        evaluator = mcts.RandomRolloutEvaluator(n_rollouts=self.rollouts, random_state=random_state)
        self.bot = ismcts.ISMCTSBot(self.game, evaluator, self.c, self.sims, random_state=random_state,
                                    final_policy_type=ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT)
        # the bot's default resampler draws from pyspiel's own unseeded sampler: resample from our generator
        self.bot.set_resampler(self._resample)

    def _resample(self, state: pyspiel.State, player: int) -> pyspiel.State:
        return state.resample_from_infostate(player, self.rng.random)

    def choose(self, observation: Observation, view: PlayerView, legal: list[int]) -> int:
        """The bot's move from a state consistent with ``view`` (the seat's own information)."""
        return int(self.bot.step(state_from_view(self.game, view, self.rng)))


__all__ = ["OpenSpielISMCTSAgent"]
