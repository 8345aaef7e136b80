"""Potential-based reward shaping on the hand sizes: the potential of ``--shaping`` in both PPO self-play trainers.

``goboom train`` (:class:`~goboom_env.training.sb3.selfplay.SelfPlayEnv`) and ``goboom train-fast`` (the per-seat GAE
of :mod:`goboom_env.training.fast.rollout`) add ``gamma x phi(next) - phi(now)`` to each learner decision's reward,
``phi`` being ``--shaping`` times :func:`hand_size_potential`.
"""

from __future__ import annotations

import numpy as np


def hand_size_potential(sizes: np.ndarray, seat: np.ndarray, players: np.ndarray | int) -> np.ndarray:
    """The shaping potential of ``seat`` in each game: the opponents' mean hand size minus its own.

    ``sizes`` is ``[B, width]`` (each seat's number of cards, zeros beyond a game's seats), ``seat`` ``[B]`` and
    ``players`` each game's table size (``[B]``, or one count for all). Potential-based shaping (Ng, Harada and
    Russell, 1999) pays ``gamma x phi(next) - phi(now)`` per decision, with ``phi = 0`` once the episode is over:
    shedding a card or making another player draw pays at once, and the best policy does not change."""
    rows = np.arange(len(sizes))
    own = sizes[rows, seat]
    return ((sizes.sum(axis=1) - own) / (np.asarray(players) - 1) - own).astype(np.float32)
