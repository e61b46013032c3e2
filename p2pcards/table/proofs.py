"""Proofs of equivocation: two different messages one seat signed with one sequence
number on one transcript (docs/protocol.md, "Proof of equivocation").

A proof needs nobody's word: anyone with the roster checks both signatures.  Two
versions that name different transcripts are no proof (an honest seat's messages
dropped when the table took its transcript back to a cheat's point are numbered
again on another transcript), nor are claims (a claim not taken is made again).
"""

from __future__ import annotations

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2pcards.table.codec import CodecError, open_envelope
from p2pcards.table.kinds import Cheat, Kind


def proof_problem(claim: Cheat, keys: list[Ed25519PublicKey], table: bytes) -> str | None:
    """What is wrong with a claim's proof of equivocation (None: it proves it)."""
    try:
        first = open_envelope(claim.first, keys)
        second = open_envelope(claim.second, keys)
    except CodecError as error:
        return f"a message of its proof does not open ({error})"
    if {first.sender, second.sender} != {claim.seat} or {first.table, second.table} != {table}:
        return "its proof holds messages of another seat or table"
    if first.seq != second.seq or first.prior != second.prior or first.payload == second.payload:
        return ("its proof is not two different messages with one sequence number on one"
                " transcript")
    if {first.kind, second.kind} & {Kind.SILENT, Kind.CHEAT}:
        return "its proof holds claims (a claim not taken may be made again)"
    return None
