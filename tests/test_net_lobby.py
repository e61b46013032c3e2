"""The host's lobby on its own (no Trio, no sockets): admission, seat numbering,
leaving, the roster, and coming back once the game has begun."""

from __future__ import annotations

import hashlib
from typing import NamedTuple

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.net.frames import VERSIONS, Auth, BotClaim, FrameError, LobbyFrame, LobbySeat
from p2pcards.net.identity import device_id
from p2pcards.net.invite import proof
from p2pcards.net.links import RULE_VERSIONS
from p2pcards.net.lobby import BOT_PROOF, Lobby, Rejoin, Request, describe_roster, seats_of
from p2pcards.table.roster import (
    AGREED_DECK,
    AHEAD_DECK,
    LOCK_DECK,
    PIPELINED_DECK,
    PROVED_DECK,
    SeatEntry,
    decode_roster,
)

TOKEN = b"t" * 16
NONCE = b"n" * 32
TABLE = b"T" * 16


def key(name: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(name.encode()).digest())


def public(name: str) -> bytes:
    return key(name).public_key().public_bytes_raw()


HOST_ID = device_id(public("host"))


def lobby(players: int = 4, host_bots: int = 0, own_bot: str = "heuristic") -> Lobby:
    room = Lobby(TABLE, "pasur", {"target": 20}, players, host_id=HOST_ID, token=TOKEN)
    room.sit("hosty", public("host"), own_bot)
    for i in range(host_bots):
        room.add_bot("heuristic", public(f"host-bot{i}"))
    return room


class BotSpec(NamedTuple):
    """The bots a test joiner brings: their kind, the token their proof signs, and the
    name their key is made from (None: one per bot, from the joiner's name)."""

    kind: str = "ismcts"
    proof: bytes = BOT_PROOF
    key: str | None = None


SOME_BOTS = BotSpec()


def auth(name: str, bots: int = 0, *, own_bot: str = "", token: bytes = TOKEN,
         nonce: bytes = NONCE, bot: BotSpec = SOME_BOTS, display: str | None = None) -> Auth:
    claims = tuple(
        BotClaim(kind=bot.kind, key=public(bot.key or f"{name}-bot{i}"),
                 sig=proof(key(bot.key or f"{name}-bot{i}"), nonce, HOST_ID, bot.proof))
        for i in range(bots))
    return Auth(key=public(name), name=name if display is None else display, token=token,
                bot=own_bot, sig=proof(key(name), nonce, HOST_ID, token), bots=claims)


def seated(room: Lobby, name: str, bots: int = 0, version: int = VERSIONS[1]) -> frozenset[int]:
    """Seats ``name`` (and ``bots``), its link speaking ``version``."""
    request = room.admit(auth(name, bots), NONCE)
    assert isinstance(request, Request)
    return room.take(request, version)


def test_the_host_sits_first_with_its_bots() -> None:
    room = lobby(players=4, host_bots=2)
    assert [(e.name, e.bot, e.run_by) for e in room.entries] == [
        ("hosty", "heuristic", 0), ("ben", "heuristic", 0), ("cy", "heuristic", 0)]
    assert room.free == 1 and not room.closed
    assert room.seats(public("host")) == {0, 1, 2}
    assert lobby(own_bot="").entries[0] == SeatEntry("hosty", public("host"), "", None)


def test_a_joiner_asks_then_takes_its_seats() -> None:
    room = lobby(players=4)
    request = room.admit(auth("joe", bots=1, own_bot="random"), NONCE)
    assert isinstance(request, Request)
    assert request.seat == 1 and room.free == 3  # asked for, not yet taken
    assert room.take(request) == {1, 2}
    assert [(e.name, e.bot, e.run_by) for e in room.entries[1:]] == [
        ("joe", "random", 1), ("ben", "ismcts", 1)]
    assert room.seats(public("joe")) == {1, 2} and room.free == 1
    assert room.joined == {public("joe"): "joe"}
    assert room.frame() == LobbyFrame(players=4, seats=(
        LobbySeat(name="hosty", id=HOST_ID, bot="heuristic", run_by=0),
        LobbySeat(name="joe", id=device_id(public("joe")), bot="random", run_by=1),
        LobbySeat(name="ben", id=device_id(public("joe-bot0")), bot="ismcts",
                  run_by=1)))


def test_seats_are_numbered_when_taken() -> None:
    """Two joiners in the handshake at once: both asked when seat 1 was free."""
    room = lobby(players=4)
    joe, ann = room.admit(auth("joe", bots=1), NONCE), room.admit(auth("ann"), NONCE)
    assert isinstance(joe, Request) and isinstance(ann, Request)
    assert joe.seat == ann.seat == 1
    assert room.take(ann) == {1}
    assert room.take(joe) == {2, 3}
    assert [(e.name, e.run_by) for e in room.entries] == [
        ("hosty", 0), ("ann", None), ("joe", None), ("ben", 2)]


REFUSED = [
    (auth("joe", display=""), "a name of 1 to 32 printable characters"),
    (auth("joe", display="jo\x1be"), "a name of 1 to 32 printable characters"),
    (auth("joe", token=b"x" * 16), "not invited"),
    (auth("joe", nonce=b"m" * 32), "the proof of identity does not verify"),
    (auth("joe", own_bot="x\n"), "unknown bot 'x\\n'"),
    (auth("joe", bots=1, bot=BotSpec(kind="oracle")), "auth: bot 0 must be [kind, 32-byte key"),
    (auth("joe", bots=1, bot=BotSpec(proof=TOKEN)), "auth: bot 0's key is not proven"),
    (auth("joe", bots=3), "the table is full (3 seats free, 4 asked for)"),
    (auth("joe", bots=1, bot=BotSpec(key="host")), "an identity already at the table"),
    (auth("joe", bots=2, bot=BotSpec(key="twin")), "an identity already at the table"),
]


@pytest.mark.parametrize(("request_", "reason"), REFUSED,
                         ids=[str(i) for i in range(len(REFUSED))])
def test_what_the_lobby_refuses(request_: Auth, reason: str) -> None:
    room = lobby(players=4)
    before = list(room.entries)
    with pytest.raises(FrameError) as caught:
        room.admit(request_, NONCE)
    assert reason in str(caught.value)
    assert room.entries == before


def test_an_identity_sits_once() -> None:
    room = lobby(players=4)
    seated(room, "joe")
    with pytest.raises(FrameError, match="this identity is already at the table"):
        room.admit(auth("joe"), NONCE)
    with pytest.raises(FrameError, match="an identity already at the table"):
        room.admit(auth("ann", bots=1, bot=BotSpec(key="joe")), NONCE)


def test_a_request_is_checked_again_when_taken() -> None:
    room = lobby(players=3)
    joe, ann = room.admit(auth("joe", bots=1), NONCE), room.admit(auth("ann"), NONCE)
    assert isinstance(joe, Request) and isinstance(ann, Request)
    room.take(ann)
    with pytest.raises(FrameError, match=r"the table filled up \(1 seats free\)"):
        room.take(joe)  # others sat meanwhile
    room = lobby(players=4)
    first, again = room.admit(auth("joe"), NONCE), room.admit(auth("joe"), NONCE)
    assert isinstance(first, Request) and isinstance(again, Request)
    room.take(first)
    with pytest.raises(FrameError, match="an identity already at the table"):
        room.take(again)  # the same identity sat during its welcome
    assert len(room.entries) == 2


def test_a_joiner_who_leaves_frees_its_seats_and_the_rest_move_up() -> None:
    room = lobby(players=7, host_bots=1)
    assert seated(room, "joe", bots=2) == {2, 3, 4}
    own = room.admit(auth("ann", bots=1, own_bot="random"), NONCE)
    assert isinstance(own, Request)
    assert room.take(own) == {5, 6}
    assert room.free == 0
    assert room.leave(public("joe"))
    assert [(e.name, e.bot, e.run_by) for e in room.entries] == [
        ("hosty", "heuristic", 0), ("ben", "heuristic", 0), ("ann", "random", 2),
        ("eve", "ismcts", 2)]
    assert room.seats(public("ann")) == {2, 3} and room.seats(public("joe")) == set()
    assert not room.leave(public("joe"))  # once
    assert not room.leave(public("host"))  # the host is not a joiner
    assert seated(room, "joe") == {4}  # it may come back


def test_the_roster_once_every_seat_is_taken() -> None:
    room = lobby(players=3, host_bots=1)
    seated(room, "joe")
    assert room.free == 0
    roster = room.close()
    assert room.closed and roster.table == TABLE and roster.game == "pasur"
    assert dict(roster.options) == {"target": 20}  # the values that differ from the defaults
    assert list(roster.seats) == room.entries
    assert describe_roster(roster).startswith("0 hosty (heuristic bot run by seat 0); 1 ben (heur")
    assert not room.leave(public("joe"))  # the seats are the roster's now


def test_the_roster_names_the_table_s_deck_the_proved_one_unless_told() -> None:
    """The host's ``--deck`` goes into the roster every seat signs (a joiner learns it
    there); a host restarted from its journal keeps the roster's deck.  The proved
    deck's latest rule every joiner's link knows: shares on the agreement at version 7,
    shuffle ahead at 6, pipelined shuffles at 5, else plain ``proved``: a joiner of
    version 4, with a bot of its own, makes it so, until it leaves."""
    room = lobby(players=2)
    seated(room, "joe")
    assert room.close().deck == AGREED_DECK
    assert Lobby.resumed(room.close(), HOST_ID, TOKEN).close().deck == AGREED_DECK
    six = lobby(players=3)
    seated(six, "new")
    seated(six, "six", version=6)
    assert six.known() == {PIPELINED_DECK, AHEAD_DECK} and six.close().deck == AHEAD_DECK
    five = lobby(players=3)
    seated(five, "new")
    seated(five, "five", version=5)
    assert five.known() == {PIPELINED_DECK} and five.close().deck == PIPELINED_DECK
    mixed = lobby(players=4)
    seated(mixed, "ann")
    seated(mixed, "old", bots=1, version=4)
    assert not mixed.known()
    assert mixed.leave(public("old")) and mixed.known() == set(RULE_VERSIONS)
    seated(mixed, "old", bots=1, version=4)
    roster = mixed.close()
    assert roster.deck == PROVED_DECK and decode_roster(roster.encode()).deck == PROVED_DECK
    assert Lobby.resumed(roster, HOST_ID, TOKEN).deck == PROVED_DECK
    today = Lobby(TABLE, "pasur", {}, 2, host_id=HOST_ID, token=TOKEN, deck=LOCK_DECK)
    today.sit("hosty", public("host"), "heuristic")
    seated(today, "joe")
    roster = today.close()
    assert roster.deck == LOCK_DECK and decode_roster(roster.encode()).deck == LOCK_DECK
    assert Lobby.resumed(roster, HOST_ID, TOKEN).deck == LOCK_DECK


def test_after_the_start_only_the_seated_come_back() -> None:
    room = lobby(players=4)
    seated(room, "joe", bots=1)
    request = room.admit(auth("ann"), NONCE)
    assert isinstance(request, Request)
    room.take(request)
    roster = room.close()
    assert room.admit(auth("joe"), NONCE) == Rejoin(public("joe"), "joe", 1,
                                                    frozenset({1, 2}))
    with pytest.raises(FrameError, match=r"the game has begun, and this install \(its"
                       r" identity\) has no seat at it: join --watch to watch it"):
        room.admit(auth("bob"), NONCE)
    with pytest.raises(FrameError, match="the table filled up"):
        room.take(request)
    with pytest.raises(FrameError, match="not invited"):  # the token still counts
        room.admit(auth("joe", token=b"x" * 16), NONCE)
    resumed = Lobby.resumed(roster, HOST_ID, TOKEN)  # a host restarted from its journal
    assert resumed.closed and resumed.free == 0
    assert resumed.admit(auth("ann"), NONCE) == Rejoin(public("ann"), "ann", 3,
                                                       frozenset({3}))


def test_seats_of_a_peer_are_its_own_and_its_bots() -> None:
    entries = [SeatEntry("h", b"h" * 32, "heuristic", 0), SeatEntry("b", b"b" * 32, "x", 0),
               SeatEntry("j", b"j" * 32), SeatEntry("c", b"c" * 32, "x", 2)]
    assert seats_of(entries, b"h" * 32) == {0, 1}
    assert seats_of(entries, b"j" * 32) == {2, 3}
    assert seats_of(entries, b"c" * 32) == {3}
    assert seats_of(entries, b"?" * 32) == set()



@pytest.mark.parametrize("second", ["ana", "Ana", "ANA", " ana", "ａｎａ"])
def test_a_name_already_seated_is_refused(second: str) -> None:
    """Two seats called alike could pass one for the other in every line the table
    prints: the second "ana" (in any case or width) is told to pick another."""
    room = lobby()
    room.take(room.admit(auth("ana"), NONCE))
    with pytest.raises(FrameError, match=r"is taken \(seat 1\)"):
        room.admit(auth("joe", display=second), NONCE)
    room.take(room.admit(auth("joe", display="ann"), NONCE))  # a different name is fine


def test_two_joiners_of_one_name_arriving_together_get_one_seat() -> None:
    room = lobby()
    first = room.admit(auth("ana"), NONCE)
    second = room.admit(auth("joe", display="ana"), NONCE)  # both checked before either sat
    room.take(first)
    with pytest.raises(FrameError, match="is taken"):
        room.take(second)
    assert [e.name for e in room.entries].count("ana") == 1


def test_without_the_check_two_seats_are_called_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack, against the lobby as it was: nothing stopped a second "ana"."""
    monkeypatch.setattr(Lobby, "_check_name", lambda self, name: None)
    room = lobby()
    room.take(room.admit(auth("ana"), NONCE))
    room.take(room.admit(auth("joe", display="ana"), NONCE))
    assert [e.name for e in room.entries].count("ana") == 2
