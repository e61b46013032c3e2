"""The audit at the end of a deal: every secret revealed, every step re-computed.

Any party (or anyone offline, from an exported transcript) calls :func:`audit`
with the deal's context, the broadcast steps in order, the key releases it
saw and every party's :class:`AuditReveal`.  It re-computes every shuffle and
lock pass from the revealed scalars, permutations and keys, checks every key
against its commitment, opens every position and returns a :class:`Verdict`:
the full deck order, or the first party in protocol order that broke a step,
which step, why, and the messages that prove it (the session holds them
signed).  The function is pure: every honest party reaches the same verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from protocol.curve import Multiplier, N, Point, card_points, check_scalar, inverse
from protocol.deck import LOCK, SHUFFLE, Deck, DeckContext, lift_deck, lock_deck, shuffle_deck
from protocol.messages import AuditReveal, KeyRelease, Locked, Shuffled

Evidence = Shuffled | Locked | KeyRelease | AuditReveal


@dataclass(frozen=True, slots=True)
class Verdict:
    """OK with the deck order (card at each position), or who broke which step."""

    ok: bool
    order: tuple[int, ...] | None = None
    party: int | None = None
    step: str = ""
    reason: str = ""
    evidence: tuple[Evidence, ...] = ()

    def __str__(self) -> str:
        if self.ok:
            return "OK"
        return f"party {self.party} broke the {self.step}: {self.reason}"


class _Broken(Exception):
    def __init__(self, party: int, step: str, reason: str, *evidence: Evidence):
        super().__init__(reason)
        self.verdict = Verdict(False, None, party, step, reason, evidence)


def audit(context: DeckContext, shuffles: list[Shuffled], locks: list[Locked],
          reveals: Mapping[int, AuditReveal], releases: Iterable[KeyRelease] = (),
          lifted: Mapping[bytes, Point] | None = None) -> Verdict:
    """Re-compute the deal from everybody's secrets; the verdict every party agrees on.

    ``lifted``: points the caller has already checked (a :class:`Deck` keeps them),
    so that they are not decompressed twice.
    """
    try:
        return _audit(context, shuffles, locks, reveals, list(releases), lifted or {})
    except _Broken as broken:
        return broken.verdict


def audit_deck(deck: Deck, reveals: Mapping[int, AuditReveal]) -> Verdict:
    """The audit from one party's own transcript (the points it checked are reused)."""
    return audit(deck.context, deck.shuffles, deck.locks, reveals, deck.releases,
                 lifted=deck.lifted)


def _audit(context: DeckContext, shuffles: list[Shuffled], locks: list[Locked],
           reveals: Mapping[int, AuditReveal], releases: list[KeyRelease],
           lifted: Mapping[bytes, Point]) -> Verdict:
    order = context.order
    size = context.size
    missing = [p for p in order if p not in reveals or reveals[p].party != p]
    if missing:
        raise _Broken(missing[0], "audit", "refused to reveal its secrets (missing: "
                      + ", ".join(str(p) for p in missing) + ")")
    for party in order:
        _check_reveal(reveals[party], size)
    if [m.party for m in shuffles] != order or [m.party for m in locks] != order:
        raise AssertionError("the audit needs the whole shuffle and lock, in order")
    cards = card_points(context.table, context.deal, size)
    deck: tuple[bytes, ...] = tuple(cards)
    for message in shuffles:
        secret = reveals[message.party]
        expected = shuffle_deck(lift_deck(deck, lifted), secret.shuffle_key, secret.permutation)
        _same(expected, message, SHUFFLE, secret, "the shuffle of input position",
              secret.permutation)
        deck = message.deck
    for lock in locks:
        secret = reveals[lock.party]
        for j, key in enumerate(secret.lock_keys):
            if context.commitment(lock.party, j, key) != lock.commitments[j]:
                raise _Broken(lock.party, LOCK, f"the key of position {j} does not match"
                              " its commitment", lock, secret)
        expected = lock_deck(lift_deck(deck, lifted), secret.shuffle_key, secret.lock_keys)
        _same(expected, lock, LOCK, secret, "the lock of input position",
              tuple(range(size)))
        deck = lock.deck
    for release in releases:
        if release.position >= size or release.key != reveals[release.party].lock_keys[
                release.position]:
            raise _Broken(release.party, "key", f"released a key for position"
                          f" {release.position} that is not its lock key", release,
                          reveals[release.party])
    card_of = {point: card for card, point in enumerate(cards)}
    final = lift_deck(deck, lifted)
    opened: list[int] = []
    for j in range(size):
        product = 1
        for party in order:
            product = product * reveals[party].lock_keys[j] % N
        card = card_of.get(Multiplier(inverse(product)).times(final[j]))
        if card is None or card in opened:  # impossible once every step checks out
            raise AssertionError(f"position {j} opens to no card after a sound deal")
        opened.append(card)
    return Verdict(True, tuple(opened))


def _check_reveal(secret: AuditReveal, size: int) -> None:
    party = secret.party
    if sorted(secret.permutation) != list(range(size)):
        raise _Broken(party, SHUFFLE, "its permutation is not a permutation of the"
                      f" {size} positions", secret)
    if len(secret.lock_keys) != size:
        raise _Broken(party, LOCK, f"{len(secret.lock_keys)} lock keys for {size}"
                      " positions", secret)
    check_scalar(secret.shuffle_key)


def _same(expected: tuple[bytes, ...], message: Shuffled | Locked, step: str,
          secret: AuditReveal, what: str, source: tuple[int, ...]) -> None:
    if len(message.deck) != len(expected):
        raise _Broken(message.party, step, f"a deck of {len(message.deck)} points, not"
                      f" {len(expected)}", message)
    for j, (want, got) in enumerate(zip(expected, message.deck, strict=True)):
        if want != got:
            raise _Broken(message.party, step, f"output position {j} is not {what}"
                          f" {source[j]} under the revealed secrets", message, secret)
