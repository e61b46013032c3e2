"""Game-agnostic search bots (ISMCTS, determinized UCT) over a small game protocol.

Installed as ``p2pcards.ai``, it imports nothing else of ``p2pcards``: each game
satisfies the protocol (:mod:`p2pcards.ai.protocol`: current player, legal
actions, step, clone, terminal, rewards, determinize, what each seat observes
and knows) beside its rules, and a bot may give the search a policy for its
rollouts.  :mod:`.ismcts` is the search (single observer by default);
:mod:`.observers` its variants that model each player from its own
information; :mod:`.parallel` runs any of them on several processes.
docs/bots.md describes them.
"""
