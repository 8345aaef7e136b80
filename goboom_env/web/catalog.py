"""The opponents a page may choose: a list kept on the server, so that the page never names a file.

Each choice has an ``id`` (what the page sends) and the agent spec the server builds it from; a trained model
fits the configuration its metadata records, and the page learns its id only, never its file or folder. A spec
that names a Python file (which would run it) is never handed out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from goboom_env.agents import HEURISTICS, is_file_spec
from goboom_env.agents.ppo import check_compatible, read_metadata, trained_games
from goboom_env.config import GameConfig
from goboom_env.models import model_path, shipped_models
from goboom_env.web.limits import excerpt

SEARCH_AGENTS = (("mc:budget=50", "Monte-Carlo search, 50 rollouts a move"),
                 ("ismcts:iters=200", "ISMCTS, 200 iterations a move"),
                 ("ismcts:iters=1000", "ISMCTS, 1000 iterations a move (slow)"))


@dataclass(frozen=True)
class Choice:
    """One opponent the page may pick."""

    id: str
    spec: str
    """The agent spec the server makes it from (may hold a path: never sent to the page)."""
    label: str
    variant: str | None = None  # None: both
    config: GameConfig | None = None
    """The configuration a trained model plays (a generalist's default one); None = any of its variant."""
    meta: dict[str, Any] | None = field(default=None, compare=False, repr=False)  # a trained model's metadata
    player_counts: list[int] | None = None  # a trained model's table sizes; None: any

    def public(self) -> dict[str, Any]:
        """What the page is told about this choice."""
        return {"id": self.id, "label": self.label, "variant": self.variant,
                "config": None if self.config is None else self.config.to_dict(), "player_counts": self.player_counts}


class Catalog:
    """The opponents offered by one server: baselines, search agents, the shipped models and ``model_dirs``."""

    def __init__(self, model_dirs: list[Path] | None = None) -> None:
        choices = [Choice("random", "random", "uniform over the legal moves"),
                   Choice("heuristic", "heuristic", "the strongest heuristic of the variant")]
        for variant, names in HEURISTICS.items():
            choices += [Choice(name, name, f"{variant} heuristic", variant) for name in names]
        choices += [Choice(spec, spec, label) for spec, label in SEARCH_AGENTS]
        hidden: dict[str, str] = {}  # a path of a model file or folder -> what the page is told instead
        for name in shipped_models():
            choices.append(_model_choice(f"ppo:{name}", f"ppo:{name}", model_path(name), "shipped PPO model"))
            hidden |= _path_forms(model_path(name), f"ppo:{name}")
        offered: dict[str, Path] = {}  # model:STEM -> its file, to refuse two files of one name
        for folder in model_dirs or []:
            if not folder.is_dir():
                raise ValueError(f"--model {folder}: not a folder (give a folder that holds model .zip files)")
            files = sorted(folder.glob("*.zip"))
            if not files:
                raise ValueError(f"--model {folder}: the folder holds no model .zip file")
            for file in files:
                choice_id = f"model:{file.stem}"
                if choice_id in offered:
                    raise ValueError(f"--model: {offered[choice_id]} and {file} would both be offered as {choice_id} "
                                     "(the page names a model by its file name); copy one of them under another "
                                     "name into a folder of its own")
                offered[choice_id] = file
                choices.append(_model_choice(choice_id, f"ppo:{file}", file, f"model {file.name}"))
                hidden |= _path_forms(file, choice_id, relative=True)
            hidden |= _path_forms(folder, "a --model folder")
        self.choices = {c.id: c for c in choices}
        self._paths = sorted(hidden.items(), key=lambda item: -len(item[0]))  # a file before its folder

    def public(self) -> list[dict[str, Any]]:
        """Every choice as the page sees it."""
        return [c.public() for c in self.choices.values()]

    def without_files(self, message: str) -> str:
        """``message`` (an error of a model the list offers) with each model's path replaced by its choice's id and
        each ``--model`` folder by ``a --model folder``."""
        for path, name in self._paths:
            message = message.replace(path, name)
        return message

    def spec(self, choice_id: Any, config: GameConfig) -> str:
        """The agent spec of ``choice_id`` for a game of ``config``; ValueError when it is unknown or does not fit."""
        choice = self.choices.get(choice_id) if isinstance(choice_id, str) else None
        if choice is None:
            raise ValueError(f"unknown opponent {excerpt(choice_id)}; choose one of {sorted(self.choices)}")
        if is_file_spec(choice.spec) or is_file_spec(choice.id):  # loading it would run the file's code
            raise ValueError(f"opponent {excerpt(choice_id)} names a Python file: the server does not load agent "
                             "files")
        if choice.variant is not None and choice.variant != config.variant:
            raise ValueError(f"opponent {choice.id!r} plays the {choice.variant} variant, not {config.variant}")
        if choice.meta is not None:
            # the message names the choice, not its file; a ppo: model of either layout plays in the browser
            check_compatible(choice.meta, config, choice.id, layouts=("snapshot", "history"))
        return choice.spec


def _path_forms(path: Path, name: str, relative: bool = False) -> dict[str, str]:
    """The ways an error may write ``path`` (absolute, resolved, as given when ``relative``), mapped to ``name``."""
    forms = {str(path.absolute()), str(path.resolve())} | ({str(path)} if relative else set())
    return dict.fromkeys(forms, name)


def _model_choice(choice_id: str, spec: str, path: Path, label: str) -> Choice:
    """A trained model's choice, with the configuration its metadata records."""
    meta = read_metadata(path)
    config = GameConfig.from_dict(meta["config"])
    counts = [game.num_players for game in trained_games(meta)]
    players = ", ".join(map(str, counts))
    return Choice(choice_id, spec, f"{label} ({config.variant}, {players} players)", config.variant, config, meta,
                  counts)
