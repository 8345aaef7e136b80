"""Compiled kernels of :mod:`goboom_env.vector` (private): the rules of :mod:`goboom_env.engine` over a struct of
arrays, one row per game, each function mirroring the engine or env method named in its docstring statement for
statement. Kernels take the state arrays in :data:`STATE` order and the configuration as ``cfg`` (int64, indexed by
the ``C_*`` constants); card sets are uint64 bitmasks as in the engine. One file: numba compiles the kernels that call
each other as one unit, and the mirrored rules read side by side with ``engine.py``.
"""

from __future__ import annotations

from typing import get_args

import numpy as np

from goboom_env._pcg64 import below, interval
from goboom_env.cards import DRAW_OR_PASS as DRAW
from goboom_env.cards import JOKER, NUM_FACES
from goboom_env.config import Scoring
from goboom_env.events import DREW, MOVE_WIDTH, PASSED_MOVE, mark_move
from goboom_env.hand_state import NOT_PLAYED, PASSED, Phase
from goboom_env.hints import needs_extra

with needs_extra("the batched engine (goboom_env.vector)"):
    from numba import njit

LEAD, FOLLOW, DISCARD, OVER = (int(phase) for phase in Phase)  # plain ints: numba's compile-time constants

# columns of the per-game scalar array ``g`` [B, G_FIELDS]; G_FINISHED: over, waiting for reset (autoreset=False);
# G_MOVES: the moves of the hand in the window (history layout); G_WINNERS: the last finished episode's winners,
# one bit per seat
(G_DEALER, G_CURRENT, G_PHASE, G_LEADER, G_LED, G_BEST_FACE, G_BEST_SEAT, G_TURNS, G_PASSES, G_TOP, G_MATCH, G_WINNER,
 G_BLOCKED, G_STOCK_HEAD, G_STOCK_LEN, G_HANDS_PLAYED, G_FINISHED, G_MOVES, G_WINNERS, G_FIELDS) = range(20)

STATE = ("g", "counts", "hmask", "sizes", "drawn", "trick", "scores", "seen", "deck", "stock", "legal", "rng",
         "played", "void", "since", "window")
"""The state arrays in the order every kernel takes them; the last four hold the history layout's facts."""

# entries of the int64 configuration array ``cfg``; C_SCORING: STANDARD (R1.11), REVERSE (R1.12) or PENALTY (R2.11);
# C_ROUNDS: jokers rounds per match, 0 in classic; C_HISTORY: 1 to write the history layout after the snapshot
(C_N, C_HAND_SIZE, C_DECK_SIZE, C_CLASSIC, C_AFTER_ANY, C_SCORING, C_TARGET, C_ROUNDS, C_SCORE_SCALE, C_MATCH_EPISODE,
 C_POINTS_REWARD, C_AUTORESET, C_HISTORY, C_FIELDS) = range(14)

STANDARD, REVERSE, PENALTY = (get_args(Scoring).index(name) for name in ("standard", "reverse", "penalty"))

# entries of the observation offsets array ``off`` (goboom_env.observation.layout order, then history_layout's blocks)
(O_HAND, O_SEEN, O_LED, O_TRICK, O_TRICK_PASSED, O_LEADER, O_TOP, O_MATCH, O_HAND_SIZES, O_DRAWN, O_STOCK, O_TO_MOVE,
 O_DEALER, O_SCORES, O_PASSES, O_PROGRESS, O_FLAGS, O_PLAYED, O_VOID, O_SINCE, O_WINDOW) = range(21)
W_SEAT, W_FACE, W_KIND = 0, 1, 2  # the columns of a move in ``window`` [B, moves, 3], the most recent first
PLAIN = np.uint64((1 << 52) - 1)  # every non-joker face

_ONE = np.uint64(1)
_mark_move = njit(cache=True, inline="always")(mark_move)


# -- randomness: one NumPy generator per game (goboom_env._pcg64) -------------------------------------
@njit(cache=True)
def _shuffle_deck(rng, b, deck, base):
    """The deck multiset ``base`` shuffled into ``deck[b]`` (index 0 = top) by game ``b``'s generator, as
    ``Match`` deals: ``rng.permutation`` of the sorted multiset, whose Fisher-Yates swaps these are."""
    row = deck[b]
    row[:] = base
    for i in range(base.shape[0] - 1, 0, -1):
        j = interval(rng, b, i)
        tmp = row[i]
        row[i] = row[j]
        row[j] = tmp


# -- the deal (Hand.__init__, Hand._turn_up) ---------------------------------------------------------
@njit(cache=True, inline="always")
def _pop_stock(g, stock, b, size):
    """Take the top card of game ``b``'s stock (a ring buffer over ``stock[b]``)."""
    head = g[b, G_STOCK_HEAD]
    face = stock[b, head]
    g[b, G_STOCK_HEAD] = head + 1 if head + 1 < size else 0
    g[b, G_STOCK_LEN] -= 1
    return face


@njit(cache=True)
def _deal(b, dealer, cfg, g, counts, hmask, sizes, drawn, trick, seen, deck, stock):
    """Deal ``deck[b]`` from ``dealer`` (R1.3, R2.3) and set up the first turn, as Hand.__init__."""
    n = cfg[C_N]
    size = cfg[C_DECK_SIZE]
    hmask[b] = 0
    sizes[b] = cfg[C_HAND_SIZE]
    drawn[b] = 0
    trick[b] = NOT_PLAYED
    counts[b] = 0
    seen[b] = 0
    dealt = cfg[C_HAND_SIZE] * n
    first = dealer + 1
    for i in range(dealt):
        face = deck[b, i]
        s = (first + i) % n
        counts[b, s, face] += 1
        hmask[b, s] |= _ONE << np.uint64(face)
    stock[b, :size - dealt] = deck[b, dealt:]
    g[b, G_STOCK_HEAD] = 0
    g[b, G_STOCK_LEN] = size - dealt
    g[b, G_DEALER] = dealer
    g[b, G_CURRENT] = (dealer + 1) % n
    _no_trick_yet(b, g)
    g[b, G_TURNS] = 0
    g[b, G_PASSES] = 0
    g[b, G_TOP] = -1
    g[b, G_MATCH] = -1
    g[b, G_WINNER] = -1
    g[b, G_BLOCKED] = 0
    if cfg[C_CLASSIC]:
        g[b, G_PHASE] = LEAD
        return
    g[b, G_PHASE] = DISCARD
    while True:  # R2.3: turn up the top card; a joker goes to the bottom of the stock instead
        face = _pop_stock(g, stock, b, size)
        if face == JOKER:
            tail = g[b, G_STOCK_HEAD] + g[b, G_STOCK_LEN]
            stock[b, tail % size] = face
            g[b, G_STOCK_LEN] += 1
            continue
        g[b, G_TOP] = face
        g[b, G_MATCH] = face
        seen[b, face] += 1
        return


@njit(cache=True)
def _new_game(b, dealer, shuffle, cfg, base, g, counts, hmask, sizes, drawn, trick, scores, seen, deck, stock, rng):
    """Start a fresh match in game ``b``: zero scores, dealer (random when ``dealer < 0``), the first hand dealt from
    ``deck[b]`` (shuffled first when ``shuffle``)."""
    if dealer < 0:
        dealer = below(rng, b, cfg[C_N])
    if shuffle:
        _shuffle_deck(rng, b, deck, base)
    scores[b] = 0
    g[b, G_HANDS_PLAYED] = 0
    g[b, G_FINISHED] = 0
    _deal(b, dealer, cfg, g, counts, hmask, sizes, drawn, trick, seen, deck, stock)


# -- legality (Hand.legal_mask) ---------------------------------------------------------------------
@njit(cache=True, inline="always")
def _legal_mask(b, cfg, match_masks, boom, g, hmask):
    """Legal actions of the player to move as a bitmask over the 54 actions (R3.2)."""
    phase = g[b, G_PHASE]
    if phase == OVER:
        return np.uint64(0)
    hand = hmask[b, g[b, G_CURRENT]]
    draw_bit = _ONE << np.uint64(DRAW)
    if phase == LEAD:
        return hand
    if phase == FOLLOW:
        follow = hand & match_masks[g[b, G_LED]]
        return follow if follow else draw_bit
    if cfg[C_AFTER_ANY] and g[b, G_TOP] == JOKER:
        matching = hand & ~boom
    else:
        matching = hand & match_masks[g[b, G_MATCH]] & ~boom
    if matching:
        return matching | (hand & boom)
    return (hand & boom) | draw_bit


# -- moves (Hand._classic_step, Hand._jokers_step and helpers) -------------------------------------------
@njit(cache=True, inline="always")
def _give(b, seat, face, counts, hmask, sizes):
    counts[b, seat, face] += 1
    hmask[b, seat] |= _ONE << np.uint64(face)
    sizes[b, seat] += 1


@njit(cache=True, inline="always")
def _take(b, seat, face, counts, hmask, sizes):
    left = counts[b, seat, face] - 1
    counts[b, seat, face] = left
    if left == 0:
        hmask[b, seat] &= ~(_ONE << np.uint64(face))
    sizes[b, seat] -= 1


@njit(cache=True, inline="always")
def _go_out(b, seat, g):
    g[b, G_WINNER] = seat
    g[b, G_PHASE] = OVER


@njit(cache=True, inline="always")
def _no_trick_yet(b, g):
    """Game ``b`` has no trick under way: no leader, no led card, no best card yet."""
    g[b, G_LEADER] = -1
    g[b, G_LED] = -1
    g[b, G_BEST_FACE] = -1
    g[b, G_BEST_SEAT] = -1


@njit(cache=True, inline="always")
def _classic_next(b, seat, n, g, trick):
    """The next turn of the trick, or the trick's end: its winner leads (R1.7, R1.8)."""
    g[b, G_TURNS] += 1
    if g[b, G_TURNS] < n:
        g[b, G_CURRENT] = (seat + 1) % n
        return
    g[b, G_CURRENT] = g[b, G_BEST_SEAT]
    g[b, G_PHASE] = LEAD
    g[b, G_TURNS] = 0
    for s in range(n):
        trick[b, s] = NOT_PLAYED
    _no_trick_yet(b, g)


@njit(cache=True, inline="always")
def _classic_play(b, seat, face, n, g, trick, sizes, seen):
    seen[b, face] += 1
    trick[b, seat] = face
    if g[b, G_PHASE] == LEAD:
        g[b, G_PHASE] = FOLLOW
        g[b, G_LEADER] = seat
        g[b, G_BEST_SEAT] = seat
        g[b, G_LED] = face
        g[b, G_BEST_FACE] = face
    elif face // 13 == g[b, G_LED] // 13 and face > g[b, G_BEST_FACE]:  # R1.7: first of twins wins
        g[b, G_BEST_FACE] = face
        g[b, G_BEST_SEAT] = seat
    if sizes[b, seat] == 0:
        _go_out(b, seat, g)  # R1.9, even mid-trick or on the lead
        return
    _classic_next(b, seat, n, g, trick)


@njit(cache=True, inline="always")
def _classic_step(b, action, cfg, match_masks, g, counts, hmask, sizes, drawn, trick, seen, stock):
    """One classic move; returns the face played (the drawn card that matched, R1.6), or -1 for a pass."""
    n = cfg[C_N]
    seat = g[b, G_CURRENT]
    if action != DRAW:
        _take(b, seat, action, counts, hmask, sizes)
        _classic_play(b, seat, action, n, g, trick, sizes, seen)
        return np.int64(action)
    match = match_masks[g[b, G_LED]]
    size = cfg[C_DECK_SIZE]
    count = 0
    while g[b, G_STOCK_LEN] > 0:  # R1.6: draw until a card matches the led card, then play it
        face = _pop_stock(g, stock, b, size)
        count += 1
        if (match >> np.uint64(face)) & _ONE:
            drawn[b, seat] += count
            _classic_play(b, seat, face, n, g, trick, sizes, seen)
            return np.int64(face)
        _give(b, seat, face, counts, hmask, sizes)
    drawn[b, seat] += count
    trick[b, seat] = PASSED
    _classic_next(b, seat, n, g, trick)
    return np.int64(-1)


@njit(cache=True, inline="always")
def _jokers_step(b, action, cfg, boom, g, counts, hmask, sizes, drawn, seen, stock):
    n = cfg[C_N]
    seat = g[b, G_CURRENT]
    size = cfg[C_DECK_SIZE]
    if action == DRAW:  # R2.7: draw exactly one, or pass on an empty stock
        if g[b, G_STOCK_LEN] > 0:
            _give(b, seat, _pop_stock(g, stock, b, size), counts, hmask, sizes)
            drawn[b, seat] += 1
        else:
            g[b, G_PASSES] += 1
            if g[b, G_PASSES] == n:  # R2.10
                g[b, G_BLOCKED] = 1
                g[b, G_PHASE] = OVER
                return
        g[b, G_CURRENT] = (seat + 1) % n
        return
    _take(b, seat, action, counts, hmask, sizes)
    seen[b, action] += 1
    g[b, G_PASSES] = 0
    g[b, G_TOP] = action
    if (boom >> np.uint64(action)) & _ONE:  # R2.6, R2.8
        if action != JOKER:
            g[b, G_MATCH] = action
        for k in range(1, n):
            if g[b, G_STOCK_LEN] == 0:
                break
            other = (seat + k) % n
            _give(b, other, _pop_stock(g, stock, b, size), counts, hmask, sizes)
            drawn[b, other] += 1
    else:
        g[b, G_MATCH] = action
    if sizes[b, seat] == 0:
        _go_out(b, seat, g)  # R2.9
        return
    g[b, G_CURRENT] = (seat + 1) % n


# -- the end of a hand (raw_env._end_hand, score_deltas, match_winners, win_rewards, points_rewards) ----
@njit(cache=True)
def _hand_points(b, n, points, counts, hmask, out):
    """Points of the cards left in each hand (R1.10, R2.11) into ``out[:n]``."""
    for s in range(n):
        total = 0
        bits = hmask[b, s]
        f = 0
        while bits:
            if bits & _ONE:
                total += counts[b, s, f] * points[f]
            bits >>= _ONE
            f += 1
        out[s] = total


@njit(cache=True)
def _score_deltas(cfg, winner, pts, out):
    """R1.11 (standard: the winner takes all), R1.12 / R2.11 (everyone adds their own points)."""
    if cfg[C_SCORING] == STANDARD:
        out[:] = 0
        if winner >= 0:
            out[winner] = pts.sum()
    else:
        out[:] = pts


@njit(cache=True)
def _win_rewards(n, is_winner, rewards, b):
    """Zero-sum win reward: each of k winners gets (n/k - 1)/(n - 1), the others -1/(n - 1)."""
    k = is_winner.sum()
    if k == 0:
        return
    for s in range(n):
        if is_winner[s]:
            rewards[b, s] = (n / k - 1.0) / (n - 1)
        else:
            rewards[b, s] = -1.0 / (n - 1)


@njit(cache=True)
def _lowest(n, values, out):
    """``out[s] = 1`` for the seats holding the lowest value (co-winners)."""
    low = values.min()
    for s in range(n):
        out[s] = 1 if values[s] == low else 0


@njit(cache=True)
def _end_hand(b, cfg, points, g, counts, hmask, scores, rewards, work):
    """Score a finished hand; write this step's rewards; return True when the episode ends."""
    n = cfg[C_N]
    pts = work[0]
    deltas = work[1]
    winners = work[2]
    _hand_points(b, n, points, counts, hmask, pts)
    winner = g[b, G_WINNER]
    _score_deltas(cfg, winner, pts, deltas)
    if cfg[C_POINTS_REWARD]:
        sign = 1 if cfg[C_SCORING] == STANDARD else -1
        mean = sign * deltas.sum() / n
        for s in range(n):
            rewards[b, s] = (sign * deltas[s] - mean) / 100.0
    if not cfg[C_MATCH_EPISODE]:
        if winner >= 0:
            for s in range(n):
                winners[s] = 1 if s == winner else 0
        else:
            _lowest(n, pts, winners)  # R2.10: after a blocked round, the fewest hand points win
        if not cfg[C_POINTS_REWARD]:
            _win_rewards(n, winners, rewards, b)
        return True
    for s in range(n):
        scores[b, s] += deltas[s]
    g[b, G_HANDS_PLAYED] += 1
    over = False
    scoring = cfg[C_SCORING]
    if scoring == STANDARD:  # R1.11
        for s in range(n):
            winners[s] = 1 if scores[b, s] >= cfg[C_TARGET] else 0
            over = over or winners[s] == 1
    else:
        if scoring == REVERSE:  # R1.12
            over = scores[b].max() >= cfg[C_TARGET]
        else:  # R2.2, R2.12
            over = g[b, G_HANDS_PLAYED] >= cfg[C_ROUNDS]
        if over:
            _lowest(n, scores[b], winners)
    if over and not cfg[C_POINTS_REWARD]:
        _win_rewards(n, winners, rewards, b)
    return over


# -- the observation (ObservationEncoder.encode) and the mask ------------------------------------------
@njit(cache=True, inline="always")
def _scaled_counts(levels, scale, row, start):
    """``row[start + f] = levels[f] * scale[start + f]`` in float32 like the encoder, branch-free over 1-D slices
    so that LLVM vectorises it (five times faster than indexing the 2-D arrays)."""
    dst = row[start:start + NUM_FACES]
    factors = scale[start:start + NUM_FACES]
    for f in range(NUM_FACES):
        dst[f] = np.float32(levels[f]) * factors[f]


@njit(cache=True, inline="always")
def _encode(b, seat, cfg, off, scale, g, counts, sizes, drawn, trick, scores, seen, played, void, since, window, row):
    """Write game ``b`` seen from ``seat`` into ``row``, value for value as ObservationEncoder.encode (and with the
    history layout, HistoryEncoder.encode)."""
    n = cfg[C_N]
    row[:] = 0.0
    _scaled_counts(counts[b, seat], scale, row, off[O_HAND])
    _scaled_counts(seen[b], scale, row, off[O_SEEN])
    row[off[O_DEALER] + (g[b, G_DEALER] - seat) % n] = 1.0
    if g[b, G_PHASE] != OVER:
        row[off[O_TO_MOVE] + (g[b, G_CURRENT] - seat) % n] = 1.0
    if cfg[C_CLASSIC]:
        led = g[b, G_LED]
        if led >= 0:
            row[off[O_LED] + led] = 1.0
            row[off[O_LEADER] + (g[b, G_LEADER] - seat) % n] = 1.0
            for rel in range(n):
                card = trick[b, (seat + rel) % n]
                if card >= 0:
                    row[off[O_TRICK] + rel * NUM_FACES + card] = 1.0
                elif card == PASSED:
                    row[off[O_TRICK_PASSED] + rel] = 1.0
    else:
        row[off[O_TOP] + g[b, G_TOP]] = 1.0
        row[off[O_MATCH] + g[b, G_MATCH]] = 1.0
    o_sizes = off[O_HAND_SIZES]
    o_drawn = off[O_DRAWN]
    o_scores = off[O_SCORES]
    score_scale = np.float64(cfg[C_SCORE_SCALE])
    for rel in range(n):
        other = (seat + rel) % n
        row[o_sizes + rel] = np.float32(sizes[b, other]) * scale[o_sizes + rel]
        row[o_drawn + rel] = np.float32(drawn[b, other]) * scale[o_drawn + rel]
        row[o_scores + rel] = np.float32(scores[b, other] / score_scale)
    row[off[O_STOCK]] = np.float32(g[b, G_STOCK_LEN] * (1.0 / cfg[C_DECK_SIZE]))
    row[off[O_PASSES]] = np.float32(g[b, G_PASSES] / n)
    if cfg[C_ROUNDS]:
        row[off[O_PROGRESS]] = np.float32(g[b, G_HANDS_PLAYED] / cfg[C_ROUNDS])
    o = off[O_FLAGS]
    row[o:o + 9] = scale[o:o + 9]
    if cfg[C_HISTORY]:
        _encode_history(b, seat, cfg, off, scale, g, played, void, since, window, row)


@njit(cache=True, inline="always")
def _write_outputs(b, cfg, off, scale, g, counts, sizes, drawn, trick, scores, seen, legal, played, void, since,
                   window, obs, mask, seat_out):
    """Observation, mask and seat of game ``b`` for the seat to move (the mask is zero once over)."""
    seat = g[b, G_CURRENT]
    seat_out[b] = seat
    bits = legal[b]
    out = mask[b]
    for a in range(DRAW + 1):
        out[a] = (bits >> np.uint64(a)) & _ONE
    _encode(b, seat, cfg, off, scale, g, counts, sizes, drawn, trick, scores, seen, played, void, since, window,
            obs[b])


# -- the history layout (goboom_env.history.PublicHistory, HistoryEncoder.encode) ------------------------
@njit(cache=True)
def _hist_clear(b, g, played, void, since):
    """A new hand: no card played, no proof, no move."""
    void[b] = 0
    since[b] = 0
    played[b] = 0
    g[b, G_MOVES] = 0


@njit(cache=True, inline="always")
def _hist_prove(b, seat, proof, void, since):
    """``seat`` holds none of ``proof``; an older proof still holds too when no unknown card came since."""
    if since[b, seat] == 0:
        void[b, seat] |= proof
    else:
        void[b, seat] = proof
    since[b, seat] = 0


@njit(cache=True, inline="always")
def _hist_play(b, seat, face, sizes, played, void, since):
    """``seat`` played ``face`` from its hand: a face it was void of was an unknown card."""
    played[b, seat, face] += 1
    bits = void[b, seat]
    if bits == 0:
        return
    if (bits >> np.uint64(face)) & _ONE and since[b, seat] > 0:
        since[b, seat] -= 1
    if sizes[b, seat] <= since[b, seat]:  # no card of the proof is left
        void[b, seat] = 0
        since[b, seat] = 0


@njit(cache=True, inline="always")
def _hist_record(b, seat, face, kind, g, window):
    """Put a move at the front of the window."""
    for j in range(window.shape[1] - 1, 0, -1):
        for c in range(3):
            window[b, j, c] = window[b, j - 1, c]
    window[b, 0, W_SEAT] = seat
    window[b, 0, W_FACE] = face
    window[b, 0, W_KIND] = kind
    if g[b, G_MOVES] < window.shape[1]:
        g[b, G_MOVES] += 1


@njit(cache=True)
def _hist_move(b, seat, action, face, led, top, match, stock_len, drawn_before, cfg, match_masks, boom,
               sizes, drawn, g, played, void, since, window):
    """The facts of one move by ``seat`` (``face``: classic, the card played or -1), from the state before it
    (``led``, ``top``, ``match``, ``stock_len``, ``drawn_before``: the mover's draws) and after it."""
    n = cfg[C_N]
    if cfg[C_CLASSIC]:
        if action != DRAW:
            _hist_play(b, seat, action, sizes, played, void, since)
            _hist_record(b, seat, action, 0, g, window)
            return
        proof = match_masks[led]
        _hist_prove(b, seat, proof, void, since)
        count = drawn[b, seat] - drawn_before
        kept = count - 1 if face >= 0 else count
        if kept > 0:  # the kept cards are known to be none of the new void only
            void[b, seat] = proof
        if face >= 0:
            played[b, seat, face] += 1
            _hist_record(b, seat, face, DREW, g, window)
        else:
            _hist_record(b, seat, -1, (DREW if count > 0 else 0) | PASSED_MOVE, g, window)
        return
    if action == DRAW:
        plain = PLAIN & ~boom
        if cfg[C_AFTER_ANY] and top == JOKER:
            proof = plain
        else:
            proof = match_masks[match] & plain
        _hist_prove(b, seat, proof, void, since)
        if stock_len > 0:
            if void[b, seat]:
                since[b, seat] += 1
            _hist_record(b, seat, -1, DREW, g, window)
        else:
            _hist_record(b, seat, -1, PASSED_MOVE, g, window)
        return
    _hist_play(b, seat, action, sizes, played, void, since)
    _hist_record(b, seat, action, 0, g, window)
    if (boom >> np.uint64(action)) & _ONE:  # the others drew while the stock lasted (R2.6): unknown cards
        for k in range(1, min(n - 1, stock_len) + 1):
            other = (seat + k) % n
            if void[b, other]:
                since[b, other] += 1


@njit(cache=True)
def _encode_history(b, seat, cfg, off, scale, g, played, void, since, window, row):
    """The history blocks of game ``b`` seen from ``seat``, value for value as HistoryEncoder.encode."""
    n = cfg[C_N]
    for rel in range(n):
        other = (seat + rel) % n
        _scaled_counts(played[b, other], scale, row, off[O_PLAYED] + rel * NUM_FACES)
        bits = void[b, other]
        if bits:
            start = off[O_VOID] + rel * NUM_FACES
            for f in range(NUM_FACES):
                if (bits >> np.uint64(f)) & _ONE:
                    row[start + f] = 1.0
            o = off[O_SINCE] + rel
            row[o] = np.float32(since[b, other]) * scale[o]
    width = n + MOVE_WIDTH
    for j in range(g[b, G_MOVES]):
        mover = (window[b, j, W_SEAT] - seat) % n
        _mark_move(row, off[O_WINDOW] + j * width, n, mover, window[b, j, W_FACE], window[b, j, W_KIND])


# -- the batch kernels ---------------------------------------------------------------------------------
@njit(cache=True)
def reset_games(games, decks, dealers, cfg, base, match_masks, boom, off, scale,
                g, counts, hmask, sizes, drawn, trick, scores, seen, deck, stock, legal, rng,
                played, void, since, window, obs, mask, seat_out):
    """Start the games marked in ``games`` [B] (the others are left as they are): ``decks`` [B, D] (or an empty
    [0, 0] array: shuffle) and ``dealers`` [B] (``-1`` = random) fix each first deal."""
    given = decks.shape[0] > 0
    for b in range(g.shape[0]):
        if not games[b]:
            continue
        if given:
            deck[b] = decks[b]
        _new_game(b, dealers[b], not given, cfg, base, g, counts, hmask, sizes, drawn, trick, scores, seen, deck, stock,
                  rng)
        if cfg[C_HISTORY]:
            _hist_clear(b, g, played, void, since)
        legal[b] = _legal_mask(b, cfg, match_masks, boom, g, hmask)
        _write_outputs(b, cfg, off, scale, g, counts, sizes, drawn, trick, scores, seen, legal, played, void, since,
                       window, obs, mask, seat_out)


@njit(cache=True)
def first_illegal(actions, moving, g, legal, check_legal):
    """Index of the first live moving game whose action is out of 0..53 or (``check_legal``) not legal, or -1."""
    for b in range(actions.shape[0]):
        if g[b, G_FINISHED] or not moving[b]:
            continue
        a = actions[b]
        if a < 0 or a > DRAW or (check_legal and not (legal[b] >> np.uint64(a)) & _ONE):
            return b
    return -1


@njit(cache=True)
def step_games(actions, moving, cfg, base, match_masks, boom, points, off, scale,
               g, counts, hmask, sizes, drawn, trick, scores, seen, deck, stock, legal, rng,
               played, void, since, window, obs, mask, seat_out, rewards, done):
    """Apply one action in every game marked in ``moving`` (the others are held: no reward, not done), end hands
    and matches, re-deal and write all outputs; with the history layout, update each hand's facts too."""
    batch = g.shape[0]
    n = cfg[C_N]
    history = cfg[C_HISTORY]
    work = np.zeros((3, n), np.int64)
    for b in range(batch):
        rewards[b] = 0.0
        done[b] = False
        if not moving[b]:
            continue
        if g[b, G_FINISHED]:
            done[b] = True
        else:
            action = actions[b]
            seat = g[b, G_CURRENT]
            led, top, match, stock_len = g[b, G_LED], g[b, G_TOP], g[b, G_MATCH], g[b, G_STOCK_LEN]
            drawn_before = drawn[b, seat]
            face = np.int64(-1)
            if cfg[C_CLASSIC]:
                face = _classic_step(b, action, cfg, match_masks, g, counts, hmask, sizes, drawn, trick, seen, stock)
            else:
                _jokers_step(b, action, cfg, boom, g, counts, hmask, sizes, drawn, seen, stock)
            if history:
                _hist_move(b, seat, action, face, led, top, match, stock_len, drawn_before, cfg, match_masks, boom,
                           sizes, drawn, g, played, void, since, window)
            if g[b, G_PHASE] == OVER:
                _end_or_deal(b, cfg, base, points, g, counts, hmask, sizes, drawn, trick, scores, seen, deck, stock,
                             rng, rewards, done, work)
                if history and not g[b, G_FINISHED]:  # a new hand was dealt
                    _hist_clear(b, g, played, void, since)
            legal[b] = _legal_mask(b, cfg, match_masks, boom, g, hmask)
        _write_outputs(b, cfg, off, scale, g, counts, sizes, drawn, trick, scores, seen, legal, played, void, since,
                       window, obs, mask, seat_out)


@njit(cache=True, inline="always")
def _end_or_deal(b, cfg, base, points, g, counts, hmask, sizes, drawn, trick, scores, seen, deck, stock, rng,
                 rewards, done, work):
    """A hand is over: score it; end the episode (a new game with autoreset) or deal the match's next hand."""
    n = cfg[C_N]
    if _end_hand(b, cfg, points, g, counts, hmask, scores, rewards, work):
        done[b] = True
        winners = 0
        for s in range(n):
            winners |= work[2, s] << s
        g[b, G_WINNERS] = winners
        if cfg[C_AUTORESET]:
            _new_game(b, -1, True, cfg, base, g, counts, hmask, sizes, drawn, trick, scores, seen, deck, stock, rng)
        else:
            g[b, G_FINISHED] = 1
    else:  # the match goes on: the deal passes to the left (R1.2, R2.2)
        _shuffle_deck(rng, b, deck, base)
        _deal(b, (g[b, G_DEALER] + 1) % n, cfg, g, counts, hmask, sizes, drawn, trick, seen, deck, stock)


@njit(cache=True)
def observe_seats(games, seats, cfg, off, scale, g, counts, hmask, sizes, drawn, trick, scores, seen, deck, stock,
                  legal, rng, played, void, since, window, out):
    """``out[i]``: game ``games[i]`` seen from seat ``seats[i]``, whoever is to move (raw_env.observe)."""
    for i in range(games.shape[0]):
        _encode(games[i], seats[i], cfg, off, scale, g, counts, sizes, drawn, trick, scores, seen, played, void, since,
                window, out[i])


@njit(cache=True)
def sample_legal(mask, uniforms, out):
    """``out[b]``: the legal action of ``mask[b]`` at rank ``floor(uniforms[b] * legal count)``."""
    for b in range(mask.shape[0]):
        count = 0
        for a in range(mask.shape[1]):
            count += mask[b, a] != 0
        if count == 0:
            out[b] = -1
            continue
        pick = int(uniforms[b] * count)
        for a in range(mask.shape[1]):
            if mask[b, a] != 0:
                if pick == 0:
                    out[b] = a
                    break
                pick -= 1
