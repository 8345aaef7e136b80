"""The options of every ``goboom`` command, built by tyro from the settings dataclasses.

Each command's options are one dataclass whose field docstrings are the ``--help`` texts (the game fields come from
:class:`goboom_env.training.settings.GameArgs`, so they mean the same to every command). :func:`parse` adds
``--config FILE`` and, to the commands that play a game, ``--preset NAME``; a bad option is one line on stderr
and exit code 2, as argparse does.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import io
import itertools
import re
import sys
import typing
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, TypeVar

from goboom_env.config import PRESETS, GameConfig, errors_prefixed, field_docs, field_names
from goboom_env.hints import did_you_mean, one_line
from goboom_env.outdir import OutputError
from goboom_env.process import WorkerLostError
from goboom_env.training.settings import GameArgs, build_args, load_config_file, shared_fields, unwrap_optional
from goboom_env.untrusted import MAX_INT_DIGITS

T = TypeVar("T")


class Settings(Protocol):
    """A settings dataclass of a command: ``validate()`` raises ValueError naming the first bad field."""

    def validate(self) -> None: ...


S = TypeVar("S", bound=Settings)
G = TypeVar("G", bound=GameArgs)

ALIASES = {"--players": "--num-players"}
"""Short spellings of options every command has."""
CONFIG_HELP = "TOML file (JSON if its name ends in .json) of settings; keys = field names, e.g. num_players = 3"
PRESET_HELP = "start from a named game configuration (goboom_env.config.PRESETS)"


class UsageError(ValueError):
    """A bad command line: the one-line message says which option and why."""


def parse(cls: type[T], argv: Sequence[str], prog: str, description: str | None = None,
          defaults: T | None = None) -> T:
    """The ``cls`` instance that ``argv`` describes (defaults < ``--config`` < ``--preset`` < options), over
    ``defaults`` when given. ``--help`` exits 0 (SystemExit); a bad option raises :class:`UsageError`; the values
    are not validated (call ``validate()``)."""
    plays_a_game = issubclass(cls, GameArgs)  # only a game-playing command takes --preset
    config, preset = _config_and_preset(argv, prog, plays_a_game)
    default = build_args(cls, config=config, preset=preset, base=defaults)
    shown = _shown_fields(cls)
    wrapper = _wrapper(shown, plays_a_game)
    extra = {"preset": preset} if plays_a_game else {}
    parsed = _tyro_cli(wrapper, argv, prog, description and plain_text(description),
                       wrapper(config=config, args=shown(**shared_fields(default, cls)), **extra)).args
    return cls(**shared_fields(parsed, cls))


def run_command(prog: str, body: Callable[[], int]) -> int:
    """``body()``, its error printed as ``PROG: error: ...`` (:func:`print_error`): exit code 2 for a ValueError (a bad
    option or setting, a damaged file), 1 for results that cannot be written or a lost worker process."""
    try:
        return body()
    except (ValueError, OutputError, WorkerLostError) as exc:
        print_error(prog, exc)
        return 2 if isinstance(exc, ValueError) else 1


def print_error(prog: str, error: Exception | str) -> None:
    """The error line ``PROG: error: ...`` on stderr, control characters escaped, length bounded (:func:`one_line`)."""
    print(f"{prog}: error: {one_line(str(error))}", file=sys.stderr)


def run_parsed(cls: type[S], argv: Sequence[str], prog: str, description: str | None, body: Callable[[S], int],
               defaults: S | None = None) -> int:
    """``body(args)`` of the options ``argv`` describes (:func:`parse`), validated, under :func:`run_command`."""

    def run() -> int:
        args = parse(cls, argv, prog, description, defaults)
        args.validate()
        return body(args)

    return run_command(prog, run)


def run_script(body: Callable[[S], object], settings: S, description: str | None) -> int:
    """Run a script of ``training/`` or ``evaluation/``: ``body(args)``, the options of ``sys.argv`` (those of the
    command it mirrors) read over ``settings``; 0, or 2 on a bad option or setting (``SCRIPT: error: ...``)."""

    def run(args: S) -> int:
        body(args)
        return 0

    return run_parsed(type(settings), sys.argv[1:], Path(sys.argv[0]).name, description, run, settings)


def train_command(cls: type[G], trainer: str, argv: Sequence[str], prog: str, description: str | None) -> int:
    """A PPO training command: ``train(args, command_line)`` of the module ``trainer`` (imported once the options are
    read), then the last evaluation's win rates and where the files went; 2 on a bad option."""

    def run(args: G) -> int:
        from rich.console import Console

        from goboom_env.evaluation.report import rich_table
        from goboom_env.training.artifacts.run_folder import RunFiles, last_evaluation

        model = importlib.import_module(trainer).train(args, command_line(prog, argv))
        files = RunFiles(model.parent)
        if (found := last_evaluation(files)) is not None:
            steps, rows = found
            Console().print(rich_table(f"Evaluation at {steps:,} steps, one {args.episode} a game", rows,
                                       caption="win rate 1-vs-(n-1), 95% Wilson CI"))
        print(f"model: {model}")
        if files.eval.exists():
            print(f"evaluation: {files.eval}")
        print(f"learning curve: {files.curve}")
        return 0

    return run_parsed(cls, argv, prog, description, run)


def check_seat(seat: int, num_players: int) -> None:
    """ValueError unless ``--seat`` is a seat of a table of ``num_players``."""
    if not 0 <= seat < num_players:
        raise ValueError(f"--seat must be in 0..{num_players - 1}, got {seat}")


def writing(what: str, where: Path) -> contextlib.AbstractContextManager[None]:
    """An OSError of the block (disk full, ...) raised as an OutputError: ``cannot write WHAT to WHERE: ...``."""
    return errors_prefixed(f"cannot write {what} to {where}", OSError, OutputError)


def command_line(prog: str, argv: Sequence[str]) -> str:
    """The command as a user would type it again (saved with run folders and reports)."""
    import shlex

    return " ".join([prog, *(shlex.quote(a) for a in argv)])


def game_options_given(argv: Sequence[str], cls: type = GameArgs) -> list[str]:
    """The game options ``argv`` sets, as the user wrote them: ``--variant`` and the other GameConfig fields,
    ``--preset NAME``, and the GameConfig keys of a ``--config`` file (``num_players in game.toml``)."""
    names = set(field_names())
    flags = {"--" + name.replace("_", "-") for name in names} | set(ALIASES)
    given = [arg.partition("=")[0] for arg in argv if arg.partition("=")[0] in flags]
    config, preset = _config_and_preset(argv, "", True)
    if preset is not None:
        given.append(f"--preset {preset}")
    if config is not None:
        given += [f"{key} in {config}" for key in load_config_file(config, cls) if key in names]
    return given


def with_model_game(args: G, argv: Sequence[str], specs: Sequence[str]) -> G:
    """``args`` playing the game the ``ppo:`` models among ``specs`` were trained for: with no game option in ``argv``
    the models' one game (a generalist's default one), else the options' game if every model was trained for it;
    ValueError names the models or the options and each field they disagree on otherwise."""
    from goboom_env.agents.ppo import spec_config, spec_games

    trained = {spec: config for spec in dict.fromkeys(specs) if (config := spec_config(spec)) is not None}
    if not trained:
        return args
    given = game_options_given(argv, type(args))
    if not given:  # the models' one game
        (spec, config), *others = trained.items()
        for other, other_config in others:
            if other_config != config:
                raise ValueError(f"{spec} and {other} were trained for different games "
                                 f"({_differences(config, other_config, spec, other)})")
        return dataclasses.replace(args, **config.to_dict())
    requested = args.game_config()
    for spec in trained:  # any game every model plays (a generalist also plays its other tables)
        games = spec_games(spec)
        if requested not in games:
            raise ValueError(f"{spec} was trained for another game than the game options ({', '.join(given)}) "
                             f"choose: {_refusal(games, requested)}; give no game option to play the model's game")
    return args


def _refusal(games: Sequence[GameConfig], requested: GameConfig) -> str:
    """How ``requested`` differs from the model's game (a generalist's: its game of that table size)."""
    if len(games) == 1:
        return _differences(games[0], requested, "model", "options")
    counts = ", ".join(str(game.num_players) for game in games)
    same = [game for game in games if game.num_players == requested.num_players]
    if not same:
        return f"num_players: model {counts} (a generalist), options {requested.num_players}"
    return f"{_differences(same[0], requested, 'model', 'options')} (a generalist of {counts} players)"


def _differences(a: GameConfig, b: GameConfig, a_name: str, b_name: str) -> str:
    """The fields where two configurations differ: ``variant: model 'jokers', options 'classic'``."""
    left, right = a.to_dict(), b.to_dict()
    return "; ".join(f"{k}: {a_name} {v!r}, {b_name} {right[k]!r}" for k, v in left.items() if right[k] != v)


def _config_and_preset(argv: Sequence[str], prog: str, with_preset: bool) -> tuple[Path | None, str | None]:
    """``--config`` and (a game-playing command's) ``--preset``, read first: the defaults the options override."""
    pre = argparse.ArgumentParser(prog=prog, add_help=False, allow_abbrev=False, exit_on_error=False)
    pre.add_argument("--config", type=Path, default=None)
    if with_preset:
        pre.add_argument("--preset", default=None)
    try:
        known, _ = pre.parse_known_args(list(argv))
        preset = getattr(known, "preset", None)
        if preset is not None:
            GameConfig.preset(preset)  # an unknown name: UsageError naming the likely one
    except (argparse.ArgumentError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    return known.config, preset


def _wrapper(cls: type, with_preset: bool) -> type:
    """A dataclass holding ``--config``, ``--preset`` (if ``with_preset``) and the fields of ``cls``, unprefixed."""
    import tyro

    fields: list[Any] = [
        ("args", Annotated[cls, tyro.conf.OmitArgPrefixes, tyro.conf.arg(name="")]),
        ("config", Annotated[Path | None, tyro.conf.arg(help=CONFIG_HELP, metavar="FILE")], None),
    ]
    if with_preset:
        fields.append(("preset", Annotated[str | None, tyro.conf.arg(help=PRESET_HELP, metavar="{" + ",".join(
            sorted(PRESETS)) + "}")], None))  # checked by _config_and_preset, with a did-you-mean
    return dataclasses.make_dataclass(f"{cls.__name__}Options", fields)


def _tyro_cli(wrapper: type, argv: Sequence[str], prog: str, description: str | None, default: Any) -> Any:
    """tyro's parse of ``argv``, with its error panel turned into one :class:`UsageError` line."""
    import tyro

    captured = io.StringIO()
    try:
        with contextlib.redirect_stderr(captured):
            return tyro.cli(wrapper, args=_spelled_out(argv), prog=prog, description=description, default=default)
    except SystemExit as exc:
        if exc.code in (0, None):
            raise
        message = _plain(_first_line(captured.getvalue()) or "bad command line")
        raise UsageError(message + _flag_hints(message, wrapper)) from None


_PARSE_ERROR = re.compile(r"Error parsing (--[\w-]+): (?:invalid literal for int\(\) with base 10: (.*)|(Exceeds the "
                          r"limit .* for integer string.*)|could not convert string to float: (.*))", re.S)


def _plain(message: str) -> str:
    """tyro's message with Python's conversion errors said in words naming the option: ``--games must be an
    integer, got 'abc'``, never Python's 4,300-digit limit."""
    found = _PARSE_ERROR.fullmatch(message)
    if found is None:
        return message
    flag, not_int, too_long, not_float = found.groups()
    if too_long is not None:
        return f"{flag} must be an integer of at most {MAX_INT_DIGITS} digits"
    return f"{flag} must be {'an integer' if not_float is None else 'a number'}, got {not_int or not_float}"


def _flag_hints(message: str, wrapper: type) -> str:
    """``" (--num-player: did you mean --num-players?)"`` for each unrecognized option of tyro's ``message`` that
    is close to an option of the command (``wrapper``'s fields and those of the dataclasses it holds)."""
    if not message.startswith("Unrecognized options:"):
        return ""
    flags = _flags(wrapper) | set(ALIASES)
    names = [word.strip().partition("=")[0] for word in message.partition(":")[2].split(",")]
    return "".join(did_you_mean(name, flags, quote=False, about=name) for name in names
                   if name.startswith("--") and name not in flags)


def _flags(cls: type) -> set[str]:
    """The ``--option`` names of a dataclass's fields (nested ones unprefixed, booleans' ``--no-`` form too)."""
    flags = {"--help"}
    types = typing.get_type_hints(cls)
    for item in dataclasses.fields(cls):
        kind = types.get(item.name)
        if isinstance(kind, type) and dataclasses.is_dataclass(kind):
            flags |= _flags(kind)
            continue
        flag = "--" + item.name.replace("_", "-")
        flags |= {flag, "--no-" + flag[2:]} if kind is bool else {flag}
    return flags


def _spelled_out(argv: Sequence[str]) -> list[str]:
    """``argv`` with the short spellings of :data:`ALIASES` replaced by the options they stand for."""
    return [ALIASES.get(name, name) + sep + value for name, sep, value in (arg.partition("=") for arg in argv)]


_BOX = re.compile(r"^[\s│╭╮╰╯─|+\-]*|[\s│╭╮╰╯─|+\-]*$")


def _first_line(panel: str) -> str:
    """tyro's error panel as one line: its text under the title, up to its rule, box drawing removed."""
    lines = [_BOX.sub("", line) for line in panel.splitlines()]
    if len(lines) < 2:
        return lines[0] if lines else ""
    text = itertools.dropwhile(lambda line: not line, lines[1:])
    return " ".join(itertools.takewhile(lambda line: line and not line.startswith("For full helptext"), text))


def _shown_fields(cls: type) -> type:
    """A subclass of ``cls`` whose fields tell tyro how to show them: the help its docstring as plain text (tyro keeps
    an indented docstring's line breaks and reST markup), an optional field's metavar its type's (``INT``)."""
    import tyro

    hints, docs, fields = typing.get_type_hints(cls, include_extras=True), field_docs(cls), []
    arg = type(tyro.conf.arg())
    for item in dataclasses.fields(cls):
        kind, *marks = typing.get_args(hints[item.name]) if typing.get_origin(hints[item.name]) is Annotated \
            else (hints[item.name],)
        inner, optional = unwrap_optional(kind)
        metavar = None
        if optional and typing.get_origin(inner) is Literal:  # tyro would show {None,standard,...}
            metavar = "{" + ",".join(typing.get_args(inner)) + "}"
        elif optional and inner in (int, float, str, Path):
            metavar = inner.__name__.upper()
        text = docs.get(item.name) or next((m.help for m in marks if isinstance(m, arg) and m.help), None)
        help_text = " ".join(plain_text(text).split()) if text else None
        default = ({"default": item.default} if item.default is not dataclasses.MISSING
                   else {"default_factory": item.default_factory})
        fields.append((item.name, Annotated[(kind, *marks, tyro.conf.arg(help=help_text, metavar=metavar))],
                       dataclasses.field(**default)))  # type: ignore[call-overload]
    return dataclasses.make_dataclass(cls.__name__, fields, bases=(cls,))


_ROLE = re.compile(r":[a-z]+:`(~?)([^`]*)`")
"""A reST role: ``:class:`~goboom_env.config.GameConfig``` (the ``~`` shows the last name only)."""


def plain_text(text: str) -> str:
    """A docstring as plain text for ``--help``: reST roles and literals and Markdown code spans unquoted, each
    paragraph on one line, an indented block (an example) kept line for line, ``Examples::`` ending in one colon."""
    text = _ROLE.sub(lambda m: m[2].rpartition(".")[2] if m[1] else m[2], text)
    text = re.sub(r"``(.+?)``", r"\1", text, flags=re.S)
    text = re.sub(r"`([^`\n]+)`", r"\1", text).replace("::\n", ":\n")
    paragraphs = re.split(r"\n\s*\n", text.strip("\n"))
    return "".join(("\n" + p if p.startswith(" ") else "\n\n" + " ".join(p.split())) for p in paragraphs).strip("\n")
