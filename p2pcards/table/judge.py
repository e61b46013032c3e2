"""The verdict on a deal once every secret is revealed: one pure function that the live
session and ``p2pcards verify`` both call, so that they reach it word for word.

In order: every sealed key release is opened with its recipient's revealed
sealing key (one that does not open, is not signed by its sender, or names
other slots than the step gave is that sender's breach); the deck audit
re-computes every pass and re-mix and checks every released key, the sealed
ones included (:func:`p2pcards.protocol.audit.audit`); an alarm that none of this
explains is a false alarm.  The first breach found makes its seat forfeit the
deal ("refused audit": its own secrets do not bear out what it signed).
Otherwise the deal is replayed with full information, and a move the rules
forbid is penalised (:func:`p2pcards.table.replay.replay_deal`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from p2pcards.games.game import DealSetup
from p2pcards.protocol.audit import audit
from p2pcards.protocol.curve import Point
from p2pcards.protocol.deck import Round
from p2pcards.protocol.messages import AuditReveal, KeyRelease, Remixed
from p2pcards.protocol.steps import DeckContext
from p2pcards.table import kinds
from p2pcards.table.codec import CodecError, unseal
from p2pcards.table.events import ForfeitReason
from p2pcards.table.kinds import Act, Keys, clip
from p2pcards.table.replay import Mismatch, Outcome, forfeit, replay_deal
from p2pcards.table.state import Grants

REFUSED_AUDIT = ForfeitReason.REFUSED_AUDIT.value


@dataclass(frozen=True, slots=True)
class KeyStep:
    """A ``keys`` message as the transcript holds it: its sender, the grants it was
    due to make (recipient, or everyone -> slots), its body."""

    sender: int
    grants: Grants
    message: Keys


@dataclass(frozen=True, slots=True)
class Deal:
    """Everything the verdict on one deal depends on (all of it public after the audit)."""

    setup: DealSetup
    ids: Sequence[int]
    context: DeckContext
    log: Sequence[Round | Remixed]
    releases: Sequence[KeyRelease]
    key_steps: Sequence[KeyStep]
    acts: Sequence[tuple[int, Act]]
    alarms: Mapping[int, str]
    reveals: Mapping[int, AuditReveal]
    seal_secrets: Mapping[int, bytes]
    identities: Sequence[Ed25519PublicKey]
    blank: Sequence[int]
    """The deck a record deals when the cards are unknown (see ``Ledger.blank_deck``)."""


def judge(deal: Deal, *, lifted: Mapping[bytes, Point] | None = None,
          keep_states: bool = False) -> tuple[Outcome, str]:
    """The audited deal and its verdict: ``"ok"``, a penalised move, or a forfeit."""
    outcome, verdict = _judge(deal, lifted, keep_states)
    return outcome, clip(verdict)


def _judge(deal: Deal, lifted: Mapping[bytes, Point] | None,
           keep_states: bool) -> tuple[Outcome, str]:
    releases = list(deal.releases)
    culprit: tuple[int, str] | None = None
    for step in deal.key_steps:
        grants = dict(step.grants)
        for recipient, sealed in step.message.sealed:
            secret = deal.seal_secrets.get(recipient)
            pairs: tuple[tuple[int, int], ...]
            if secret is None:
                pairs, problem = (), f"seat {recipient} revealed no sealing key"
            else:
                pairs, problem = open_sealed(
                    sealed, X25519PrivateKey.from_private_bytes(secret),
                    deal.identities[step.sender], table=deal.context.table,
                    deal=deal.context.deal, sender=step.sender, recipient=recipient,
                    slots=grants[recipient])
            if problem and culprit is None:
                culprit = step.sender, f"seat {step.sender} sealed bad keys: {problem}"
            releases += [KeyRelease(party=step.sender, slot=s, key=k, to=recipient)
                         for s, k in pairs]
    verdict = audit(deal.context, deal.log, deal.reveals, releases, lifted)
    if not verdict.ok and culprit is None:
        assert verdict.party is not None
        culprit = verdict.party, f"seat {verdict.party} broke the {verdict.step}:" \
                                 f" {verdict.reason}"
    elif culprit is None and deal.alarms:
        seat = min(deal.alarms)
        culprit = seat, f"seat {seat} raised a false alarm ({clip(deal.alarms[seat], 80)})"
    setup = deal.setup
    if culprit is not None and not verdict.ok:  # the cards are unknown: no moves kept
        return forfeit(setup, deal.blank, [], {}, seat=culprit[0], reason=REFUSED_AUDIT), \
            culprit[1]
    assert verdict.order is not None
    if len(verdict.order) < len(deal.ids):  # the deck was never locked: nothing dealt
        seat = culprit[0] if culprit else min(deal.alarms, default=0)
        return forfeit(setup, deal.blank, [], {}, seat=seat, reason=REFUSED_AUDIT), \
            "the deck was never dealt"
    slot_cards = {s: deal.ids[c] for s, c in enumerate(verdict.order)}
    deck = [slot_cards[s] for s in range(len(deal.ids))]
    if culprit is not None:
        return forfeit(setup, deck, deal.acts, slot_cards, seat=culprit[0],
                       reason=REFUSED_AUDIT), culprit[1]
    try:
        outcome = replay_deal(setup, deck, deal.acts, slot_cards, keep_states=keep_states)
    except Mismatch as mismatch:  # a move no honest session takes: its seat forfeits
        return forfeit(setup, deck, [], slot_cards, seat=mismatch.seat,
                       reason=REFUSED_AUDIT), \
            f"seat {mismatch.seat} made a move the audit cannot replay ({mismatch})"
    if outcome.void:
        return outcome, f"void: {outcome.record.reason}"
    penalty = outcome.record.penalty
    if penalty is None:
        return outcome, "ok"
    return outcome, (f"seat {penalty['seat']} broke the rules at move {penalty['index']}:"
                     f" {penalty['reason']}")


def open_sealed(sealed: bytes, secret: X25519PrivateKey, sender_key: Ed25519PublicKey, *,
                table: bytes, deal: int, sender: int, recipient: int, slots: tuple[int, ...]
                ) -> tuple[tuple[tuple[int, int], ...], str]:
    """The keys ``sender`` sealed to ``recipient`` for ``slots``, or what is wrong with
    them (their match with the commitments is the deck's and the audit's business)."""
    try:
        content = unseal(sealed, secret, sender_key, table=table, deal=deal, sender=sender,
                         recipient=recipient)
        pairs: tuple[tuple[int, int], ...] = kinds.SLOT_KEYS[0](content, "sealed keys")
    except CodecError as error:
        return (), str(error)
    if tuple(s for s, _ in pairs) != slots:
        return (), f"sealed keys of slots {[s for s, _ in pairs]} to seat {recipient}, not" \
                   f" {list(slots)}"
    return pairs, ""
