"""The ``ppo-ismcts:`` agent: ISMCTS guided by a trained model (:class:`~goboom_env.agents.ismcts.GuidedISMCTSAgent`).

The model's policy is the search's prior at the root, and its belief head (a model trained with
``goboom train-fast --belief-coef``) weighs the deals of the hidden cards; a model without a belief head guides
the prior only. Spec: ``ppo-ismcts:path=MODEL[,ms=150][,iters=N][,prior=1][,samples=8][,c=0.7][,infer=yes]``,
``MODEL`` a model file or a shipped model's name, as for ``ppo:``.

* ``ms`` (default 150 when no ``iters`` is given): the time per decision in milliseconds; ``iters`` an iteration
  budget instead (reproducible, as for ``ismcts:``);
* ``prior``: the weight of the policy's prior in the root's scores (0 = none);
* ``samples``: the candidate deals per iteration among which the belief picks one (1 = deal as plain ISMCTS).

Like every search agent it reads only its observation and its seat's view (``needs_view``).
"""

from __future__ import annotations

import io
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from goboom_env.agents.ismcts import Guidance, GuidedISMCTSAgent
from goboom_env.agents.policy import Observation
from goboom_env.cards import NUM_FACES
from goboom_env.config import GameConfig
from goboom_env.models import model_path
from goboom_env.player_view import PlayerView
from goboom_env.training.artifacts.model_files import BELIEF_NAME, read_member
from goboom_env.training.sb3.agent import PPOAgent, load_ppo_agent

DEFAULT_MS = 150.0
"""The time per decision when a spec gives no budget: within 200 ms on a 2-core machine with the model's passes."""


class BeliefHead:
    """A model's belief head in numpy: the observation and the actor's last hidden layer -> each other seat's card
    logits (53 per relative seat, the log-odds that the seat holds the face)."""

    def __init__(self, weight: np.ndarray, bias: np.ndarray, num_players: int) -> None:
        self.weight = np.ascontiguousarray(np.asarray(weight, np.float32).T)
        self.bias = np.asarray(bias, np.float32)
        self.num_players = num_players

    def log_odds(self, inputs: np.ndarray, hidden: np.ndarray, seat: int) -> np.ndarray:
        """``[n, 53]`` by absolute seat: the log-odds that each other seat holds each face (``seat``'s row 0)."""
        n = self.num_players
        relative = (np.concatenate([inputs, hidden]) @ self.weight + self.bias).reshape(n - 1, NUM_FACES)
        out = np.zeros((n, NUM_FACES), np.float32)
        out[(seat + np.arange(1, n)) % n] = relative
        return out


def read_belief(path: Path, input_size: int, hidden_size: int, num_players: int) -> BeliefHead | None:
    """The belief head saved in a model (None when it has none), checked against its actor's sizes."""
    with zipfile.ZipFile(path) as zf:
        if BELIEF_NAME not in zf.namelist():
            return None
    try:
        with np.load(io.BytesIO(read_member(path, BELIEF_NAME)), allow_pickle=False) as data:
            weight, bias = data["weight"], data["bias"]
    except (KeyError, ValueError, OSError) as exc:
        raise ValueError(f"{path} is damaged: {BELIEF_NAME} is not a belief head ({exc})") from exc
    expected = ((num_players - 1) * NUM_FACES, input_size + hidden_size)
    if weight.shape != expected or bias.shape != expected[:1]:
        raise ValueError(f"{path} is damaged: its belief head is {weight.shape} + {bias.shape}, but its actor needs "
                         f"{expected} + {expected[:1]}")
    return BeliefHead(weight, bias, num_players)


class ModelGuide:
    """The :data:`~goboom_env.agents.ismcts.Guide` of a trained model: its policy's masked probabilities and,
    when it has a belief head, its log-odds of the other hands."""

    def __init__(self, policy: PPOAgent, belief: BeliefHead | None) -> None:
        self.policy = policy
        self.belief = belief

    def __call__(self, observation: Observation, view: PlayerView) -> Guidance:
        inputs = np.asarray(self.policy.inputs(observation, view), np.float32)
        hidden, logits = self.policy.net.forward(inputs)
        legal = np.asarray(observation["action_mask"], bool)
        scores = np.where(legal, logits, -np.inf)
        prior = np.exp(scores - scores[legal].max())
        log_odds = None if self.belief is None else self.belief.log_odds(inputs, hidden, view.seat)
        return Guidance(prior / prior.sum(), log_odds)


def load_guided_ismcts(config: GameConfig, seed: int | None = None, path: str | None = None,
                       ms: float | None = None, iters: int | None = None, **options: Any) -> GuidedISMCTSAgent:
    """The ``ppo-ismcts:`` agent spec (see the module docstring): the model at ``path`` checked against ``config``
    as ``ppo:`` checks it, guiding an ISMCTS of ``ms`` milliseconds (or ``iters`` iterations) per decision."""
    if not path:
        raise ValueError("the ppo-ismcts agent needs a model: ppo-ismcts:path=MODEL.zip[,ms=150]")
    policy = load_ppo_agent(config, seed, path)
    if policy.pad_players is not None:
        raise ValueError(f"ppo-ismcts:{path}: a generalist model (trained for several table sizes) cannot guide a "
                         f"search; use a model of one table size")
    file = model_path(path)
    hidden_size = policy.net.layers[-1][0].shape[0]
    belief = read_belief(Path(file), policy.net.input_size, hidden_size, config.num_players)
    if ms is None and iters is None:
        ms = DEFAULT_MS
    return GuidedISMCTSAgent(config, ModelGuide(policy, belief), f"ppo-ismcts:{path}", seed, ms=ms, iters=iters,
                             **options)
