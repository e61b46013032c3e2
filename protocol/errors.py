"""Whose fault it is: errors of the deck protocol and of joint randomness.

``LocalProtocolError``: this party misused the library (its move out of turn,
a position it cannot open yet).  ``RemoteProtocolError``: another party broke
the protocol; it names the party (when known), the step and the reason, and
``audit_now`` says that the deal must stop and the audit run at once.
"""

from __future__ import annotations


class DeckError(Exception):
    """Any error of the protocol library."""


class LocalProtocolError(DeckError):
    """We misused the API: nothing a peer sent is at fault."""


class RemoteProtocolError(DeckError):
    """A peer broke the protocol: ``party`` (None when only the audit can tell who),
    ``step`` ("shuffle", "lock", "key", "open", "commit", "reveal", "audit") and why."""

    def __init__(self, party: int | None, step: str, reason: str, *, audit_now: bool = False):
        who = "an unknown party" if party is None else f"party {party}"
        super().__init__(f"{who}, {step}: {reason}")
        self.party = party
        self.step = step
        self.reason = reason
        self.audit_now = audit_now


class EarlyMessage(DeckError):
    """A message that came before the ones due first (the network reordered them):
    nobody is at fault; deliver it again after the earlier ones."""
