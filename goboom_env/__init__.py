"""goboom-env: the card game Go Boom as a pure rules engine and a PettingZoo AEC environment."""

from goboom_env.cards import DRAW_OR_PASS, JOKER, NUM_ACTIONS, code_of, face_of
from goboom_env.config import PRESETS, GameConfig
from goboom_env.engine import Hand, HandResult, IllegalActionError, Match, Phase

__version__ = "0.1.0"

__all__ = [
    "DRAW_OR_PASS", "JOKER", "NUM_ACTIONS", "PRESETS", "GameConfig", "Hand", "HandResult",
    "IllegalActionError", "Match", "Phase", "__version__", "code_of", "face_of",
]

from goboom_env.env import env, raw_env

__all__ += ["env", "raw_env"]


def _register() -> None:
    """Make ``pettingzoo.make("aec", "goboom/GoBoom-v0", ...)`` work (PettingZoo 1.27 added that registry)."""
    try:
        from pettingzoo.env_registry.registration import aec_registry, register
    except ImportError as exc:
        from importlib.metadata import version

        raise ImportError(f"goboom-env needs PettingZoo >= 1.27 (its environment registry), found "
                          f"{version('pettingzoo')}: pip install 'pettingzoo>=1.27'") from exc

    if "goboom/GoBoom-v0" not in aec_registry:
        register("aec", "goboom/GoBoom-v0", entry_point="goboom_env.env:env")


_register()
