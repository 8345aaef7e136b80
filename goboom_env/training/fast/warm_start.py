"""The warm starts of the fast trainer: behaviour cloning of a teacher (``--bc-games``, :func:`warm_start`), or
a saved actor (``--init-actor``, :func:`init_actor`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from goboom_env.agents.batched import batched_heuristic
from goboom_env.agents.heuristics import BEST_HEURISTIC
from goboom_env.config import GameConfig
from goboom_env.hints import needs_extra
from goboom_env.process import bar
from goboom_env.training.fast.rollout import make_engine, seat_gae

if TYPE_CHECKING:
    from goboom_env.training.fast.policy import ActorCritic


def collect_batched(config: GameConfig, games: int, seed: int = 0, num_envs: int = 256,
                    player_counts: Sequence[int] = (), hidden: bool = False, observation: str = "snapshot",
                    progress: bool = False) -> Any:
    """:func:`goboom_env.training.imitation.collect` for the variant's best heuristic, played on the batched engine
    (seconds instead of a minute): every decision of ``games`` finished hands, at each of ``player_counts`` when
    given (padded), each observation followed by the mover's hidden state with ``hidden``."""
    from goboom_env.training.imitation import Demonstrations

    rng = np.random.default_rng(seed)
    num_envs = max(1, len(player_counts), min(num_envs, games))
    game = make_engine(config, player_counts, num_envs=num_envs, seed=seed, episode="hand", reward="win", check=False,
                       observation=observation)
    teacher = batched_heuristic(config, player_counts)
    obs, mask, seat = game.reset()
    steps: list[tuple[np.ndarray, ...]] = []
    finished = 0
    shown = bar(total=games, desc="warm start: games", enabled=progress, unit="game", leave=False)
    while finished < games:
        action = teacher.act(obs, mask, rng)
        rows = np.concatenate([obs, game.hidden()], axis=1) if hidden else obs
        steps.append((rows.astype(np.float16), mask.astype(bool), seat.copy(), action))
        obs, mask, seat, reward, done = game.step(action)
        steps[-1] += (reward.copy(), done.copy())
        shown.update(min(games, finished + int(done.sum())) - min(games, finished))
        finished += int(done.sum())
    shown.close()
    o, m, s, a, r, d = (np.stack(x) for x in zip(*steps))
    # with zero values, gamma = lambda = 1 the per-seat advantage is the mover's final reward of its hand
    out = seat_gae(np.zeros(s.shape, np.float32), r, d, s, np.ones(s.shape, bool), 1.0, 1.0)
    last_end = np.where(d.any(0), len(d) - 1 - np.argmax(d[::-1], axis=0), -1)  # per game: its last hand's end
    t, b = np.nonzero(np.arange(len(d))[:, None] <= last_end[None, :])  # decisions of finished hands only
    return Demonstrations(o[t, b], m[t, b], a[t, b].astype(np.int64), out.advantages[t, b])


def warm_start(net: ActorCritic, config: GameConfig, teacher: str, games: int, root: Path, *, epochs: int = 4,
               seed: int = 0, batch_size: int = 512, learning_rate: float = 1e-3, player_counts: Sequence[int] = (),
               hidden: bool = False, observation: str = "snapshot", progress: bool = False) -> dict[str, Any]:
    """Behaviour-clone ``teacher`` into ``net`` (:func:`~goboom_env.training.imitation.imitate`): the actor by
    cross-entropy over the legal actions, the critic by squared error to the mover's win reward (``player_counts``,
    ``hidden``: as :func:`collect_batched`; a history ``observation`` imitates the batched heuristic only)."""
    from goboom_env.training.imitation import imitate

    batched = teacher in ("heuristic", BEST_HEURISTIC[config.variant])
    if not batched and observation != "snapshot":
        raise ValueError(f"a {observation} warm start imitates the batched heuristic only, not {teacher!r}")

    def collect() -> Any:
        if batched:
            return collect_batched(config, games, seed=seed, player_counts=player_counts, hidden=hidden,
                                   observation=observation, progress=progress)
        return _collect_padded(config, teacher, games, seed, player_counts, hidden, progress)

    return imitate(teacher, games, epochs, root, collect,
                   lambda data: _fit(net, data, epochs, seed, batch_size, learning_rate, progress))


def _fit(net: ActorCritic, data: Any, epochs: int, seed: int, batch_size: int, learning_rate: float,
         progress: bool) -> dict[str, float]:
    """Fit ``net`` to the teacher's decisions ``data``, with a bar; the last epoch's loss and agreement."""
    with needs_extra("the fast trainer (goboom_env.training.fast)"):
        import torch

    optimizer = torch.optim.Adam(net.parameters(), lr=learning_rate)
    obs = torch.from_numpy(data.obs.astype(np.float32))
    mask, actions, returns = (torch.from_numpy(a) for a in (data.masks, data.actions, data.returns))
    rng = np.random.default_rng(seed)
    loss_sum = agree = 0.0
    batches = max(1, len(data) // batch_size)
    fitting = bar(total=epochs * batches, desc="warm start: fit", enabled=progress, unit="batch", leave=False)
    for _ in range(epochs):
        loss_sum = agree = 0.0
        for idx in np.array_split(rng.permutation(len(data)), batches):
            i = torch.from_numpy(idx)
            out = net.evaluate(obs[i], mask[i], actions[i])
            loss = -out.logp.mean() + 0.5 * ((out.values - returns[i]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            with torch.no_grad():
                loss_sum += loss.item() * len(idx)
                agree += (net.masked_logits(obs[i], mask[i]).argmax(1) == actions[i]).sum().item()
            fitting.update()
    fitting.close()
    return {"bc_loss": loss_sum / len(data), "bc_agreement": agree / len(data)}


def init_actor(net: ActorCritic, model: str, obs_dim: int, net_arch: Sequence[int]) -> dict[str, Any]:
    """Start ``net``'s actor from the actor of the saved ``model`` (fine-tuning an agent of another game); returns
    what the run folder records (``init_actor.json``)."""
    from goboom_env.agents.ppo import read_metadata
    from goboom_env.training.artifacts.model_files import read_init_actor

    path, actor = read_init_actor(model, obs_dim, net_arch)
    net.load_actor(actor)
    meta = read_metadata(path)
    return {"init_actor": str(path), "config": meta.get("config"), "timesteps": meta.get("timesteps")}


def _collect_padded(config: GameConfig, teacher: str, games: int, seed: int, player_counts: Sequence[int],
                    hidden: bool = False, progress: bool = False) -> Any:
    """:func:`~goboom_env.training.imitation.collect` of ``teacher``; with ``player_counts``, ``games / len
    (player_counts)`` hands at each count, padded."""
    from goboom_env.global_state import state_encoder_for
    from goboom_env.observation import pad_observations
    from goboom_env.training.imitation import Demonstrations, collect

    if not player_counts:
        return collect(config, teacher, games, seed=seed, hidden=state_encoder_for(config) if hidden else None,
                       progress=progress)
    parts = [(k, collect(config.replace(num_players=k), teacher, max(1, games // len(player_counts)), seed=seed + i,
                         progress=progress))
             for i, k in enumerate(player_counts)]
    columns = zip(*[(pad_observations(d.obs, k), d.masks, d.actions, d.returns) for k, d in parts])
    return Demonstrations(*(np.concatenate(column) for column in columns))
