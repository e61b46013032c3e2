"""Another game with the same players, on its own (no Trio, no sockets): the agreement
between two games (consent from every peer, a conflicting proposal, a game that does
not fit, leaving, floods), the next roster every peer checks, the frames, the match
score and the record of a table's games."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.net import frames
from p2pcards.net.again import (
    MAX_GAMES,
    MAX_ROUNDS,
    MAX_WORDS,
    Agreement,
    offer,
    peer_seats,
    sign,
    tell,
)
from p2pcards.net.frames import Again, End, FrameError
from p2pcards.net.series import (
    GameResult,
    Series,
    done_path,
    journal_path,
    match_lines,
    numbered,
    where,
)
from p2pcards.table.roster import Roster, SeatEntry

TABLE = b"T" * 16
NEXT = b"N" * 16


def key(name: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(name.encode()).digest())


def public(name: str) -> bytes:
    return key(name).public_key().public_bytes_raw()


NAMES = ("ana", "ben", "bot")


def roster(game: str = "pasur", options: dict[str, int] | None = None) -> Roster:
    """Three seats: ana (the host), ben (a joiner), and a bot ana's peer runs."""
    seats = (SeatEntry("ana", public("ana")), SeatEntry("ben", public("ben")),
             SeatEntry("heuristic-2", public("bot"), "heuristic", 0))
    return Roster(TABLE, game, options if options is not None else {"target": 20}, seats)


def word(agreement: Agreement, seat: int, game: str | None = None,
         options: dict[str, int] | None = None) -> Again:
    return agreement.word(key(NAMES[seat]), seat, game, options)


def test_every_peer_must_agree_and_the_next_roster_keeps_the_seats() -> None:
    agreement = Agreement(roster())
    assert agreement.peers == [0, 1] == peer_seats(agreement.roster)  # (the bot: via ana)
    proposal = word(agreement, 1)  # ben: another game of the same, its options kept
    assert (proposal.round, proposal.game, proposal.options) == (1, "pasur", (("target", 20),))
    assert agreement.take(proposal) == "proposal"
    assert not agreement.complete
    with pytest.raises(AssertionError):
        agreement.next_roster(NEXT)
    assert agreement.check_start(Roster(NEXT, "pasur", {"target": 20}, roster().seats),
                                 []) == "a new game that not every player has agreed to"
    assert agreement.take(word(agreement, 0)) == "consent"
    assert agreement.complete and agreement.closed
    assert [f.seat for f in agreement.frames()] == [1, 0]  # the proposer's first
    nxt = agreement.next_roster(NEXT)
    assert (nxt.table, nxt.game, dict(nxt.options), nxt.seats, nxt.deck) == \
        (NEXT, "pasur", {"target": 20}, roster().seats, roster().deck)
    assert nxt.safety_number() != roster().safety_number()  # a roster of its own
    assert agreement.check_start(nxt, []) is None
    assert "used before" in str(agreement.check_start(nxt, [NEXT]))
    assert "used before" in str(agreement.check_start(Roster(
        TABLE, "pasur", {"target": 20}, roster().seats), []))
    other = Roster(NEXT, "pasur", {}, roster().seats)
    assert agreement.check_start(other, []) == \
        "a new game of Pasur, not the Pasur (target=20) agreed to"
    moved = Roster(NEXT, "pasur", {"target": 20}, tuple(reversed(roster().seats[:2]))
                   + roster().seats[2:])
    assert agreement.check_start(moved, []) == \
        "a new game whose seats or deck are not the last game's"
    assert agreement.take(word(agreement, 1)) == "stale"  # after the agreement: nothing


def test_the_newest_proposal_replaces_the_older_and_everyone_agrees_to_it() -> None:
    agreement = Agreement(roster())
    ana_same = word(agreement, 0)  # ana: again (the same game)
    ben_other = word(agreement, 1, "nullern")  # ben, at the same moment: again nullern
    assert ana_same.round == ben_other.round == 1
    assert agreement.take(ana_same) == "proposal"
    assert agreement.take(ben_other) == "stale"  # it crossed ana's on its way: dropped
    assert agreement.proposal is not None and agreement.proposal.game == "pasur"
    newer = word(agreement, 1, "nullern")  # ben, shown ana's, proposes nullern again
    assert newer.round == 2
    assert agreement.take(newer) == "proposal"
    assert set(agreement.agreed) == {1}  # ana's consent to pasur lapsed
    assert agreement.take(ana_same) == "stale"  # (a consent to the old proposal)
    assert not agreement.complete
    consent = word(agreement, 0)  # "again" alone agrees to what stands: nullern
    assert (consent.round, consent.game) == (2, "nullern")
    assert agreement.take(consent) == "consent"
    assert agreement.complete
    assert agreement.next_roster(NEXT).game == "nullern"
    assert dict(agreement.next_roster(NEXT).options) == {}  # another game: its defaults


def test_naming_the_proposal_agrees_to_it_and_options_make_another() -> None:
    agreement = Agreement(roster())
    agreement.take(word(agreement, 0, "pasur", {"target": 30}))
    same = word(agreement, 1, "pasur", {"target": 30})
    assert same.round == 1 and agreement.take(same) == "consent"
    agreement = Agreement(roster())
    agreement.take(word(agreement, 0, "pasur", {"target": 30}))
    assert word(agreement, 1, "pasur").round == 2  # (target 20: another proposal)
    assert word(agreement, 1, None, {"target": 62}).options == ()  # defaults left out


def test_a_game_that_does_not_fit_the_seats_is_refused_with_the_reason() -> None:
    agreement = Agreement(roster())
    with pytest.raises(ValueError, match="Bid Whist needs 4 seats; this table has 3"):
        word(agreement, 1, "bidwhist")
    with pytest.raises(ValueError, match="there is no game 'chess'"):
        word(agreement, 1, "chess")
    with pytest.raises(ValueError, match="option 'target' must be from 1 to 10000"):
        word(agreement, 1, "pasur", {"target": 0})
    with pytest.raises(ValueError, match="unknown pasur option 'kitty'"):
        word(agreement, 1, "pasur", {"kitty": 5})
    # a peer that signs it anyway is at fault: its link is closed
    forged = sign(key("ben"), TABLE, 1, round=1, game="bidwhist", options={})
    with pytest.raises(FrameError, match="Bid Whist needs 4 seats"):
        agreement.take(forged)
    assert agreement.proposal is None and agreement.words == {}


def test_leaving_ends_the_table_for_everyone() -> None:
    agreement = Agreement(roster())
    agreement.take(word(agreement, 0))
    assert agreement.take(word(agreement, 1, "")) == "leave"
    assert agreement.left == 1 and agreement.closed and not agreement.complete
    assert agreement.take(word(agreement, 0)) == "stale"
    names = list(NAMES)
    assert tell(agreement, word(agreement, 1, ""), "leave", names, 0) == \
        "ben left: no more games at this table"


def test_words_are_checked_signature_seat_table_and_count() -> None:
    agreement = Agreement(roster())
    proposal = word(agreement, 1)
    with pytest.raises(FrameError, match="bad signature"):
        agreement.take(Again(table=TABLE, seat=1, round=1, game="pasur",
                             options=proposal.options, sig=word(agreement, 0).sig))
    with pytest.raises(FrameError, match="seat 2 does not speak for a peer"):
        agreement.take(sign(key("bot"), TABLE, 2, round=1, game="pasur", options={}))
    with pytest.raises(FrameError, match="another table"):
        agreement.take(sign(key("ben"), NEXT, 1, round=1, game="pasur", options={}))
    for _ in range(MAX_WORDS):  # proposals back and forth: a flood past MAX_WORDS
        agreement.take(word(agreement, 1, "pasur", {"target": 10 + agreement.round}))
    with pytest.raises(FrameError, match="a flood"):
        agreement.take(word(agreement, 1, "nullern"))
    assert agreement.take(word(agreement, 0)) == "consent"  # (ana is not bound by it)


def test_a_table_plays_at_most_so_many_games() -> None:
    agreement = Agreement(roster(), played=MAX_GAMES)
    with pytest.raises(ValueError, match=f"played {MAX_GAMES} games"):
        word(agreement, 0)
    with pytest.raises(FrameError, match=f"played {MAX_GAMES} games"):
        agreement.take(sign(key("ana"), TABLE, 0, round=1, game="pasur",
                            options={"target": 20}))
    assert agreement.take(word(agreement, 0, "")) == "leave"  # leaving still is


def test_what_the_screen_says() -> None:
    agreement = Agreement(roster())
    proposal = word(agreement, 1, "pasur", {"target": 30})
    agreement.take(proposal)
    names = list(NAMES)
    assert tell(agreement, proposal, "proposal", names, 0) == (
        "ben proposes another game: Pasur (target=30) (1 of 2 agree); type again to"
        " agree, again GAME for another game, or quit")
    assert tell(agreement, proposal, "proposal", names, 1) == \
        "you propose another game: Pasur (target=30) (1 of 2 agree)"
    assert offer("pasur", 3) == ("type again for another game with the same players,"
                                 " again nullern for another game, or quit")
    assert offer("bidwhist", 4).endswith("again pasur for another game, or quit")


def test_the_frames_round_trip_and_are_checked() -> None:
    agreement = Agreement(roster())
    frame = word(agreement, 1, "pasur", {"target": 30})
    assert frames.unpack(frames.pack(frame)[4:]) == frame
    assert frames.to_map(frame)["options"] == {"target": 30}
    end = End(reason="ben left: no more games at this table")
    assert frames.unpack(frames.pack(end)[4:]) == end
    raw = frames.to_map(frame)
    for field, value, reason in (("table", b"x", "again.table must be 16 bytes"),
                                 ("options", {"target": "30"}, "again.options must map"),
                                 ("options", {str(i): i for i in range(9)}, "at most 8"),
                                 ("round", -1, "again.round must be an integer")):
        with pytest.raises(FrameError, match=reason):
            frames.from_map({**raw, field: value})


def test_numbered_files() -> None:
    assert numbered("game.json", 1) == "game.json"
    assert numbered("game.json", 2) == "game-2.json"
    assert numbered("out/game", 3) == "out/game-3"
    first = Path("/d/host-pasur-45450.journal")
    assert journal_path(first, 2) == Path("/d/host-pasur-45450-2.journal")
    assert done_path(journal_path(first, 2)) == Path("/d/host-pasur-45450-2.done")


def test_the_match_score_counts_games_won() -> None:
    names = ("ana", "ben", "cy", "dee")
    whist = GameResult("bidwhist", names, (7, 3), 0)
    nuts = GameResult("controlnut", names, (120, 310), 1)
    assert match_lines([whist, nuts]) == [
        "match after 2 games:",
        "  game 1, Bid Whist: won by team 0 (ana & cy); final team 0 (ana & cy) 7,"
        " team 1 (ben & dee) 3",
        "  game 2, Control Nut!: won by team 1 (ben & dee); final team 0 (ana & cy) 120,"
        " team 1 (ben & dee) 310",
        "  games won: team 0 (ana & cy) 1, team 1 (ben & dee) 1"]
    pasur = GameResult("pasur", names, (12, 31, 4, 0), 1)
    shared = GameResult("nullern", names, (40, 40, 10, 2), (0, 1))
    lines = match_lines([whist, pasur, shared])
    assert lines[2] == "  game 2, Pasur: won by ben; final ana 12, ben 31, cy 4, dee 0"
    assert lines[3].startswith("  game 3, Nullern: won by ana, ben (shared)")
    assert lines[-1] == "  games won: ana 2, ben 2, cy 1, dee 0"  # (a team's win: both)


def test_the_record_of_a_tables_games_finds_what_to_resume(tmp_path: Path) -> None:
    first = tmp_path / "host-pasur-1.journal"
    series = Series.open(first.with_suffix(".series"))
    assert where(first, series) == (first, 1)  # a new table
    series.begin(TABLE)
    first.write_bytes(b"")  # game 1 under way
    assert where(first, Series.open(series.path)) == (first, 1)
    result = GameResult("pasur", NAMES, (20, 3, 1), 0)
    series.finish(result)
    first.replace(done_path(first))  # over: the table waits between games
    again = Series.open(series.path)
    assert again.between and again.finished() == [result]
    assert where(first, again) == (done_path(first), 1)
    again.begin(NEXT)  # game 2 recorded, but its journal never made: wait after game 1
    assert where(first, Series.open(series.path)) == (done_path(first), 1)
    journal_path(first, 2).write_bytes(b"")
    assert where(first, Series.open(series.path)) == (journal_path(first, 2), 2)
    assert Series.open(series.path).tables == [TABLE, NEXT]
    again.end("ben left")  # a series that ended: the same command makes a new table
    assert Series.open(series.path).number == 0
    series.path.write_text("{not json")
    with pytest.raises(ValueError, match="does not read"):
        Series.open(series.path)


def test_a_peer_that_comes_back_takes_the_proposal_that_stands() -> None:
    """The host sends a returning peer the words of the current round, the proposer's
    first: a fresh agreement takes them whatever the round, and ends up where the
    others are; a round past the last is refused."""
    table = Agreement(roster())
    table.take(word(table, 0))
    table.take(word(table, 1, "nullern"))  # round 2
    table.take(word(table, 0))  # ana agrees to it
    back = Agreement(roster())
    assert [back.take(f) for f in table.frames()] == ["proposal", "consent"]
    assert (back.round, back.proposal, back.complete) == (2, table.proposal, True)
    with pytest.raises(FrameError, match=f"past the last \\({MAX_ROUNDS}\\)"):
        Agreement(roster()).take(sign(key("ben"), TABLE, 1, round=MAX_ROUNDS + 1,
                                      game="pasur", options={}))
