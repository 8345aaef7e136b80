"""Helpers of the training tests (tests/training) that need torch: a module imports them after its
``pytest.importorskip("torch")``."""

from __future__ import annotations

import torch

from goboom_env.cards import NUM_ACTIONS


def masks_with_action(rows: int, density: float, action: int) -> tuple[torch.Tensor, torch.Tensor]:
    """A batch any policy can be evaluated on: ``rows`` random action masks (each action legal with probability
    ``density``, drawn from torch's generator) in which ``action`` is legal in every row, and ``action`` a row."""
    mask = torch.rand(rows, NUM_ACTIONS) < density
    mask[:, action] = True
    return mask, torch.full((rows,), action)
