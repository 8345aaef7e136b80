"""goboom-env: the card game Go Boom as a pure rules engine and a PettingZoo AEC environment."""

from collections.abc import Callable
from typing import Any

from goboom_env.process import guard_startup

guard_startup()  # the goboom command only: a Ctrl-C while the imports below run ends it with one line

from goboom_env.cards import DRAW_OR_PASS, JOKER, NUM_ACTIONS, code_of, face_of
from goboom_env.config import PRESETS, GameConfig
from goboom_env.engine import Hand, HandResult, IllegalActionError, Match, Phase

__version__ = "0.2.0"

__all__ = [
    "DRAW_OR_PASS", "JOKER", "NUM_ACTIONS", "PRESETS", "GameConfig", "Hand", "HandResult",
    "IllegalActionError", "Match", "Phase", "__version__", "code_of", "env", "face_of", "raw_env",
]

from goboom_env.env import env, raw_env


def _register() -> None:
    """Register the env with PettingZoo's registry as ``goboom_v0`` (``pettingzoo.make("aec", "goboom_v0")``);
    PettingZoo has no plugin hook, so ``import goboom_env`` comes first."""
    try:
        from pettingzoo.env_registry.registration import EnvSpec, aec_registry, register
    except ImportError as exc:
        from importlib.metadata import version

        raise ImportError(f"goboom-env needs PettingZoo >= 1.27 (its environment registry), found "
                          f"{version('pettingzoo')}: pip install 'pettingzoo>=1.27'") from exc

    env_id = raw_env.metadata["name"]
    if EnvSpec(id=env_id).id not in aec_registry:  # the registry keys are normalized ids (goboom-v0)
        register("aec", env_id, entry_point="goboom_env.env:env")


_register()

GYM_ID = "goboom_env/GoBoom-v0"
"""The Gymnasium id of the single-agent view: ``gymnasium.make(GYM_ID, variant="jokers", opponents=["heuristic"])``."""


def _entry_point(name: str) -> Callable[..., Any]:
    """A factory that builds with the ``name`` entry point of the ``goboom_env.gymnasium`` group (pyproject.toml),
    loaded when first called: the training package builds the single-agent view, and this layer does not name it."""

    def build(**kwargs: Any) -> Any:
        from importlib.metadata import entry_points

        (entry,) = entry_points(group="goboom_env.gymnasium", name=name)
        return entry.load()(**kwargs)

    return build


def _register_gymnasium() -> None:
    """Register the single-agent view with Gymnasium as :data:`GYM_ID`, its batched form for ``gymnasium.make_vec``
    (Gymnasium loads no plugins either)."""
    from gymnasium.envs.registration import register, registry

    if GYM_ID not in registry:
        # no wrappers: the env checks its own step order (and passes check_env), so gymnasium.make returns it as it
        # is and its action_masks() is a method of what the user holds, as sb3-contrib's MaskablePPO expects
        register(id=GYM_ID, entry_point=_entry_point("env"), vector_entry_point=_entry_point("vector_env"),
                 order_enforce=False, disable_env_checker=True)


_register_gymnasium()
