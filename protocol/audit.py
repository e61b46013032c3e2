"""The audit at the end of a deal: every secret revealed, every step re-computed.

Any party (or anyone offline, from an exported transcript) calls :func:`audit`
with the deal's context, its log of rounds and re-mixes, every party's
:class:`AuditReveal` and the key releases it saw.  It re-computes every pass
from the revealed scalars, permutations and keys, checks every key against
its commitment, re-computes every re-mix from the card it claims to hold, and
opens every slot.  The :class:`Verdict` is the card in every slot, or the
first party in protocol order that broke a step, which step, why, and the
messages that prove it (the table session holds them signed).  The function is
pure: every honest party reaches the same verdict.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from .curve import Multiplier, N, Point, card_points, inverse
from .deck import Deck, Round
from .messages import AuditReveal, KeyRelease, Locked, Remixed, Shuffled, Unlocked
from .steps import (
    LOCK,
    REMIX,
    SHUFFLE,
    UNLOCK,
    DeckContext,
    lift_deck,
    rekey_deck,
    shuffle_deck,
)

Evidence = Unlocked | Shuffled | Locked | Remixed | KeyRelease | AuditReveal


@dataclass(frozen=True, slots=True)
class Verdict:
    """OK with the card in every slot (slots 0..M-1: the deal's deck order), or who
    broke which step."""

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


def audit(context: DeckContext, log: Sequence[Round | Remixed],
          reveals: Mapping[int, AuditReveal], releases: Iterable[KeyRelease] = (),
          lifted: Mapping[bytes, Point] | None = None) -> Verdict:
    """Re-compute the deal from everybody's secrets; the verdict every party agrees on.

    ``lifted``: points the caller has already checked (a :class:`Deck` keeps
    them), so that they are not decompressed twice.
    """
    try:
        return _Replay(context, reveals, lifted or {}).run(log, list(releases))
    except _Broken as broken:
        return broken.verdict


def audit_deck(deck: Deck, reveals: Mapping[int, AuditReveal]) -> Verdict:
    """The audit from one party's own log (the points it checked are reused)."""
    return audit(deck.context, deck.log, reveals, deck.releases, deck.lifted)


class _Replay:
    def __init__(self, context: DeckContext, reveals: Mapping[int, AuditReveal],
                 lifted: Mapping[bytes, Point]):
        self.context = context
        self.reveals = reveals
        self.lifted = dict(lifted)
        self.cards = card_points(context.table, context.deal, context.size)
        self.card_of = {point: card for card, point in enumerate(self.cards)}
        self.slot_cards: list[int] = []
        self.slot_keys: list[dict[int, int]] = []
        self.slot_points: list[bytes] = []
        self.remixes_seen = dict.fromkeys(range(context.parties), 0)

    def lift(self, deck: Sequence[bytes]) -> list[Point]:
        points = lift_deck(deck, self.lifted)
        self.lifted.update(zip(deck, points, strict=True))
        return points

    def run(self, log: Sequence[Round | Remixed], releases: list[KeyRelease]) -> Verdict:
        parties = range(self.context.parties)
        missing = [p for p in self.context.order() if p not in self.reveals
                   or self.reveals[p].party != p]
        if missing:
            raise _Broken(missing[0], "audit", "refused to reveal its secrets (missing: "
                          + ", ".join(str(p) for p in missing) + ")")
        # a round nobody has sent a pass of yet (just begun here) is not audited
        log = [e for e in log if not isinstance(e, Round) or e.unlocks or e.shuffles]
        rounds = sum(isinstance(entry, Round) for entry in log)
        for p in parties:
            made = sum(isinstance(e, Remixed) and e.party == p for e in log)
            secret = self.reveals[p]
            if secret.unlock_keys[0] != 1:  # round 0 has no unlock pass
                raise _Broken(p, "audit", "revealed an unlock key for round 0, which has no"
                              " unlock pass", secret)
            # more is fine: a party may have drawn the secrets of a step nobody saw yet
            if len(secret.shuffle_keys) < rounds or len(secret.remix_orders) < made:
                raise _Broken(p, "audit", f"revealed secrets for {len(secret.shuffle_keys)}"
                              f" rounds and {len(secret.remix_orders)} re-mixes, not {rounds}"
                              f" and {made}", secret)
        for entry in log:
            if isinstance(entry, Round):
                self.round(entry)
            else:
                self.remix(entry)
        for release in releases:
            keys = self.slot_keys[release.slot] if release.slot < len(self.slot_keys) else {}
            if keys.get(release.party) != release.key:
                raise _Broken(release.party, "key", f"released a key for slot {release.slot}"
                              " that is not its key", release, self.reveals[release.party])
        return Verdict(True, tuple(self.slot_cards))

    def round(self, round_: Round) -> None:
        r, inputs = round_.number, round_.inputs
        deck = self.cards if inputs is None else tuple(self.slot_points[s] for s in inputs)
        size = len(deck)
        for message in round_.unlocks:
            secret = self.reveals[message.party]
            assert inputs is not None
            remove = [self.slot_keys[s][message.party] for s in inputs]
            expected = rekey_deck(self.lift(deck), remove, [secret.unlock_keys[r]] * size)
            self.same(expected, message, UNLOCK, secret, what="the unlock of input slot",
                      source=tuple(inputs))
            deck = message.deck
        for shuffled in round_.shuffles:
            secret = self.reveals[shuffled.party]
            permutation = secret.permutations[r]
            if sorted(permutation) != list(range(size)):
                raise _Broken(shuffled.party, SHUFFLE, f"its permutation of round {r} is not a"
                              f" permutation of the {size} positions", secret)
            expected = shuffle_deck(self.lift(deck), secret.shuffle_keys[r], permutation)
            self.same(expected, shuffled, SHUFFLE, secret,
                      what="the shuffle of input position", source=permutation)
            deck = shuffled.deck
        first = len(self.slot_cards)
        for locked in round_.locks:
            secret = self.reveals[locked.party]
            keys = secret.lock_keys[r]
            if len(keys) != size:
                raise _Broken(locked.party, LOCK, f"{len(keys)} keys for {size} slots", secret)
            for j, key in enumerate(keys):
                if self.context.commitment(locked.party, first + j, key) != \
                        locked.commitments[j]:
                    raise _Broken(locked.party, LOCK, f"the key of slot {first + j} does not"
                                  " match its commitment", locked, secret)
            hidden = secret.unlock_keys[r] * secret.shuffle_keys[r] % N
            expected = rekey_deck(self.lift(deck), [hidden] * size, keys)
            self.same(expected, locked, LOCK, secret, what="the lock of input position",
                      source=tuple(range(size)))
            deck = locked.deck
        if len(round_.locks) < self.context.parties:
            return  # a round cut short: no slot came into play
        final = self.lift(deck)
        self.slot_points.extend(deck)
        for j in range(size):
            keys_j = {p: self.reveals[p].lock_keys[r][j] for p in range(self.context.parties)}
            product = 1
            for key in keys_j.values():
                product = product * key % N
            card = self.card_of.get(Multiplier(inverse(product)).times(final[j]))
            if card is None:  # impossible once every pass checks out
                raise AssertionError(f"slot {first + j} opens to no card after sound passes")
            self.slot_cards.append(card)
            self.slot_keys.append(keys_j)

    def remix(self, message: Remixed) -> None:
        party = message.party
        secret = self.reveals[party]
        index = self.remixes_seen[party]
        self.remixes_seen[party] += 1
        order, keys = secret.remix_orders[index], secret.remix_keys[index]
        if sorted(order) != sorted(message.slots) or len(keys) != len(order):
            raise _Broken(party, REMIX, f"its re-mix {index} is not an order of the slots it"
                          " re-mixed", message, secret)
        first = len(self.slot_cards)
        for m, (old, key) in enumerate(zip(order, keys, strict=True)):
            if self.context.commitment(party, first + m, key) != message.commitments[m]:
                raise _Broken(party, REMIX, f"the key of slot {first + m} does not match its"
                              " commitment", message, secret)
            card = self.slot_cards[old]
            point = self.lift([self.cards[card]])[0]
            if Multiplier(key).times(point) != message.deck[m]:
                raise _Broken(party, REMIX, f"new slot {first + m} does not hold the card of"
                              f" slot {old}", message, secret)
            self.slot_cards.append(card)
            self.slot_keys.append({party: key})
        self.slot_points.extend(message.deck)

    def same(self, expected: tuple[bytes, ...], message: Unlocked | Shuffled | Locked,
             step: str, secret: AuditReveal, *, what: str, source: Sequence[int]) -> None:
        if len(message.deck) != len(expected):
            raise _Broken(message.party, step, f"a deck of {len(message.deck)} points, not"
                          f" {len(expected)}", message)
        for j, (want, got) in enumerate(zip(expected, message.deck, strict=True)):
            if want != got:
                raise _Broken(message.party, step, f"output position {j} is not {what}"
                              f" {source[j]} under the revealed secrets", message, secret)
