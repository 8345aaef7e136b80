"""What the env hands out stays exact after its speed-ups: observations and masks are fresh arrays (no
buffer a later step or observation writes), and the points rewards of ``raw_env.step``, which skips
clearing and accumulating all-zero rewards, arrive once per hand and are cleared on the next step."""

from __future__ import annotations

import numpy as np
import pytest
from helpers import aec_steps, random_legal

import goboom_env
from goboom_env.env import points_rewards


@pytest.mark.parametrize("make", [goboom_env.raw_env, goboom_env.env], ids=["raw_env", "env"])
def test_observations_and_masks_are_fresh_arrays(make) -> None:
    """Returned arrays never alias buffers that later steps or observations write."""
    env = make(variant="classic", num_players=4)
    env.reset(seed=3)
    rng = np.random.default_rng(3)
    kept = []
    # the action comes from a fresh observe(): after the scribbling below, the mask it reads must still be whole
    for step in aec_steps(env, lambda _: random_legal(rng)(env.observe(env.agent_selection))):
        obs = step.observation
        assert obs["action_mask"].dtype == np.int8 and obs["action_mask"].flags.writeable
        kept.append((obs, {k: v.copy() for k, v in obs.items()}))
        if step.done:
            continue
        again = env.observe(step.agent)
        obs["observation"][:] = -5.0  # scribbling on a returned observation changes nothing inside
        obs["action_mask"][:] = 0
        after = env.observe(step.agent)
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(after[key], again[key])
        kept[-1] = (again, {k: v.copy() for k, v in again.items()})
    assert len(kept) > 20
    for obs, snapshot in kept:  # nothing returned earlier was overwritten by later steps
        for key in ("observation", "action_mask"):
            np.testing.assert_array_equal(obs[key], snapshot[key])


@pytest.mark.parametrize("variant", ["classic", "jokers"])
def test_points_rewards_arrive_once_per_hand_and_are_cleared_next_step(variant: str) -> None:
    """``raw_env.step`` skips clearing/accumulating all-zero rewards; the signal stays exact."""
    env = goboom_env.raw_env(variant=variant, num_players=3, episode="match", reward="points")
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    totals = dict.fromkeys(env.possible_agents, 0.0)
    nonzero_steps = hands_seen = 0
    hands_before = None  # hands played before the previous decision, checked once it has been stepped
    for step in aec_steps(env, random_legal(rng)):
        totals[step.agent] += step.reward
        if hands_before is not None:
            if any(env.rewards.values()):
                nonzero_steps += 1
                assert sum(env.rewards.values()) == pytest.approx(0.0)
            hand_ended = env.match.hands_played > hands_before or all(env.terminations.values())
            hands_seen += hand_ended
            if not hand_ended:
                assert not any(env.rewards.values()), "rewards must be cleared on the step after a hand"
        hands_before = None if step.done else env.match.hands_played
    expected = dict.fromkeys(env.possible_agents, 0.0)
    for result in env.match.results:
        for seat, value in enumerate(points_rewards(env.config, result.winner, list(result.hand_points))):
            expected[f"player_{seat}"] += value
    assert hands_seen == len(env.match.results) >= 2
    assert nonzero_steps >= 1
    assert totals == pytest.approx(expected)
