"""The wire format: envelopes, sealed bodies, message kinds, the roster, golden vectors."""

from __future__ import annotations

import json
import re
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.x25519 import X25519PrivateKey

from p2pcards.protocol.messages import AuditReveal, Locked, Remixed, Shuffled, Unlocked
from p2pcards.protocol.randomness import Commit, Reveal
from p2pcards.table import codec, kinds
from p2pcards.table.codec import (
    ENVELOPE_DOMAIN,
    KIND_CAPS,
    SEALED_DOMAIN,
    UNKNOWN_CAP,
    VERSION,
    CodecError,
    check_sealed,
    open_envelope,
    pack,
    public_bytes,
    read_head,
    seal,
    seal_envelope,
    unseal,
)
from p2pcards.table.kinds import Act, Agree, Audit, Hello, Keys, Opened, Sign
from p2pcards.table.roster import MAX_NAME, decode_roster, make_roster
from p2pcards.table.vectors import build, dumps, identities

VECTORS = Path(__file__).parent / "data" / "protocol_vectors.json"
KEYS = identities()
PUBLIC = [k.public_key() for k in KEYS]
TABLE = bytes(range(16))
P = bytes.fromhex("8568f3f880b9ef6d34a9c541c3404b716d7e1487cb2589565130bcede71a6300")
H = b"\x11" * 32

EVERY_KIND = [
    Sign(roster=H), Commit(party=2, digest=H), Reveal(party=2, share=H), Hello(seal_key=H),
    Unlocked(party=2, round=1, slots=(3, 4), prior=H, deck=(P, P)),
    Shuffled(party=2, round=0, prior=H, deck=(P,)),
    Locked(party=2, round=0, prior=H, deck=(P,), commitments=(H,)),
    Remixed(party=2, slots=(7,), deck=(P,), commitments=(H,)),
    Keys(sealed=((1, b"ct"), (3, b"ct2")), public=((5, 12345),)),
    Opened(problem=""), Opened(problem="slot 3 opens to no card"),
    Act(action="pass"), Act(action="play QH", shown=((4, ((0, 7), (1, 8))),)),
    Act(action="bid A1 H2", shown=((4, ((0, 7),)), (9, ((0, 8), (1, 9))))),
    Act(action="discard ? ?", slots=(60, 61)),
    Audit(reveal=AuditReveal(party=2, unlock_keys=(1,), shuffle_keys=(5,), permutations=((1, 0),),
                             lock_keys=((6, 7),), remix_orders=((0,),), remix_keys=((9,),)),
          seal_secret=H),
    Agree(transcript=H, points=(-4, 7), verdict="ok"),
]


@pytest.mark.parametrize("message", EVERY_KIND, ids=lambda m: type(m).__name__)
def test_every_kind_survives_the_wire(message: Any) -> None:
    kind, body = kinds.encode_body(message)
    env = seal_envelope(KEYS[2], table=TABLE, deal=3, sender=2, seq=9, prior=H, kind=kind,
                        body=body)
    opened = open_envelope(env.wire, PUBLIC)
    assert (opened.sender, opened.seq, opened.deal, opened.kind) == (2, 9, 3, kind)
    assert kinds.decode_body(opened.kind, opened.body, 2) == message


@pytest.mark.parametrize(("kind", "body", "reason"), [
    ("boo", {}, "unknown message kind 'boo'"),
    ("sign", {}, "missing field(s) roster"),
    ("sign", {"roster": H, "extra": 1}, "unknown field(s) extra"),
    ("sign", {"roster": b"short"}, "sign.roster must be 32 bytes"),
    ("act", {"action": "play QH", "shown": [[3, [[1, b"\x00" * 32]]]], "slots": []},
     "not a scalar"),
    ("act", {"action": "play QH", "shown": [[3, []]], "slots": []}, "with its keys"),
    ("act", {"action": "", "shown": [], "slots": []}, "printable"),
    ("keys", {"sealed": [[1, b"a"], [1, b"b"]], "public": []}, "a recipient named twice"),
    ("shuffle", {"round": 0, "prior": H, "deck": [b"x" * 31]}, "deck[0] must be 32 bytes"),
    ("agree", {"transcript": H, "points": [True], "verdict": "ok"}, "must be an integer"),
])
def test_a_bad_body_is_refused_with_a_reason(kind: str, body: dict[str, Any],
                                             reason: str) -> None:
    with pytest.raises(CodecError, match=re.escape(reason)):
        kinds.decode_body(kind, body, 1)


def test_envelope_checks() -> None:
    env = seal_envelope(KEYS[0], table=TABLE, deal=0, sender=0, seq=0, prior=H, kind="sign",
                        body={"roster": H})
    with pytest.raises(CodecError, match="bad signature on a sign message in seat 0's name"):
        open_envelope(env.wire, [PUBLIC[1]] * 4)
    with pytest.raises(CodecError, match="payload sender"):
        open_envelope(env.wire, [])
    with pytest.raises(CodecError, match="expected \\[payload, signature\\]"):
        open_envelope(pack([1, 2, 3]), PUBLIC)
    with pytest.raises(CodecError, match="protocol version 2"):
        payload = pack([2, TABLE, 0, 0, 0, H, "sign", {}])
        open_envelope(pack([payload, KEYS[0].sign(b"p2pcards/envelope/v1\x00" + payload)]),
                      PUBLIC)
    with pytest.raises(CodecError, match="extension type"):
        open_envelope(b"\xd4\x01\x00", PUBLIC)


def empty_arrays(kind: str, field: str, size: int) -> bytes:
    """A signed, canonical envelope of ``kind`` of ``size`` bytes whose body's ``field`` is
    an array of empty arrays: the most costly content to decode, byte for byte."""
    def made(count: int) -> bytes:
        head = pack([VERSION, TABLE, 0, 0, 0, H, kind])[1:]  # (the payload's first items)
        items = pack([[]] * count)
        payload = b"\x98" + head + b"\x81" + pack(field) + items
        return pack([payload, KEYS[0].sign(ENVELOPE_DOMAIN + payload)])
    count = size
    while len(made(count)) > size:
        count -= max(1, (len(made(count)) - size) // 2)
    return made(count)


def test_every_kind_has_a_cap_about_twice_its_largest_honest_message() -> None:
    """docs/protocol.md ("Envelope") gives the figures each cap comes from; here, the
    largest an honest peer makes of the kinds whose size a text or a seat's name sets
    (every text 200 characters of four bytes) fits its cap, with room to spare."""
    assert set(KIND_CAPS) == set(kinds.Kind)
    text, name = "\U0001F600" * kinds.MAX_TEXT, "\U0001F600" * MAX_NAME
    largest = [kinds.Void(reason=text), kinds.Alarm(problem=text), Opened(problem=text),
               Agree(transcript=H, points=(-(2**40),) * 7, verdict=text),
               kinds.Seats(changes=tuple((s, name, bytes([s + 1]) * 32, "b" * 16, 6)
                                         for s in range(7))),
               kinds.Silent(seat=6), kinds.Back(seat=6), kinds.Consent(agree=True)]
    for message in largest:
        kind, body = kinds.encode_body(message)
        wire = seal_envelope(KEYS[0], table=TABLE, deal=2**32, sender=0, seq=2**32, prior=H,
                             kind=kind, body=body).wire
        assert 1.5 * len(wire) < KIND_CAPS[kind], kind
    with pytest.raises(CodecError, match="too large to send"):
        seal_envelope(KEYS[0], table=TABLE, deal=0, sender=0, seq=0, prior=H, kind="void",
                      body={"reason": "x" * KIND_CAPS["void"]})


@pytest.mark.parametrize("kind", sorted(KIND_CAPS))
def test_a_message_over_the_cap_of_its_kind_is_refused_before_it_is_decoded(
        kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """One byte over the cap of its kind, a message is refused from its length and first
    bytes, naming the kind and the cap, with nothing of it decoded; at the cap it is
    decoded (and refused for what it holds)."""
    decoded: list[bytes] = []
    real = codec.unpack
    monkeypatch.setattr(codec, "unpack", lambda data, *a: decoded.append(data) or real(data, *a))
    cap = KIND_CAPS[kind]
    over = empty_arrays(kind, "x", cap + 1)
    assert len(over) == cap + 1 and read_head(over) is not None
    with pytest.raises(CodecError, match=f"an? {kind} message of {cap + 1} bytes, over the"
                                         f" {cap}-byte cap of its kind"):
        open_envelope(over, PUBLIC)
    assert decoded == []
    at_cap = empty_arrays(kind, "x", cap)
    assert len(at_cap) == cap
    open_envelope(at_cap, PUBLIC)  # (its body is the kinds' to refuse)
    assert decoded


def test_a_message_whose_first_bytes_name_no_kind_is_refused_over_a_small_cap() -> None:
    unknown = empty_arrays("gossip", "x", 4096)
    with pytest.raises(CodecError, match="whose first bytes name no kind of 4096 bytes, over"
                                         f" the {UNKNOWN_CAP}-byte cap"):
        open_envelope(unknown, PUBLIC)
    long_form = pack([pack([VERSION, TABLE, 0, 0, 0, H, "act", {"x": "y" * 1000}]), b"s" * 64])
    long_form = long_form.replace(b"\xa3act", b"\xd9\x03act")  # (a str 8 of the kind: no fixstr)
    with pytest.raises(CodecError, match="name no kind"):
        open_envelope(long_form, PUBLIC)
    with pytest.raises(CodecError, match="unknown message kind"):  # (a small one: said why)
        env = open_envelope(empty_arrays("gossip", "x", 300), PUBLIC)
        kinds.decode_body(env.kind, env.body, env.sender)


def test_the_largest_cap_costs_a_few_mib_at_most() -> None:
    """The most costly content, byte for byte, at the largest cap (a ``cheat``'s): decoded
    and refused within a few MiB of memory (a 256 KiB envelope, the cap of every kind
    before, took 33 MiB)."""
    wire = empty_arrays("cheat", "first", KIND_CAPS["cheat"])
    tracemalloc.start()
    try:
        with pytest.raises(CodecError):
            env = open_envelope(wire, PUBLIC)
            kinds.decode_body(env.kind, env.body, env.sender)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 2**20


def test_a_sealed_body_opens_only_for_its_recipient_and_proves_its_sender() -> None:
    secret = X25519PrivateKey.from_private_bytes(b"\x05" * 32)
    other = X25519PrivateKey.from_private_bytes(b"\x06" * 32)
    ct = seal(KEYS[0], public_bytes(secret.public_key()), table=TABLE, deal=2, sender=0,
              recipient=1, content=[[4, b"k"]])
    assert unseal(ct, secret, PUBLIC[0], table=TABLE, deal=2, sender=0, recipient=1) == \
        [[4, b"k"]]
    with pytest.raises(CodecError, match="does not decrypt"):
        unseal(ct, other, PUBLIC[0], table=TABLE, deal=2, sender=0, recipient=1)
    with pytest.raises(CodecError, match="does not decrypt"):  # bound to the recipient
        unseal(ct, secret, PUBLIC[0], table=TABLE, deal=2, sender=0, recipient=2)
    with pytest.raises(CodecError, match="not signed by seat 0"):
        unseal(ct, secret, PUBLIC[3], table=TABLE, deal=2, sender=0, recipient=1)
    tampered = bytearray(ct)
    tampered[-1] ^= 1
    with pytest.raises(CodecError, match="does not decrypt"):
        unseal(bytes(tampered), secret, PUBLIC[0], table=TABLE, deal=2, sender=0, recipient=1)


def test_a_sealed_body_bound_with_a_boolean_for_a_number_is_refused() -> None:
    """msgpack's ``true`` is not the number 1: a body that names its deal, sender or
    recipient with it is bound to nothing (as a strict implementation reads it)."""
    content = [[4, b"k" * 32]]
    for fields in ([TABLE, True, 0, 1, content], [TABLE, 1, False, 1, content],
                   [TABLE, 1, 0, True, content]):
        inner = pack(fields)
        blob = pack([inner, KEYS[0].sign(SEALED_DOMAIN + inner)])
        with pytest.raises(CodecError, match="bound to another table"):
            check_sealed(blob, PUBLIC[0], table=TABLE, deal=1, sender=0, recipient=1)
    inner = pack([TABLE, 1, 0, 1, content])
    blob = pack([inner, KEYS[0].sign(SEALED_DOMAIN + inner)])
    assert check_sealed(blob, PUBLIC[0], table=TABLE, deal=1, sender=0, recipient=1) == content


def test_the_roster_round_trips_and_refuses_nonsense() -> None:
    roster = make_roster(TABLE, "bidwhist", [public_bytes(k) for k in PUBLIC],
                         bots=["", "ismcts", "", ""])
    again = decode_roster(roster.encode())
    assert again == roster and again.digest() == roster.digest()
    assert roster.seats[1].run_by == 0
    with pytest.raises(CodecError, match="two seats with one identity"):
        make_roster(TABLE, "bidwhist", [public_bytes(PUBLIC[0])] * 4)
    with pytest.raises(CodecError, match="not played by 3"):
        make_roster(TABLE, "bidwhist", [public_bytes(k) for k in PUBLIC[:3]])
    wire = roster.to_wire()
    wire[2] = {"kitty": 4}
    with pytest.raises(CodecError, match="roster: option 'kitty' must be 5 or 6, not 4"):
        decode_roster(pack(wire))
    wire[2] = {"kitty": 6}  # the default: a roster lists only what differs
    with pytest.raises(CodecError, match="exactly the values that differ"):
        decode_roster(pack(wire))
    other = make_roster(TABLE, "bidwhist", [public_bytes(k) for k in reversed(PUBLIC)])
    assert other.safety_number() != roster.safety_number()


def test_the_golden_vectors_hold() -> None:
    """The stored vectors are what this implementation computes (except the HPKE
    ciphertext, which it must open to the stored inner blob)."""
    stored = json.loads(VECTORS.read_text())
    ciphertext = bytes.fromhex(stored["sealed"]["ciphertext"])
    assert json.loads(dumps(build(ciphertext))) == stored
    sealed = stored["sealed"]
    secret = X25519PrivateKey.from_private_bytes(bytes.fromhex(sealed["recipient_private"]))
    table = bytes.fromhex(stored["roster"]["table"])
    deal = sealed["deal"]
    assert deal == 259  # both low bytes non-zero: the deal's byte order shows
    content = unseal(ciphertext, secret, PUBLIC[0], table=table, deal=deal, sender=0,
                     recipient=1)
    assert [[s, k.hex()] for s, k in content] == sealed["content"]
    blob = bytes.fromhex(sealed["blob"])
    assert check_sealed(blob, PUBLIC[0], table=table, deal=deal, sender=0, recipient=1) \
        == content
    for vector in stored["envelopes"]:  # each wire opens to its fields
        env = open_envelope(bytes.fromhex(vector["wire"]), PUBLIC)
        assert (env.sender, env.seq, env.kind, env.payload.hex()) == (
            vector["sender"], vector["seq"], vector["kind"], vector["payload"])


# ------------------------------------------------- text from another peer

FORGERIES = [
    "cards\n[host] ana left the table",  # a forged line
    "ok\r[host] fake",  # a carriage return over the line
    "\x1b]0;pwned\x07 title",  # OSC: the window title
    "\x1b[2J cleared",  # the screen cleared
    "right\u202eto left",  # a bidirectional override
    "tab\there",
    "nul\x00byte",
]


@pytest.mark.parametrize("text", FORGERIES)
def test_text_from_a_peer_is_one_safe_line(text: str) -> None:
    shown = kinds.printable(text)
    assert shown.isprintable() and "\n" not in shown and "\x1b" not in shown
    assert len(shown) == len(text)  # one mark for each character made safe
    assert len(kinds.printable(text * 100, 80)) == 80


@pytest.mark.parametrize("text", FORGERIES)
def test_a_message_text_that_is_not_one_printable_line_is_refused(text: str) -> None:
    """Without the check the text decodes as it is and reaches every screen that shows
    the alarm (the attack); with it the message is malformed, and says which field."""
    assert not text.isprintable()  # what the old check (a length) let through
    with pytest.raises(CodecError, match=r"alarm\.problem must be printable text on one line"):
        kinds.decode_body("alarm", {"problem": text}, 1)
    with pytest.raises(CodecError, match=r"void\.reason must be printable"):
        kinds.decode_body("void", {"reason": text}, 1)
    assert kinds.decode_body("alarm", {"problem": kinds.clip(text)}, 1) \
        == kinds.Alarm(problem=kinds.printable(text))  # what a seat itself sends is safe


def test_a_field_name_or_a_kind_from_a_peer_is_not_echoed_raw() -> None:
    with pytest.raises(CodecError) as caught:
        kinds.decode_body("alarm", {"problem": "x", "evil\n[host] y": 1}, 1)
    assert "\n" not in str(caught.value) and "unknown field(s) evil?[host] y" in str(caught.value)
    key = identities()[0]
    wire = seal_envelope(key, table=b"t" * 16, deal=0, sender=0, seq=0, prior=b"p" * 32,
                         kind="a\x1b[2Jb", body={}).wire
    with pytest.raises(CodecError, match="payload kind must be a short word") as refused:
        open_envelope(wire, [key.public_key()])
    assert "\x1b" not in str(refused.value)
