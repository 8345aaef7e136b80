"""The ``ppo-ismcts:`` agent: ISMCTS guided by a trained model's policy as the prior at the root.

Spec: ``ppo-ismcts:path=MODEL[,ms=150][,iters=N][,prior=1][,c=0.7][,infer=yes]``: ``ms`` milliseconds per decision
(150 without ``iters``), or an ``iters`` budget (reproducible); ``prior`` the prior's weight (0 = none).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from goboom_env.agents.ismcts import GuidedISMCTSAgent
from goboom_env.agents.policy import Observation
from goboom_env.agents.ppo import PPOAgent, load_ppo_agent
from goboom_env.config import GameConfig
from goboom_env.player_view import PlayerView

DEFAULT_MS = 150.0  # within 200 ms a decision on a 2-core machine, with the model's passes


class ModelGuide:
    """The :data:`~goboom_env.agents.ismcts.Guide` of a trained model: its policy's masked probabilities."""

    def __init__(self, policy: PPOAgent) -> None:
        self.policy = policy

    def __call__(self, observation: Observation, view: PlayerView) -> np.ndarray:
        logits = self.policy.net.logits(self.policy.inputs(observation, view))
        legal = np.asarray(observation["action_mask"], bool)
        scores = np.where(legal, logits, -np.inf)
        prior = np.exp(scores - scores[legal].max())
        return prior / prior.sum()


def load_guided_ismcts(config: GameConfig, seed: int | None = None, path: str | None = None,
                       ms: float | None = None, iters: int | None = None, **options: Any) -> GuidedISMCTSAgent:
    """The ``ppo-ismcts:`` agent: the model at ``path``, checked as ``ppo:`` checks it, guiding an ISMCTS."""
    if not path:
        raise ValueError("the ppo-ismcts agent needs a model: ppo-ismcts:path=MODEL.zip[,ms=150]")
    policy = load_ppo_agent(config, seed, path)
    if policy.pad_players is not None:
        raise ValueError(f"ppo-ismcts:{path}: a generalist model (trained for several table sizes) cannot guide a "
                         f"search; use a model of one table size")
    if ms is None and iters is None:
        ms = DEFAULT_MS
    return GuidedISMCTSAgent(config, ModelGuide(policy), f"ppo-ismcts:{path}", seed, ms=ms, iters=iters,
                             **options)
