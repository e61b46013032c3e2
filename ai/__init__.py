"""Game-agnostic search bots (ISMCTS, determinized UCT) over a small game protocol.

Nothing here imports ``p2pcards``: each game satisfies the protocol (current
player, legal actions, apply, clone, terminal, returns, determinize) beside
its rules.  The search itself arrives with issue 4; see DESIGN.md section 5.
"""
