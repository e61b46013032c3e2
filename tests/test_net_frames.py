"""The frames of a link: each kind written exactly as peers have always written it
(the same msgpack maps, the same keys in the same order, the same bytes), read back
to the same frame, and a wrong field named with its frame."""

from __future__ import annotations

import hashlib
import tracemalloc
import typing
from typing import Any

import msgpack
import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.net import links
from p2pcards.net.frames import (
    HEADER,
    MAX_FRAME,
    SPECS,
    Auth,
    BotClaim,
    ChatLine,
    Error,
    Frame,
    FrameError,
    FrameKind,
    HelloFrame,
    LobbyChat,
    LobbyFrame,
    LobbySeat,
    Msg,
    Notice,
    Start,
    Welcome,
    from_map,
    kind_of,
    pack,
    to_map,
    unpack,
    unpack_map,
)
from p2pcards.net.identity import device_id
from p2pcards.net.lobby import Lobby
from p2pcards.net.settings import Settings
from p2pcards.table.roster import make_roster


def key(name: str) -> Ed25519PrivateKey:
    return Ed25519PrivateKey.from_private_bytes(hashlib.sha256(name.encode()).digest())


def public(name: str) -> bytes:
    return key(name).public_key().public_bytes_raw()


def as_sent_before(raw: dict[str, Any]) -> bytes:
    """A map as a link has always written it: the length, then msgpack."""
    body: bytes = msgpack.packb(raw, use_bin_type=True)
    return HEADER.pack(len(body)) + body


ROSTER = make_roster(b"T" * 16, "pasur", [public("a"), public("b")], names=["ann", "bob"],
                     options={"target": 20})
SETTINGS = Settings(grace=60.0, timer=0.5, hint=True)
"""(Settings as the command line makes them: read back, an integer grace is a float.)"""

# (the frame as this module builds it, the map as the host and joiner built it before)
CASES: list[tuple[Frame, dict[str, Any]]] = [
    (HelloFrame(), {"t": "hello", "proto": "p2pcards", "versions": [2, 8]}),
    (HelloFrame(nonce=b"n" * 32, game="pasur", name="hosty", free=1),
     {"t": "hello", "proto": "p2pcards", "versions": [2, 8], "nonce": b"n" * 32,
      "game": "pasur", "name": "hosty", "free": 1}),
    (Auth(key=public("j"), name="joe", token=b"t" * 16, bot="heuristic", sig=b"s" * 64,
          bots=(BotClaim(kind="ismcts", key=public("b1"), sig=b"p" * 64),)),
     {"t": "auth", "key": public("j"), "name": "joe", "token": b"t" * 16, "bot": "heuristic",
      "sig": b"s" * 64, "bots": [["ismcts", public("b1"), b"p" * 64]]}),
    (Auth(key=public("j"), name="joe", token=b"t" * 16, bot="", sig=b"s" * 64),
     {"t": "auth", "key": public("j"), "name": "joe", "token": b"t" * 16, "bot": "",
      "sig": b"s" * 64, "bots": []}),
    (Welcome(seat=2, resume=False), {"t": "welcome", "seat": 2, "resume": False}),
    (Welcome(seat=1, resume=True), {"t": "welcome", "seat": 1, "resume": True}),
    (LobbyFrame(players=4, seats=(
        LobbySeat(name="hosty", id=device_id(public("h")), bot="heuristic", run_by=0),
        LobbySeat(name="joe", id=device_id(public("j")), bot="", run_by=None))),
     {"t": "lobby", "players": 4, "seats": [["hosty", device_id(public("h")), "heuristic", 0],
                                            ["joe", device_id(public("j")), "", None]]}),
    (Start(roster=ROSTER, settings=SETTINGS),
     {"t": "start", "roster": ROSTER.encode(), "settings": SETTINGS.to_wire()}),
    (Msg(wire=b"w" * 300), {"t": "msg", "wire": b"w" * 300}),
    (ChatLine(seat=1, n=1_700_000_000_000_000_000, text="hi", sig=b"s" * 64),
     {"t": "chat", "seat": 1, "n": 1_700_000_000_000_000_000, "text": "hi",
      "sig": b"s" * 64}),
    (Notice(text="joe (ABCD-EFGH-IJKL-MNOP) sits at seat 1"),
     {"t": "notice", "text": "joe (ABCD-EFGH-IJKL-MNOP) sits at seat 1"}),
    (LobbyChat(text="hi"), {"t": "lchat", "text": "hi"}),
    (LobbyChat(text="hi", name="joe", id=b"i" * 32),
     {"t": "lchat", "text": "hi", "name": "joe", "id": b"i" * 32}),
    (Error(reason="not invited: the token is not this table's"),
     {"t": "error", "reason": "not invited: the token is not this table's"}),
]


@pytest.mark.parametrize(("frame", "before"), CASES, ids=[f"{kind_of(f)}-{i}"
                                                           for i, (f, _) in enumerate(CASES)])
def test_frames_are_the_bytes_peers_have_always_sent(frame: Frame, before: dict[str, Any]
                                                     ) -> None:
    data = as_sent_before(before)
    assert pack(frame) == data
    assert unpack(data[HEADER.size:]) == frame  # read back to the same frame
    assert pack(from_map(unpack_map(data[HEADER.size:]))) == data


def test_a_few_frames_byte_for_byte() -> None:
    """Pinned bytes (as the link wrote them before frames were dataclasses; the hello
    as version 1 wrote it, but for the versions: [2, 8])."""
    assert pack(HelloFrame()).hex() == ("0000002483a174a568656c6c6fa570726f746fa870327063617264"
                                   "73a876657273696f6e73920208")
    assert pack(Welcome(seat=1, resume=False)).hex() == \
        "0000001983a174a777656c636f6d65a47365617401a6726573756d65c2"
    assert pack(Msg(wire=b"\x01\x02")).hex() == "0000001082a174a36d7367a477697265c4020102"


def test_what_the_node_builds_is_what_it_built_before() -> None:
    """The lobby's seats and a chat line, from the objects that make them."""
    lobby = Lobby(b"T" * 16, "pasur", {}, 4, host_id=device_id(public("h")), token=b"t" * 16)
    lobby.sit("hosty", public("h"), "heuristic")
    lobby.add_bot("ismcts", public("b1"))
    assert pack(lobby.frame()) == as_sent_before(
        {"t": "lobby", "players": 4,
         "seats": [[e.name, device_id(e.identity), e.bot, e.run_by] for e in lobby.entries]})
    whole = Settings(grace=60)  # as the tests make them
    assert pack(Start(roster=ROSTER, settings=whole)) == as_sent_before(
        {"t": "start", "roster": ROSTER.encode(), "settings": whole.to_wire()})
    line = links.Chat().frame(key("a"), b"T" * 16, 0, "x" * 300)
    assert pack(line) == as_sent_before({"t": "chat", "seat": 0, "n": line.n,
                                         "text": "x" * 200, "sig": line.sig})


def test_one_table_covers_every_kind() -> None:
    assert set(SPECS) == set(FrameKind)
    assert {spec.cls for spec in SPECS.values()} == set(typing.get_args(Frame))
    for spec in SPECS.values():  # the table's fields are the dataclass's, in wire order
        assert [f.name for f in spec.fields] == list(spec.cls.__dataclass_fields__)


def auth(**changes: Any) -> dict[str, Any]:
    return {"t": "auth", "key": public("j"), "name": "joe", "token": b"t" * 16, "bot": "",
            "sig": b"s" * 64, "bots": [], **changes}


BAD: list[tuple[dict[str, Any], str]] = [
    (auth(key=b"k" * 31), "auth.key must be 32 bytes"),
    (auth(name="n" * 33), "auth.name must be text of at most 32 characters"),
    (auth(token=b"t" * 17), "auth.token must be 16 bytes"),
    (auth(bot=7), "auth.bot must be text"),
    (auth(bots=[["ismcts", public("b"), b"s" * 63]]), "auth.bots[0].sig must be 64 bytes"),
    (auth(bots=[["ismcts", public("b")]]), "auth.bots[0] must be [kind, key, sig]"),
    (auth(bots=[[]] * 9), "auth.bots must be an array of at most 8 items"),
    ({k: v for k, v in auth().items() if k != "sig"}, "auth: the field 'sig' is missing"),
    ({"t": "hello", "proto": "p2pcards", "versions": [1]},
     "hello.versions must be [lowest, highest]"),
    ({"t": "hello", "proto": "p2pcards", "versions": [1, 1], "nonce": b"n"},
     "hello.nonce must be 32 bytes"),
    ({"t": "welcome", "seat": True}, "welcome.seat must be an integer"),
    ({"t": "welcome", "seat": 1, "resume": 1}, "welcome.resume must be true or false"),
    ({"t": "lobby", "players": 2, "seats": [["a", b"short", "", None]]},
     "lobby.seats[0].id must be 32 bytes"),
    ({"t": "lobby", "players": 2, "seats": [["a", b"i" * 32, "", -1]]},
     "lobby.seats[0].run_by must be an integer from 0 to 7"),
    ({"t": "start", "roster": b"junk", "settings": SETTINGS.to_wire()}, "start.roster: "),
    ({"t": "start", "roster": ROSTER.encode(), "settings": {"grace": -1}},
     "start.settings: table settings"),
    ({"t": "msg", "wire": "text"}, "msg.wire must be a byte string"),
    ({"t": "chat", "seat": 0, "n": 0, "text": "hi", "sig": b"s" * 64},
     "chat.n must be an integer from 1"),
    ({"t": "chat", "seat": 0, "n": 1, "text": "x" * 201, "sig": b"s" * 64},
     "chat.text must be text of at most 200 characters"),
    ({"t": "notice", "text": b"bytes"}, "notice.text must be text"),
    ({"t": "error"}, "error: the field 'reason' is missing"),
    ({"t": "gossip"}, "a 'gossip' frame is not expected"),
]


@pytest.mark.parametrize(("raw", "reason"), BAD, ids=[f"{r['t']}-{i}"
                                                      for i, (r, _) in enumerate(BAD)])
def test_a_wrong_field_is_named_with_its_frame(raw: dict[str, Any], reason: str) -> None:
    with pytest.raises(FrameError) as caught:
        from_map(raw)
    assert reason in str(caught.value)
    known = raw["t"] in set(FrameKind)
    assert caught.value.kind == (raw["t"] if known else None)


def test_fields_a_kind_does_not_declare_are_ignored_and_defaults_fill_in() -> None:
    assert from_map({"t": "msg", "wire": b"x", "later": [1, 2]}) == Msg(wire=b"x")
    assert from_map({"t": "welcome", "seat": 3}) == Welcome(seat=3, resume=False)
    assert to_map(HelloFrame()) == {"t": "hello", "proto": "p2pcards", "versions": [2, 8]}
    with pytest.raises(FrameError, match="cap"):
        pack(Msg(wire=b"x" * (MAX_FRAME + 1)))


def test_the_hello_names_what_does_not_match() -> None:
    assert links.negotiate(HelloFrame()) == 8
    assert links.negotiate(HelloFrame(versions=(0, 9))) == 8
    assert links.negotiate(HelloFrame(versions=(2, 2))) == 2  # a peer of the lock deck alone
    assert links.negotiate(HelloFrame(versions=(2, 3))) == 3  # a peer without watchers
    assert links.negotiate(HelloFrame(versions=(2, 4))) == 4  # without the pipelined rule
    assert links.negotiate(HelloFrame(versions=(2, 5))) == 5  # without shuffle ahead
    assert links.negotiate(HelloFrame(versions=(2, 6))) == 6  # without shares on agreeing
    assert links.negotiate(HelloFrame(versions=(2, 7))) == 7  # without lobby chat
    with pytest.raises(FrameError, match="expected hello first, got 'auth'"):
        links.negotiate(from_map(auth()))
    with pytest.raises(FrameError, match=r"not a p2pcards peer \(protocol 'other'\)"):
        links.negotiate(HelloFrame(proto="other"))
    with pytest.raises(FrameError, match="speaks 2 to 8, the other 9 to 10"):
        links.negotiate(HelloFrame(versions=(9, 10)))
    with pytest.raises(FrameError, match="speaks 2 to 8, the other 1 to 1"):
        links.negotiate(HelloFrame(versions=(1, 1)))  # a peer of the first claim rule


W = "\U0001F600"  # (four bytes in UTF-8)


def largest_honest() -> list[Frame]:
    """Each kind of frame at the most an honest peer puts in it: names of 32 characters
    and texts of 200, of four bytes each, every list at its longest, the largest table
    message of the games (a Nullern shuffle of the proved deck, 18,798 bytes)."""
    from p2pcards.net import frames as f  # noqa: PLC0415

    name, bot = W * f.MAX_NAME, "b" * f.MAX_BOT_KIND
    roster = make_roster(b"t" * 16, "nullern", [bytes([s + 1]) * 32 for s in range(7)],
                         names=[name] * 7, bots=[""] + [bot] * 6, deck="proved-pipelined")
    return [
        HelloFrame(nonce=b"n" * 32, game="controlnut", name=name, free=8),
        Auth(key=b"k" * 32, name=name, token=b"t" * 16, bot=bot, sig=b"s" * 64,
             bots=tuple(BotClaim(kind=bot, key=b"k" * 32, sig=b"s" * 64) for _ in range(8)),
             watch=False),
        Welcome(seat=7, resume=True),
        LobbyFrame(players=8, seats=tuple(LobbySeat(name=name, id=b"i" * 32, bot=bot, run_by=7)
                                          for _ in range(8))),
        Start(roster=roster, settings=Settings(86400.0, 86400.0, True, bot)),
        Msg(wire=b"w" * 18_798),
        ChatLine(seat=7, n=2**40, text=W * f.MAX_CHAT, sig=b"s" * 64),
        Notice(text=W * f.MAX_NOTICE),
        f.Again(table=b"t" * 16, seat=7, round=f.MAX_ROUND - 1, game="controlnut",
                options=tuple((f"{'o' * 15}{i}", -(2**62)) for i in range(3)), sig=b"s" * 64),
        f.End(reason=W * f.MAX_NOTICE),
        Error(reason=W * 5000),  # (cut to MAX_REASON characters when sent)
        f.Watching(chat=True, most=16),
        f.WatchersFrame(watchers=tuple(f.WatcherSeen(name=name, id=b"i" * 32)
                                       for _ in range(16))),
        f.WatchChat(text=W * f.MAX_CHAT, name=name),
        f.LobbyChat(text=W * f.MAX_CHAT, name=name, id=b"i" * f.ID_BYTES),
    ]


def test_each_kind_s_cap_is_about_twice_its_largest_honest_frame() -> None:
    """docs/networking.md ("Frames") gives the figures; a ``msg``'s cap is that of the
    largest table message with its framing."""
    frames = largest_honest()
    assert {kind_of(frame) for frame in frames} == {kind.value for kind in FrameKind}
    for frame in frames:
        size = len(pack(frame)) - HEADER.size
        cap = SPECS[FrameKind(kind_of(frame))].most
        assert 1.8 * size < cap <= 5 * size, kind_of(frame)
    assert SPECS[FrameKind.MSG].most == MAX_FRAME


@pytest.mark.parametrize("kind", sorted(FrameKind))
def test_a_frame_over_the_cap_of_its_kind_is_refused_naming_it(kind: FrameKind) -> None:
    cap = SPECS[kind].most
    body = msgpack.packb({"t": kind.value, "pad": b"x" * (cap - 10)})
    assert cap < len(body) < cap + 10
    with pytest.raises(FrameError, match=f"a '{kind.value}' frame of {len(body)} bytes is"
                                         f" over the {cap}-byte cap of its kind") as caught:
        unpack(body)
    assert caught.value.kind == kind.value


def test_a_frame_over_the_cap_of_its_kind_is_not_sent() -> None:
    with pytest.raises(FrameError, match=r"a 'notice' frame of \d+ bytes is over the 2048-byte"
                                         " cap of its kind"):
        pack(Notice(text="x" * 3000))
    with pytest.raises(FrameError, match="cap"):
        pack(Msg(wire=b"x" * MAX_FRAME))


def test_what_a_frame_may_not_hold_is_not_decoded() -> None:
    """A field a kind does not declare is skipped unread, and an array where a kind
    declares a single value is refused unread: a ``msg`` frame at its cap of empty arrays
    decoded whole (as before) took tens of bytes of memory for each byte; now neither
    costs more than a copy or two of the frame."""
    arrays = b"\xdd" + (MAX_FRAME // 2).to_bytes(4, "big") + b"\x90" * (MAX_FRAME // 2)
    extra = b"\x83" + msgpack.packb("t") + msgpack.packb("msg") + msgpack.packb("wire") \
        + msgpack.packb(b"w") + msgpack.packb("junk") + arrays
    in_place = b"\x82" + msgpack.packb("t") + msgpack.packb("msg") + msgpack.packb("wire") \
        + arrays
    tracemalloc.start()
    try:
        msgpack.unpackb(extra)  # whole, as it was read before
        _, whole = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        assert unpack(extra) == Msg(wire=b"w")
        with pytest.raises(FrameError, match=r"msg\.wire must be a byte string"):
            unpack(in_place)
        _, read = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert whole > 20 * len(extra)
    assert read < 3 * len(extra)  # (the reader's copies of the frame, and no more)
