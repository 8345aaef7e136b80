"""The Policy protocol and the baseline agents, selectable by name (``make_agent``).

An agent maps what one player may know to a legal action (R3.2, R4.1): the observation dict of
the environment (``"observation"`` vector and ``"action_mask"``) and, for agents that need it,
a :class:`~goboom_env.player_view.PlayerView` of that seat. Randomness comes from a seeded generator.
Every agent satisfies :class:`Policy` (``name``, ``needs_view``, ``act``, ``reseed``);
:class:`Agent` is a base class with the defaults.

Agent specs (CLI and Python): ``random``, ``name:key=value,key=value`` for parametrised agents,
``ppo:path/to/model.zip`` and ``rllib:path/to/checkpoint`` for learned policies. A path that contains
``=`` is written ``ppo:path=PATH``; boolean options take true/false, yes/no or 1/0 (:func:`spec_bool`),
nothing else.

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

``openspiel-ismcts:sims=N`` (both variants) is OpenSpiel's own ``ISMCTSBot`` searching the ``python_goboom``
game (:mod:`~goboom_env.agents.openspiel_ismcts`, the ``openspiel`` extra; docs/interop.md).

More agents: a Python file, ``path/to/file.py:Class,key=value`` (its class is called as a factory is,
``Class(config, seed, key=value)``; the web server never takes one), :func:`register_agent` in this process,
or an entry point in the ``goboom_env.agents`` group of an installed distribution (how ``ppo``, ``ppo-ismcts``,
``rllib`` and ``openspiel-ismcts`` are found, loaded only when used, so this package never imports the training
code, pyspiel or their libraries). Modules:
:mod:`~goboom_env.agents.policy` (the protocol, the base class, ``random``),
:mod:`~goboom_env.agents.heuristics` (the rule-based agents) on :mod:`~goboom_env.agents.batched` (their rules on
a batch of observations, and the batched opponents of the trainers), :mod:`~goboom_env.agents.ismcts` with
:mod:`~goboom_env.agents.determinize` and :mod:`~goboom_env.agents.rollout` (the tree search, its deals
and playouts), :mod:`~goboom_env.agents.registry` (specs, names, entry points).
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
    "AGENTS",
    "BEST_HEURISTIC",
    "ENTRY_POINT_GROUP",
    "FALSE_WORDS",
    "HEURISTICS",
    "HEURISTIC_AGENTS",
    "TRUE_WORDS",
    "Agent",
    "AgentFactory",
    "ClassicCoverAgent",
    "ClassicTricksAgent",
    "HeuristicAgent",
    "JokersBoomAgent",
    "JokersShedAgent",
    "Observation",
    "Policy",
    "RandomAgent",
    "SpecSource",
    "Table",
    "TableDecoder",
    "baselines",
    "check_spec_source",
    "is_file_spec",
    "known_agents",
    "make_agent",
    "make_heuristic",
    "missing_members",
    "parse_spec",
    "register_agent",
    "spec_bool",
    "unregister_agent",
]
