"""Warm start for PPO: behaviour cloning of a teacher agent (``goboom train --bc-games N``), so that PPO starts
from the teacher's level instead of rediscovering it from the sparse win reward. The data are every decision of
games played with the teacher in every seat (:func:`goboom_env.game_loop.play_episode`)."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from goboom_env.agents import make_agent
from goboom_env.config import GameConfig
from goboom_env.engine import Match
from goboom_env.game_loop import Decision, play_episode
from goboom_env.global_state import StateEncoder
from goboom_env.hints import needs_extra
from goboom_env.process import bar, say
from goboom_env.scoring import win_rewards


@dataclass
class Demonstrations:
    """Teacher decisions: observation, legal mask, action and the mover's win reward of the hand."""

    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray

    def __len__(self) -> int:
        return len(self.actions)


def collect(config: GameConfig, teacher: str, games: int, seed: int = 0,
            hidden: StateEncoder | None = None, progress: bool = False) -> Demonstrations:
    """Play ``games`` hands with ``teacher`` in every seat and record every decision; with ``hidden``, each
    observation is followed by the mover's hidden blocks of the global state (a privileged critic's inputs)."""
    rng = np.random.default_rng(seed)
    n = config.num_players
    agents = [make_agent(teacher, config, seed * 100 + s) for s in range(n)]
    obs, masks, actions, returns = [], [], [], []
    movers: list[int] = []

    def record(decision: Decision) -> None:
        vector = decision.observation["observation"]
        if hidden is not None:
            vector = np.concatenate([vector, hidden.hidden(decision.hand, decision.seat)])
        obs.append(vector.astype(np.float16))
        masks.append(decision.observation["action_mask"].astype(bool))
        actions.append(int(decision.action))
        movers.append(decision.seat)

    for _ in bar(range(games), desc="warm start: games", enabled=progress, unit="game", leave=False):
        movers.clear()
        result = play_episode(Match(config, rng), agents, "hand", record)
        reward = win_rewards(n, result.winners)
        returns.extend(reward[s] for s in movers)
    return Demonstrations(np.stack(obs), np.stack(masks), np.array(actions, np.int64),
                          np.array(returns, np.float32))


def clone(model: Any, data: Demonstrations, epochs: int = 4, batch_size: int = 512, learning_rate: float = 1e-3,
          seed: int = 0, progress: bool = False) -> dict[str, float]:
    """Fit the model's actor to the teacher's actions and its critic to the win rewards; returns the final epoch's
    mean loss and the share of decisions where the actor's greedy move is the teacher's."""
    with needs_extra("behaviour cloning (goboom_env.training.imitation)"):
        import torch

    policy = model.policy
    optimizer = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    rng = np.random.default_rng(seed)
    stats: dict[str, float] = {}
    fitting = bar(total=epochs * -(-len(data) // batch_size), desc="warm start: fit", enabled=progress,
                  unit="batch", leave=False)
    for _ in range(epochs):
        order = rng.permutation(len(data))
        losses, agree = [], 0
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            obs = torch.as_tensor(data.obs[idx], dtype=torch.float32, device=policy.device)
            actions = torch.as_tensor(data.actions[idx], device=policy.device)
            values, log_prob, _ = policy.evaluate_actions(obs, actions, data.masks[idx])
            target = torch.as_tensor(data.returns[idx], device=policy.device)
            loss = -log_prob.mean() + 0.5 * torch.nn.functional.mse_loss(values.flatten(), target)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            with torch.no_grad():
                dist = policy.get_distribution(obs, data.masks[idx])
                greedy = dist.distribution.probs.argmax(dim=1)
                agree += int((greedy == actions).sum())
            fitting.update()
        stats = {"bc_loss": float(np.mean(losses)), "bc_agreement": agree / len(data)}
    fitting.close()
    return stats


def imitate(teacher: str, games: int, epochs: int, root: Path, collect: Callable[[], Demonstrations],
            fit: Callable[[Demonstrations], dict[str, float]]) -> dict[str, Any]:
    """A trainer's warm start, each phase said: ``collect`` the teacher's decisions in ``games`` games, ``fit`` the
    network to them (its ``bc_loss`` and ``bc_agreement``); returns the report, also written as ``root/bc.json``."""
    started = time.perf_counter()
    say(f"warm start: playing {games:,} games with {teacher} in every seat, to imitate it...")
    data = collect()
    say(f"warm start: fitting the network to {len(data):,} decisions ({epochs} epochs)...")
    report = {"teacher": teacher, "games": games, "decisions": len(data), **fit(data),
              "seconds": round(time.perf_counter() - started, 1)}
    say(f"warm start done in {report['seconds']:.1f} s: the network plays {teacher}'s move in "
        f"{report['bc_agreement']:.1%} of its decisions")
    (root / "bc.json").write_text(json.dumps(report, indent=1))
    return report
