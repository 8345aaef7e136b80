"""NumPy's default generator, one per row of an array, stepped in compiled code (numba; private).

A row of a ``[R, STREAM_WORDS]`` uint64 array holds the state of one ``np.random.default_rng`` Generator (NumPy's
``PCG64.state`` layout: the 128-bit LCG state and increment, the spare 32-bit half), and the kernels are NumPy's own
algorithms, so a row draws what the Generator draws (``tests/rules/test_streams.py``); each kernel's docstring names
the Generator call it equals.
"""

from __future__ import annotations

import numpy as np

from goboom_env.hints import needs_extra

with needs_extra("the batched engine (goboom_env.vector)"):
    from numba import njit

S_HI, S_LO, INC_HI, INC_LO, HAS_HALF, HALF = 0, 1, 2, 3, 4, 5
"""The columns of a row: the LCG state (high, low 64 bits), its increment, whether a 32-bit half is kept, the half."""
STREAM_WORDS = 6

_MULT_HI = np.uint64(0x2360ED051FC65DA4)
_MULT_LO = np.uint64(0x4385DF649FCCF645)  # PCG's default 128-bit multiplier, with _MULT_HI
_LOW32 = np.uint64(0xFFFFFFFF)
_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_S1, _S11, _S32, _S58, _S63 = (np.uint64(k) for k in (1, 11, 32, 58, 63))
_FOLDS = tuple(np.uint64(k) for k in (1, 2, 4, 8, 16, 32))
_INV_2_53 = 1.0 / 9007199254740992.0


@njit(cache=True, inline="always")
def _mul_hi(a, b):
    """The high 64 bits of the 128-bit product of two uint64."""
    a_lo, a_hi, b_lo, b_hi = a & _LOW32, a >> _S32, b & _LOW32, b >> _S32
    p0, p1, p2, p3 = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
    mid = (p0 >> _S32) + (p1 & _LOW32) + (p2 & _LOW32)
    return p3 + (p1 >> _S32) + (p2 >> _S32) + (mid >> _S32)


@njit(cache=True, inline="always")
def _step(st, r):
    """The LCG step: state = state * multiplier + increment (mod 2**128)."""
    hi, lo = st[r, S_HI], st[r, S_LO]
    prod_lo = lo * _MULT_LO
    prod_hi = _mul_hi(lo, _MULT_LO) + lo * _MULT_HI + hi * _MULT_LO
    new_lo = prod_lo + st[r, INC_LO]
    carry = _ONE if new_lo < prod_lo else _ZERO
    st[r, S_HI] = prod_hi + st[r, INC_HI] + carry
    st[r, S_LO] = new_lo


@njit(cache=True)
def next64(st, r):
    """Row ``r``'s next 64 bits (PCG64's XSL-RR output of the stepped state)."""
    _step(st, r)
    hi = st[r, S_HI]
    x = hi ^ st[r, S_LO]
    rot = hi >> _S58
    return (x >> rot) | (x << ((_ZERO - rot) & _S63))


@njit(cache=True)
def next32(st, r):
    """Row ``r``'s next 32 bits: the kept high half of the last 64-bit output, else the low half of a new one."""
    if st[r, HAS_HALF]:
        st[r, HAS_HALF] = _ZERO
        return st[r, HALF]
    bits = next64(st, r)
    st[r, HAS_HALF] = _ONE
    st[r, HALF] = bits >> _S32
    return bits & _LOW32


@njit(cache=True)
def below(st, r, k):
    """``integers(k)``: a uniform int in ``0..k-1`` (``1 <= k <= 2**32``; Lemire's bounded draw on 32-bit outputs);
    ``k = 1`` draws nothing."""
    bound = np.uint64(k - 1)
    if bound == _ZERO:
        return 0
    if bound == _LOW32:
        return np.int64(next32(st, r))
    excl = bound + _ONE
    m = next32(st, r) * excl
    leftover = m & _LOW32
    if leftover < excl:
        threshold = (_LOW32 - bound) % excl
        while leftover < threshold:
            m = next32(st, r) * excl
            leftover = m & _LOW32
    return np.int64(m >> _S32)


@njit(cache=True)
def uniform(st, r):
    """``random()``: a float64 in [0, 1) from the top 53 bits of the next output."""
    return np.float64(next64(st, r) >> _S11) * _INV_2_53


@njit(cache=True)
def interval(st, r, i):
    """A uniform int in ``0..i`` (``i < 2**32``) by rejection under the smallest covering bit mask: one step of
    NumPy's Fisher-Yates shuffle (``random_interval``)."""
    top = np.uint64(i)
    if top == _ZERO:
        return 0
    mask = top
    for shift in _FOLDS:  # the highest set bit smeared into every lower one
        mask |= mask >> shift
    value = next32(st, r) & mask
    while value > top:
        value = next32(st, r) & mask
    return np.int64(value)


@njit(cache=True)
def seed_rows(st, rows, words):
    """Seed ``st[rows[i]]`` from ``words[i]`` (``SeedSequence(seed).generate_state(4)``) as ``PCG64(seed)`` does."""
    for i in range(rows.shape[0]):
        r = rows[i]
        st[r, S_HI] = _ZERO
        st[r, S_LO] = _ZERO
        st[r, INC_HI] = (words[i, 2] << _S1) | (words[i, 3] >> _S63)
        st[r, INC_LO] = (words[i, 3] << _S1) | _ONE
        _step(st, r)
        lo = st[r, S_LO] + words[i, 1]
        carry = _ONE if lo < words[i, 1] else _ZERO
        st[r, S_HI] = st[r, S_HI] + words[i, 0] + carry
        st[r, S_LO] = lo
        _step(st, r)
        st[r, HAS_HALF] = _ZERO
        st[r, HALF] = _ZERO


@njit(cache=True)
def below_rows(st, rows, highs, out):
    """``out[i]``: row ``rows[i]``'s ``integers(highs[i])``."""
    for i in range(rows.shape[0]):
        out[i] = below(st, rows[i], highs[i])


@njit(cache=True)
def uniform_rows(st, rows, out):
    """``out[i]``: row ``rows[i]``'s ``random()``."""
    for i in range(rows.shape[0]):
        out[i] = uniform(st, rows[i])


@njit(cache=True)
def best_rows(st, rows, candidates, scores, out):
    """``out[i]``: the column of a highest score among row ``i``'s ``candidates``, a tie drawn with ``integers(ties)``
    from stream ``rows[i]``; -1 for no candidate."""
    for i in range(rows.shape[0]):
        best = -np.inf
        ties = 0
        for c in range(candidates.shape[1]):
            if candidates[i, c]:
                if scores[i, c] > best:
                    best = scores[i, c]
                    ties = 1
                elif scores[i, c] == best:
                    ties += 1
        if ties == 0:
            out[i] = -1
            continue
        pick = below(st, rows[i], ties)
        for c in range(candidates.shape[1]):
            if candidates[i, c] and scores[i, c] == best:
                if pick == 0:
                    out[i] = c
                    break
                pick -= 1
