"""Potential-based reward shaping on the hand sizes: the potential of ``--shaping`` in both PPO self-play trainers."""

from __future__ import annotations

import numpy as np


def hand_size_potential(sizes: np.ndarray, seat: np.ndarray, players: np.ndarray | int) -> np.ndarray:
    """The shaping potential of ``seat [B]`` in each game: the opponents' mean hand size (``sizes [B, width]``, over
    each game's ``players``) minus its own. Shaping pays ``gamma x phi(next) - phi(now)`` per decision (``phi = 0``
    at the end), which leaves the best policy unchanged (Ng, Harada and Russell, 1999)."""
    rows = np.arange(len(sizes))
    own = sizes[rows, seat]
    return ((sizes.sum(axis=1) - own) / (np.asarray(players) - 1) - own).astype(np.float32)
