"""The fast trainer's faster arithmetic computes what the plain torch formulation computes.

The network's tanh runs through numpy, both first layers run as one product, the entropy skips the illegal
actions' exponentials and the PPO update gathers its minibatches once per epoch; each is checked here against
the straightforward torch version.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from helpers.training import masks_with_action  # noqa: E402

from goboom_env.training.fast.policy import MASKED_LOGIT, ActorCritic, NumpyTanh  # noqa: E402
from goboom_env.training.fast.rollout import (  # noqa: E402
    Batch,
    Pending,
    Rollout,
    SeatAdvantages,
    build_batch,
    seat_gae,
)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_numpy_tanh_matches_torch_tanh_and_its_gradient(dtype: torch.dtype) -> None:
    torch.manual_seed(0)
    x = (torch.randn(300, 77) * 3).to(dtype).requires_grad_()
    x_ref = x.detach().clone().requires_grad_()
    y, y_ref = NumpyTanh()(x), torch.tanh(x_ref)
    assert y.dtype == dtype
    if dtype == torch.bfloat16:
        assert torch.equal(y, y_ref)  # float32 rounding differences vanish in the bfloat16 rounding
    else:
        torch.testing.assert_close(y, y_ref, atol=2e-7, rtol=0)
    grad = torch.randn(300, 77).to(dtype)
    y.backward(grad)
    y_ref.backward(grad)
    torch.testing.assert_close(x.grad, x_ref.grad, atol=1e-6 if dtype == torch.float32 else 0, rtol=0)


def test_numpy_tanh_keeps_float64_precision_and_its_second_derivative() -> None:
    x = torch.linspace(-4, 4, 41, dtype=torch.float64).requires_grad_()
    torch.testing.assert_close(NumpyTanh()(x), torch.tanh(x), atol=1e-15, rtol=0)
    assert torch.autograd.gradcheck(NumpyTanh(), (x,))
    assert torch.autograd.gradgradcheck(NumpyTanh(), (x,))


def test_numpy_tanh_leaves_other_devices_and_integer_tensors_to_torch() -> None:
    on_meta = NumpyTanh()(torch.empty(3, 4, device="meta"))  # a device numpy cannot read, as a GPU
    assert on_meta.device.type == "meta" and on_meta.shape == (3, 4)
    ints = torch.arange(-3, 4)
    y = NumpyTanh()(ints)
    assert y.dtype == torch.tanh(ints).dtype and torch.equal(y, torch.tanh(ints))  # not truncated to integers


def test_numpy_tanh_runs_without_autograd() -> None:
    x = torch.linspace(-5, 5, 101)
    with torch.inference_mode():
        y = NumpyTanh()(x)
    torch.testing.assert_close(y, torch.tanh(x), atol=2e-7, rtol=0)


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_entropy_is_the_masked_policy_entropy_with_its_gradient(precision: str) -> None:
    torch.manual_seed(1)
    net = ActorCritic(30, [32], precision)
    obs = torch.randn(500, 30)
    mask, actions = masks_with_action(500, 0.2, action=7)
    entropy = net.evaluate(obs, mask, actions).entropy
    entropy.sum().backward()
    got = [p.grad.clone() for p in net.actor.parameters()]
    net.zero_grad()
    logits = net.masked_logits(obs, mask)  # the reference: -sum p log p over all actions, illegal ones p = 0
    assert (logits[~mask] == MASKED_LOGIT).all()
    logp = torch.log_softmax(logits, dim=1)
    assert (logp.exp()[~mask] == 0).all()
    reference = -(logp.exp() * torch.where(mask, logp, torch.zeros(()))).sum(1)
    torch.testing.assert_close(entropy, reference, atol=1e-5, rtol=1e-5)
    reference.sum().backward()
    for a, b in zip(got, (p.grad for p in net.actor.parameters()), strict=True):
        torch.testing.assert_close(a, b, atol=1e-4, rtol=1e-3)


def reference_update(trainer: Any, batch: Batch) -> dict[str, float]:
    """The PPO update written plainly: per minibatch, index the batch, cast nothing ahead, one ``.item()`` per
    statistic."""
    args = trainer.args
    obs, mask, action = (torch.from_numpy(a) for a in (batch.obs.astype(np.float32), batch.mask, batch.action))
    old_logp, adv_all, ret = (torch.from_numpy(a) for a in (batch.logp, batch.advantage, batch.ret))
    stats: dict[str, list[float]] = {}
    for _ in range(args.n_epochs):
        stats = {k: [] for k in ("policy_loss", "value_loss", "entropy", "approx_kl", "clip_fraction")}
        order = torch.from_numpy(trainer.rng.permutation(len(batch)))
        for start in range(0, len(batch), args.minibatch_size):
            idx = order[start:start + args.minibatch_size]
            logp, entropy, value, *_ = trainer.net.evaluate(obs[idx], mask[idx], action[idx])
            log_ratio = logp - old_logp[idx]
            ratio = log_ratio.exp()
            adv = adv_all[idx]
            adv = (adv - adv.mean()) / (adv.std() + 1e-8) if len(idx) > 1 else adv
            clipped = ratio.clamp(1 - args.clip_range, 1 + args.clip_range)
            policy_loss = torch.max(-adv * ratio, -adv * clipped).mean()
            value_loss = 0.5 * ((value - ret[idx]) ** 2).mean()
            loss = args.vf_coef * value_loss + policy_loss - args.ent_coef * entropy.mean()
            trainer.optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(trainer.net.parameters(), args.max_grad_norm)
            trainer.optimizer.step()
            with torch.no_grad():
                stats["policy_loss"].append(policy_loss.item())
                stats["value_loss"].append(value_loss.item())
                stats["entropy"].append(entropy.mean().item())
                stats["approx_kl"].append(((ratio - 1) - log_ratio).mean().item())
                stats["clip_fraction"].append(((ratio - 1).abs() > args.clip_range).float().mean().item())
    return {k: float(np.mean(v)) for k, v in stats.items()}


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_update_trains_exactly_as_the_plain_ppo_loop(precision: str) -> None:
    """Gathering each epoch's minibatches at once, casting the observations ahead and keeping the statistics as
    tensors change no bit of the weights."""
    from goboom_env.training.fast.ppo import Trainer
    from goboom_env.training.settings import VectorArgs

    args = VectorArgs(num_envs=16, num_steps=24, minibatch_size=100, n_epochs=2, precision=precision, threads=1,
                      opponents=["learner=1"], progress=False)
    trainers = [Trainer(args, args.game_config()) for _ in range(2)]
    for trainer in trainers:
        trainer.start()
        trainer.steps = args.critic_warmup + 1  # the actor learns too
    roll = trainers[0].collect()
    gae = seat_gae(roll.value, roll.reward, roll.done, roll.seat, roll.learner, args.gamma, args.gae_lambda,
                   trainers[0].pending)
    batch, _ = build_batch(roll, gae, trainers[0].pending)
    assert len(batch) % args.minibatch_size  # a short last minibatch is covered
    for trainer in trainers:
        trainer.rng = np.random.default_rng(7)  # the same minibatch orders
    got = trainers[0].update(batch)
    expected = reference_update(trainers[1], batch)
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, rel=1e-6, abs=1e-9), key
    for name, tensor in trainers[0].net.state_dict().items():
        assert torch.equal(tensor, trainers[1].net.state_dict()[name]), name


def reference_build_batch(roll: Rollout, gae: SeatAdvantages, pending: Pending) -> tuple[Batch, Pending]:
    """The batch written plainly: each field's resolved decisions concatenated with the resolved open ones."""
    t, b = np.nonzero(gae.resolved)
    pb, ps = np.nonzero(gae.pending_resolved)

    def both(rolled: np.ndarray, held: np.ndarray) -> np.ndarray:
        return np.concatenate([rolled[t, b], held[pb, ps]])

    adv = both(gae.advantages, gae.pending_advantages)
    batch = Batch(both(roll.obs, pending.obs), both(roll.mask, pending.mask), both(roll.action, pending.action),
                  both(roll.logp, pending.logp), adv, adv + both(roll.value, pending.value))
    new = Pending(obs=pending.obs.copy(), mask=pending.mask.copy(), action=pending.action.copy(),
                  logp=pending.logp.copy(), active=pending.active & ~gae.pending_resolved, value=pending.value.copy(),
                  reward=gae.pending_reward, potential=pending.potential.copy())
    ot, ob = np.nonzero(gae.opened)
    for name in ("value", "obs", "mask", "action", "logp", "potential"):
        getattr(new, name)[ob, roll.seat[ot, ob]] = getattr(roll, name)[ot, ob]
    new.active[ob, roll.seat[ot, ob]] = True
    new.reward[ob, roll.seat[ot, ob]] = gae.opened_reward[ob, roll.seat[ot, ob]]
    return batch, new


def test_build_batch_holds_the_resolved_decisions_and_carries_the_open_ones() -> None:
    from goboom_env.training.fast.ppo import Trainer
    from goboom_env.training.settings import VectorArgs

    args = VectorArgs(num_envs=12, num_steps=20, opponents=["learner=1", "random=1"], threads=1, progress=False,
                      shaping=0.05)
    trainer = Trainer(args, args.game_config())
    trainer.start()
    trainer.iteration()
    assert trainer.pending.active.any() and trainer.pending.potential.any()  # open decisions, with potentials
    roll = trainer.collect()
    gae = seat_gae(roll.value, roll.reward, roll.done, roll.seat, roll.learner, args.gamma, args.gae_lambda,
                   trainer.pending, roll.potential)
    assert gae.pending_resolved.any() and gae.resolved.any() and gae.opened.any()
    (batch, pending), (ref_batch, ref_pending) = (f(roll, gae, trainer.pending)
                                                  for f in (build_batch, reference_build_batch))
    for name in ("obs", "mask", "action", "logp", "advantage", "ret"):
        got, expected = getattr(batch, name), getattr(ref_batch, name)
        assert got.dtype == expected.dtype and np.array_equal(got, expected), name
    for name in ("active", "value", "reward", "obs", "mask", "action", "logp", "potential"):
        assert np.array_equal(getattr(pending, name), getattr(ref_pending, name)), name


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_one_pass_heads_equal_the_two_networks_run_apart_with_their_gradients(precision: str) -> None:
    """act/evaluate run both first layers as one product: the logits, values and every gradient are those of
    the actor and the critic run one after the other, bit for bit."""
    torch.manual_seed(3)
    net = ActorCritic(517, [256, 128], precision)
    obs = (torch.rand(300, 517) < 0.07).float().to(net.input_dtype)
    logits, values = net._heads(obs)
    (logits.square().sum() + values.sum()).backward()
    together = [p.grad.clone() for p in net.parameters()]
    net.zero_grad()
    apart_logits, apart_values = net._run(net.actor, obs), net._run(net.critic, obs)[:, 0]
    (apart_logits.square().sum() + apart_values.sum()).backward()
    assert torch.equal(logits, apart_logits) and torch.equal(values, apart_values)
    for a, b in zip(together, (p.grad for p in net.parameters()), strict=True):
        assert torch.equal(a, b)
