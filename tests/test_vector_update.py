"""The fast trainer's faster arithmetic computes what the plain torch formulation computes.

The network's tanh runs through numpy, the entropy skips the illegal actions' exponentials and the PPO update
gathers its minibatches once per epoch; each is checked here against the straightforward torch version.
"""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

from goboom_env.cards import NUM_ACTIONS  # noqa: E402
from goboom_env.training.vector_policy import MASKED_LOGIT, ActorCritic, NumpyTanh  # noqa: E402


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
    mask = torch.rand(500, NUM_ACTIONS) < 0.2
    mask[:, 7] = True
    actions = torch.full((500,), 7)
    _, entropy, _ = net.evaluate(obs, mask, actions)
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
