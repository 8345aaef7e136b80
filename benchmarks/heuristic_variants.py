"""Is ``jokers-boom`` at a local optimum? Variants of it, each 1 vs 3 ``jokers-boom`` over whole matches.

Each variant changes one constant or adds one rule to ``jokers-boom`` (boom timing, drawing instead of booming,
the weights of scarcity, follow-ups and points, booming by the match standing in the last rounds, playing into
the suits and ranks the next player is known to lack). Every variant
plays the same duplicate tournaments (same seeds, so the same deals, seats and opponent seeds) as the unchanged
agent, and the table gives its win rate and the paired difference from the unchanged agent game by game, with a
95% t-interval: common random numbers make that difference far less noisy than two separate win rates.
``--agents`` compares any other agents the same way, e.g. a trained model's checkpoints (``--only`` with no
name then skips the variants); ``--num-jokers 0`` plays aces mode. Writes ``variants.csv`` and ``variants.md``
into ``--out``.

    .venv/bin/python benchmarks/heuristic_variants.py --games 2000 --seeds 4242 1 --out results/variants
    .venv/bin/python benchmarks/heuristic_variants.py --only --agents ppo:runs/jk4/model.zip --games 1000 \\
        --seeds 777 --out results/jk4-paired
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

import numpy as np

from goboom_env.agents.batched import jokers_scores
from goboom_env.agents.heuristics import DRAW_OR_PASS, JokersBoomAgent, Table
from goboom_env.agents.registry import register_agent
from goboom_env.cards import JOKERS_POINTS
from goboom_env.config import GameConfig
from goboom_env.evaluation.report import write_result_files
from goboom_env.observation import layout

_POINTS = np.array(JOKERS_POINTS, np.float64)

VARIANTS: dict[str, dict[str, float]] = {
    "jokers-boom": {},
    "never boom early": {"boom_at": 0},
    "boom at 2 cards": {"boom_at": 2},
    "boom at 3 cards": {"boom_at": 3},
    "draw with stock >= 10": {"draw_from": 10},
    "draw with stock >= 20": {"draw_from": 20},
    "scarcity 1": {"scarcity": 1.0},
    "scarcity 3": {"scarcity": 3.0},
    "scarcity 4": {"scarcity": 4.0},
    "follow-ups 2": {"follow": 2.0},
    "follow-ups 4": {"follow": 4.0},
    "follow-ups 6": {"follow": 6.0},
    "points x3 at 1 card": {"late_at": 1, "late_points": 3.0},
    "points x3 at 2 cards": {"late_at": 2, "late_points": 3.0},
    "points x10 at 2 cards": {"late_at": 2, "late_points": 10.0},
    "points x3 at 3 cards": {"late_at": 3, "late_points": 3.0},
    "leader booms, last round": {"leader_booms": 1},
    "trailer booms, last round": {"trailer_booms": 1},
    "both boom, last round": {"leader_booms": 1, "trailer_booms": 1},
    "leader booms, last 2 rounds": {"leader_booms": 2},
    "trailer booms, last 2 rounds": {"trailer_booms": 2},
    "next player's known voids, weight 2": {"void_weight": 2.0},
    "next player's known voids, weight 5": {"void_weight": 5.0},
}
"""Name -> the parameters of :class:`Variant` that differ from ``jokers-boom``."""


class Variant(JokersBoomAgent):
    """``jokers-boom`` with its constants as parameters and some optional rules; the defaults play exactly as it.

    * ``boom_at``: boom at once when an opponent holds this many cards or fewer (and the stock can make them draw).
    * ``draw_from``: with no matching plain card, draw instead of booming while the stock holds this many or more.
    * ``scarcity``, ``follow``: the weights of unseen matching cards and of own follow-up cards.
    * ``late_points`` x the card's points when an opponent holds ``late_at`` cards or fewer.
    * ``leader_booms`` / ``trailer_booms``: in the match's last this-many rounds, boom whenever possible while
      holding the lowest total / while not holding it.
    * ``void_weight``: read the hand's public events (the agent then asks for its view) for the suits and ranks the
      next player is known to lack: a player who draws or passes by choice holds no plain card matching the
      match card then (R2.7). Each such suit and rank of a candidate card adds this weight, while the next
      player has drawn at most ``void_draws`` cards since.
    """

    name = "variant"

    def __init__(self, config: GameConfig, seed: int | None = None, *, boom_at: int = 1, draw_from: int = 10**9,
                 scarcity: float = 2.0, follow: float = 3.0, late_at: int = -1, late_points: float = 1.0,
                 leader_booms: int = 0, trailer_booms: int = 0, void_weight: float = 0.0,
                 void_draws: int = 1) -> None:
        super().__init__(config, seed)
        self.void_weight, self.void_draws = float(void_weight), int(void_draws)
        self.needs_view = self.void_weight > 0
        self.next_voids = np.full((2, 13), NEVER, np.int64)
        """The next player's :func:`known_voids` (read by ``act`` from the view)."""
        self.boom_at, self.draw_from = int(boom_at), int(draw_from)
        self.scarcity, self.follow = float(scarcity), float(follow)
        self.late_at, self.late_points = int(late_at), float(late_points)
        self.leader_booms, self.trailer_booms = int(leader_booms), int(trailer_booms)
        self.blocks = layout(config.num_players)
        self.totals = np.zeros(config.num_players)
        self.rounds_left = config.rounds

    def act(self, observation: Any, view: Any = None) -> int:
        vector = observation["observation"]
        self.totals = vector[self.blocks["scores"]]  # relative seats, scaled: order is all the rule needs
        played = float(vector[self.blocks["progress"]][0]) * self.config.rounds
        self.rounds_left = self.config.rounds - round(played)
        if view is not None:
            self.next_voids = known_voids(view)[(view.seat + 1) % self.config.num_players]
        return super().act(observation, view)

    def split(self, t: Table) -> tuple[list[int], list[int]]:
        """(matching non-boom plays, boom plays) among the legal actions."""
        cards = [a for a in t.legal if a != DRAW_OR_PASS]
        return [a for a in cards if not self.boom[a]], [a for a in cards if self.boom[a]]

    def shed(self, t: Table, cards: list[int]) -> int:
        """The candidate card with the best :meth:`card_scores`."""
        return self._argmax(cards, self.card_scores(t, cards))

    def card_scores(self, t: Table, cards: list[int]) -> np.ndarray:
        """``jokers-boom``'s scores of the candidate cards, with the variant's adjustments."""
        score = jokers_scores(t.rows(), self.boom, self.follow, self.scarcity)[0, cards]
        if t.sizes[1:].min() <= self.late_at:
            score = score + (self.late_points - 1.0) * _POINTS[cards]
        if self.void_weight:
            plain = np.minimum(cards, 51)  # a joker has no suit or rank: its row of the table reads nothing
            lacks = ((self.next_voids[0, plain // 13] <= self.void_draws).astype(float)
                     + (self.next_voids[1, plain % 13] <= self.void_draws))
            score = score + self.void_weight * np.where(np.asarray(cards) < 52, lacks, 0.0)
        return score

    def choose(self, t: Table) -> int:
        plays, booms = self.split(t)
        if booms and t.stock > 0:
            leading = self.totals[0] <= self.totals[1:].min()
            late = self.leader_booms if leading else self.trailer_booms
            if t.sizes[1:].min() <= self.boom_at or self.rounds_left <= late:
                return self.shed(t, booms)
        if plays:
            return self.shed(t, plays)
        if booms and not (DRAW_OR_PASS in t.legal and t.stock >= self.draw_from):
            return self.shed(t, booms)
        return DRAW_OR_PASS


NEVER = 1 << 30
"""Cards drawn since a seat was seen lacking a suit or rank: never seen lacking it."""


def known_voids(view: Any) -> np.ndarray:
    """``[n, 2, 13]``: per seat, per suit (row 0) and rank (row 1), how many cards the seat has drawn since it last
    drew or passed by choice on a match card of that suit or rank (:data:`NEVER` when it has not), read from the
    hand's public events. A choice to draw or pass means no plain matching card in hand (R2.7); after a BOOM the
    next seats' draws are forced, not chosen (R2.6)."""
    n = view.config.num_players
    voids = np.full((n, 2, 13), NEVER, np.int64)
    match, forced = -1, []
    for event in view.events:
        kind = event[0]
        if kind in ("upcard", "play") and event[-1] < 52:
            match = event[-1]
        if kind == "boom":
            forced = [(event[1] + k) % n for k in range(1, n)]
            continue
        if kind == "draw" and forced and event[1] == forced[0]:
            forced.pop(0)
        else:
            forced = []
            if kind in ("draw", "pass") and match >= 0:
                voids[event[1], 0, match // 13] = voids[event[1], 1, match % 13] = 0
        if kind == "draw":
            voids[event[1]] += voids[event[1]] < NEVER
    return voids


def deal_shares(result: Any) -> np.ndarray:
    """Per duplicate deal, the first agent's mean win share over the deal's games (it sits in each seat once).

    In game ``g`` the first agent sits in seat ``g % n`` (:func:`goboom_env.evaluation.tournament.seat_specs`)."""
    n = result.config.num_players
    shares = np.zeros(max(game.deal for game in result.games) + 1)
    for game in result.games:
        shares[game.deal] += game.win_shares()[game.index % n] / n
    return shares


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--players", type=int, default=4)
    parser.add_argument("--num-jokers", type=int, default=2, help="jokers in the deck; 0 plays aces mode (R2.8)")
    parser.add_argument("--games", type=int, default=2000, help="duplicate matches per seed and variant")
    parser.add_argument("--seeds", type=int, nargs="+", default=[4242, 1])
    parser.add_argument("--only", nargs="*", default=None,
                        help="variant names to play (default: all; none: no variant)")
    parser.add_argument("--agents", nargs="*", default=[], help="other agent specs to compare, e.g. ppo:PATH")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from goboom_env.evaluation.stats import paired_test, wilson_interval
    from goboom_env.evaluation.tournament import run_tournament

    names = list(VARIANTS) if args.only is None else args.only
    unknown = sorted(set(names) - set(VARIANTS))
    if unknown:
        raise SystemExit(f"heuristic_variants: unknown variants {unknown}; known: {list(VARIANTS)}")
    try:
        config = GameConfig(variant="jokers", num_players=args.players, num_jokers=args.num_jokers)
    except ValueError as exc:
        raise SystemExit(f"heuristic_variants: {exc}") from None
    register_agent("variant", lambda config, seed=None, **params: Variant(config, seed, **params), replace=True)
    args.out.mkdir(parents=True, exist_ok=True)
    base: np.ndarray | None = None
    rows = []
    entries = []  # (row name, agent spec, the variant's parameters)
    for name in ["jokers-boom", *[n for n in names if n != "jokers-boom"]]:
        params = ",".join(f"{k}={v}" for k, v in VARIANTS[name].items())
        entries.append((name, f"variant:{params}" if params else "variant", params))
    entries += [(spec, spec, "") for spec in args.agents]
    for name, spec, params in entries:
        shares = np.concatenate([deal_shares(run_tournament(config, [spec] + ["jokers-boom"] * (args.players - 1),
                                                           args.games, seed=seed, duplicate=True, episode="match",
                                                           progress=False)) for seed in args.seeds])
        base = shares if base is None else base
        matches = len(shares) * args.players
        low, high = wilson_interval(shares.sum() * args.players, matches)
        paired = paired_test(name, "jokers-boom", shares, base)
        diff, d_low, d_high = paired.mean_diff, paired.ci_low, paired.ci_high
        rows.append({"variant": name, "params": params or "-", "matches": matches,
                     "win_rate": round(shares.mean(), 4), "ci_low": round(low, 4), "ci_high": round(high, 4),
                     "diff": round(diff, 4), "diff_low": round(d_low, 4), "diff_high": round(d_high, 4)})
        print(f"{name:32s} {shares.mean():.4f} [{low:.3f}, {high:.3f}]  diff {diff:+.4f} [{d_low:+.4f}, {d_high:+.4f}]",
              flush=True)
    write_result_files(args.out, "variants", rows, [
        {"variant": r["variant"], "matches": r["matches"],
         "win rate (95% CI)": f"{r['win_rate']:.4f} [{r['ci_low']:.3f}, {r['ci_high']:.3f}]",
         "difference from jokers-boom, same games (95% CI)":
             f"{r['diff']:+.4f} [{r['diff_low']:+.4f}, {r['diff_high']:+.4f}]"} for r in rows])
    print(f"wrote {args.out}/variants.csv and variants.md")


if __name__ == "__main__":
    main()
