"""Joint randomness by commit and reveal: agreed, uniform, and nobody can bias or hide."""

from __future__ import annotations

import pytest

from p2pcards.protocol.errors import LocalProtocolError, RemoteProtocolError
from p2pcards.protocol.randomness import Commit, JointRandom, Reveal, choice, sample
from p2pcards.protocol.source import SeededSource

LABEL = b"table/deal 3/first dealer"


def draw(parties: int, seed: str = "jr") -> list[JointRandom]:
    return [JointRandom(LABEL, parties, p, SeededSource(f"{seed}:{p}")) for p in range(parties)]


def exchange(table: list[JointRandom], silent: set[int] = frozenset()) -> None:
    commits = [party.commit() for party in table]
    for party in table:
        for commit in commits:
            if commit.party != party.me:
                party.receive(commit)
    reveals = [party.reveal() for party in table if party.me not in silent]
    for party in table:
        for reveal in reveals:
            if reveal.party != party.me:
                party.receive(reveal)


@pytest.mark.parametrize("parties", range(2, 8))
def test_every_party_gets_the_same_seed_and_choices(parties):
    table = draw(parties)
    exchange(table)
    assert len({party.seed() for party in table}) == 1
    assert len({party.choice(parties) for party in table}) == 1
    controls = {tuple(party.sample(54, 4)) for party in table}
    assert len(controls) == 1 and len(set(next(iter(controls)))) == 4


def test_one_honest_share_changes_the_seed():
    """Every share counts: changing only party 0's share changes the seed."""
    one, two = draw(4, "a"), draw(4, "a")
    two[0] = JointRandom(LABEL, 4, 0, SeededSource("other"))
    exchange(one)
    exchange(two)
    assert one[1].seed() != two[1].seed()


def test_choices_are_uniform():
    seed_counts = [0] * 6
    for i in range(3000):
        seed_counts[choice(i.to_bytes(4, "big"), 6)] += 1
    chi2 = sum((c - 500) ** 2 / 500 for c in seed_counts)
    assert chi2 < 5 + 5 * 10**0.5
    assert sorted(sample(b"s", 10, 10)) == list(range(10))


def test_a_withheld_share_is_named_and_no_seed_exists_without_it():
    table = draw(4)
    exchange(table, silent={2})
    assert table[0].missing() == [2]
    with pytest.raises(LocalProtocolError, match=r"\[2\]"):
        table[0].seed()


def test_a_share_that_misses_its_commitment_is_refused():
    table = draw(3)
    commits = [p.commit() for p in table]
    for p in table:
        for c in commits:
            if c.party != p.me:
                p.receive(c)
    with pytest.raises(RemoteProtocolError) as caught:
        table[0].receive(Reveal(party=1, share=bytes(32)))
    assert (caught.value.party, caught.value.step) == (1, "reveal")
    assert 1 not in table[0].shares


def test_a_share_that_comes_before_every_commitment_waits_for_them():
    """The network may deliver a share before a commitment: it is held, nobody is
    blamed, and it is checked once the commitments are in."""
    table = draw(3)
    with pytest.raises(LocalProtocolError):
        table[0].reveal()  # our own share waits for every commitment
    for p in (1, 2):
        table[p].receive(table[0].commit())
    table[1].receive(table[2].commit())
    early = table[1].reveal()
    table[0].receive(early)  # party 2's commitment has not reached party 0 yet
    assert table[0].shares == {} and table[0].missing() == [0, 1, 2]
    table[0].receive(table[1].commit())
    table[0].receive(table[2].commit())
    assert 1 in table[0].shares
    liar = draw(4)
    for q in (0, 1, 2):
        liar[3].receive(liar[q].commit())
    for q in (1, 3):
        liar[0].receive(liar[q].commit())  # party 2's commitment is still on its way
    liar[0].receive(Reveal(party=2, share=bytes(32)))  # a bad share, early
    liar[0].receive(liar[3].reveal())  # an honest one, early
    with pytest.raises(RemoteProtocolError) as caught:
        liar[0].receive(liar[2].commit())
    assert (caught.value.party, caught.value.step) == (2, "reveal")
    assert 3 in liar[0].shares and 2 in liar[0].commits  # the honest share is kept
    with pytest.raises(RemoteProtocolError):
        liar[0].receive(object())  # type: ignore[arg-type]


def test_a_second_commitment_is_refused_and_a_copied_one_is_useless():
    table = draw(3)
    table[0].receive(table[1].commit())
    with pytest.raises(RemoteProtocolError, match="second"):
        table[0].receive(Commit(party=1, digest=bytes(32)))
    # party 2 copies party 1's commitment: accepted, but no share of party 2's can
    # match it (the digest binds the party), so party 2 can only stay silent
    copy = Commit(party=2, digest=table[1].commit().digest)
    table[0].receive(copy)
    table[1].receive(table[0].commit())
    table[1].receive(copy)
    with pytest.raises(RemoteProtocolError, match="does not match"):
        table[0].receive(Reveal(party=2, share=table[1].reveal().share))
    with pytest.raises(RemoteProtocolError):
        table[0].receive(Commit(party=0, digest=bytes(32)))  # in our own name
    with pytest.raises(ValueError):
        Commit(party=1, digest=b"short")
