"""Actions are integers of any numpy integer type (stored as plain ``int``); anything else, bools included,
is an error naming the problem."""

from __future__ import annotations

import numpy as np
import pytest

import goboom_env
from goboom_env import IllegalActionError


@pytest.mark.parametrize("cast", [int, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint64])
def test_engine_accepts_every_integer_action_type(cast) -> None:
    env = goboom_env.raw_env()
    env.reset(seed=0)
    seat = env.match.hand.current
    lead = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0])  # classic: any card leads
    env.step(cast(lead))
    assert env.match.hand.events[-1] == ("play", seat, lead)
    assert type(env.match.hand.events[-1][2]) is int


@pytest.mark.parametrize("action", [True, np.bool_(True), 2.0, np.float32(3), "5", None])
def test_engine_rejects_non_integer_actions_by_name(action) -> None:
    env = goboom_env.raw_env()
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"an action must be an integer in 0\.\.53"):
        env.match.hand.apply(action)
