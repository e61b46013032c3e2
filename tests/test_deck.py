"""The mental-poker deck: every operation for 2 to 7 parties, uniform deals, and
each named cheat caught and attributed (at once, or by the audit)."""

from __future__ import annotations

import random

import pytest

from protocol import simulate
from protocol.audit import audit, audit_deck
from protocol.curve import N, PointError, hash_to_point, lift, mul
from protocol.deck import LOCK, SHUFFLE, Deck, DeckContext
from protocol.errors import LocalProtocolError, RemoteProtocolError
from protocol.messages import AuditReveal, KeyRelease, Locked, Shuffled
from protocol.source import SeededSource

TABLE = b"test-table"


def seated(parties: int, size: int, deal: int = 0, seed: str = "deck") -> list[Deck]:
    context = DeckContext(TABLE, deal, parties, size)
    return simulate.seat(context, [SeededSource(f"{seed}:{deal}:{p}") for p in range(parties)])


def verdict(decks: list[Deck], reveals: dict[int, AuditReveal] | None = None):
    deck = decks[0]
    if reveals is None:
        reveals = {d.me: d.secrets() for d in decks}
    return audit(deck.context, deck.shuffles, deck.locks, reveals,
                 [r for d in decks for r in d.releases])


@pytest.mark.parametrize("parties", range(2, 8))
def test_shuffle_lock_deal_and_reveal_for_every_table_size(parties):
    size = [52, 54, 80, 52, 54, 80][parties - 2]
    decks = seated(parties, size, deal=parties)
    simulate.shuffle_and_lock(decks)
    assert decks[0].context.order[0] == parties % parties  # the first shuffler rotates
    public = set(range(0, size, 9))
    for j in range(size):  # positions round the table, some shown to everyone
        simulate.deal(decks, j, None if j in public else j % parties)
    result = verdict(decks)
    assert result.ok and sorted(result.order) == list(range(size))
    reveals = {d.me: d.secrets() for d in decks}
    assert all(audit_deck(d, reveals) == result for d in decks)  # the same verdict everywhere
    for deck in decks:
        mine = {j for j in range(size) if j % parties == deck.me} | public
        assert set(deck.opened) == mine  # nobody opened a position not theirs
        assert all(deck.opened[j] == result.order[j] for j in mine)
    # every party saw the same broadcasts
    assert all(d.locks == decks[0].locks and d.shuffles == decks[0].shuffles for d in decks)


def test_first_shuffler_rotates_with_the_deal():
    assert [DeckContext(TABLE, deal, 4, 52).order[0] for deal in range(6)] == [0, 1, 2, 3, 0, 1]


def test_a_position_shown_later_to_one_party_opens_for_it_only():
    decks = seated(3, 54)
    simulate.shuffle_and_lock(decks)
    for j in range(48):
        simulate.deal(decks, j, j % 3)
    kitty = range(48, 54)
    for j in kitty:  # the kitty: dealt to nobody yet, then to the bid winner
        assert not any(d.can_open(j) for d in decks)
    for j in kitty:
        simulate.deal(decks, j, 1)
    assert set(kitty) <= set(decks[1].opened) and not set(kitty) & set(decks[0].opened)
    assert verdict(decks).ok


def test_dealt_positions_are_uniform():
    """Chi-square over (card, position) of many seeded two-party shuffles."""
    size, deals = 6, 300
    tally = [[0] * size for _ in range(size)]
    for deal in range(deals):
        decks = seated(2, size, seed=f"uniform:{deal}")
        simulate.shuffle_and_lock(decks)
        result = verdict(decks)
        for position, card in enumerate(result.order):
            tally[card][position] += 1
    expected = deals / size
    chi2 = sum((count - expected) ** 2 / expected for row in tally for count in row)
    dof = (size - 1) ** 2
    assert chi2 < dof + 5 * (2 * dof) ** 0.5, chi2


def test_secrets_come_from_the_source():
    one, two = seated(2, 52, seed="same"), seated(2, 52, seed="same")
    simulate.shuffle_and_lock(one)
    simulate.shuffle_and_lock(two)
    assert one[1].locks == two[1].locks
    other = seated(2, 52, seed="other")
    simulate.shuffle_and_lock(other)
    assert other[1].locks != one[1].locks


# ------------------------------------------------------------- checks at once


def off_curve() -> bytes:
    """An x for which x^3 - 3x + b is no square mod p (Euler's criterion): no point."""
    p = 2**256 - 2**224 + 2**192 + 2**96 - 1
    b = 0x5AC635D8AA3A93E7B3EBBD55769886BC651D06B0CC53B0F63BCE3C3E27D2604B
    x = next(x for x in range(1, 100) if pow((x**3 - 3 * x + b) % p, (p - 1) // 2, p) != 1)
    return x.to_bytes(32, "big")


def tamper_step(step: type, party: int, change):
    def tamper(message):
        if isinstance(message, step) and message.party == party:
            return change(message)
        return message
    return tamper


def test_a_duplicated_or_skipped_card_is_refused_at_once_and_named():
    decks = seated(4, 52)
    duplicate = tamper_step(Shuffled, 1, lambda m: Shuffled(
        party=1, deck=(m.deck[0], m.deck[0], *m.deck[2:])))
    with pytest.raises(RemoteProtocolError) as caught:
        simulate.shuffle_and_lock(decks, duplicate)
    assert (caught.value.party, caught.value.step) == (1, SHUFFLE)
    assert "twice" in caught.value.reason

    decks = seated(4, 52)
    short = tamper_step(Shuffled, 2, lambda m: Shuffled(party=2, deck=m.deck[1:]))
    with pytest.raises(RemoteProtocolError) as caught:
        simulate.shuffle_and_lock(decks, short)
    assert (caught.value.party, caught.value.step) == (2, SHUFFLE)
    assert "51 points, not 52" in caught.value.reason


def test_a_point_off_the_curve_and_a_step_out_of_order_are_refused():
    decks = seated(3, 52)
    bad = off_curve()
    with pytest.raises(PointError):
        lift(bad)
    message = decks[0].shuffle()
    forged = Shuffled(party=0, deck=(bad, *message.deck[1:]))
    with pytest.raises(RemoteProtocolError) as caught:
        decks[1].receive(forged)
    assert caught.value.party == 0 and "not on the curve" in caught.value.reason
    assert decks[1].shuffles == []  # nothing changed
    with pytest.raises(RemoteProtocolError) as caught:
        decks[1].receive(Shuffled(party=2, deck=message.deck))
    assert caught.value.party == 2 and "out of order" in caught.value.reason
    with pytest.raises(LocalProtocolError):
        decks[2].shuffle()  # not its turn
    decks[1].receive(message)
    decks[2].receive(message)
    with pytest.raises(RemoteProtocolError) as caught:
        decks[0].receive(Locked(party=1, deck=message.deck, commitments=(bytes(32),) * 52))
    assert caught.value.step == LOCK and "out of order" in caught.value.reason


def test_a_reused_commitment_is_refused_at_once():
    decks = seated(3, 52)
    copied: dict[str, tuple[bytes, ...]] = {}

    def tamper(message):
        if isinstance(message, Locked) and message.party == 0:
            copied["c"] = message.commitments
        if isinstance(message, Locked) and message.party == 2:
            return Locked(party=2, deck=message.deck, commitments=copied["c"])
        return message
    with pytest.raises(RemoteProtocolError) as caught:
        simulate.shuffle_and_lock(decks, tamper)
    assert (caught.value.party, caught.value.step) == (2, LOCK)
    assert "reused" in caught.value.reason


def test_a_wrong_key_is_refused_at_once_and_named():
    decks = seated(4, 52)
    simulate.shuffle_and_lock(decks)
    wrong = KeyRelease(party=3, position=7, key=12345, to=0)
    with pytest.raises(RemoteProtocolError) as caught:
        decks[0].receive(wrong)
    assert (caught.value.party, caught.value.step) == (3, "key")
    assert "commitment" in caught.value.reason and 3 not in decks[0].keys.get(7, {})
    with pytest.raises(RemoteProtocolError):
        decks[1].receive(decks[3].release(7, to=0))  # addressed to someone else


def test_a_key_from_another_deal_misses_its_commitment():
    """Commitments are bound to table, deal, party and position."""
    old, new = seated(2, 52, deal=1), seated(2, 52, deal=2)
    simulate.shuffle_and_lock(old)
    simulate.shuffle_and_lock(new)
    replayed = old[1].release(0, to=0)
    with pytest.raises(RemoteProtocolError):
        new[0].receive(replayed)
    with pytest.raises(RemoteProtocolError):
        new[0].receive(KeyRelease(party=1, position=1, key=replayed.key, to=0))


# ------------------------------------------------------------ caught by the audit


def test_a_substituted_point_stops_the_deal_and_the_audit_names_the_shuffler():
    decks = seated(4, 54)
    stranger = hash_to_point(b"not a card")
    substitute = tamper_step(Shuffled, 2, lambda m: Shuffled(
        party=2, deck=(*m.deck[:5], stranger, *m.deck[6:])))
    simulate.shuffle_and_lock(decks, substitute)  # not visible yet
    with pytest.raises(RemoteProtocolError) as caught:
        for j in range(54):
            simulate.deal(decks, j, j % 4)
    assert caught.value.audit_now and caught.value.step == "open"
    result = verdict(decks)
    assert not result.ok and (result.party, result.step) == (2, SHUFFLE)
    assert any(isinstance(e, Shuffled) and e.party == 2 for e in result.evidence)


def test_the_tagging_attack_is_attributed_by_the_audit():
    """A shuffler plants lambda*P in place of a card point, hoping to trace it."""
    decks = seated(3, 52)
    tag = 0xC0FFEE

    def plant(message):
        deck = list(message.deck)
        deck[10] = mul(tag, deck[10])
        return Shuffled(party=1, deck=tuple(deck))
    simulate.shuffle_and_lock(decks, tamper_step(Shuffled, 1, plant))
    result = verdict(decks)
    assert not result.ok and (result.party, result.step) == (1, SHUFFLE)
    assert "output position 10" in result.reason


def test_a_lock_key_other_than_the_committed_one_is_caught():
    decks = seated(3, 52)

    def commit_elsewhere(message):
        commitments = list(message.commitments)
        commitments[4] = decks[0].context.commitment(message.party, 4, 777)
        return Locked(party=message.party, deck=message.deck, commitments=tuple(commitments))
    simulate.shuffle_and_lock(decks, tamper_step(Locked, 1, commit_elsewhere))
    with pytest.raises(RemoteProtocolError) as caught:  # its real key misses the commitment
        simulate.deal(decks, 4, 0)
    assert (caught.value.party, caught.value.step) == (1, "key")
    result = verdict(decks)
    assert (result.party, result.step) == (1, LOCK) and "commitment" in result.reason


def test_a_non_permutation_and_a_refusal_are_named_by_the_audit():
    decks = seated(4, 52)
    simulate.shuffle_and_lock(decks)
    reveals = {d.me: d.secrets() for d in decks}
    honest = reveals[3]
    reveals[3] = AuditReveal(party=3, shuffle_key=honest.shuffle_key,
                             permutation=(0, 0, *honest.permutation[2:]),
                             lock_keys=honest.lock_keys)
    result = verdict(decks, reveals)
    assert (result.party, result.step) == (3, SHUFFLE) and "permutation" in result.reason
    del reveals[3]
    del reveals[1]
    result = verdict(decks, reveals)
    assert result.party == 1 and result.step == "audit" and "1, 3" in result.reason


def test_a_lie_about_the_shuffle_key_is_caught():
    decks = seated(2, 52)
    simulate.shuffle_and_lock(decks)
    reveals = {d.me: d.secrets() for d in decks}
    true = reveals[0]
    reveals[0] = AuditReveal(party=0, shuffle_key=(true.shuffle_key + 1) % N,
                             permutation=true.permutation, lock_keys=true.lock_keys)
    result = verdict(decks, reveals)
    assert not result.ok and result.party == 0 and result.step == SHUFFLE


# ---------------------------------------------------------------- robustness


def test_nothing_a_peer_sends_crashes_the_deck():
    """Over two thousand mutated messages at a party during an honest deal: each is
    refused with a RemoteProtocolError that leaves the party's state unchanged, or
    accepted (a point swapped for another on the curve cannot be told at once:
    the audit finds it); never another exception, and the honest deal goes on."""
    rng = random.Random("fuzz")
    decks = seated(3, 52)
    context = decks[0].context
    log: list[Shuffled | Locked] = []

    def twin() -> Deck:  # party 2 again, from the same secrets: replays the honest log
        party = Deck(context, 2, SeededSource("deck:0:2"))
        for message in log:
            if message.party == 2:
                party.shuffle() if isinstance(message, Shuffled) else party.lock()
            else:
                party.receive(message)
        return party

    def mutate(message):
        if isinstance(message, KeyRelease):
            return KeyRelease(party=rng.randrange(3), position=rng.randrange(52),
                              key=rng.randrange(1, N), to=rng.choice([None, 0, 1, 2]))
        deck = list(message.deck)
        kind = rng.randrange(4)
        if kind == 0:
            deck[rng.randrange(len(deck))] = rng.randbytes(32)
        elif kind == 1:
            deck = deck[: rng.randrange(1, len(deck))]
        elif kind == 2:
            deck[rng.randrange(len(deck))] = deck[rng.randrange(len(deck))]
        party = rng.randrange(3) if kind == 3 else message.party
        if isinstance(message, Shuffled):
            return Shuffled(party=party, deck=tuple(deck))
        commitments = [rng.randbytes(32) for _ in deck]
        return Locked(party=party, deck=tuple(deck), commitments=tuple(commitments))

    victim = twin()
    refused = accepted = 0

    def attack(message, times):
        nonlocal victim, refused, accepted
        for _ in range(times):
            before = (len(victim.shuffles), len(victim.locks),
                      {j: dict(k) for j, k in victim.keys.items()})
            try:
                victim.receive(mutate(message))
            except RemoteProtocolError:
                refused += 1
                assert before == (len(victim.shuffles), len(victim.locks),
                                  {j: dict(k) for j, k in victim.keys.items()})
            else:
                accepted += 1
                victim = twin()
    while (due := decks[0].expected()) is not None:
        step, party = due
        message = decks[party].lock() if step == LOCK else decks[party].shuffle()
        simulate.broadcast(decks, party, message)
        attack(message, 150)
        if party == 2:
            assert (victim.lock() if step == LOCK else victim.shuffle()) == message
        else:
            victim.receive(message)
        log.append(message)
    for j in range(0, 52, 3):
        for sender in (0, 1):
            release = decks[sender].release(j, to=2)
            attack(release, 60)
            victim.receive(release)
        assert victim.open(j) == verdict(decks).order[j]
    assert refused > 2000 and accepted < refused / 5


def test_malformed_messages_are_refused_by_their_constructors():
    with pytest.raises(ValueError, match="32 bytes"):
        Shuffled(party=0, deck=(b"short",))
    with pytest.raises(ValueError, match="seat number"):
        Shuffled(party=-1, deck=(bytes(32),))
    with pytest.raises(ValueError, match="one commitment per position"):
        Locked(party=0, deck=(bytes(32),) * 2, commitments=(bytes(32),))
    with pytest.raises(ValueError, match="key"):
        KeyRelease(party=0, position=0, key=0)
    with pytest.raises(ValueError, match="key"):
        KeyRelease(party=0, position=0, key=N)
    with pytest.raises(ValueError):
        DeckContext(TABLE, 0, 8, 52)
