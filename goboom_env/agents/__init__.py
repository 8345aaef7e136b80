"""The Policy protocol and the baseline agents, selectable by name (``make_agent``).

An agent maps what one player may know to a legal action (R3.2, R4.1): the environment's observation dict and, when
it asks for one (``needs_view``), a :class:`~goboom_env.player_view.PlayerView` of its seat. Every agent satisfies
:class:`Policy`; :class:`Agent` is a base class with the defaults. Specs: ``name`` or ``name:key=value,...``;
``ppo:PATH`` (``ppo:path=PATH`` for a path with ``=``); boolean options take true/false, yes/no or 1/0.

===================  =========  ==========================================================================
spec                 variant    idea (details in each class docstring)
===================  =========  ==========================================================================
``random``           both       uniform over the legal actions
``classic-tricks``   classic    keep the lead: win tricks cheaply, lead cards the others can hardly follow
``classic-cover``    classic    keep a flexible hand: shed the card whose loss leaves the most cards followable
``jokers-shed``      jokers     shed high-point cards, keep the next play open, boom instead of drawing
``jokers-boom``      jokers     times booms (hit a player about to go out), plays cards the others can hardly match
``heuristic``        both       alias of the strongest heuristic of the config's variant (:data:`BEST_HEURISTIC`)
``mc:budget=N``      both       determinized Monte-Carlo search (:mod:`goboom_env.agents.montecarlo`), N rollouts a move
``ismcts:iters=N``   both       information-set Monte-Carlo tree search (:mod:`~goboom_env.agents.ismcts`)
``ppo:PATH``         both       a trained model played in numpy (:mod:`~goboom_env.agents.ppo`)
``rllib:PATH``       both       an RLlib checkpoint (an entry point, loaded with Ray)
``ppo-ismcts:PATH``  both       ISMCTS guided by a model: its policy as the prior at the root
===================  =========  ==========================================================================

``openspiel-ismcts:sims=N`` is OpenSpiel's ``ISMCTSBot`` (the ``openspiel`` extra). More agents: a Python file,
``path/to/file.py:Class,key=value`` (called as ``Class(config, seed, key=value)``), :func:`register_agent`, or an
entry point of the ``goboom_env.agents`` group (how ``ppo``, ``ppo-ismcts``, ``rllib`` and ``openspiel-ismcts`` are
found, loaded only when used).
"""

from goboom_env.agents.heuristics import (
    BEST_HEURISTIC,
    HEURISTIC_AGENTS,
    HEURISTICS,
    ClassicCoverAgent,
    ClassicTricksAgent,
    HeuristicAgent,
    JokersBoomAgent,
    JokersShedAgent,
    Table,
    TableDecoder,
    make_heuristic,
)
from goboom_env.agents.policy import Agent, Observation, Policy, RandomAgent, missing_members
from goboom_env.agents.registry import (
    AGENTS,
    ENTRY_POINT_GROUP,
    FALSE_WORDS,
    TRUE_WORDS,
    AgentFactory,
    SpecSource,
    baselines,
    check_spec_source,
    is_file_spec,
    known_agents,
    make_agent,
    parse_spec,
    register_agent,
    spec_bool,
    unregister_agent,
)

__all__ = [
    "AGENTS", "BEST_HEURISTIC", "ENTRY_POINT_GROUP", "FALSE_WORDS", "HEURISTICS", "HEURISTIC_AGENTS", "TRUE_WORDS",
    "Agent", "AgentFactory", "ClassicCoverAgent", "ClassicTricksAgent", "HeuristicAgent", "JokersBoomAgent",
    "JokersShedAgent", "Observation", "Policy", "RandomAgent", "SpecSource", "Table", "TableDecoder", "baselines",
    "check_spec_source", "is_file_spec", "known_agents", "make_agent", "make_heuristic", "missing_members",
    "parse_spec", "register_agent", "spec_bool", "unregister_agent",
]
