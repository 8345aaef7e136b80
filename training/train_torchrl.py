"""Train a masked PPO with TorchRL on the PettingZoo env, every seat played by the learner (parameter-shared self-play).

A recipe to copy and edit. TorchRL's ``PettingZooWrapper`` wraps ``goboom_env.env()`` as it is: one group,
``agents``, holds every seat; its ``mask`` marks the seat to move and ``action_mask`` that seat's legal actions,
which the actor reads through a ``MaskedCategorical``. ``ClipPPOLoss`` with GAE trains it; the model is written
with ``goboom_env.training.export_model``, so the goboom tools play it::

    python training/train_torchrl.py --timesteps 50000 --out runs/torchrl
    goboom evaluate --agents ppo:runs/torchrl/model.zip random --episode hand --games 400
    python training/train_torchrl.py --help      # the game options of every goboom command work here too

Each step of the env is one seat's move, and each seat's rewards arrive on the step that caused them (a loss on
the winner's move), so GAE runs along every seat's own rows: the policy terms of the loss count only the seat that
moved, the value term every seat.
"""

from __future__ import annotations

import sys
import time
import warnings

from goboom_env.cli.options import run_script
from goboom_env.training.settings import RecipeArgs

SETTINGS = RecipeArgs(
    # The game, PPO and run settings of every goboom trainer (--help lists them); set the ones to change.
    timesteps=50_000,  # env steps, each one seat's move
    minibatch_size=256,  # env steps per gradient step
    n_epochs=4,
    ent_coef=0.003,
    net_arch=[128, 128],
    out="runs/torchrl",
)

OBSERVATION = ("agents", "observation", "observation")
"""Where TorchRL's PettingZooWrapper puts the seats' observation vectors (the ``observation`` entry of the env's
observation dict; the ``action_mask`` entry goes to ``("agents", "action_mask")``)."""


def main(args: RecipeArgs) -> None:
    """Train with the settings read over :data:`SETTINGS`, print where the model went."""
    import torch
    from tensordict.nn import TensorDictModule
    from torch import nn
    from torchrl.collectors import Collector
    from torchrl.envs import PettingZooWrapper, SerialEnv
    from torchrl.envs.utils import MarlGroupMapType
    from torchrl.modules import MLP, MaskedCategorical, ProbabilisticActor, ValueOperator
    from torchrl.objectives import ClipPPOLoss, ValueEstimators

    import goboom_env
    from goboom_env.cards import NUM_ACTIONS

    staged = args.start()  # threads, seed, --out checked now (written at the end)
    config = args.game_config()
    # TorchRL warns for any PettingZoo but the one it was tested with; this recipe is tested with goboom-env's own
    # (tests/training/test_recipes.py)
    warnings.filterwarnings("ignore", message="PettingZoo in TorchRL is tested", category=UserWarning)

    def make_env(seed: int) -> PettingZooWrapper:
        game = goboom_env.env(config=config, episode=args.episode, reward=args.reward)
        return PettingZooWrapper(game, use_mask=True, group_map=MarlGroupMapType.ALL_IN_ONE_GROUP, seed=seed)

    env = SerialEnv(args.num_envs, [lambda i=i: make_env(args.seed + i) for i in range(args.num_envs)])
    obs_size = env.observation_spec[OBSERVATION].shape[-1]

    # The networks act on each seat's row; a seat not to move has every action allowed, and its action is ignored.
    actor_net = MLP(in_features=obs_size, out_features=NUM_ACTIONS, num_cells=args.net_arch, activation_class=nn.Tanh)
    policy = ProbabilisticActor(
        TensorDictModule(actor_net, in_keys=[OBSERVATION], out_keys=[("agents", "logits")]),
        in_keys={"logits": ("agents", "logits"), "mask": ("agents", "action_mask")},
        out_keys=[env.action_key],
        distribution_class=MaskedCategorical,
        return_log_prob=True,
    )
    critic = ValueOperator(MLP(in_features=obs_size, out_features=1, num_cells=args.net_arch, activation_class=nn.Tanh),
                           in_keys=[OBSERVATION], out_keys=[("agents", "state_value")])

    loss = ClipPPOLoss(policy, critic, clip_epsilon=args.clip_range, entropy_coeff=args.ent_coef,
                       critic_coeff=args.vf_coef, normalize_advantage=False, reduction="none")
    loss.set_keys(reward=("agents", "reward"), done=("agents", "done"), terminated=("agents", "terminated"),
                  action=env.action_key, value=("agents", "state_value"), advantage=("agents", "advantage"),
                  value_target=("agents", "value_target"))
    loss.make_value_estimator(ValueEstimators.GAE, gamma=args.gamma, lmbda=args.gae_lambda)
    optimizer = torch.optim.Adam(loss.parameters(), lr=args.learning_rate)

    rollout = args.num_envs * args.num_steps
    total = -(-args.timesteps // rollout) * rollout  # whole rollouts
    collector = Collector(env, policy, frames_per_batch=rollout, total_frames=total,
                          auto_register_policy_transforms=False)  # an MLP policy needs no recurrent-state transform
    steps, start = 0, time.perf_counter()
    for data in collector:  # [num_envs, num_steps] env steps, each with every seat's row
        with torch.no_grad():  # GAE along each seat's rows
            loss.value_estimator(data, params=loss.critic_network_params,
                                 target_params=loss.target_critic_network_params)
        data = data.reshape(-1)
        for _ in range(args.n_epochs):
            for batch in data[torch.randperm(len(data))].split(args.minibatch_size):
                out = loss(batch)
                moved = batch["agents", "mask"]  # [B, seats]: the seat that made each move
                policy_loss = (out["loss_objective"] + out["loss_entropy"]).reshape(moved.shape)[moved].mean()
                value_loss = out["loss_critic"].mean()
                optimizer.zero_grad()
                (policy_loss + value_loss).backward()
                torch.nn.utils.clip_grad_norm_(loss.parameters(), 0.5)
                optimizer.step()
        steps += rollout
        print(f"steps {steps}: policy loss {policy_loss.item():+.4f}, value loss {value_loss.item():.4f}, "
              f"{steps / (time.perf_counter() - start):.0f} steps/s", flush=True)
    collector.shutdown()

    print(f"model: {args.save(staged, actor_net, steps)}")  # the actor's nn.Sequential


if __name__ == "__main__":
    sys.exit(run_script(main, SETTINGS, __doc__))
