"""Train a masked PPO with Tianshou: one learner seat against fixed opponents (the Gymnasium view GoBoom-v0).

A recipe to copy and edit. Each env is ``gymnasium.make("goboom_env/GoBoom-v0", ...)``, whose step plays the other
seats and returns everything the learner received since its last move; ``MaskInObservation`` puts its legal actions
into the observation, where Tianshou's networks read them (``goboom_env.training.interop.tianshou``). Tianshou's
``PPO`` trains a ``MaskedActor`` and a critic; the model is written with ``goboom_env.training.export_model``, so
the goboom tools play it::

    python training/train_tianshou.py --timesteps 50000 --out runs/tianshou
    goboom evaluate --agents ppo:runs/tianshou/model.zip random --episode hand --games 400
    python training/train_tianshou.py --help     # the game options of every goboom command work here too

Why not Tianshou's ``PettingZooEnv`` with ``MultiAgentPolicy``: docs/libraries.md.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

from goboom_env.agents import make_agent
from goboom_env.cli.options import run_script
from goboom_env.config import check_choice, errors_prefixed
from goboom_env.training.settings import SEAT_MODES, RecipeArgs, parse_opponents


@dataclass
class TianshouArgs(RecipeArgs):
    """The recipe settings, plus who plays the other seats."""

    opponents: list[str] = field(default_factory=lambda: ["random=1", "heuristic=1"])
    """Opponents as SPEC=WEIGHT items (random, heuristic, ismcts:iters=50, ppo:PATH, ...): each episode draws one
    for every other seat."""
    seat: str = "random"
    """Learner seat per episode: random or rotate."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad field: each opponent is built once, before any work."""
        super().validate()
        check_choice("seat", self.seat, SEAT_MODES)
        for spec, _ in parse_opponents(self.opponents):
            with errors_prefixed("opponents"):
                make_agent(spec, self.game_config(), 0)


SETTINGS = TianshouArgs(
    # The game, PPO and run settings of every goboom trainer (--help lists them); set the ones to change.
    timesteps=50_000,  # learner decisions
    minibatch_size=256,
    n_epochs=4,
    ent_coef=0.003,
    net_arch=[128, 128],
    opponents=["random=1", "heuristic=1"],  # SPEC=WEIGHT, one drawn per episode for the other seats
    out="runs/tianshou",
)


def main(args: TianshouArgs) -> None:
    """Train with the settings read over :data:`SETTINGS`, print where the model went."""
    import gymnasium
    from tianshou.algorithm import PPO
    from tianshou.algorithm.modelfree.reinforce import DiscreteActorPolicy
    from tianshou.algorithm.optim import AdamOptimizerFactory
    from tianshou.data import Collector, VectorReplayBuffer
    from tianshou.env import DummyVectorEnv
    from tianshou.utils.net.common import MLP
    from tianshou.utils.torch_utils import policy_within_training_step
    from torch import nn

    import goboom_env  # registers goboom_env/GoBoom-v0
    from goboom_env.cards import NUM_ACTIONS
    from goboom_env.observation import observation_size
    from goboom_env.training.interop.tianshou import MaskedActor, MaskInObservation, ObservationCritic

    staged = args.start()  # threads, seed, --out checked now (written at the end)
    config = args.game_config()
    opponents = dict(parse_opponents(args.opponents))

    def make_env() -> MaskInObservation:
        return MaskInObservation(gymnasium.make(goboom_env.GYM_ID, config=config, opponents=opponents,
                                                seat=args.seat, episode=args.episode, reward=args.reward))

    envs = DummyVectorEnv([make_env for _ in range(args.num_envs)])
    envs.seed(args.seed)  # env i: seed + i
    obs_size = observation_size(config.num_players)

    actor = MaskedActor(MLP(input_dim=obs_size, output_dim=NUM_ACTIONS, hidden_sizes=args.net_arch,
                            activation=nn.Tanh))
    critic = ObservationCritic(MLP(input_dim=obs_size, output_dim=1, hidden_sizes=args.net_arch, activation=nn.Tanh))
    policy = DiscreteActorPolicy(actor=actor, action_space=envs.action_space[0])
    algorithm = PPO(policy=policy, critic=critic, optim=AdamOptimizerFactory(lr=args.learning_rate),
                    eps_clip=args.clip_range, vf_coef=args.vf_coef, ent_coef=args.ent_coef, max_grad_norm=0.5,
                    gae_lambda=args.gae_lambda, gamma=args.gamma)

    rollout = args.num_envs * args.num_steps
    collector = Collector(algorithm, envs, VectorReplayBuffer(rollout, args.num_envs))
    collector.reset()
    steps, start = 0, time.perf_counter()
    while steps < args.timesteps:  # whole rollouts
        with policy_within_training_step(policy):  # Tianshou updates a policy only inside a training step
            stats = collector.collect(n_step=rollout)
            algorithm.update(collector.buffer, batch_size=args.minibatch_size, repeat=args.n_epochs)
        collector.reset_buffer(keep_statistics=True)
        steps += stats.n_collected_steps
        returns = stats.returns
        print(f"steps {steps}: mean return {returns.mean() if len(returns) else float('nan'):+.3f} over "
              f"{len(returns)} episodes, {steps / (time.perf_counter() - start):.0f} steps/s", flush=True)
    envs.close()

    print(f"model: {args.save(staged, actor.net.model, steps)}")  # the MLP's nn.Sequential


if __name__ == "__main__":
    sys.exit(run_script(main, SETTINGS, __doc__))
