"""Every message kind of the table: a frozen dataclass that validates itself, and
its body as a msgpack map (docs/protocol.md lists them).

A body's fields are exactly the ones its kind declares: a missing, extra or
mistyped field, or an unknown kind, is a :class:`CodecError` naming it.  Scalars
(keys, 256-bit) travel as 32-byte big-endian strings; everything else as
msgpack integers, strings, byte strings and arrays.  The deck's own messages
(:mod:`p2pcards.protocol.messages`) and joint randomness
(:mod:`p2pcards.protocol.randomness`)
travel as they are, their ``party`` taken from the envelope's signed sender.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from p2pcards.protocol.constants import MAX_SLOTS
from p2pcards.protocol.curve import POINT_BYTES, N
from p2pcards.protocol.messages import AuditReveal, Locked, Remixed, Shuffled, Unlocked
from p2pcards.protocol.proved.group import EncodingError
from p2pcards.protocol.proved.messages import KeyShare, Remix, Shares, decode_message
from p2pcards.protocol.proved.messages import Shuffle as ProvedShuffle
from p2pcards.protocol.proved.shuffle import shuffle_proof_bytes
from p2pcards.protocol.randomness import SHARE_BYTES, Commit, Reveal
from p2pcards.table.codec import HASH_BYTES, KEY_BYTES, MAX_QUOTED, CodecError

MAX_ARRAY = MAX_SLOTS
"""Most items in one array of a message body (as many as a deal has slots)."""
MAX_TEXT = 200
"""Most characters in a text field (a move, a verdict, a reason)."""
MAX_SEALED = 16 * 1024
"""Most bytes in one sealed body."""
MAX_PROOF = MAX_QUOTED
"""Most bytes of each of the two signed messages a proof of equivocation quotes: the
largest cap of a message of any other kind (:data:`~p2pcards.table.codec.KIND_CAPS`),
so that two of them and the claim's own framing stay under the cap of a ``cheat``."""
MAX_PROVED_CARDS = 128
"""Most cards of a deck the proved deck's messages may carry at a table (a game's deck
has at most 80)."""
MAX_PROVED_SHARES = 7
"""Most ``Shares`` in one ``proved-shares`` message: one per recipient and everyone."""


MOVE_SHARES = 2048
"""Most bytes of a ``pmove``'s ``shares``: what a ``pact`` of the same move could carry
under its kind's cap (a move shows a few cards: 15 shares fit), so that a move that
carries a step of the next deck holds no more shares than one that does not."""


def proved_bytes(kind: str) -> int:
    """Most bytes of the proved deck's message that a body of ``kind`` carries (its
    ``data``, or each of its ``shares``): a shuffle or re-mix of :data:`MAX_PROVED_CARDS`
    cards, shares of as many slots (docs/proved-deck.md, "Messages")."""
    n = MAX_PROVED_CARDS
    if kind == Kind.PROVED_KEY:
        return 100
    if kind == Kind.PROVED_SHUFFLE:
        return 39 + 2 * n + 66 * n + shuffle_proof_bytes(n)
    if kind == Kind.PROVED_REMIX:
        return 4 + 68 * n + shuffle_proof_bytes(n)
    return 5 + 133 * n


class Kind(StrEnum):
    """Every message kind of the table, as the envelope's ``kind`` names it."""

    SIGN = "sign"
    COMMIT = "commit"
    SHARE = "share"
    HELLO = "hello"
    UNLOCK = "unlock"
    SHUFFLE = "shuffle"
    LOCK = "lock"
    REMIX = "remix"
    KEYS = "keys"
    OPENED = "opened"
    ALARM = "alarm"
    ACT = "act"
    SILENT = "silent"
    CHEAT = "cheat"
    SEAT = "seat"
    BACK = "back"
    VOID = "void"
    CONSENT = "consent"
    AUDIT = "audit"
    AGREE = "agree"
    PROVED_KEY = "pkey"
    PROVED_SHUFFLE = "pshuffle"
    PROVED_REMIX = "premix"
    PROVED_SHARES = "pshares"
    PROVED_ACT = "pact"
    PROVED_MOVE = "pmove"
    PROVED_AGREE = "pagree"

Decoder = Callable[[Any, str], Any]


def printable(value: object, most: int = MAX_TEXT) -> str:
    """``value`` as text that is safe to show and to log: every character that is not
    printable (a newline, an escape, a bell, a bidirectional override ...) becomes
    ``?``, so that it stays on one line and cannot drive a terminal, and it is cut to
    ``most`` characters.  Every string that came from another peer goes through this
    before anyone sees it."""
    text = "".join(c if c.isprintable() else "?" for c in str(value))
    return text if len(text) <= most else text[:most - 1] + "…"


def clip(text: str, most: int = MAX_TEXT) -> str:
    """``text`` made safe and cut to ``most`` characters, for a message's text field
    (text that quotes a peer's must still fit): :func:`printable`."""
    return printable(text, most)

Encoder = Callable[[Any], Any]


# --------------------------------------------------------------- field codecs


def _uint(value: Any, what: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 63:
        raise CodecError(f"{what} must be a non-negative integer")
    return value


def _sint(value: Any, what: str) -> int:  # (points may be negative)
    if not isinstance(value, int) or isinstance(value, bool) or not -(1 << 62) < value < 1 << 62:
        raise CodecError(f"{what} must be an integer")
    return value


def _text(value: Any, what: str) -> str:
    if not isinstance(value, str) or len(value) > MAX_TEXT:
        raise CodecError(f"{what} must be a string of at most {MAX_TEXT} characters")
    if not value.isprintable():
        raise CodecError(f"{what} must be printable text on one line")
    return value


def _bytes(size: int) -> Decoder:
    def decode(value: Any, what: str) -> bytes:
        if not isinstance(value, bytes) or len(value) != size:
            raise CodecError(f"{what} must be {size} bytes")
        return value
    return decode


def _any_bytes(value: Any, what: str) -> bytes:
    if not isinstance(value, bytes) or len(value) > MAX_SEALED:
        raise CodecError(f"{what} must be a byte string of at most {MAX_SEALED} bytes")
    return value


def _proof_part(value: Any, what: str) -> bytes:
    if not isinstance(value, bytes) or len(value) > MAX_PROOF:
        raise CodecError(f"{what} must be a signed message of at most {MAX_PROOF} bytes")
    return value


def _seat_change(value: Any, what: str) -> SeatChange:
    if not isinstance(value, list) or len(value) != 5:
        raise CodecError(f"{what} must be [seat, name, identity, bot, run_by]")
    seat, name, identity, bot, run_by = value
    return (_uint(seat, f"{what}.seat"), _text(name, f"{what}.name"),
            _bytes(KEY_BYTES)(identity, f"{what}.identity"), _text(bot, f"{what}.bot"),
            None if run_by is None else _uint(run_by, f"{what}.run_by"))


def _scalar(value: Any, what: str) -> int:
    if not isinstance(value, bytes) or len(value) != 32:
        raise CodecError(f"{what} must be a 32-byte scalar")
    number = int.from_bytes(value, "big")
    if not 0 < number < N:
        raise CodecError(f"{what} is not a scalar in [1, N-1]")
    return number


def _scalar_out(value: int) -> bytes:
    return value.to_bytes(32, "big")


def _list(inner: Decoder, most: int = MAX_ARRAY) -> Decoder:
    def decode(value: Any, what: str) -> tuple[Any, ...]:
        if not isinstance(value, list) or len(value) > most:
            raise CodecError(f"{what} must be an array of at most {most} items")
        return tuple(inner(item, f"{what}[{i}]") for i, item in enumerate(value))
    return decode


def _pair(first: Decoder, second: Decoder) -> Decoder:
    def decode(value: Any, what: str) -> tuple[Any, Any]:
        if not isinstance(value, list) or len(value) != 2:
            raise CodecError(f"{what} must be a pair")
        return first(value[0], f"{what}[0]"), second(value[1], f"{what}[1]")
    return decode



def _same(value: Any) -> Any:
    return value


def _list_out(inner: Encoder) -> Encoder:
    return lambda value: [inner(item) for item in value]


def _pair_out(first: Encoder, second: Encoder) -> Encoder:
    return lambda value: [first(value[0]), second(value[1])]


def _bool(value: Any, what: str) -> bool:
    if not isinstance(value, bool):
        raise CodecError(f"{what} must be true or false")
    return value


def _blob(most: int) -> tuple[Decoder, Encoder]:
    """A proved deck's message as a byte string of at most ``most`` bytes (its bytes are
    decoded strictly by :func:`decode_body`)."""
    def decode(value: Any, what: str) -> bytes:
        if not isinstance(value, bytes) or len(value) > most:
            raise CodecError(f"{what} must be a byte string of at most {most} bytes")
        return value
    return decode, _same


BOOL: tuple[Decoder, Encoder] = (_bool, _same)
UINT: tuple[Decoder, Encoder] = (_uint, _same)
TEXT: tuple[Decoder, Encoder] = (_text, _same)
HASH: tuple[Decoder, Encoder] = (_bytes(HASH_BYTES), _same)
KEY: tuple[Decoder, Encoder] = (_bytes(KEY_BYTES), _same)
POINTS: tuple[Decoder, Encoder] = (_list(_bytes(POINT_BYTES)), list)
HASHES: tuple[Decoder, Encoder] = (_list(_bytes(HASH_BYTES)), list)
UINTS: tuple[Decoder, Encoder] = (_list(_uint), list)
SINTS: tuple[Decoder, Encoder] = (_list(_sint), list)
SCALARS: tuple[Decoder, Encoder] = (_list(_scalar), _list_out(_scalar_out))
SCALAR_ROWS: tuple[Decoder, Encoder] = (_list(_list(_scalar)), _list_out(_list_out(_scalar_out)))
UINT_ROWS: tuple[Decoder, Encoder] = (_list(_list(_uint)), _list_out(list))
SLOT_KEYS: tuple[Decoder, Encoder] = (_list(_pair(_uint, _scalar)),
                                      _list_out(_pair_out(_same, _scalar_out)))
SEALED: tuple[Decoder, Encoder] = (_list(_pair(_uint, _any_bytes)), _list_out(list))
SHOWN_KEYS: tuple[Decoder, Encoder] = (_list(_pair(_uint, _list(_pair(_uint, _scalar)))),
                                        _list_out(_pair_out(_same, _list_out(
                                            _pair_out(_same, _scalar_out)))))


# ------------------------------------------------------------------ the kinds


@dataclass(frozen=True, slots=True, kw_only=True)
class Sign:
    """A seat's signature of the roster (its hash): it takes its seat."""

    roster: bytes

    def __post_init__(self) -> None:
        _bytes(HASH_BYTES)(self.roster, "roster")


@dataclass(frozen=True, slots=True, kw_only=True)
class Hello:
    """A seat's sealing key (X25519 public) for this deal."""

    seal_key: bytes

    def __post_init__(self) -> None:
        _bytes(KEY_BYTES)(self.seal_key, "seal_key")


@dataclass(frozen=True, slots=True, kw_only=True)
class Keys:
    """A seat's keys of the slots a deck step gives: one sealed body per recipient
    (content: ``[[slot, key], ...]``), and the keys shown to everyone."""

    sealed: tuple[tuple[int, bytes], ...]
    public: tuple[tuple[int, int], ...] = ()

    def __post_init__(self) -> None:
        recipients = [r for r, _ in self.sealed]
        if len(set(recipients)) != len(recipients):
            raise CodecError("sealed: a recipient named twice")


@dataclass(frozen=True, slots=True, kw_only=True)
class Opened:
    """A seat has opened the cards just dealt to it: ``problem`` is empty, or says
    what went wrong (a key that does not match, a slot that opens to no card), which
    stops the deal for its audit at once."""

    problem: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class Alarm:
    """Sent instead of a move: this seat's own cards prove that an accepted move was
    false (another seat showed a card this seat holds), which stops the deal for its
    audit at once."""

    problem: str

    def __post_init__(self) -> None:
        if not self.problem:
            raise CodecError("an alarm says what is wrong")


@dataclass(frozen=True, slots=True, kw_only=True)
class Act:
    """A move of the game, in its public text (cards the others do not see are
    ``?``).  Each card the move shows comes with its slot and every key of that slot
    (``shown``: ``(slot, ((party, key), ...))``); cards moved face down name their
    slots (``slots``), in the order of the ``?``."""

    action: str
    shown: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = ()
    slots: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        if not self.action or not self.action.isprintable():
            raise CodecError("action must be printable text")
        shown = [slot for slot, _ in self.shown]
        if len(set(shown)) != len(shown) or any(not keys for _, keys in self.shown):
            raise CodecError("each card shown names its slot once, with its keys")


@dataclass(frozen=True, slots=True, kw_only=True)
class Silent:
    """A claim that ``seat``, whose message is due, has been silent past the table's
    grace period.  When every other seat has claimed it on the same transcript,
    ``seat`` forfeits the deal."""

    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Cheat:
    """A claim that ``seat`` signed two different messages with one sequence number:
    ``first`` and ``second``, both as it signed them, are the proof.  When every seat
    not run by its peer has claimed it on the same transcript, ``seat`` forfeits the
    deal (docs/protocol.md, "Proof of equivocation")."""

    seat: int
    first: bytes
    second: bytes


SeatChange = tuple[int, str, bytes, str, int | None]
"""(seat, name, identity, bot kind, run_by): a seat's new roster entry."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Seats:
    """At a deal boundary, from the seat that runs the table's stand-ins: the seats
    that change hands (a bot for a seat gone silent, the person back in its seat); none
    when nothing changes (docs/protocol.md, "Seats that change hands")."""

    changes: tuple[SeatChange, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Back:
    """From a person whose seat a bot holds, signed with the person's own identity: it
    is back, and takes its seat again at the next deal boundary (never recorded)."""

    seat: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Void:
    """Sent instead of a move: a proposal to void the deal, which every other seat then
    answers in turn (``consent``); with every seat's consent the deal is void."""

    reason: str

    def __post_init__(self) -> None:
        if not self.reason:
            raise CodecError("a proposal to void says why")


@dataclass(frozen=True, slots=True, kw_only=True)
class Consent:
    """A seat's answer, in turn, to a proposal to void the deal."""

    agree: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Audit:
    """A seat's secrets of the deal, for the audit: its deck secrets and its sealing
    key of the deal (so that anyone can open what it was sent)."""

    reveal: AuditReveal
    seal_secret: bytes

    def __post_init__(self) -> None:
        _bytes(KEY_BYTES)(self.seal_secret, "seal_secret")


@dataclass(frozen=True, slots=True, kw_only=True)
class Agree:
    """A seat's signature of the deal's transcript hash and result."""

    transcript: bytes
    points: tuple[int, ...]
    verdict: str

    def __post_init__(self) -> None:
        _bytes(HASH_BYTES)(self.transcript, "transcript")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProvedShares:
    """The proved deck's decryption shares a deal step grants (the ``keys`` step of
    the lock deck): one ``Shares`` per recipient (``to`` None: everyone), in the step's
    grant order, each with its proofs."""

    party: int
    shares: tuple[Shares, ...]

    def __post_init__(self) -> None:
        if not 0 < len(self.shares) <= MAX_PROVED_SHARES:
            raise CodecError(f"shares: 1 to {MAX_PROVED_SHARES} sets of shares")
        recipients = [s.to for s in self.shares]
        if len(set(recipients)) != len(recipients):
            raise CodecError("shares: a recipient named twice")
        if any(s.party != self.party for s in self.shares):
            raise CodecError("shares: shares in another seat's name")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProvedAct:
    """A move at a table of the proved deck: its public text and face-down slots as in
    ``act``; each card it shows is a slot the mover holds (``shown``), opened by the
    mover's own decryption shares to everyone of those not yet shown (``shares``: the
    other seats' are in the transcript already), absent when there are none."""

    party: int
    action: str
    shown: tuple[int, ...] = ()
    slots: tuple[int, ...] = ()
    shares: Shares | None = None

    def __post_init__(self) -> None:
        if not self.action or not self.action.isprintable():
            raise CodecError("action must be printable text")
        if len(set(self.shown)) != len(self.shown):
            raise CodecError("shown: a slot named twice")
        if self.shares is None:
            return
        if self.shares.party != self.party or self.shares.to is not None:
            raise CodecError("shares: the mover's own, to everyone")
        if not set(self.shares.slots) <= set(self.shown):
            raise CodecError("shares: of slots the move shows only")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProvedMove(ProvedAct):
    """A move at a table of the proved deck's shuffle-ahead rule (``proved-ahead``): a
    ``pact`` that also carries the mover's step of the next deal's deck when one is due
    from it (``ahead``: its key share, or its shuffle of round 0 in its turn; None when
    none is due: docs/protocol.md, "Shuffle ahead")."""

    ahead: KeyShare | ProvedShuffle | None = None

    def __post_init__(self) -> None:
        super(ProvedMove, self).__post_init__()
        ahead = self.ahead
        if ahead is None:
            return
        if ahead.party != self.party:
            raise CodecError("ahead: a step in another seat's name")
        if isinstance(ahead, ProvedShuffle) and (ahead.round != 0 or ahead.slots):
            raise CodecError("ahead: a shuffle of round 0 (the card points) only")


@dataclass(frozen=True, slots=True, kw_only=True)
class ProvedAgree(Agree):
    """A seat's signature of the deal's result at a table of the shuffle-ahead rule that
    sends shares on the agreement (``proved-ahead-2``), with the signer's decryption
    shares of the next deal's deck when they are due from it (``shares``: as the
    ``pshares`` its deal step would send; None when none are due: docs/protocol.md,
    "Shares on the agreement")."""

    party: int
    shares: ProvedShares | None = None

    def __post_init__(self) -> None:
        super(ProvedAgree, self).__post_init__()
        if self.shares is not None and self.shares.party != self.party:
            raise CodecError("shares: shares in another seat's name")


@dataclass(frozen=True, slots=True)
class KindSpec:
    kind: Kind
    cls: type
    fields: dict[str, tuple[Decoder, Encoder]]
    party: bool = False
    """Whether the dataclass has a ``party`` field filled from the envelope's sender."""


_AUDIT_FIELDS = {
    "unlock_keys": SCALARS, "shuffle_keys": SCALARS, "permutations": UINT_ROWS,
    "lock_keys": SCALAR_ROWS, "remix_orders": UINT_ROWS, "remix_keys": SCALAR_ROWS,
}

SPECS: dict[Kind, KindSpec] = {spec.kind: spec for spec in (
    KindSpec(Kind.SIGN, Sign, {"roster": HASH}),
    KindSpec(Kind.COMMIT, Commit, {"digest": (_bytes(SHARE_BYTES), _same)}, party=True),
    KindSpec(Kind.SHARE, Reveal, {"share": (_bytes(SHARE_BYTES), _same)}, party=True),
    KindSpec(Kind.HELLO, Hello, {"seal_key": KEY}),
    KindSpec(Kind.UNLOCK, Unlocked, {"round": UINT, "slots": UINTS, "prior": HASH,
                                  "deck": POINTS}, party=True),
    KindSpec(Kind.SHUFFLE, Shuffled, {"round": UINT, "prior": HASH, "deck": POINTS}, party=True),
    KindSpec(Kind.LOCK, Locked, {"round": UINT, "prior": HASH, "deck": POINTS,
                              "commitments": HASHES}, party=True),
    KindSpec(Kind.REMIX, Remixed, {"slots": UINTS, "deck": POINTS, "commitments": HASHES},
             party=True),
    KindSpec(Kind.KEYS, Keys, {"sealed": SEALED, "public": SLOT_KEYS}),
    KindSpec(Kind.OPENED, Opened, {"problem": TEXT}),
    KindSpec(Kind.ALARM, Alarm, {"problem": TEXT}),
    KindSpec(Kind.ACT, Act, {"action": TEXT, "shown": SHOWN_KEYS, "slots": UINTS}),
    KindSpec(Kind.SILENT, Silent, {"seat": UINT}),
    KindSpec(Kind.SEAT, Seats, {"changes": (_list(_seat_change),
                                            lambda v: [list(c) for c in v])}),
    KindSpec(Kind.BACK, Back, {"seat": UINT}),
    KindSpec(Kind.CHEAT, Cheat, {"seat": UINT, "first": (_proof_part, _same),
                                 "second": (_proof_part, _same)}),
    KindSpec(Kind.VOID, Void, {"reason": TEXT}),
    KindSpec(Kind.CONSENT, Consent, {"agree": BOOL}),
    KindSpec(Kind.AUDIT, Audit, {"reveal": (lambda v, w: v, _same), "seal_secret": KEY}),
    KindSpec(Kind.AGREE, Agree, {"transcript": HASH, "points": SINTS, "verdict": TEXT}),
    KindSpec(Kind.PROVED_KEY, KeyShare, {"data": _blob(proved_bytes(Kind.PROVED_KEY))},
             party=True),
    KindSpec(Kind.PROVED_SHUFFLE, ProvedShuffle,
             {"data": _blob(proved_bytes(Kind.PROVED_SHUFFLE))}, party=True),
    KindSpec(Kind.PROVED_REMIX, Remix, {"data": _blob(proved_bytes(Kind.PROVED_REMIX))},
             party=True),
    KindSpec(Kind.PROVED_SHARES, ProvedShares, {"shares": (
        _list(_blob(proved_bytes(Kind.PROVED_SHARES))[0], MAX_PROVED_SHARES), list)}, party=True),
    KindSpec(Kind.PROVED_ACT, ProvedAct, {"action": TEXT, "shown": UINTS, "slots": UINTS,
                                          "shares": _blob(proved_bytes(Kind.PROVED_SHARES))},
             party=True),
    KindSpec(Kind.PROVED_MOVE, ProvedMove, {
        "action": TEXT, "shown": UINTS, "slots": UINTS,
        "shares": _blob(MOVE_SHARES),
        "ahead": _blob(proved_bytes(Kind.PROVED_SHUFFLE))}, party=True),
    KindSpec(Kind.PROVED_AGREE, ProvedAgree, {
        "transcript": HASH, "points": SINTS, "verdict": TEXT, "shares": (
            _list(_blob(proved_bytes(Kind.PROVED_SHARES))[0], MAX_PROVED_SHARES), list)},
             party=True),
)}
PROVED_DATA = (KeyShare, ProvedShuffle, Remix)
"""The proved deck's messages that travel whole as a body's ``data``."""
KIND_OF: dict[type, Kind] = {spec.cls: spec.kind for spec in SPECS.values()}

Message = Sign | Commit | Reveal | Hello | Unlocked | Shuffled | Locked | Remixed | Keys \
    | Opened | Alarm | Act | Silent | Cheat | Seats | Back | Void | Consent | Audit | Agree \
    | KeyShare | ProvedShuffle | Remix | ProvedShares | ProvedAct | ProvedMove | ProvedAgree


def _fields_of(spec: KindSpec, body: dict[str, Any], where: str) -> dict[str, Any]:
    if set(body) != set(spec.fields):
        extra = sorted(printable(name, 40) for name in set(body) - set(spec.fields))
        missing = sorted(set(spec.fields) - set(body))
        detail = "; ".join(x for x in (extra and f"unknown field(s) {', '.join(extra)}",
                                       missing and f"missing field(s) {', '.join(missing)}") if x)
        raise CodecError(f"{where}: {detail}")
    return {name: decode(body[name], f"{where}.{name}")
            for name, (decode, _) in spec.fields.items()}


def decode_body(kind: str, body: dict[str, Any], sender: int) -> Message:
    """The message of ``kind`` that ``body`` holds, validated; ``sender`` fills the
    deck's and joint randomness's ``party``."""
    try:
        spec = SPECS[Kind(kind)]
    except ValueError:
        raise CodecError(f"unknown message kind {kind!r}") from None
    values = _fields_of(spec, body, kind)
    if spec.party:
        values["party"] = sender
    try:
        if spec.cls in PROVED_DATA:
            proved: KeyShare | ProvedShuffle | Remix = _proved(values["data"], spec, sender)
            return proved
        if spec.cls is ProvedShares:
            values["shares"] = tuple(_proved(data, spec, sender, Shares, f"{kind}.shares[{i}]")
                                     for i, data in enumerate(values["shares"]))
        if spec.cls in (ProvedAct, ProvedMove):
            data = values["shares"]
            values["shares"] = _proved(data, spec, sender, Shares, f"{kind}.shares") \
                if data else None
        if spec.cls is ProvedAgree:
            sets = tuple(_proved(data, spec, sender, Shares, f"{kind}.shares[{i}]")
                         for i, data in enumerate(values["shares"]))
            values["shares"] = ProvedShares(party=sender, shares=sets) if sets else None
        if spec.cls is ProvedMove:
            data = values["ahead"]
            values["ahead"] = _proved(data, spec, sender, (KeyShare, ProvedShuffle),
                                      f"{kind}.ahead") if data else None
        if spec.cls is Audit:
            raw = body["reveal"]
            if not isinstance(raw, dict):
                raise CodecError("audit.reveal must be a map")
            values["reveal"] = AuditReveal(party=sender, **_fields_of(
                KindSpec(Kind.AUDIT, AuditReveal, _AUDIT_FIELDS), raw, "audit.reveal"))
        return spec.cls(**values)  # type: ignore[no-any-return]
    except CodecError:
        raise
    except (ValueError, TypeError) as error:
        raise CodecError(f"{kind}: {error}") from None


def _proved(data: bytes, spec: KindSpec, sender: int,
            cls: type | tuple[type, ...] | None = None,
            what: str = "") -> Any:
    """The proved deck's message ``data`` holds (strictly decoded), of the kind's class
    (``cls``), in its sender's name."""
    what = what or f"{spec.kind}.data"
    try:
        message = decode_message(data)
    except EncodingError as error:
        raise CodecError(f"{what}: {error}") from None
    wanted = cls or spec.cls
    if not isinstance(message, wanted):
        names = " or ".join(c.__name__ for c in (wanted if isinstance(wanted, tuple)
                                                  else (wanted,)))
        raise CodecError(f"{what}: a {type(message).__name__} message, not {names}")
    if message.party != sender:
        raise CodecError(f"{what}: in seat {message.party}'s name, signed by seat {sender}")
    return message


def encode_body(message: Message) -> tuple[Kind, dict[str, Any]]:
    """(kind, body map) of a message."""
    kind = KIND_OF[type(message)]
    spec = SPECS[kind]
    if isinstance(message, PROVED_DATA):
        return kind, {"data": message.encode()}
    if isinstance(message, ProvedShares):
        return kind, {"shares": [s.encode() for s in message.shares]}
    if isinstance(message, ProvedAct):
        moved: dict[str, Any] = {"action": message.action, "shown": list(message.shown),
                "slots": list(message.slots),
                "shares": b"" if message.shares is None else message.shares.encode()}
        if isinstance(message, ProvedMove):
            moved["ahead"] = b"" if message.ahead is None else message.ahead.encode()
        return kind, moved
    if isinstance(message, ProvedAgree):
        return kind, {"transcript": message.transcript, "points": list(message.points),
                      "verdict": message.verdict,
                      "shares": [] if message.shares is None
                      else [s.encode() for s in message.shares.shares]}
    body = {name: encode(getattr(message, name)) for name, (_, encode) in spec.fields.items()}
    if isinstance(message, Audit):
        reveal = message.reveal
        body["reveal"] = {name: encode(getattr(reveal, name))
                          for name, (_, encode) in _AUDIT_FIELDS.items()}
    return kind, body
