"""Every frame of a link: a frozen dataclass per kind, read and written by one table.

On the wire a frame is a big-endian u32 length, then one msgpack map whose
``t`` names its kind (docs/networking.md lists them):

==========  =========  ====================================================
``hello``   both       ``proto``, ``versions`` [lowest, highest]; the host's
                       adds ``nonce``, ``game``, ``name``, ``free`` (seats)
``auth``    joiner     ``key`` (Ed25519), ``name``, ``token``, ``bot`` (the
                       bot playing its own seat, or ""), ``sig`` (the proof,
                       :mod:`p2pcards.net.invite`), ``bots`` [[kind, key,
                       sig], ...] for bots the joiner runs
``welcome`` host       ``seat``: the joiner's seat; ``resume``
``lobby``   host       ``players``, ``seats`` [[name, id, bot, run_by], ...]
``start``   host       ``roster`` (bytes), ``settings``; to a watcher that
                       comes in, ``match`` [game, [[game, totals, winner],
                       ...]]: the match so far (optional)
``msg``     both       ``wire``: one table message (relayed by the host)
``chat``    both       ``seat``, ``n`` (rising), ``text``, ``sig`` (the seat's)
``notice``  host       ``text``: a join or a leave
``again``   both       ``table``, ``seat``, ``round``, ``game``, ``options``,
                       ``sig``: a peer's signed word once a game is over
                       (another game, or none: :mod:`p2pcards.net.again`)
``end``     host       ``reason``: no more games at this table
``error``   both       ``reason``, then the link closes
``watching`` host      to a watcher, in place of ``welcome``: ``chat`` (may it
                       say anything), ``most`` (the host's limit of watchers)
``watchers`` host      ``watchers`` [[name, id], ...]: who watches now (to
                       every link that speaks version 4)
``wchat``   both       a watcher's chat line: ``text`` from the watcher; the
                       host relays it with the watcher's ``name``
``lchat``   both       a chat line in the lobby (version 8): ``text`` from the
                       joiner; the host relays it with its sayer's ``name``
                       and ``id`` (device id), to links of version 8
==========  =========  ====================================================

A watcher's ``auth`` carries ``watch`` true (version 4: docs/networking.md,
"Watching"); a host below 4 never sees one: the watcher asks for 4.

:data:`SPECS` is the one table: for each kind its dataclass, its cap in bytes
(about twice its largest honest frame) and its fields in wire order, each with
how it is read (type, length, range) and written.  Reading checks the length
against :data:`MAX_FRAME` before anything else, finds ``t`` without decoding
anything else, checks the length against the cap of that kind, then decodes
strictly (no extension types, string keys, no trailing bytes) every field the
kind declares and nothing more; a fault is a :class:`FrameError` naming the
frame and the field (``auth.key must be 32 bytes``).  Fields a kind does not
declare are skipped unread (a newer peer may add some), and a field with a
default may be absent.  Writing puts ``t`` first and the fields in
the table's order, leaving out optional fields that are None: the same bytes
as ever, for every peer that speaks this protocol.

Nothing here does I/O: :class:`p2pcards.net.wire.Link` carries frames over a
stream.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, cast

import msgpack

from p2pcards.net.identity import ID_BYTES
from p2pcards.net.invite import TOKEN_BYTES
from p2pcards.net.settings import Settings
from p2pcards.table.codec import (
    KEY_BYTES,
    MAX_MESSAGE,
    SIGNATURE_BYTES,
    TABLE_BYTES,
    CodecError,
)
from p2pcards.table.roster import MAX_NAME, MAX_ROSTER, Roster, decode_roster

PROTOCOL = "p2pcards"
VERSIONS = (2, 8)
"""The link protocol versions this node speaks (lowest, highest).  1: the first.
2: claims of silence count only the seats of the other peers (docs/protocol.md,
"Claims of silence"), so that the two rules never meet at one table.  3: the node
knows the proved deck (a roster may name it); a table of the proved deck admits only
links of version 3 or above, a table of the lock deck links of 2 and above.  4: watchers
(``auth.watch`` and the frames ``watching``, ``watchers`` and ``wchat``); a link below 4
is never sent those frames, and a watcher does not watch at a host below 4.  5: the node
knows the proved deck's pipelined rule (a roster may name ``proved-pipelined``: a shuffle's
proof checked by the end of its round, docs/protocol.md "Pipelined shuffles"); a host
names it only when every seat's peer speaks 5 or above (else plain ``proved``: each
proof checked on arrival), and a table whose roster names it admits only links of 5.
6: the node knows the proved deck's shuffle-ahead rule (a roster may name
``proved-ahead``: the next deal's deck keyed and shuffled on this deal's moves, each a
``pmove``, docs/protocol.md "Shuffle ahead"); a host names it only when every seat's
peer speaks 6, and a table whose roster names it admits only links of 6.  7: the node
knows the shuffle-ahead rule that sends the next deal's shares on this deal's agreement
(a roster may name ``proved-ahead-2``: each signer's ``pagree`` but the first carries
them, and no ``opened`` reports, docs/protocol.md "Shares on the agreement"); a host
names it only when every seat's peer speaks 7, and a table whose roster names it admits
only links of 7.  8: chat in the lobby (the frame ``lchat``, before every seat is taken,
relayed by the host in its own word); a link below 8 is never sent one (it hears the
line in a ``notice``), and a joiner at a host below 8 holds its lines until the game."""
PROVED_VERSION = 3
"""The lowest link version whose peers know the proved deck."""
WATCH_VERSION = 4
"""The first version with watchers."""
PIPELINED_VERSION = 5
"""The lowest link version whose peers know the proved deck's pipelined rule."""
AHEAD_VERSION = 6
"""The lowest link version whose peers know the proved deck's shuffle-ahead rule."""
AGREED_VERSION = 7
"""The lowest link version whose peers know the shuffle-ahead rule with the next deal's
shares sent on the agreement."""
LOBBY_CHAT_VERSION = 8
"""The first version with chat in the lobby (``lchat``)."""

# ------------------------------------------------------------------ the limits

HEADER = struct.Struct(">I")
NONCE_BYTES = 32
MAX_SEATS = 8
"""The most seats a lobby lists, and the most bots one joiner brings."""
MAX_BOT_KIND = 16
MAX_GAME = 32
MAX_CHAT = 200
"""Characters in a chat line."""
MAX_NOTICE = 200
MAX_REASON = 1000
"""Characters of the reason an ``error`` frame gives (a longer one is cut when sent)."""
MAX_FIELDS = 32
"""Fields in one frame (a kind declares at most 7; a newer peer may add a few)."""
MAX_PROTOCOL = 32
MAX_WATCHERS = 16
"""The most watchers a host takes (host --watchers) and a ``watchers`` frame lists."""
MAX_SERIES = 1 << 16
"""Games of one series are numbered below this (a ``start``'s ``match.game``; a series
has at most 99: :data:`p2pcards.net.again.MAX_GAMES`)."""
MAX_TOLD = 99
"""The most earlier games a watcher's ``start`` tells (``match.results``); the host
tells fewer where the frame would pass the cap of its kind."""
MAX_OPTIONS = 8
"""Options a proposal of another game names (a game has three at most)."""
MAX_OPTION_NAME = 16
MAX_ROUND = 1 << 16
"""Proposals between two games are numbered below this (a peer may make few)."""
UINT_END = 1 << 63
"""Counts and numbers are below this (msgpack's signed 64 bits)."""


class FrameError(Exception):
    """A frame that cannot be taken: the link that sent it is closed with this reason.

    ``kind`` is the frame's kind when the map named a known one and a field is
    wrong (None for a fault below that: the length, the msgpack, ``t``)."""

    def __init__(self, reason: str, kind: str | None = None):
        super().__init__(reason)
        self.kind = kind


class FrameKind(StrEnum):
    HELLO = "hello"
    AUTH = "auth"
    WELCOME = "welcome"
    LOBBY = "lobby"
    START = "start"
    MSG = "msg"
    CHAT = "chat"
    NOTICE = "notice"
    AGAIN = "again"
    END = "end"
    ERROR = "error"
    WATCHING = "watching"
    WATCHERS = "watchers"
    WCHAT = "wchat"
    LCHAT = "lchat"


# ------------------------------------------------------------------ the frames


@dataclass(frozen=True, slots=True, kw_only=True)
class HelloFrame:
    """The first frame each way: the protocol and its versions.  The host's also
    carries the nonce the joiner signs, the game, its name and the free seats (None
    in a joiner's hello: not sent)."""

    proto: str = PROTOCOL
    versions: tuple[int, int] = VERSIONS
    nonce: bytes | None = None
    game: str | None = None
    name: str | None = None
    free: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BotClaim:
    """A bot a joiner runs: its kind, its key, and the key's signature of the nonce
    (nobody reserves another's key)."""

    kind: str
    key: bytes
    sig: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class Auth:
    """The joiner's answer to the host's hello: who it is, its proof of the invite,
    and the bots it brings (``bot``: the bot that plays its own seat, or "")."""

    key: bytes
    name: str
    token: bytes
    bot: str
    sig: bytes
    bots: tuple[BotClaim, ...] = ()
    watch: bool | None = None
    """True: the joiner asks to watch, with no seat (version 4; None: not sent)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Welcome:
    """The joiner is seated (``resume``: the game is under way and it comes back)."""

    seat: int
    resume: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class LobbySeat:
    """A seat taken in the lobby: name, device id, bot kind, the seat running it."""

    name: str
    id: bytes
    bot: str
    run_by: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class LobbyFrame:
    """The seats taken so far, of ``players``."""

    players: int
    seats: tuple[LobbySeat, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Told:
    """A game of the series over, as the host tells a watcher: its game, its final
    totals (per team or per seat, as the game scores) and its winner (a unit, the units
    of a shared win, or None: it did not finish).  The names are the roster's."""

    game: str
    totals: tuple[int, ...]
    winner: int | tuple[int, ...] | None


@dataclass(frozen=True, slots=True, kw_only=True)
class MatchSoFar:
    """The match so far, as the host tells a watcher that comes in: the number of the
    game its ``start`` begins (1 for the first), and how the latest games before it
    ended, oldest first (the games before those are not told: the host keeps the
    ``start`` within its cap)."""

    game: int
    results: tuple[Told, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Start:
    """Every seat is taken: the roster every seat signs, and the table settings; to a
    watcher that comes in, the match so far (``match``, optional: an older peer skips
    it; never sent to a seat)."""

    roster: Roster
    settings: Settings
    match: MatchSoFar | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Msg:
    """One signed table message (docs/protocol.md), relayed by the host."""

    wire: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatLine:
    """A chat line, signed by its seat and numbered (a line is shown once)."""

    seat: int
    n: int
    text: str
    sig: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    """A join or a leave, as the host shows it."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Again:
    """A peer's signed word once the game of ``table`` is over: it agrees to proposal
    ``round`` (another game of ``game`` with ``options``, the same seats), or, with
    ``game`` "", it leaves: no more games (docs/protocol.md, "Another game")."""

    table: bytes
    seat: int
    round: int
    game: str
    options: tuple[tuple[str, int], ...]
    """The options that differ from the game's defaults, sorted by name."""
    sig: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class End:
    """No more games at this table (someone left, or no one can ask for another):
    the links close after this."""

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Error:
    """Why the link closes (it closes after this)."""

    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Watching:
    """The host takes a watcher (in place of ``welcome``): whether it may chat, and
    the most watchers the host takes."""

    chat: bool
    most: int


@dataclass(frozen=True, slots=True, kw_only=True)
class WatcherSeen:
    """A watcher as the host lists it: its name and device id."""

    name: str
    id: bytes


@dataclass(frozen=True, slots=True, kw_only=True)
class WatchersFrame:
    """Who watches the table now (sent to every link whenever it changes)."""

    watchers: tuple[WatcherSeen, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class WatchChat:
    """A watcher's chat line: from the watcher, its ``text`` alone; relayed by the
    host with the watcher's ``name`` (unsigned: the host vouches for who said it)."""

    text: str
    name: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LobbyChat:
    """A chat line in the lobby, before every seat is taken (version 8): from a joiner,
    its ``text`` alone; relayed by the host with who said it, its ``name`` and device
    ``id`` (unsigned: no roster holds the joiners' keys yet, so the host vouches for who
    said it, as for a watcher's line)."""

    text: str
    name: str | None = None
    id: bytes | None = None


Frame = HelloFrame | Auth | Welcome | LobbyFrame | Start | Msg | ChatLine | Notice | Again | End \
    | Error | Watching | WatchersFrame | WatchChat | LobbyChat

# ------------------------------------------------------------------ field codecs

Decoder = Callable[[Any, str], Any]
"""(value, what) -> the value read; FrameError naming ``what`` if it is wrong."""
Encoder = Callable[[Any], Any]


def _same(value: Any) -> Any:
    return value


def _int(low: int = 0, end: int = UINT_END) -> Decoder:
    def decode(value: Any, what: str) -> int:
        if not isinstance(value, int) or isinstance(value, bool) or not low <= value < end:
            raise FrameError(f"{what} must be an integer from {low} to {end - 1}")
        return value
    return decode


def _text(most: int) -> Decoder:
    def decode(value: Any, what: str) -> str:
        if not isinstance(value, str) or len(value) > most:
            raise FrameError(f"{what} must be text of at most {most} characters")
        return value
    return decode


def _bytes(size: int) -> Decoder:
    def decode(value: Any, what: str) -> bytes:
        if not isinstance(value, bytes) or len(value) != size:
            raise FrameError(f"{what} must be {size} bytes")
        return value
    return decode


def _blob(most: int) -> Decoder:
    def decode(value: Any, what: str) -> bytes:
        if not isinstance(value, bytes) or len(value) > most:
            raise FrameError(f"{what} must be a byte string of at most {most} bytes")
        return value
    return decode


def _bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise FrameError(f"{what} must be true or false")
    return value


def _or_none(inner: Decoder) -> Decoder:
    def decode(value: Any, what: str) -> Any:
        return None if value is None else inner(value, what)
    return decode


def _list(inner: Decoder, most: int) -> Decoder:
    def decode(value: Any, what: str) -> tuple[Any, ...]:
        if not isinstance(value, list) or len(value) > most:
            raise FrameError(f"{what} must be an array of at most {most} items")
        return tuple(inner(item, f"{what}[{i}]") for i, item in enumerate(value))
    return decode


def _versions(value: Any, what: str) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2 or \
            not all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        raise FrameError(f"{what} must be [lowest, highest]")
    return value[0], value[1]


def _roster(value: Any, what: str) -> Roster:
    try:
        return decode_roster(_blob(MAX_ROSTER)(value, what))
    except CodecError as exc:
        raise FrameError(f"{what}: {exc}") from exc


def _options(value: Any, what: str) -> tuple[tuple[str, int], ...]:
    if not isinstance(value, dict) or len(value) > MAX_OPTIONS:
        raise FrameError(f"{what} must be a map of at most {MAX_OPTIONS} options")
    for name, number in value.items():
        if not isinstance(name, str) or not 0 < len(name) <= MAX_OPTION_NAME or \
                not isinstance(number, int) or isinstance(number, bool) or \
                not -UINT_END <= number < UINT_END:
            raise FrameError(f"{what} must map option names (1 to {MAX_OPTION_NAME}"
                             " characters) to whole numbers")
    return tuple(sorted(value.items()))


def _winner(value: Any, what: str) -> int | tuple[int, ...] | None:
    if value is None:
        return None
    if isinstance(value, list):
        units = _list(_int(0, MAX_SEATS), MAX_SEATS)(value, what)
        if not units:
            raise FrameError(f"{what} must name at least one unit, or be null")
        return cast(tuple[int, ...], units)
    return cast(int, _int(0, MAX_SEATS)(value, what))


def _totals(value: Any, what: str) -> tuple[int, ...]:
    totals = _list(_int(-UINT_END, UINT_END), MAX_SEATS)(value, what)
    if not totals:
        raise FrameError(f"{what} must hold a total per unit")
    return cast(tuple[int, ...], totals)


def _match(value: Any, what: str) -> MatchSoFar:
    if not isinstance(value, list) or len(value) != 2:
        raise FrameError(f"{what} must be [game, results]")
    game = _int(1, MAX_SERIES)(value[0], f"{what}.game")
    results = _list(_TOLD[0], MAX_TOLD)(value[1], f"{what}.results")
    if len(results) >= game:
        raise FrameError(f"{what}.results must tell at most the {game - 1} games before"
                         f" game {game}")
    return MatchSoFar(game=game, results=results)


def _match_wire(match: MatchSoFar) -> list[Any]:
    return [match.game, [_TOLD[1](told) for told in match.results]]


def _settings(value: Any, what: str) -> Settings:
    try:
        return Settings.from_wire(value)
    except ValueError as exc:
        raise FrameError(f"{what}: {exc}") from exc


@dataclass(frozen=True, slots=True)
class Field:
    name: str
    decode: Decoder
    encode: Encoder = _same
    optional: bool = False
    """May be absent (the dataclass default); a None value is not sent."""
    nested: bool = False
    """An array or a map (read whole); any other field holds a single value, and an
    array or a map sent in its place is refused unread."""


def _record(cls: type[Any], *fields: Field) -> tuple[Decoder, Encoder]:
    """A dataclass travelling as a fixed-length array of its fields."""
    def decode(value: Any, what: str) -> Any:
        if not isinstance(value, list) or len(value) != len(fields):
            names = ", ".join(f.name for f in fields)
            raise FrameError(f"{what} must be [{names}]")
        return cls(**{f.name: f.decode(item, f"{what}.{f.name}")
                      for f, item in zip(fields, value, strict=True)})

    def encode(value: Any) -> list[Any]:
        return [f.encode(getattr(value, f.name)) for f in fields]
    return decode, encode


_BOT_CLAIM = _record(BotClaim, Field("kind", _text(MAX_BOT_KIND)),
                     Field("key", _bytes(KEY_BYTES)), Field("sig", _bytes(SIGNATURE_BYTES)))
_WATCHER = _record(WatcherSeen, Field("name", _text(MAX_NAME)), Field("id", _bytes(ID_BYTES)))
_LOBBY_SEAT = _record(LobbySeat, Field("name", _text(MAX_NAME)), Field("id", _bytes(ID_BYTES)),
                      Field("bot", _text(MAX_BOT_KIND)),
                      Field("run_by", _or_none(_int(0, MAX_SEATS))))


_TOLD = _record(Told, Field("game", _text(MAX_GAME)), Field("totals", _totals, list),
                Field("winner", _winner, lambda w: list(w) if isinstance(w, tuple) else w))


def _records(codec: tuple[Decoder, Encoder], most: int) -> tuple[Decoder, Encoder]:
    decode, encode = codec
    return _list(decode, most), lambda values: [encode(v) for v in values]


# ------------------------------------------------------------------ the table


@dataclass(frozen=True, slots=True)
class FrameSpec:
    kind: FrameKind
    cls: type[Any]
    most: int
    """The most bytes of a frame of this kind (after its length): about twice the
    largest an honest peer sends (docs/networking.md, "Frames")."""
    fields: tuple[Field, ...]


SPECS: dict[FrameKind, FrameSpec] = {spec.kind: spec for spec in (
    FrameSpec(FrameKind.HELLO, HelloFrame, 512, (
        Field("proto", _text(MAX_PROTOCOL)),
        Field("versions", _versions, list, nested=True),
        Field("nonce", _bytes(NONCE_BYTES), optional=True),
        Field("game", _text(MAX_GAME), optional=True),
        Field("name", _text(MAX_NAME), optional=True),
        Field("free", _int(0, MAX_SEATS + 1), optional=True))),
    FrameSpec(FrameKind.AUTH, Auth, 2560, (
        Field("key", _bytes(KEY_BYTES)),
        Field("name", _text(MAX_NAME)),
        Field("token", _bytes(TOKEN_BYTES)),
        Field("bot", _text(MAX_BOT_KIND)),
        Field("sig", _bytes(SIGNATURE_BYTES)),
        Field("bots", *_records(_BOT_CLAIM, MAX_SEATS), nested=True),
        Field("watch", _bool, optional=True))),
    FrameSpec(FrameKind.WELCOME, Welcome, 64, (
        Field("seat", _int(0, MAX_SEATS)),
        Field("resume", _bool, optional=True))),
    FrameSpec(FrameKind.LOBBY, LobbyFrame, 3072, (
        Field("players", _int(0, MAX_SEATS + 1)),
        Field("seats", *_records(_LOBBY_SEAT, MAX_SEATS), nested=True))),
    FrameSpec(FrameKind.START, Start, 3072, (
        Field("roster", _roster, Roster.encode),
        Field("settings", _settings, Settings.to_wire, nested=True),
        Field("match", _match, _match_wire, optional=True, nested=True))),
    FrameSpec(FrameKind.MSG, Msg, MAX_MESSAGE + 16, (
        Field("wire", _blob(MAX_MESSAGE)),)),
    FrameSpec(FrameKind.CHAT, ChatLine, 2048, (
        Field("seat", _int(0, MAX_SEATS)),
        Field("n", _int(1)),
        Field("text", _text(MAX_CHAT)),
        Field("sig", _bytes(SIGNATURE_BYTES)))),
    FrameSpec(FrameKind.NOTICE, Notice, 2048, (
        Field("text", _text(MAX_NOTICE)),)),
    FrameSpec(FrameKind.AGAIN, Again, 512, (
        Field("table", _bytes(TABLE_BYTES)),
        Field("seat", _int(0, MAX_SEATS)),
        Field("round", _int(0, MAX_ROUND)),
        Field("game", _text(MAX_GAME)),
        Field("options", _options, dict, nested=True),
        Field("sig", _bytes(SIGNATURE_BYTES)))),
    FrameSpec(FrameKind.END, End, 2048, (
        Field("reason", _text(MAX_NOTICE)),)),
    FrameSpec(FrameKind.ERROR, Error, 8192, (
        Field("reason", _text(MAX_REASON), lambda text: text[:MAX_REASON]),)),
    FrameSpec(FrameKind.WATCHING, Watching, 64, (
        Field("chat", _bool),
        Field("most", _int(0, MAX_WATCHERS + 1)))),
    FrameSpec(FrameKind.WATCHERS, WatchersFrame, 5120, (
        Field("watchers", *_records(_WATCHER, MAX_WATCHERS), nested=True),)),
    FrameSpec(FrameKind.WCHAT, WatchChat, 2048, (
        Field("text", _text(MAX_CHAT)),
        Field("name", _text(MAX_NAME), optional=True))),
    FrameSpec(FrameKind.LCHAT, LobbyChat, 2048, (
        Field("text", _text(MAX_CHAT)),
        Field("name", _text(MAX_NAME), optional=True),
        Field("id", _bytes(ID_BYTES), optional=True))),
)}
KIND_OF: dict[type[Any], FrameKind] = {spec.cls: spec.kind for spec in SPECS.values()}
MAX_FRAME = max(spec.most for spec in SPECS.values())
"""The most bytes of any frame (a ``msg``: one table message of the largest kind, and its
framing), checked from the length before a byte of it is read."""


def kind_of(frame: Frame) -> str:
    """The frame's kind, as its ``t`` says it."""
    return KIND_OF[type(frame)].value


# ------------------------------------------------------------------ maps


def to_map(frame: Frame) -> dict[str, Any]:
    """The msgpack map of a frame: ``t``, then its fields in the table's order."""
    spec = SPECS[KIND_OF[type(frame)]]
    out: dict[str, Any] = {"t": spec.kind.value}
    for field in spec.fields:
        value = getattr(frame, field.name)
        if value is None and field.optional:
            continue
        out[field.name] = field.encode(value)
    return out


def from_map(raw: dict[str, Any]) -> Frame:
    """The frame a map holds, every field the kind declares checked."""
    kind = raw.get("t")
    if not isinstance(kind, str):
        raise FrameError("a frame must name its type in 't'")
    try:
        spec = SPECS[FrameKind(kind)]
    except ValueError:
        raise FrameError(f"a {kind[:32]!r} frame is not expected: this protocol has"
                         " no such frame") from None
    values: dict[str, Any] = {}
    for field in spec.fields:
        if field.name not in raw:
            if field.optional:
                continue
            raise FrameError(f"{kind}: the field {field.name!r} is missing", kind)
        try:
            values[field.name] = field.decode(raw[field.name], f"{kind}.{field.name}")
        except FrameError as exc:
            raise FrameError(str(exc), kind) from None
    return cast(Frame, spec.cls(**values))


# ------------------------------------------------------------------ bytes


def pack_map(raw: dict[str, Any]) -> bytes:
    """A map as it goes on a link: the length, then the msgpack body (capped)."""
    body: bytes = msgpack.packb(raw, use_bin_type=True)
    if len(body) > MAX_FRAME:
        raise FrameError(f"a {raw.get('t')!r} frame of {len(body)} bytes is over the"
                         f" {MAX_FRAME}-byte cap")
    return HEADER.pack(len(body)) + body


def _no_ext(code: int, data: bytes) -> Any:
    raise FrameError(f"msgpack extension type {code} is not allowed")


_NESTED = frozenset((*range(0x80, 0xA0), 0xDC, 0xDD, 0xDE, 0xDF))
"""The first bytes of a msgpack array or map."""
_TEXT = frozenset((*range(0xA0, 0xC0), 0xD9, 0xDA, 0xDB))
_MAP = frozenset((*range(0x80, 0x90), 0xDE, 0xDF))
_TYPES = ((range(0x00, 0x80), "int"), (range(0x80, 0x90), "dict"), (range(0x90, 0xA0), "list"),
          (range(0xA0, 0xC0), "str"), (range(0xC0, 0xC1), "NoneType"), (range(0xC2, 0xC4), "bool"),
          (range(0xC4, 0xC7), "bytes"), (range(0xC7, 0xCA), "ext"), (range(0xCA, 0xCC), "float"),
          (range(0xCC, 0xD4), "int"), (range(0xD4, 0xD9), "ext"), (range(0xD9, 0xDC), "str"),
          (range(0xDC, 0xDE), "list"), (range(0xDE, 0xE0), "dict"), (range(0xE0, 0x100), "int"))


def _type_name(first: int) -> str:
    """The Python type msgpack makes of an item that begins with ``first``."""
    return next(name for codes, name in _TYPES if first in codes)


class _Reader:
    """A frame's body, read one item at a time: an item is decoded only once its first
    byte says it is what is wanted, and an item not wanted is skipped unbuilt."""

    def __init__(self, body: bytes):
        self.body = body
        self.unpacker = msgpack.Unpacker(raw=False, strict_map_key=True, ext_hook=_no_ext,
                                         max_buffer_size=max(len(body), 1))
        self.unpacker.feed(body)

    def first(self) -> int:
        at = self.unpacker.tell()
        return self.body[at] if at < len(self.body) else 0xC1

    def fields(self) -> int:
        """The number of fields of the frame's map."""
        if self.first() not in _MAP:
            self.skip()  # (what is not msgpack says so here)
            if self.unpacker.tell() != len(self.body):
                raise FrameError("not msgpack (bytes after the frame's first item)")
            raise FrameError(f"a frame must be a map, not {_type_name(self.body[0])}")
        count = int(self.unpacker.read_map_header())
        if count > MAX_FIELDS:
            raise FrameError(f"a frame of {count} fields: at most {MAX_FIELDS}")
        return count

    def name(self) -> str:
        """The next field's name (FrameError if it is not text)."""
        if self.first() not in _TEXT:
            raise FrameError("not msgpack (ValueError: a frame's field names are text)")
        return cast(str, self.read())

    def read(self) -> Any:
        try:
            return self.unpacker.unpack()
        except FrameError:
            raise
        except Exception as exc:  # msgpack raises several unrelated types
            raise FrameError(f"not msgpack ({type(exc).__name__}: {exc})") from exc

    def skip(self) -> None:
        try:
            self.unpacker.skip()
        except Exception as exc:
            raise FrameError(f"not msgpack ({type(exc).__name__}: {exc})") from exc

    def end(self) -> None:
        if self.unpacker.tell() != len(self.body):
            raise FrameError("not msgpack (ExtraData: bytes after the frame's map)")


def _kind_of_body(body: bytes) -> Any:
    """The ``t`` of a frame's map, found without decoding any other field (None if it
    has none)."""
    reader = _Reader(body)
    kind = None
    for _ in range(reader.fields()):
        if reader.name() == "t" and reader.first() in _TEXT:
            kind = reader.read()
        else:
            reader.skip()
    reader.end()
    return kind


def unpack_map(body: bytes) -> dict[str, Any]:
    """The map of a frame's body (after its length), strictly decoded: ``t``, checked
    first, then only the fields its kind declares (the others are skipped unread), once
    the body is found within the cap of that kind.  An array or a map where the kind
    declares a single value is not decoded: an empty one stands for it, which the
    field's own check refuses, naming it."""
    kind = _kind_of_body(body)
    if not isinstance(kind, str):
        raise FrameError("a frame must name its type in 't'")
    try:
        spec = SPECS[FrameKind(kind)]
    except ValueError:
        return {"t": kind}  # (from_map names it: nothing else is read)
    if len(body) > spec.most:
        raise FrameError(f"a {kind!r} frame of {len(body)} bytes is over the {spec.most}-byte"
                         " cap of its kind", kind)
    fields = {field.name: field for field in spec.fields}
    reader = _Reader(body)
    raw: dict[str, Any] = {"t": kind}
    for _ in range(reader.fields()):
        name = reader.name()
        field = fields.get(name)
        if field is None or name == "t":
            reader.skip()
        elif not field.nested and reader.first() in _NESTED:
            raw[name] = {} if reader.first() in _MAP else []
            reader.skip()
        else:
            raw[name] = reader.read()
    return raw


def pack(frame: Frame) -> bytes:
    """A frame as it goes on a link (FrameError if it is over the cap of its kind)."""
    data = pack_map(to_map(frame))
    spec = SPECS[KIND_OF[type(frame)]]
    if len(data) - HEADER.size > spec.most:
        raise FrameError(f"a {spec.kind.value!r} frame of {len(data) - HEADER.size} bytes is"
                         f" over the {spec.most}-byte cap of its kind")
    return data


def unpack(body: bytes) -> Frame:
    return from_map(unpack_map(body))
