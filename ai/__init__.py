"""Game-agnostic search bots (ISMCTS, determinized UCT) over a small game protocol.

Installed as ``p2pcards.ai``, it imports nothing else of ``p2pcards``: each game
satisfies the protocol (:mod:`p2pcards.ai.protocol`: current player, legal
actions, step, clone, terminal, rewards, determinize) beside its rules, and a
bot may give the search a policy for its rollouts.  docs/bots.md describes the
search.
"""
