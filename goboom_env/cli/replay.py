"""``goboom replay FILE``: show a saved game move by move in the terminal, replayed on the engine.

FILE is a game record file (``games.jsonl`` of ``goboom evaluate --save-games N``, or ``goboom play --save FILE``),
shown with every hand face up or from one seat's view (``--seat S``). Every line is checked first and every move as
it is replayed: an error names the line and field, or the hand and move.

Examples::

    goboom replay results/eval-x/games.jsonl              # the first game, every hand face up
    goboom replay results/eval-x/games.jsonl --game 3 --seat 1 --wait
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, TextIO

import tyro

from goboom_env.cli.options import check_seat, print_error, run_parsed
from goboom_env.config import check_int
from goboom_env.engine import Hand
from goboom_env.events import describe_event, drawn_cards
from goboom_env.hints import one_line, safe_text
from goboom_env.records import GameRecord, ReplayStep, read, replay
from goboom_env.render import count_text, move_text, render_text, scores_text


@dataclass
class ReplayArgs:
    """The options of ``goboom replay``."""

    file: Annotated[Path | None, tyro.conf.Positional, tyro.conf.arg(metavar="FILE")] = None
    """Game record file (JSON Lines: games.jsonl of goboom evaluate --save-games, goboom play --save)."""
    game: int = 0
    """Which game of the file to show, 0 = the first."""
    seat: int | None = None
    """Show the game from this seat's view: its own cards face up, the others' hidden."""
    all: bool = False
    """Show every hand face up (the default without --seat)."""
    wait: bool = False
    """Wait for Enter after each move (q then Enter stops)."""

    def validate(self) -> None:
        """Raise ValueError naming the first bad option."""
        if self.file is None:
            raise ValueError("give the game record file to replay: goboom replay FILE")
        if self.all and self.seat is not None:
            raise ValueError("--seat and --all are alternatives: give one")
        check_int("--game", self.game, 0)


def main(argv: Sequence[str], prog: str = "goboom replay") -> int:
    """Show one game of a record file: 0 when shown, 2 on a bad option or file, 1 when the record does not replay."""

    def replay_game(args: ReplayArgs) -> int:
        assert args.file is not None
        record = _pick(args.file, args.game)
        if args.seat is not None:
            check_seat(args.seat, record.config.num_players)
        show = Show(record, args.seat, sys.stdout, sys.stdin if args.wait else None)
        try:
            show.run(f"game {args.game} of {args.file}")
        except ValueError as exc:
            print_error(prog, f"the record does not replay: {exc}")
            return 1
        return 0

    return run_parsed(ReplayArgs, argv, prog, __doc__, replay_game)


def _pick(path: Path, index: int) -> GameRecord:
    """Game ``index`` of the file; ValueError when the file cannot be read or has fewer games."""
    if not path.is_file():
        raise ValueError(f"no game record file {path}")
    records = read(path)
    if not records:
        raise ValueError(f"{path} holds no game records")
    if not 0 <= index < len(records):
        raise ValueError(f"--game {index}: {path} holds {count_text(len(records), 'game')} (0..{len(records) - 1})")
    return records[index]


class Show:
    """Prints a record step by step: all hands face up (``seat`` None) or from ``seat``'s view."""

    def __init__(self, record: GameRecord, seat: int | None, out: TextIO, pause: TextIO | None = None) -> None:
        self.record, self.seat, self.out, self.pause = record, seat, out, pause
        self.names = [safe_text(name) for name in record.seats]  # a record's strings, control characters escaped
        self.before: Hand | None = None

    def say(self, text: str) -> None:
        print(text, file=self.out)

    def run(self, title: str) -> None:
        """Replay the whole record (until the viewer types q)."""
        record, config = self.record, self.record.config
        seats = "  ".join(f"P{s}={name}" for s, name in enumerate(self.names))
        what = "one hand" if record.episode == "hand" else "a match"
        self.say(f"{safe_text(title)}: {config.variant} Go Boom, {config.num_players} players, {what}; {seats}")
        if record.meta:
            self.say("  " + one_line(", ".join(f"{k}: {v}" for k, v in record.meta.items()), 500))
        self.say("view: every hand face up" if self.seat is None
                 else f"view: P{self.seat}'s (the others' cards hidden)")
        for step in replay(record):
            if step.move is None:
                self._deal(step)
            else:
                self._move(step)
                if step.hand.over:
                    self._hand_over(step)
                elif not self._go_on():
                    return
        winners = ", ".join(f"P{w} ({self.names[w]})" for w in record.result.winners) or "nobody"
        self.say(f"the {record.episode} is won by {winners}; rewards "
                 + "  ".join(f"P{s}={r:+.3f}" for s, r in enumerate(record.rewards)))

    def _deal(self, step: ReplayStep) -> None:
        hand = step.hand
        self.say(f"\n=== hand {step.hand_index + 1} of {len(self.record.hands)}, dealer P{hand.dealer} ===")
        for event in step.events:
            self.say(f"  {describe_event(event)}")
        self.say(render_text(hand, None, self.seat, last=0, reveal=self.seat is None))
        self.before = hand

    def _move(self, step: ReplayStep) -> None:
        assert step.move is not None and self.before is not None
        seat, name = step.move.seat, self.names[step.move.seat]
        holding = (f"[{' '.join(move_text(f) for f in self.before.hand_faces(seat))}]"
                   if self._visible(seat) else f"({count_text(self.before.sizes[seat], 'card')})")
        self.say(f"P{seat} {name} {holding}: {move_text(step.move.action)}")
        for event in step.events:
            if event != ("play", seat, step.move.action):  # the move line says it already
                self.say(f"    {describe_event(event)}")
        for other in range(self.record.config.num_players):
            drawn = drawn_cards(self.before.hand_faces(other), step.hand.hand_faces(other), step.events, other,
                                self.before.classic)
            if drawn and self._visible(other):
                self.say(f"    (P{other} drew {' '.join(move_text(f) for f in sorted(drawn.elements()))})")
        self.before = step.hand

    def _visible(self, seat: int) -> bool:
        return self.seat is None or seat == self.seat

    def _hand_over(self, step: ReplayStep) -> None:
        recorded = self.record.hands[step.hand_index]
        self.say(render_text(step.hand, None, None, last=0, reveal=True))
        self.say(scores_text(recorded.score_deltas, recorded.scores))

    def _go_on(self) -> bool:
        """With ``--wait``: wait for Enter; False when the viewer typed q (or the input ended)."""
        if self.pause is None:
            return True
        print("[Enter: next move, q: stop] ", end="", file=self.out, flush=True)
        line = self.pause.readline()
        return bool(line) and line.strip().lower() not in ("q", "quit")
