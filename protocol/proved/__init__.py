"""The proved deck's cryptography (docs/proved-deck.md): ElGamal on secp256k1 under a
joint key, with a zero-knowledge proof for every step, so that a cheat is refused when
it is sent instead of found by an audit after the deal.

In progress: these are the primitives (group, ElGamal, Schnorr and Chaum–Pedersen
proofs, the Terelius–Wikström proof of a shuffle); no table uses them yet.  Like the
rest of :mod:`p2pcards.protocol`, sans I/O, and every secret comes from an injected
source (:mod:`p2pcards.protocol.source`).
"""
