"""The proved deck's state machine (protocol/proved/deck.py): honest deals, every
attack first shown to work against a weakened check and then refused by the real
one, naming the cheater and the step, the uniformity of the deal, a coalition, a
reshuffle and a re-mix, the messages' bytes, and the offline re-check of a record."""

from __future__ import annotations

import itertools
import re
from collections import Counter
from collections.abc import Callable

import pytest

from p2pcards.protocol.constants import OBSERVER
from p2pcards.protocol.errors import EarlyMessage, LocalProtocolError
from p2pcards.protocol.proved import deck as deck_module
from p2pcards.protocol.proved.deck import ProvedDeck, Refused, verify_deal
from p2pcards.protocol.proved.elgamal import (
    Ciphertext,
    combine,
    decryption_share,
    encrypt,
    reencrypt,
    shuffle,
)
from p2pcards.protocol.proved.group import (
    EncodingError,
    G,
    N,
    Point,
    add,
    base_mul,
    mul,
    sub,
)
from p2pcards.protocol.proved.messages import (
    KeyShare,
    Message,
    Remix,
    Shares,
    Shuffle,
    decode_message,
)
from p2pcards.protocol.proved.shuffle import (
    ShuffleStatement,
    prove_shuffle,
    shuffle_checks,
)
from p2pcards.protocol.proved.sigma import Context
from p2pcards.protocol.proved.simulate import Table, seated, whole_deal
from p2pcards.protocol.source import SeededSource
from p2pcards.protocol.steps import DeckContext

TABLE = b"proved-deck-test"


def context(parties: int, size: int, deal: int = 7) -> DeckContext:
    return DeckContext(TABLE, deal, parties, size)


def card_at(table: Table, slot: int) -> int | None:
    """The card in ``slot`` with every party's secret (what no party can do)."""
    point = table.decks[0].points[slot]
    opened = combine(point, [decryption_share(point, d._x) for d in table.decks])
    return table.decks[0].card_of.get(opened)


def by(party: int, kind: type, change: Callable[[Message], Message]
       ) -> Callable[[Message], Message]:
    """A tamper that changes ``party``'s messages of ``kind`` only."""
    return lambda m: change(m) if m.party == party and isinstance(m, kind) else m


def last_shuffler(table: Table) -> int:
    return table.context.order(0)[-1]


def with_output(table: Table, message: Message, slot: int,
                make: Callable[[tuple[Ciphertext, ...], Point], Ciphertext],
                context: Context | None = None) -> Shuffle:
    """The sender's shuffle made again with output ``slot`` replaced by ``make(outputs,
    joint key)``, and proved over the changed deck with its permutation and
    randomness (``context``: proved for that context instead of its own)."""
    assert isinstance(message, Shuffle)
    deck = table.decks[message.party]
    assert deck.key is not None
    now = deck.rounds[-1].shuffles[-1].deck if deck.rounds[-1].shuffles \
        else deck.rounds[-1].deck  # its input: its own shuffle is not taken yet
    source = SeededSource(f"cheat{message.party}")
    out, permutation, randomness = shuffle(now, deck.key, source)
    changed = list(out)
    if slot >= 0:
        changed[slot] = make(out, deck.key)
    statement = ShuffleStatement(context or Context(TABLE, deck.context.deal, message.party),
                                 deck.key, now, tuple(changed))
    return Shuffle(party=message.party, round=message.round, slots=message.slots,
                   prior=message.prior, deck=tuple(changed),
                   proof=prove_shuffle(statement, permutation, randomness, source))


def skip_t4(monkeypatch: pytest.MonkeyPatch) -> None:
    """The weakened verifier: every equation of the shuffle proof but t4."""
    def weak(statement: ShuffleStatement, proof: object) -> None:
        checks = shuffle_checks(statement, proof)  # type: ignore[arg-type]
        assert all(ok for name, ok in checks.items() if name != "t4")
    monkeypatch.setattr(deck_module, "verify_shuffle", weak)


# -- honest deals --------------------------------------------------------------------

@pytest.mark.parametrize(("parties", "size"), [(2, 80), (3, 52), (4, 52)])
def test_an_honest_deal_gives_each_party_exactly_its_cards(parties: int, size: int) -> None:
    table = whole_deal(context(parties, size), seed=f"honest{parties}")
    shown = set(range(size - parties, size))
    hands = []
    for deck in table.decks:
        mine = {s for s in range(size - parties) if s % parties == deck.me}
        assert set(deck.opened) == mine | shown
        for slot in set(range(size)) - mine - shown:
            assert not deck.can_open(slot)
            with pytest.raises(LocalProtocolError, match="cannot be opened"):
                deck.open(slot)
        hands.append({deck.opened[s] for s in mine})
        assert {deck.opened[s] for s in shown} == {table.decks[0].opened[s] for s in shown}
    shown_cards = {table.decks[0].opened[s] for s in shown}
    assert sum(len(h) for h in hands) + len(shown_cards) == size
    assert set().union(*hands, shown_cards) == set(range(size))
    # the order of the shuffles is the rotation of today's deck
    assert [m.party for m in table.decks[0].rounds[0].shuffles] == table.context.order(0)
    # nobody reveals anything after the deal; the record re-checks from its messages
    observer = verify_deal(table.context, table.record)
    assert observer.opened == {s: table.decks[0].opened[s] for s in shown}


def test_the_record_refuses_a_changed_or_reordered_message() -> None:
    table = whole_deal(context(2, 6), seed="record")
    record = list(table.record)
    assert isinstance(decode_message(record[2]), Shuffle)
    flipped = bytearray(record[2])
    flipped[-40] ^= 1  # inside the proof's last scalar
    with pytest.raises(Refused) as caught:
        verify_deal(table.context, [*record[:2], bytes(flipped), *record[3:]])
    assert (caught.value.party, caught.value.step) == (decode_message(record[2]).party,
                                                       "shuffle")
    with pytest.raises(Refused, match="out of order"):
        verify_deal(table.context, [record[0], record[2], record[1], *record[3:]])


# -- attacks on the shuffle: each works against a weakened check ---------------------

def _shuffle_attack(monkeypatch: pytest.MonkeyPatch, seed: str,
                    forge: Callable[[Table, Message], Message]) -> tuple[Table, int]:
    """The last shuffler applies ``forge`` to its shuffle; with t4 skipped the round
    completes (returned), with the real check it is refused naming the cheater."""
    cheat = last_shuffler(seated(context(3, 8), seed))
    with monkeypatch.context() as weakened:
        skip_t4(weakened)
        table = seated(context(3, 8), seed)
        table.run_round(by(cheat, Shuffle, lambda m: forge(table, m)))
    honest = seated(context(3, 8), seed)
    with pytest.raises(Refused) as caught:
        honest.run_round(by(cheat, Shuffle, lambda m: forge(honest, m)))
    assert (caught.value.party, caught.value.step) == (cheat, "shuffle")
    assert "t4 does not hold" in caught.value.reason
    return table, cheat


def test_a_substituted_card_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def forge(table: Table, m: Message) -> Message:  # output 0 becomes card 5, afresh
        return with_output(table, m, 0, lambda out, key: encrypt(
            table.decks[0].cards[5], key, 12345))
    table, _ = _shuffle_attack(monkeypatch, "substitute", forge)
    cards = Counter(card_at(table, s) for s in range(8))
    assert cards[5] == 2 and len(cards) == 7  # card 5 twice, another gone


def test_a_duplicated_card_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def forge(table: Table, m: Message) -> Message:  # output 1 a re-encryption of output 0
        return with_output(table, m, 1, lambda out, key: reencrypt(out[0], key, 777))
    table, _ = _shuffle_attack(monkeypatch, "duplicate", forge)
    assert card_at(table, 0) == card_at(table, 1)


def test_a_tagged_ciphertext_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    tag = 0xC0FFEE

    def forge(table: Table, m: Message) -> Message:  # output 2 multiplied by the tag
        return with_output(table, m, 2, lambda out, key: Ciphertext(
            mul(tag, out[2].c1), mul(tag, out[2].c2)))
    table, _ = _shuffle_attack(monkeypatch, "tag", forge)
    point = table.decks[0].points[2]
    opened = combine(point, [decryption_share(point, d._x) for d in table.decks])
    assert opened not in table.decks[0].card_of  # honest parties open no card …
    assert mul(pow(tag, -1, N), opened) in table.decks[0].card_of  # … the cheater un-tags it


@pytest.mark.parametrize("elsewhere", ["another deal", "another shuffler"])
def test_a_shuffle_proof_made_for_another_context_is_refused(
        monkeypatch: pytest.MonkeyPatch, elsewhere: str) -> None:
    """The cheater's shuffle is honest, but its proof is one made for another deal or
    by another shuffler: it holds only where the hashes leave the context out."""
    def forge(table: Table, m: Message) -> Message:
        ctx = (Context(TABLE, 8, m.party) if elsewhere == "another deal"
               else Context(TABLE, 7, (m.party + 1) % 3))
        return with_output(table, m, -1, lambda out, key: out[0], ctx)

    cheat = last_shuffler(seated(context(3, 6), "copy"))
    with_context = ShuffleStatement.fields
    with monkeypatch.context() as weakened:  # hashes without table, deal and shuffler
        weakened.setattr(ShuffleStatement, "fields", lambda self: with_context(self)[3:])
        table = seated(context(3, 6), "copy")
        table.run_round(by(cheat, Shuffle, lambda m: forge(table, m)))
        assert len(table.decks[0].points) == 6
    honest = seated(context(3, 6), "copy")
    with pytest.raises(Refused) as caught:
        honest.run_round(by(cheat, Shuffle, lambda m: forge(honest, m)))
    assert (caught.value.party, caught.value.step) == (cheat, "shuffle")


# -- attacks on keys and shares --------------------------------------------------------

def test_a_rogue_key_without_a_proof_of_knowledge_is_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The last to publish chooses ``P = Q − Σ others`` after seeing the others: the
    joint key is ``Q``, whose logarithm it alone knows; it cannot prove ``P``."""
    q = 0x5EC12E7
    cheat = context(3, 8).order(0)[-1]

    def rogue(table: Table) -> Callable[[Message], Message]:
        def forge(m: Message) -> Message:
            assert isinstance(m, KeyShare)
            others = list(table.decks[cheat].publics.values())
            return KeyShare(party=cheat, public=sub(base_mul(q), add(*others)), proof=m.proof)
        return by(cheat, KeyShare, forge)

    with monkeypatch.context() as weakened:
        weakened.setattr(deck_module, "verify_key", lambda *args: None)
        table = seated(context(3, 8), "rogue")
        table.run_round(rogue(table))
        assert table.decks[0].key == base_mul(q)
        alone = {sub(c.c2, mul(q, c.c1)) for c in table.decks[0].points}
        assert alone == set(table.decks[0].cards)  # the cheater opens every card alone
    honest = seated(context(3, 8), "rogue")
    with pytest.raises(Refused) as caught:
        honest.run_round(rogue(honest))
    assert (caught.value.party, caught.value.step) == (cheat, "key")
    assert "proof of knowledge" in caught.value.reason


def _share_attack(monkeypatch: pytest.MonkeyPatch, seed: str,
                  change: Callable[[Shares], Shares]) -> None:
    """Party 1 tampers with the shares it sends party 0 for slots 0 and 1: with the
    share proofs unchecked party 0 opens a wrong card or none; checked, refused."""
    with monkeypatch.context() as weakened:
        weakened.setattr(deck_module, "first_bad_share", lambda *args: None)
        table = seated(context(2, 6), seed)
        table.run_round()
        true = [card_at(table, 0), card_at(table, 1)]
        try:
            table.deal([0, 1], 0, by(1, Shares, change))  # type: ignore[arg-type]
            misled = [table.decks[0].opened[0], table.decks[0].opened[1]] != true
        except Refused as error:  # it opened to no card
            misled = error.step == "open"
        assert misled
    honest = seated(context(2, 6), seed)
    honest.run_round()
    with pytest.raises(Refused) as caught:
        honest.deal([0, 1], 0, by(1, Shares, change))  # type: ignore[arg-type]
    assert (caught.value.party, caught.value.step) == (1, "share")
    assert "slot 1" in caught.value.reason


def test_a_wrong_decryption_share_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def change(m: Shares) -> Shares:
        return Shares(party=m.party, to=m.to, slots=m.slots,
                      shares=(m.shares[0], add(m.shares[1], G)), proofs=m.proofs)
    _share_attack(monkeypatch, "wrong-share", change)


def test_a_share_reused_from_another_slot_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    def change(m: Shares) -> Shares:  # slot 0's share and proof sent again for slot 1
        return Shares(party=m.party, to=m.to, slots=m.slots,
                      shares=(m.shares[0], m.shares[0]), proofs=(m.proofs[0], m.proofs[0]))
    _share_attack(monkeypatch, "reused-share", change)


def test_no_share_leaves_before_the_shuffle_proofs_are_checked(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The last shuffler copies (re-encrypted) the victim's slot 0 into its own slot
    1.  A party that released shares before checking the proofs would open the
    victim's card to it; the deck refuses to release until the check, which names
    the cheater."""
    ctx = context(2, 4)
    cheat = ctx.order(0)[-1]
    victim = 1 - cheat

    def forge(table: Table) -> Callable[[Message], Message]:
        def copy(m: Message) -> Message:
            return with_output(table, m, 1, lambda out, key: reencrypt(out[0], key, 4242))
        return by(cheat, Shuffle, copy)

    with monkeypatch.context() as weakened:
        weakened.setattr(ProvedDeck, "checked", lambda self, slot: True)
        table = seated(ctx, "early-share")
        table.run_round(forge(table), defer=True)
        table.deal([0], victim)
        table.deal([1], cheat)  # the victim's share of slot 1 opens slot 0's card
        assert table.decks[cheat].opened[1] == table.decks[victim].opened[0]
    table = seated(ctx, "early-share")
    table.run_round(forge(table), defer=True)
    victim_deck = table.decks[victim]
    assert victim_deck.pending
    with pytest.raises(LocalProtocolError, match="not every shuffle proof"):
        victim_deck.release([1], cheat)
    assert not victim_deck.can_open(0)
    with pytest.raises(Refused) as caught:
        victim_deck.check_pending()
    assert (caught.value.party, caught.value.step) == (cheat, "shuffle")
    with pytest.raises(LocalProtocolError, match="not every shuffle proof"):
        victim_deck.release([1], cheat)  # a proof that failed stays pending


def test_deferred_honest_proofs_release_once_checked() -> None:
    table = seated(context(3, 6), "deferred")
    table.run_round(defer=True)
    assert all(deck.pending for deck in table.decks)
    for deck in table.decks:
        deck.check_pending()
    table.deal([0, 1], 2)
    assert table.decks[2].opened.keys() == {0, 1}


# -- turn order ----------------------------------------------------------------------

def test_steps_out_of_turn_are_refused_or_held_back() -> None:
    table = seated(context(3, 6, deal=4), "turns")
    first, second, third = order = table.context.order(0)
    assert order == [1, 2, 0]  # round 0 starts at deal mod N
    for party in order:
        table.send(party, table.decks[party].step())
    one = table.decks[first].step().encode()
    table.decks[second].receive(one)
    two = table.decks[second].step().encode()
    with pytest.raises(EarlyMessage):  # the network reordered: held back, nobody named
        table.decks[third].receive(two)
    table.decks[third].receive(one)
    table.decks[third].receive(two)
    with pytest.raises(Refused) as caught:  # the same shuffle again: not its turn
        table.decks[third].receive(one)
    assert (caught.value.party, caught.value.step) == (first, "shuffle")
    assert "out of order" in caught.value.reason
    with pytest.raises(LocalProtocolError, match="not party 1's turn"):
        table.decks[first].step()


# -- uniformity ----------------------------------------------------------------------

def test_dealt_positions_are_uniform() -> None:
    """192 seeded deals of 4 cards to 2 parties: the 24 orders of the deck come up
    evenly (chi-square with 23 degrees of freedom below 49.7, p = 0.001)."""
    deals = 192
    seen: Counter[tuple[int | None, ...]] = Counter()
    for d in range(deals):
        table = seated(DeckContext(TABLE, d, 2, 4), f"uniform{d}")
        table.run_round()
        seen[tuple(card_at(table, s) for s in range(4))] += 1
    assert set(seen) <= set(itertools.permutations(range(4)))
    expected = deals / 24
    chi2 = sum((seen[p] - expected) ** 2 / expected for p in itertools.permutations(range(4)))
    assert chi2 < 49.7, (chi2, seen)


# -- a coalition -----------------------------------------------------------------------

def test_every_other_seat_together_cannot_open_the_honest_seats_cards() -> None:
    table = whole_deal(context(4, 16), seed="coalition")
    honest = 2
    coalition = [d for d in table.decks if d.me != honest]
    mine = [s for s in range(12) if s % 4 == honest]
    sent_by_honest = [decode_message(m) for m in table.record]
    for m in sent_by_honest:  # the honest seat never sent a share of its own cards
        if isinstance(m, Shares) and m.party == honest:
            assert not set(m.slots) & set(mine)
    cards: set[Point] = set(table.decks[0].cards)
    for slot in mine:
        c = table.decks[0].points[slot]
        pooled = [decryption_share(c, d._x) for d in coalition]
        assert combine(c, pooled) not in cards  # every secret of theirs: no card
        for pair in itertools.combinations(pooled, 2):
            assert combine(c, list(pair)) not in cards
        with_honest = [*pooled, decryption_share(c, table.decks[honest]._x)]
        assert table.decks[0].card_of[combine(c, with_honest)] == \
            table.decks[honest].opened[slot]


# -- reshuffle and re-mix --------------------------------------------------------------

def test_a_reshuffle_of_the_stock_appends_new_slots() -> None:
    table = seated(context(3, 12), "stock")
    table.run_round()
    for seat in range(3):
        table.deal([seat, seat + 3], seat)
    stock = list(range(6, 12))
    before = sorted(card_at(table, s) or 0 for s in stock)
    new = table.reshuffle(stock)
    assert new == list(range(12, 18))
    assert [m.party for m in table.decks[0].rounds[1].shuffles] == table.context.order(1)
    for deck in table.decks:
        assert deck.retired == set(stock) and not deck.in_play(6)
        with pytest.raises(LocalProtocolError, match="not in play"):
            deck.release([6], (deck.me + 1) % 3)
    assert sorted(card_at(table, s) or 0 for s in new) == before
    table.deal(new[:2], 1)
    table.deal(new[2:3], None)
    assert [table.decks[1].opened[s] for s in new[:2]] == [card_at(table, s) for s in new[:2]]
    observer = verify_deal(table.context, table.record)
    assert observer.opened == {new[2]: card_at(table, new[2])}


def test_a_reshuffle_that_substitutes_a_card_is_refused(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    def forge(table: Table) -> Callable[[Message], Message]:
        def sub_card(m: Message) -> Message:
            return with_output(table, m, 0, lambda out, key: encrypt(
                table.decks[0].cards[0], key, 99))
        return lambda m: sub_card(m) if isinstance(m, Shuffle) and m.round == 1 \
            and m.party == 2 else m

    table = seated(context(3, 8), "stock-cheat")
    table.run_round()
    with pytest.raises(Refused) as caught:
        table.reshuffle([4, 5, 6, 7], forge(table))
    assert (caught.value.party, caught.value.step) == (2, "shuffle")


def test_a_holder_remixes_its_cards_and_a_taker_opens_one() -> None:
    table = seated(context(3, 12), "remix")
    table.run_round()
    held = [0, 3, 6, 9]
    table.deal(held, 0)
    cards = {table.decks[0].opened[s] for s in held}
    new = table.remix(0, held)
    assert new == list(range(12, 16))
    source = table.decks[0]
    assert {source.opened[s] for s in new} == cards
    assert all(source.opened[s] == card_at(table, s) for s in new)
    for deck in table.decks[1:]:
        assert all(deck.holder[s] == 0 for s in new) and deck.retired == set(held)
    table.deal([new[1]], 1)  # Control Nut!'s HAND: a drawn slot goes to the taker
    assert table.decks[1].opened[new[1]] == source.opened[new[1]]
    table.deal([2, 5], 2)
    table.deal([4], 1)
    with pytest.raises(Refused) as caught:  # party 2 re-mixes its card and party 1's
        table.decks[0].receive(_remix(table, 2, (2, 4)).encode())
    assert (caught.value.party, caught.value.step) == (2, "remix")
    assert "slot 4 is held by party 1" in caught.value.reason
    verify_deal(table.context, table.record)


def _remix(table: Table, party: int, slots: tuple[int, ...]) -> Remix:
    """A re-mix by ``party`` of ``slots``, honestly proved."""
    deck = table.decks[party]
    assert deck.key is not None
    inputs = tuple(deck.points[s] for s in slots)
    source = SeededSource("bad-remix")
    out, permutation, randomness = shuffle(inputs, deck.key, source)
    return Remix(party=party, slots=slots, deck=out, proof=prove_shuffle(
        ShuffleStatement(Context(TABLE, 7, party), deck.key, inputs, out), permutation,
        randomness, source))


# -- the messages' bytes ---------------------------------------------------------------

def test_every_message_survives_its_bytes_and_malformed_bytes_name_the_field() -> None:
    table = whole_deal(context(2, 4), seed="bytes")
    kinds = set()
    for data in table.record:
        message = decode_message(data)
        assert message.encode() == data
        kinds.add(type(message))
    assert kinds == {KeyShare, Shuffle, Shares}
    key, shuffled, shares = (next(d for d in table.record if d[0] == k) for k in (1, 2, 4))
    assert len(key) == 100
    cases = {
        b"": "message: empty",
        b"\x09": "message: unknown kind 09",
        key[:-1]: "key share.proof.s: the message ends after 99 bytes",
        key + b"\x00": "key share: 1 bytes after the end",
        key[:1] + b"\x07" + key[2:]: "key share.party: no seat 7",
        key[:2] + b"\x05" + key[3:]: "key share.public: a point begins with 02 or 03",
        shares[:2] + shares[1:2] + shares[3:]: "shares.to: a party never sends",
    }
    # the first ciphertext of the shuffle's deck: C1 of deck[0] sits after the header
    header = 1 + 1 + 1 + 32 + 2 + 2
    bad_deck = shuffled[:header] + b"\x04" + shuffled[header + 1:]
    cases[bad_deck] = "shuffle.deck[0].c1: a point begins with 02 or 03"
    proof_at = header + 4 * 66
    bad_proof = shuffled[:proof_at] + b"\x05" + shuffled[proof_at + 1:]
    cases[bad_proof] = "shuffle.proof.commitments[0]: a point begins"
    for data, field in cases.items():
        with pytest.raises(EncodingError, match=re.escape(field)):
            decode_message(data)
    with pytest.raises(Refused, match="in this party's own name"):
        table.decks[0].receive(next(d for d in table.record if d[0] == 1 and d[1] == 0))


def test_nothing_a_peer_sends_raises_anything_but_a_refusal() -> None:
    """Seeded bit flips and cuts in every message of a deal, each delivered to an
    observer that has taken everything before it: refused by the decoder
    (EncodingError) or by the deck (Refused), never anything else, and its state
    unchanged."""
    table = whole_deal(context(2, 4), seed="flips")
    rng = SeededSource("flips")
    for index, data in enumerate(table.record):
        for _ in range(4):
            receiver = ProvedDeck(table.context, OBSERVER)
            for earlier in table.record[:index]:
                receiver.receive(earlier)
            log = len(receiver.log)
            mutated = bytearray(data)
            if rng.randbelow(4) == 0:
                mutated = mutated[:rng.randbelow(len(mutated))]
            else:
                at = rng.randbelow(len(mutated) - 1) + 1  # the kind byte is tried above
                mutated[at] ^= 1 << rng.randbelow(8)
            try:
                receiver.receive(bytes(mutated))
            except (EncodingError, Refused):
                assert len(receiver.log) == log
            else:  # a flip the message does not depend on cannot exist: every byte counts
                raise AssertionError(f"message {index} taken changed")
