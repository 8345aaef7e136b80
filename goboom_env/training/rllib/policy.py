"""The action-masking PPO RLModule and the ``rllib:`` agent loader (RLlib new API stack). The loader reads only the
:data:`MODULE_FILE` that ``goboom train-rllib`` writes, never Ray's pickled module files, which can run code."""

from __future__ import annotations

import io
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from goboom_env.agents.ppo import (
    MAX_PARAMETERS,
    MEMBER_LIMITS,
    META_NAME,
    check_compatible,
    masked_action,
    network_size,
    parse_metadata,
)
from goboom_env.cards import NUM_ACTIONS
from goboom_env.config import GameConfig
from goboom_env.hints import needs_extra, shown
from goboom_env.observation import observation_size
from goboom_env.outdir import write_atomically
from goboom_env.training.artifacts.run_folder import load_tensors
from goboom_env.training.rllib.env import MASK_KEY, OBS_KEY, GoBoomMultiAgentEnv, make_env_config
from goboom_env.untrusted import read_limited

with needs_extra("the RLlib trainer (goboom_env.training.rllib)"):
    import torch
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core import COMPONENT_LEARNER, COMPONENT_LEARNER_GROUP, COMPONENT_RL_MODULE
    from ray.rllib.core.columns import Columns
    from ray.rllib.core.rl_module.default_model_config import DefaultModelConfig
    from ray.rllib.core.rl_module.rl_module import RLModule, RLModuleSpec
    from ray.rllib.utils.torch_utils import FLOAT_MIN

RAY_NOISE = {  # per Ray logger, the start of a warning every RLlib run and `rllib:` load printed; filtered here
    "ray._private.authentication.authentication_token_setup": "Token authentication is enabled",  # Ray's default
    "ray.rllib.algorithms.algorithm_config": "You are running PPO on the new API stack",  # the stack we build on
    "ray._common.deprecation": "DeprecationWarning: `RLModule(config=",  # RLlib's own RLModule builds it so
    "ray.tune.utils.util": "Install gputil",  # GPU monitoring, which goboom does not use
}
for _logger, _start in RAY_NOISE.items():
    logging.getLogger(_logger).addFilter(lambda record, start=_start: not record.getMessage().startswith(start))

MAIN_MODULE = "main"
"""Module id of the learner; its frozen snapshots are ``league_0 .. league_{k-1}``."""
MAIN_MODULE_DIR = Path(COMPONENT_LEARNER_GROUP, COMPONENT_LEARNER, COMPONENT_RL_MODULE, MAIN_MODULE)
"""Where an algorithm checkpoint keeps the ``main`` module."""
POLICY_DIR = "policy"
"""Sub-folder of a run folder holding the exported ``main`` module."""
METADATA_FILE = "goboom.json"
"""The policy's metadata (that of ``ppo:`` models plus the run's: docs/rllib.md), in the run folder and ``policy/``."""
MODULE_FILE = "goboom_module.pt"
"""The module's settings and tensors (:func:`write_module_file`), beside Ray's files in every module folder that
``goboom train-rllib`` writes: what ``rllib:`` loads."""
MODULE_SETTINGS = {"fcnet_hiddens": list, "fcnet_activation": str, "vf_share_layers": bool}
"""The fields of RLlib's ``DefaultModelConfig`` a module file records, with their types."""


class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
    """RLlib's default PPO torch module on the ``observations`` vector of a ``Dict(observations=Box,
    action_mask=Box(54))`` space, with action masking; the dict space stays the module's, so that checkpoints and
    :meth:`RLModuleSpec.from_module` copies rebuild the same module."""

    def __init__(self, *, observation_space: gym.Space | None = None, **kwargs: Any) -> None:
        if not isinstance(observation_space, gym.spaces.Dict) or set(observation_space.spaces) != {OBS_KEY, MASK_KEY}:
            raise ValueError(f"MaskedPPOTorchRLModule needs a Dict observation space with keys {OBS_KEY!r} and "
                             f"{MASK_KEY!r} (see goboom_env.training.rllib.env), got {observation_space}")
        super().__init__(observation_space=observation_space[OBS_KEY], **kwargs)
        self.observation_space = observation_space

    def _forward(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        batch, mask = _split(batch)
        return _masked(super()._forward(batch, **kwargs), mask)

    def _forward_train(self, batch: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        batch, mask = _split(batch)
        return _masked(super()._forward_train(batch, **kwargs), mask)

    def compute_values(self, batch: dict[str, Any], embeddings: Any | None = None) -> Any:
        """Value estimates; the mask plays no part in them."""
        if embeddings is None:
            batch, _ = _split(batch)
        return super().compute_values(batch, embeddings)


def _split(batch: dict[str, Any]) -> tuple[dict[str, Any], Any]:
    """A shallow copy of ``batch`` whose OBS is the vector, and the action mask."""
    obs = batch[Columns.OBS]
    if not isinstance(obs, dict) or MASK_KEY not in obs or OBS_KEY not in obs:
        raise ValueError(f"batch observations must be a dict with {OBS_KEY!r} and {MASK_KEY!r}")
    batch = dict(batch)
    batch[Columns.OBS] = obs[OBS_KEY]
    return batch, obs[MASK_KEY]


def _masked(outputs: dict[str, Any], mask: Any) -> dict[str, Any]:
    """Add ``log(mask)`` clamped to FLOAT_MIN to the logits: illegal actions get ~zero probability."""
    logits = outputs[Columns.ACTION_DIST_INPUTS]
    outputs[Columns.ACTION_DIST_INPUTS] = logits + torch.clamp(torch.log(mask.float()), min=FLOAT_MIN)
    return outputs


# -- loading a trained policy ------------------------------------------------------------------


def module_path(path: str | Path) -> Path:
    """The absolute folder of the ``main`` module (with :data:`MODULE_FILE`) inside a policy folder, a run folder
    (``<run>/policy``) or an algorithm checkpoint (``learner_group/learner/rl_module/main``)."""
    root = Path(path).expanduser().resolve()
    candidates = [root, root / POLICY_DIR, root / MAIN_MODULE_DIR]
    for candidate in candidates:
        if (candidate / MODULE_FILE).is_file():
            return candidate
    for candidate in candidates:
        if (candidate / RLModule.CLASS_AND_CTOR_ARGS_FILE_NAME).is_file():
            raise ValueError(f"the RLlib module at {str(candidate)!r} has no {MODULE_FILE}: rllib: loads only policies "
                             "saved by goboom train-rllib, and never Ray's own pickled module files, which can run "
                             "code")
    raise ValueError(f"no RLlib policy found at {str(root)!r}: expected an exported policy folder, a run folder with "
                     f"'{POLICY_DIR}/', or an algorithm checkpoint with '{MAIN_MODULE_DIR.as_posix()}/', holding "
                     f"{MODULE_FILE}")


def model_config(net_arch: list[int]) -> DefaultModelConfig:
    """The network of ``goboom train-rllib``: RLlib's default MLPs of ``net_arch``, the critic's apart."""
    return DefaultModelConfig(fcnet_hiddens=list(net_arch), vf_share_layers=False)


def module_settings(model_config: Any) -> dict[str, Any]:
    """The :data:`MODULE_SETTINGS` of an RLlib model config (a ``DefaultModelConfig`` or a dict)."""
    fields = model_config if isinstance(model_config, Mapping) else vars(model_config)
    settings = {key: fields[key] for key in MODULE_SETTINGS if key in fields}
    if "fcnet_hiddens" in settings:
        settings["fcnet_hiddens"] = [int(n) for n in settings["fcnet_hiddens"]]
    return settings


def write_module_file(folder: Path, settings: dict[str, Any], state: Mapping[str, Any]) -> Path:
    """Save a masked PPO module as :data:`MODULE_FILE` in ``folder``: its :func:`module_settings` and its
    ``state_dict`` (arrays or tensors), all loadable with ``torch.load(weights_only=True)``."""
    file = folder / MODULE_FILE
    tensors = {str(key): torch.as_tensor(np.asarray(value)) for key, value in state.items()}
    data = io.BytesIO()
    torch.save({"format": "goboom-rllib-module", "settings": settings, "state": tensors}, data)
    return write_atomically(file, data.getvalue())


def save_module(module: RLModule, folder: Path) -> Path:
    """Ray's checkpoint of ``module`` in ``folder`` plus the :data:`MODULE_FILE` that ``rllib:`` loads."""
    module.save_to_path(folder)
    return write_module_file(folder, module_settings(module.model_config), module.state_dict())


def load_module(folder: Path, config: GameConfig) -> RLModule:
    """The masked PPO module of :data:`MODULE_FILE` in ``folder``, built for ``config``'s observation and
    action spaces: ValueError naming the file when it is not such a file or its tensors do not fit."""
    file = folder / MODULE_FILE
    saved = load_tensors(file, file)
    if not isinstance(saved, dict) or saved.get("format") != "goboom-rllib-module":
        raise ValueError(f"{file} is not a module file of goboom train-rllib")
    settings, state = saved.get("settings"), saved.get("state")
    if not isinstance(settings, dict) or not isinstance(state, dict):
        raise ValueError(f"{file} is damaged: it needs a 'settings' and a 'state' mapping")
    for key, value in settings.items():
        kind = MODULE_SETTINGS.get(key)
        if kind is None or not isinstance(value, kind):
            raise ValueError(f"{file} is damaged: setting {shown(key)} is not one of {sorted(MODULE_SETTINGS)} "
                             "with its type")
    env = GoBoomMultiAgentEnv(make_env_config(config))
    hidden = settings.get("fcnet_hiddens", [256, 256])  # DefaultModelConfig's own default
    if not all(type(n) is int and n > 0 for n in hidden) or network_size(
            [observation_size(config.num_players), *hidden, NUM_ACTIONS]) > MAX_PARAMETERS:
        raise ValueError(f"{file} is damaged: fcnet_hiddens must be positive layer widths of a network of at most "
                         f"{MAX_PARAMETERS:,} weights, got {shown(hidden)}")
    module = RLModuleSpec(module_class=MaskedPPOTorchRLModule, observation_space=env.observation_spaces[env.agents[0]],
                          action_space=env.action_spaces[env.agents[0]],
                          model_config=DefaultModelConfig(**settings)).build()
    try:
        module.load_state_dict(state, strict=True)
    except (RuntimeError, TypeError) as exc:
        raise ValueError(f"{file} does not fit a {config.num_players}-player module with its settings: "
                         f"{str(exc).splitlines()[0]}") from None
    return module


def read_policy_metadata(path: str | Path) -> dict[str, Any]:
    """The ``goboom.json`` saved with the RLlib policy at ``path`` (searched from the module folder up to the run
    folder), checked against the metadata schema; ValueError when there is none or it is damaged."""
    folder = module_path(path)
    for parent in [folder, *folder.parents][:7]:  # up to the run folder of checkpoints/iter_N/.../main
        file = parent / METADATA_FILE
        if file.is_file():
            return read_metadata_file(file)
    raise ValueError(f"the RLlib policy at {str(folder)!r} has no {METADATA_FILE} beside it or in the folders above, "
                     "so the game it was trained for is unknown; `goboom train-rllib` writes one into the run "
                     "folder and into policy/")


def read_metadata_file(file: Path) -> dict[str, Any]:
    """One ``goboom.json``, checked against the metadata schema; ValueError naming the file when it is damaged."""
    try:
        with file.open("rb") as fh:
            raw = read_limited(fh, MEMBER_LIMITS[META_NAME], str(file))
    except OSError as exc:
        raise ValueError(f"cannot read {file}: {exc.strerror or exc}") from None
    return parse_metadata(raw, f"{file} is damaged or from an older goboom-env: its metadata")


class RLlibAgent:
    """A trained RLlib module as a Policy: argmax over the legal actions, or sampled with ``greedy=False``."""

    needs_view = False

    def __init__(self, module: RLModule, *, greedy: bool = True, seed: int | None = None, name: str = "rllib") -> None:
        self.module = module
        self.module.eval()
        self.greedy = greedy
        self.rng = np.random.default_rng(seed)
        self.name = name

    def reseed(self, seed: int | None) -> None:
        """Restart the sampling generator (tournaments reuse one loaded agent across games)."""
        self.rng = np.random.default_rng(seed)

    def act(self, observation: dict[str, np.ndarray], view: Any | None = None) -> int:
        """A legal action for ``observation`` (the dict that ``raw_env.observe`` returns), from the masked logits."""
        vector = torch.as_tensor(np.asarray(observation["observation"], np.float32)).unsqueeze(0)
        mask = torch.as_tensor(np.asarray(observation["action_mask"], np.float32)).unsqueeze(0)
        with torch.no_grad():
            out = self.module.forward_inference({Columns.OBS: {OBS_KEY: vector, MASK_KEY: mask}})
        logits = out[Columns.ACTION_DIST_INPUTS][0].double().numpy()
        return masked_action(logits, observation["action_mask"], None if self.greedy else self.rng)


def load_rllib_agent(config: GameConfig, seed: int | None = None, path: str = "", greedy: bool = True) -> RLlibAgent:
    """The ``rllib:PATH`` agent (``rllib:path=PATH,greedy=false`` samples instead of argmax); ValueError when
    ``path`` holds no policy, its metadata is missing or damaged, or it was trained for another game or layout."""
    if not path:
        raise ValueError("the rllib agent needs a path: rllib:path/to/run_or_checkpoint")
    check_compatible(read_policy_metadata(path), config, f"the RLlib policy at {path!r}")
    return RLlibAgent(load_module(module_path(path), config), greedy=greedy, seed=seed, name="rllib")
