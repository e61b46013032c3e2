"""The mental-poker deck: every operation for 2 to 7 parties, uniform deals, and
each named cheat caught and attributed (at once, or by the audit)."""

from __future__ import annotations

import random
from dataclasses import replace

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.protocol import simulate
from p2pcards.protocol.audit import audit, audit_deck
from p2pcards.protocol.curve import N, PointError, hash_to_point, is_point, lift, mul
from p2pcards.protocol.deck import Deck
from p2pcards.protocol.errors import EarlyMessage, LocalProtocolError, RemoteProtocolError
from p2pcards.protocol.messages import AuditReveal, KeyRelease, Locked, Remixed, Shuffled, Unlocked
from p2pcards.protocol.source import SeededSource
from p2pcards.protocol.steps import LOCK, SHUFFLE, DeckContext
from p2pcards.table.memory import MemoryTable
from p2pcards.table.roster import LOCK_DECK

TABLE = b"test-table"


TABLE_SIZES = [*range(2, 7), pytest.param(7, marks=pytest.mark.slow)]
"""2 to 7 parties; seven seats are slow (run with the whole suite)."""


def seated(parties: int, size: int, deal: int = 0, seed: str = "deck") -> list[Deck]:
    context = DeckContext(TABLE, deal, parties, size)
    return simulate.seat(context, [SeededSource(f"{seed}:{deal}:{p}") for p in range(parties)])


def verdict(decks: list[Deck], reveals: dict[int, AuditReveal] | None = None, by: int = 0):
    """The audit as party ``by`` runs it, from the messages it received."""
    deck = decks[by]
    if reveals is None:
        reveals = {d.me: d.secrets() for d in decks}
    return audit(deck.context, deck.log, reveals, [r for d in decks for r in d.releases])


@pytest.mark.parametrize("parties", TABLE_SIZES)
def test_shuffle_lock_deal_and_reveal_for_every_table_size(parties):
    size = [52, 54, 80, 52, 54, 80][parties - 2]
    decks = seated(parties, size, deal=parties)
    simulate.shuffle_and_lock(decks)
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
    assert all(d.rounds == decks[0].rounds and d.points == decks[0].points for d in decks)


def test_first_shuffler_rotates_with_the_deal():
    assert [DeckContext(TABLE, deal, 4, 52).order()[0] for deal in range(6)] == [0, 1, 2, 3, 0, 1]


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


def test_secrets_come_from_the_source():
    one, two = seated(2, 52, seed="same"), seated(2, 52, seed="same")
    simulate.shuffle_and_lock(one)
    simulate.shuffle_and_lock(two)
    assert one[1].points == two[1].points
    other = seated(2, 52, seed="other")
    simulate.shuffle_and_lock(other)
    assert other[1].points != one[1].points


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
    duplicate = tamper_step(Shuffled, 1, lambda m: replace(
        m, deck=(m.deck[0], m.deck[0], *m.deck[2:])))
    with pytest.raises(RemoteProtocolError) as caught:
        simulate.shuffle_and_lock(decks, duplicate)
    assert (caught.value.party, caught.value.step) == (1, SHUFFLE)
    assert "twice" in caught.value.reason

    decks = seated(4, 52)
    short = tamper_step(Shuffled, 2, lambda m: replace(m, deck=m.deck[1:]))
    with pytest.raises(RemoteProtocolError) as caught:
        simulate.shuffle_and_lock(decks, short)
    assert (caught.value.party, caught.value.step) == (2, SHUFFLE)
    assert "51 points, not 52" in caught.value.reason


def test_a_point_off_the_curve_and_a_step_out_of_order_are_refused():
    decks = seated(3, 52)
    bad = off_curve()
    with pytest.raises(PointError):
        lift(bad)
    message = decks[0].step()
    forged = replace(message, deck=(bad, *message.deck[1:]))
    with pytest.raises(RemoteProtocolError) as caught:
        decks[1].receive(forged)
    assert caught.value.party == 0 and "not on the curve" in caught.value.reason
    assert decks[1].current.shuffles == [] and len(decks[1].lifted) == 52  # nothing changed
    with pytest.raises(EarlyMessage):  # a later step of the round: held, nobody blamed
        decks[1].receive(replace(message, party=2))
    with pytest.raises(LocalProtocolError):
        decks[2].step()  # not its turn
    decks[1].receive(message)
    decks[2].receive(message)
    with pytest.raises(RemoteProtocolError) as caught:  # a replay of a step already taken
        decks[1].receive(message)
    assert caught.value.party == 0 and "out of order" in caught.value.reason
    with pytest.raises(EarlyMessage):
        decks[0].receive(Locked(party=1, round=0, prior=message.prior, deck=message.deck,
                                commitments=(bytes(32),) * 52))
    with pytest.raises(EarlyMessage):  # the next round: a reshuffle not begun here yet
        decks[1].receive(replace(message, round=1))
    with pytest.raises(RemoteProtocolError, match="round 3"):  # never held: refused
        decks[1].receive(replace(message, round=3))


def test_different_versions_of_a_step_are_caught_at_the_next_step():
    """Party 1 sends one shuffle to party 0 and another to party 2; party 2's honest
    shuffle of what it got names a deck party 0 never saw."""
    decks = seated(3, 52)
    simulate.broadcast(decks, 0, decks[0].step())
    honest = decks[1].step()
    other = replace(honest, deck=(*honest.deck[1:], honest.deck[0]))
    decks[0].receive(honest)
    decks[2].receive(other)
    third = decks[2].step()
    with pytest.raises(RemoteProtocolError) as caught:
        decks[0].receive(third)
    assert caught.value.party is None and "party 2 or party 1" in caught.value.reason


def test_a_reused_commitment_is_refused_at_once():
    decks = seated(3, 52)
    copied: dict[str, tuple[bytes, ...]] = {}

    def tamper(message):
        if isinstance(message, Locked) and message.party == 0:
            copied["c"] = message.commitments
        if isinstance(message, Locked) and message.party == 2:
            return replace(message, commitments=copied["c"])
        return message
    with pytest.raises(RemoteProtocolError) as caught:
        simulate.shuffle_and_lock(decks, tamper)
    assert (caught.value.party, caught.value.step) == (2, LOCK)
    assert "reused" in caught.value.reason


def test_a_wrong_key_is_refused_at_once_and_named():
    decks = seated(4, 52)
    simulate.shuffle_and_lock(decks)
    wrong = KeyRelease(party=3, slot=7, key=12345, to=0)
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
        new[0].receive(KeyRelease(party=1, slot=1, key=replayed.key, to=0))


# ------------------------------------------------------------ caught by the audit


def test_a_substituted_point_stops_the_deal_and_the_audit_names_the_shuffler():
    decks = seated(4, 54)
    stranger = hash_to_point(b"not a card")
    substitute = tamper_step(Shuffled, 2, lambda m: replace(
        m, deck=(*m.deck[:5], stranger, *m.deck[6:])))
    simulate.shuffle_and_lock(decks, substitute)  # not visible yet
    with pytest.raises(RemoteProtocolError) as caught:
        for j in range(54):
            simulate.deal(decks, j, j % 4)
    assert caught.value.audit_now and caught.value.step == "open"
    result = verdict(decks)
    assert not result.ok and (result.party, result.step) == (2, SHUFFLE)
    assert any(isinstance(e, Shuffled) and e.party == 2 for e in result.evidence)


def test_the_tagging_attack_is_attributed_by_the_audit():
    """A shuffler plants lambda*X in place of another card's point, then finds the
    related pair after the later shuffles and so traces card X."""
    decks = seated(3, 52)
    tag = 0xC0FFEE

    def plant(message):
        deck = list(message.deck)
        deck[10] = mul(tag, deck[3])
        return replace(message, deck=tuple(deck))
    simulate.shuffle_and_lock(decks, tamper_step(Shuffled, 1, plant))
    shuffled = decks[0].rounds[0].shuffles[-1].deck  # public after the last shuffle
    where = {point: j for j, point in enumerate(shuffled)}
    traced = [(a, where[mul(tag, shuffled[a])]) for a in range(52)
              if mul(tag, shuffled[a]) in where]
    assert len(traced) == 1  # the attack works: the tagger knows where card X went ...
    result = verdict(decks)  # ... and the audit names it
    assert not result.ok and (result.party, result.step) == (1, SHUFFLE)
    assert "output position 10" in result.reason


def test_a_lock_key_other_than_the_committed_one_is_caught():
    decks = seated(3, 52)

    def commit_elsewhere(message):
        commitments = list(message.commitments)
        commitments[4] = decks[0].context.commitment(message.party, 4, 777)
        return replace(message, commitments=tuple(commitments))
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
    reveals[3] = AuditReveal(party=3, unlock_keys=honest.unlock_keys,
                             shuffle_keys=honest.shuffle_keys,
                             permutations=((0, 0, *honest.permutations[0][2:]),),
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
    reveals[0] = AuditReveal(party=0, unlock_keys=true.unlock_keys,
                             shuffle_keys=((true.shuffle_keys[0] + 1) % N,),
                             permutations=true.permutations, lock_keys=true.lock_keys)
    result = verdict(decks, reveals)
    assert not result.ok and result.party == 0 and result.step == SHUFFLE


# ---------------------------------------------------------------- robustness


def state(deck: Deck) -> tuple[object, ...]:
    """What a refused message must leave unchanged."""
    round_ = deck.current
    return (len(round_.unlocks), len(round_.shuffles), len(round_.locks), list(deck.points),
            len(deck.log), set(deck.retired), dict(deck.opened), len(deck.lifted),
            {j: dict(k) for j, k in deck.keys.items()}, dict(deck.commitments))


def test_nothing_a_peer_sends_crashes_the_deck():
    """Over two thousand mutated messages at a party during an honest deal: each is
    refused with a RemoteProtocolError (or held back as early) leaving the party's
    state unchanged, or
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
                party.step()
            else:
                party.receive(message)
        return party

    def mutate(message):
        if isinstance(message, KeyRelease):
            return KeyRelease(party=rng.randrange(3), slot=rng.randrange(60),
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
            return replace(message, party=party, deck=tuple(deck))
        commitments = [rng.randbytes(32) for _ in deck]
        return replace(message, party=party, deck=tuple(deck),
                       commitments=tuple(commitments))

    victim = twin()
    refused = accepted = 0

    def attack(message, times):
        nonlocal victim, refused, accepted
        for _ in range(times):
            before = state(victim)
            try:
                victim.receive(mutate(message))
            except (RemoteProtocolError, EarlyMessage):  # refused, or held back for later
                refused += 1
                assert before == state(victim)
            else:
                accepted += 1
                victim = twin()
    while (due := decks[0].expected()) is not None:
        _, party = due
        message = decks[party].step()
        simulate.broadcast(decks, party, message)
        attack(message, 150)
        if party == 2:
            assert victim.step() == message
        else:
            victim.receive(message)
        log.append(message)
    for j in range(0, 52, 3):
        for sender in (0, 1):
            release = decks[sender].release(j, to=2)
            attack(release, 60)
            victim.receive(release)
        assert victim.open(j) == verdict(decks).order[j]
    for _ in range(300):  # re-mixes of random slots, with random points and commitments
        count = rng.randrange(1, 6)
        forged = Remixed(party=rng.randrange(3), slots=tuple(rng.randrange(60) for _ in
                                                             range(count)),
                         deck=tuple(rng.randbytes(32) for _ in range(count)),
                         commitments=tuple(rng.randbytes(32) for _ in range(count)))
        before = state(victim)
        try:
            victim.receive(forged)
        except RemoteProtocolError:
            refused += 1
            assert before == state(victim)
        else:
            accepted += 1
            victim = twin()
    assert refused > 2000 and accepted < refused / 5


def test_malformed_messages_are_refused_by_their_constructors():
    with pytest.raises(ValueError, match="32 bytes"):
        Shuffled(party=0, round=0, prior=bytes(32), deck=(b"short",))
    with pytest.raises(ValueError, match="seat number"):
        Shuffled(party=-1, round=0, prior=bytes(32), deck=(bytes(32),))
    with pytest.raises(ValueError, match="one commitment per slot"):
        Locked(party=0, round=0, prior=bytes(32), deck=(bytes(32),) * 2,
               commitments=(bytes(32),))
    with pytest.raises(ValueError, match="key"):
        KeyRelease(party=0, slot=0, key=0)
    with pytest.raises(ValueError, match="key"):
        KeyRelease(party=0, slot=0, key=N)
    with pytest.raises(ValueError):
        DeckContext(TABLE, 0, 8, 52)


# ------------------------------------------- handing over, blind cards, re-mix, reshuffle


def test_a_held_card_handed_to_another_party():
    """Control Nut!'s HAND: the slot is dealt again, to the taker, who opens it."""
    decks = seated(4, 54)
    simulate.shuffle_and_lock(decks)
    simulate.deal(decks, 5, 1)
    card = decks[1].opened[5]
    simulate.deal(decks, 5, 3)  # every party (the victim too) releases its key to the taker
    assert decks[3].opened[5] == card
    assert 5 not in decks[0].opened and 5 not in decks[2].opened
    assert verdict(decks).ok


def test_a_blind_card_stays_hidden_from_its_holder_until_shown():
    """Nullern's blind round: nobody releases the slot to its holder; a public reveal
    later opens it for everyone at once."""
    decks = seated(5, 80, deal=19)
    simulate.shuffle_and_lock(decks)
    blind = {party: party for party in range(5)}  # slot p is party p's unseen card
    assert not any(deck.can_open(slot) for deck in decks for slot in blind)
    for slot in blind:
        simulate.deal(decks, slot, None)
    cards = {deck.opened[slot] for deck in decks for slot in blind}
    assert len(cards) == 5 and verdict(decks).ok


def test_a_remix_hides_where_each_card_came_from_and_the_audit_checks_it():
    """The Bid Whist bidder after the kitty: 18 cards re-encrypted in a secret order."""
    decks = seated(4, 54)
    simulate.shuffle_and_lock(decks)
    hand = [j for j in range(48) if j % 4 == 0] + list(range(48, 54))
    for slot in hand:
        simulate.deal(decks, slot, 0)
    held = sorted(decks[0].opened[s] for s in hand)
    remixed = decks[0].remix(hand)
    simulate.broadcast(decks, 0, remixed)
    new = list(range(54, 54 + len(hand)))
    assert all(deck.points[54:] == list(remixed.deck) for deck in decks)
    assert all(not deck.in_play(s) for deck in decks for s in hand)
    assert sorted(decks[0].opened[s] for s in new) == held
    # a new slot is locked by the holder alone: playing it shows it to everyone
    simulate.deal(decks, new[3], None)
    assert len({deck.opened[new[3]] for deck in decks}) == 1
    with pytest.raises(RemoteProtocolError, match="in play"):
        decks[1].receive(KeyRelease(party=0, slot=hand[0], key=decks[0].keys[hand[0]][0], to=1))
    result = verdict(decks)
    assert result.ok and sorted(result.order[s] for s in new) == held


def test_a_remix_that_swaps_in_another_card_is_named_by_the_audit():
    decks = seated(3, 52)
    simulate.shuffle_and_lock(decks)
    for slot in (0, 3, 6):
        simulate.deal(decks, slot, 0)
    honest = decks[0].remix([0, 3, 6])
    not_held = next(c for c in range(52) if c not in decks[0].opened.values())
    forged_point = mul(7, decks[0].cards[not_held])
    cheat = Remixed(party=0, slots=honest.slots,
                    deck=(forged_point, *honest.deck[1:]), commitments=honest.commitments)
    simulate.broadcast(decks, 0, cheat)  # nobody can tell at once
    result = verdict(decks, by=1)
    assert not result.ok and (result.party, result.step) == (0, "remix")
    assert cheat in result.evidence


def test_a_reshuffle_hides_a_returned_jack_in_the_stock():
    """Pasur: a jack shown in the pool goes back into the stock, reshuffled secretly."""
    decks = seated(4, 52, deal=2)
    simulate.shuffle_and_lock(decks)
    jack, stock = 16, list(range(20, 52))
    simulate.deal(decks, jack, None)  # the jack was face up: everyone knows it
    card = decks[0].opened[jack]
    simulate.reshuffle(decks, [jack, *stock])
    new = list(range(52, 52 + 1 + len(stock)))
    assert all(deck.in_play(s) for deck in decks for s in new)
    assert not any(deck.in_play(s) or s in deck.opened for deck in decks for s in [jack, *stock])
    assert all(len(deck.lockers[s]) == 4 for deck in decks for s in new)
    result = verdict(decks)
    assert result.ok and sorted(result.order[s] for s in new) == sorted(
        result.order[s] for s in [jack, *stock])
    assert card in [result.order[s] for s in new]
    for slot in new[:8]:  # the new stock deals as before
        simulate.deal(decks, slot, slot % 4)
        assert decks[slot % 4].opened[slot] == result.order[slot]


def test_a_cheat_in_the_unlock_pass_is_named_by_the_audit():
    decks = seated(3, 52)
    simulate.shuffle_and_lock(decks)

    def tag(message):
        if isinstance(message, Unlocked) and message.party == 2:
            return replace(message, deck=(mul(5, message.deck[0]), *message.deck[1:]))
        return message
    simulate.reshuffle(decks, list(range(40, 52)), tag)
    result = verdict(decks)
    assert not result.ok and (result.party, result.step) == (2, "unlock")


@pytest.mark.parametrize("parties", TABLE_SIZES)
def test_every_operation_at_every_table_size(parties):
    """Deal, show, show later, hand over, keep blind, re-mix and reshuffle, then an
    audit that agrees with every card any party opened."""
    size = 52 + 4 * (parties % 3 == 0) + 24 * (parties == 7)
    decks = seated(parties, size, deal=parties + 10)
    simulate.shuffle_and_lock(decks)
    hands = {p: [j for j in range(4 * parties) if j % parties == p] for p in range(parties)}
    for p, slots in hands.items():
        for slot in slots:
            simulate.deal(decks, slot, p)
    shown, later, blind = 4 * parties, 4 * parties + 1, 4 * parties + 2
    simulate.deal(decks, shown, None)
    simulate.deal(decks, later, parties - 1)  # a kitty card, to one party, later
    simulate.deal(decks, hands[0][0], 1)  # handed from party 0 to party 1
    assert decks[1].opened[hands[0][0]] == decks[0].opened[hands[0][0]]
    assert not any(deck.can_open(blind) for deck in decks)
    remixed = decks[1].remix([hands[1][0], hands[1][1], hands[0][0]])
    simulate.broadcast(decks, 1, remixed)
    stock = list(range(blind + 1, size))
    simulate.reshuffle(decks, [shown, *stock])
    simulate.deal(decks, blind, None)  # the blind card, shown to all at last
    simulate.deal(decks, len(decks[0].points) - 1, 0)  # a card of the new stock
    reveals = {d.me: d.secrets() for d in decks}
    results = [audit_deck(deck, reveals) for deck in decks]
    assert all(r == results[0] for r in results) and results[0].ok
    order = results[0].order
    assert sorted(order[:size]) == list(range(size))
    for deck in decks:
        assert all(order[slot] == card for slot, card in deck.opened.items())


def test_a_card_in_two_slots_in_play_stops_the_deal():
    """A holder re-mixes in a copy of a card shown elsewhere; when it plays it, the
    slot opens to a card already in play: the deal stops and the audit names it."""
    decks = seated(3, 52)
    simulate.shuffle_and_lock(decks)
    for slot in (0, 3):
        simulate.deal(decks, slot, 0)
    simulate.deal(decks, 10, None)  # a card everyone has seen
    honest = decks[0].remix([0, 3])
    copy = mul(11, decks[0].cards[decks[1].opened[10]])
    cheat = Remixed(party=0, slots=honest.slots, deck=(copy, honest.deck[1]),
                    commitments=(decks[0].context.commitment(0, 52, 11), honest.commitments[1]))
    simulate.broadcast(decks, 0, cheat)
    with pytest.raises(RemoteProtocolError) as caught:
        decks[1].receive(KeyRelease(party=0, slot=52, key=11))
        decks[1].open(52)
    assert caught.value.audit_now and "two slots" in caught.value.reason
    reveals = {d.me: d.secrets() for d in decks}
    reveals[0] = AuditReveal(party=0, unlock_keys=reveals[0].unlock_keys,
                             shuffle_keys=reveals[0].shuffle_keys,
                             permutations=reveals[0].permutations,
                             lock_keys=reveals[0].lock_keys,
                             remix_orders=reveals[0].remix_orders,
                             remix_keys=((11, reveals[0].remix_keys[0][1]),))
    result = audit_deck(decks[1], reveals)
    assert not result.ok and (result.party, result.step) == (0, "remix")


def test_a_remix_of_a_card_the_party_does_not_hold_is_refused_at_once():
    decks = seated(4, 54)
    simulate.shuffle_and_lock(decks)
    simulate.deal(decks, 0, 0)
    simulate.deal(decks, 5, 1)
    fake = Remixed(party=2, slots=(0,), deck=(decks[0].cards[7],),
                   commitments=(bytes(32),))
    with pytest.raises(RemoteProtocolError) as caught:  # it never had party 0's key
        decks[0].receive(fake)
    assert (caught.value.party, caught.value.step) == (2, "remix")
    with pytest.raises(RemoteProtocolError, match="held by party 0"):
        decks[1].receive(fake)
    simulate.deal(decks, 5, 3)  # HAND: party 3 takes party 1's card
    with pytest.raises(LocalProtocolError):
        decks[1].remix([5])  # the victim no longer holds it
    stolen = Remixed(party=1, slots=(5,), deck=(decks[0].cards[9],), commitments=(bytes(32),))
    for deck in (decks[0], decks[2], decks[3]):
        with pytest.raises(RemoteProtocolError, match="held by party 3"):
            deck.receive(stolen)
    simulate.broadcast(decks, 3, decks[3].remix([5]))  # the taker may
    assert verdict(decks).ok


def test_an_audit_before_a_reshuffle_is_seen_blames_nobody():
    decks = seated(3, 52)
    simulate.shuffle_and_lock(decks)
    decks[0].begin_reshuffle(list(range(40, 52)))  # secrets drawn, nothing sent yet
    reveals = {d.me: d.secrets() for d in decks}
    assert all(audit_deck(d, reveals).ok for d in decks)


def test_a_reshuffle_opens_only_where_the_game_began_it():
    """An unlock that comes before this party's game began the reshuffle is held
    (EarlyMessage), so no peer can start a reshuffle of cards on its own."""
    decks = seated(3, 52, deal=1)
    simulate.shuffle_and_lock(decks)
    first = decks[0].context.order(1)[0]
    decks[first].begin_reshuffle(list(range(30, 52)))
    unlock = decks[first].step()
    other = next(d for d in decks if d.me != first)
    with pytest.raises(EarlyMessage):
        other.receive(unlock)
    assert other.expected() is None and len(other.rounds) == 1
    for deck in decks:
        if deck.me != first:
            deck.begin_reshuffle(list(range(30, 52)))
            deck.receive(unlock)
    simulate.run_round(decks)
    assert all(len(d.points) == 52 + 22 for d in decks) and verdict(decks).ok


UNIFORM = [(2, 6, 300), *((parties, 4, 160) for parties in range(3, 8))]


@pytest.mark.parametrize(("parties", "size", "deals"), [
    pytest.param(p, m, d, id=f"{p}p-{m}cards", marks=[pytest.mark.slow] if p == 7 else [])
    for p, m, d in UNIFORM])
def test_dealt_positions_are_uniform(parties, size, deals):
    """Chi-square over (card, position) of many seeded shuffles, at every table size
    (it fails for a shuffle that does not shuffle)."""
    tally = [[0] * size for _ in range(size)]
    for deal in range(deals):
        decks = seated(parties, size, seed=f"uniform{parties}:{deal}")
        simulate.shuffle_and_lock(decks)
        for position, card in enumerate(verdict(decks).order):
            tally[card][position] += 1
    expected = deals / size
    chi2 = sum((count - expected) ** 2 / expected for row in tally for count in row)
    dof = (size - 1) ** 2
    assert chi2 < dof + 5 * (2 * dof) ** 0.5, chi2


def test_a_stray_key_does_not_make_its_recipient_the_holder():
    """A peer sending its key of another's card to a third party changes nobody's idea
    of who holds it; the holder's re-mix is accepted everywhere, and another party's
    re-mix of the re-mixed slots is refused."""
    decks = seated(3, 52)
    simulate.shuffle_and_lock(decks)
    for slot in (0, 3):
        simulate.deal(decks, slot, 0)
    stray = KeyRelease(party=1, slot=0, key=decks[1].keys[0][1], to=2)
    decks[2].receive(stray)  # party 1's true key, sent to party 2 only
    remixed = decks[0].remix([0, 3])
    simulate.broadcast(decks, 0, remixed)
    assert all(d.holder[52] == 0 and not d.in_play(0) for d in decks)
    grab = Remixed(party=1, slots=(52,), deck=(decks[0].cards[5],), commitments=(bytes(32),))
    with pytest.raises(RemoteProtocolError, match="held by party 0"):
        decks[2].receive(grab)


def test_without_a_source_the_secrets_come_from_the_system():
    context = DeckContext(TABLE, 0, 2, 52)
    one, two = Deck(context, 0), Deck(context, 0)
    assert one.secrets() != two.secrets()


# ------------------------------------------- the spec's MUSTs (docs/mental-poker.md)


def test_a_coordinate_of_p_or_more_is_no_point():
    """D2: x must be below p, even where x - p would be a point."""
    p = 2**256 - 2**224 + 2**192 + 2**96 - 1
    below = next(x for x in range(1, 100) if is_point(x.to_bytes(32, "big")))
    wrapped = (p + below).to_bytes(32, "big")
    assert not is_point(wrapped)
    decks = seated(2, 4)
    message = decks[0].step()
    with pytest.raises(RemoteProtocolError, match="out of range"):
        decks[1].receive(replace(message, deck=(wrapped, *message.deck[1:])))


def test_a_pass_in_the_receivers_own_name_or_of_other_slots_is_refused():
    """D24, D26: a pass signed as the receiver itself; an unlock of other slots."""
    decks = seated(3, 8)
    message = decks[0].step()
    with pytest.raises(RemoteProtocolError, match="own name"):
        decks[1].receive(replace(message, party=1))
    simulate.broadcast(decks, 0, message)
    simulate.run_round(decks)
    for deck in decks:
        deck.begin_reshuffle([4, 5, 6])
    first = decks[0].context.order(1)[0]
    unlock = decks[first].step()
    other = next(d for d in decks if d.me != first)
    with pytest.raises(RemoteProtocolError, match="other slots than the round's"):
        other.receive(replace(unlock, slots=(4, 6, 5)))
    other.receive(unlock)  # the true one is taken


def test_a_commitment_twice_in_one_lock_is_refused():
    """D29: commitments are unique within the message too."""
    decks = seated(2, 4)
    simulate.broadcast(decks, 0, decks[0].step())
    simulate.broadcast(decks, 1, decks[1].step())
    lock = decks[0].step()
    twice = replace(lock, commitments=(lock.commitments[0], *lock.commitments[:-1]))
    with pytest.raises(RemoteProtocolError, match="reused"):
        decks[1].receive(twice)
    decks[1].receive(lock)


def test_a_negated_key_or_one_in_the_receivers_name_is_refused():
    """D13: only x travels, so n - k opens the slot as k does; the commitment refuses it.
    D11: a key in the receiver's own name is refused."""
    decks = seated(2, 4)
    simulate.shuffle_and_lock(decks)
    with pytest.raises(RemoteProtocolError, match="no party 0 may send"):
        decks[0].receive(KeyRelease(party=0, slot=0, key=decks[0].keys[0][0], to=0))
    key = decks[1].keys[0][1]
    negated = {0: decks[0].keys[0][0], 1: N - key}
    assert decks[0].peek(0, negated) == decks[0].peek(0, {0: decks[0].keys[0][0], 1: key})
    with pytest.raises(RemoteProtocolError, match="commitment"):
        decks[0].receive(KeyRelease(party=1, slot=0, key=N - key, to=0))
    decks[0].receive(KeyRelease(party=1, slot=0, key=key, to=0))


H32 = b"\x42" * 32


def test_a_remix_at_the_wrong_time_or_past_the_limits_is_refused():
    """D17: no re-mix during a round, no slot twice, at most 64 re-mixes a party."""
    decks = seated(2, 4)
    simulate.shuffle_and_lock(decks)
    simulate.deal(decks, 0, 0)
    simulate.deal(decks, 1, 0)
    twice = Remixed(party=0, slots=(0, 0), deck=(decks[0].cards[0], decks[0].cards[1]),
                    commitments=(bytes(32), b"\x01" * 32))
    with pytest.raises(RemoteProtocolError, match="named twice"):
        decks[1].receive(twice)
    slot = 0
    for _ in range(64):  # the holder re-mixes its card again and again
        message = decks[0].remix([slot])
        decks[1].receive(message)
        slot = len(decks[1].points) - 1
    with pytest.raises(LocalProtocolError, match="64"):
        decks[0].remix([slot])
    extra = Remixed(party=0, slots=(slot,), deck=(decks[0].cards[2],), commitments=(H32,))
    with pytest.raises(RemoteProtocolError, match="64 re-mixes"):
        decks[1].receive(extra)
    for deck in decks:
        deck.begin_reshuffle([2, 3])
    during = Remixed(party=0, slots=(1,), deck=(decks[0].cards[2],), commitments=(H32,))
    with pytest.raises(RemoteProtocolError, match="during a round"):
        decks[1].receive(during)


def test_a_remix_of_a_shown_card_or_with_bad_points_or_commitments_is_refused():
    """D18, D19: a card shown to all is nobody's to re-mix; points and commitments are
    checked as for a lock."""
    decks = seated(3, 6)
    simulate.shuffle_and_lock(decks)
    for slot in (0, 1):
        simulate.deal(decks, slot, 0)
    simulate.deal(decks, 2, None)
    shown = Remixed(party=0, slots=(2,), deck=(decks[0].cards[0],), commitments=(H32,))
    with pytest.raises(RemoteProtocolError, match="shown to everyone"):
        decks[1].receive(shown)
    honest = decks[0].remix([0, 1])
    for forged, reason in [
        (replace(honest, deck=(honest.deck[0], off_curve())), "not on the curve"),
        (replace(honest, deck=(honest.deck[0], honest.deck[0])), "twice"),
        (replace(honest, commitments=(honest.commitments[0],) * 2), "reused"),
        (replace(honest, commitments=(decks[1].commitments[1, 0], honest.commitments[1])),
         "reused"),
    ]:
        with pytest.raises(RemoteProtocolError, match=reason):
            decks[1].receive(forged)
    decks[1].receive(honest)


def test_a_reshuffle_takes_two_or_more_jointly_locked_slots_in_play():
    """D22: the game begins a reshuffle only of slots every party locks."""
    decks = seated(2, 6)
    simulate.shuffle_and_lock(decks)
    simulate.deal(decks, 0, 0)
    simulate.broadcast(decks, 0, decks[0].remix([0]))  # slot 6: locked by party 0 alone
    for slots in ([1], [1, 1], [1, 6], [0, 1], [1, 99]):
        with pytest.raises(LocalProtocolError):
            decks[1].begin_reshuffle(slots)
    decks[1].begin_reshuffle([1, 2])


def test_an_audit_with_too_few_secrets_or_a_false_release_names_the_party():
    """D35, D38: secrets for fewer rounds than were seen; a key released that is not the
    key revealed."""
    decks = seated(2, 6)
    simulate.shuffle_and_lock(decks)
    simulate.reshuffle(decks, [3, 4, 5])
    reveals = {d.me: d.secrets() for d in decks}
    short = reveals[1]
    reveals[1] = AuditReveal(party=1, unlock_keys=short.unlock_keys[:1],
                             shuffle_keys=short.shuffle_keys[:1],
                             permutations=short.permutations[:1], lock_keys=short.lock_keys[:1])
    result = verdict(decks, reveals)
    assert (result.party, result.step) == (1, "audit") and "1 rounds" in result.reason
    reveals = {d.me: d.secrets() for d in decks}
    false = KeyRelease(party=0, slot=1, key=decks[0].keys[1][0] + 1, to=1)
    result = audit(decks[1].context, decks[1].log, reveals, [false])
    assert (result.party, result.step) == (0, "key") and "not its key" in result.reason
    assert audit(decks[1].context, decks[1].log, reveals,
                 [replace(false, key=decks[0].keys[1][0])]).ok


def test_at_the_table_a_remix_names_the_held_slots_in_ascending_order():
    """D20: the Bid Whist bidder re-mixes its hand after the kitty; a re-mix that names
    the same slots in another order is refused by every other seat."""
    cheats: list[int] = []

    def reorder(session, step, make):
        if step.kind != "remix" or cheats or session.run is None:
            return make()
        cheats.append(session.me)
        return session.run.deck.remix(list(reversed(step.slots)))

    table = MemoryTable("bidwhist", 4, 3, [heuristic_bot] * 4,
                        forges=dict.fromkeys(range(4), reorder), deck=LOCK_DECK)
    table.play(deals=1)
    assert cheats
    refusals = {(d.at, d.rejection.sender, d.rejection.rule) for d in table.rejected
                if d.rejection.rule == "remix"}
    assert {(seat, cheats[0], "remix") for seat in range(4) if seat != cheats[0]} <= refusals


def test_a_round_cut_short_is_audited_and_makes_no_slots():
    """D36: the passes of a round that never finished are re-computed; it adds no slot."""
    decks = seated(3, 6)
    simulate.shuffle_and_lock(decks)
    for deck in decks:
        deck.begin_reshuffle([2, 3, 4])
    first = decks[0].context.order(1)[0]
    simulate.broadcast(decks, first, decks[first].step())  # one unlock, then the deal ends
    result = verdict(decks)
    assert result.ok and len(result.order) == 6
    reveals = {d.me: d.secrets() for d in decks}
    lie = reveals[first]
    reveals[first] = replace(lie, unlock_keys=(1, lie.unlock_keys[1] % (N - 1) + 1))
    result = verdict(decks, reveals)
    assert (result.party, result.step) == (first, "unlock")
