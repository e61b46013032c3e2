"""Identities, the friends list, invites and frames: the parts of the node that need
no peer."""

from __future__ import annotations

import os
import stat
import struct
from dataclasses import replace
from pathlib import Path

import msgpack
import pytest
import trio
import trio.testing

from p2pcards.cli.main import main
from p2pcards.net.frames import MAX_FRAME, FrameError
from p2pcards.net.frames import pack_map as encode
from p2pcards.net.identity import (
    Friends,
    IdentityError,
    decode_id,
    device_id,
    load_or_create,
    show_id,
    write_private_text,
)
from p2pcards.net.invite import Invite, InviteError, parse_invite
from p2pcards.net.wire import Link, LinkClosed


def test_identity_is_created_once_owner_only(tmp_path: Path) -> None:
    first = load_or_create(tmp_path)
    again = load_or_create(tmp_path)
    assert first.public == again.public and first.id == device_id(first.public)
    for path in (first.key_path, first.cert_path):
        assert path.stat().st_mode & 0o777 == 0o600
    first.cert_path.unlink()  # a lost certificate is made again for the same key
    assert load_or_create(tmp_path).id == first.id
    text = show_id(first.id)
    assert len(text.split("-")) == 13 and decode_id(text) == first.id
    first.key_path.write_text("not a key")
    with pytest.raises(IdentityError, match=r"identity\.key: not a usable identity key"):
        load_or_create(tmp_path)


def test_friends_pin_names_and_warn_loudly(tmp_path: Path) -> None:
    friends = Friends.load(tmp_path)
    ann, mallory = device_id(b"a" * 32), device_id(b"m" * 32)
    assert friends.check("ann", ann) is None  # first seen: pinned
    assert Friends.load(tmp_path).check("ann", ann) is None  # kept on disk
    warning = Friends.load(tmp_path).check("ann", mallory)
    assert warning is not None and warning.startswith("WARNING: 'ann'")
    assert show_id(ann, 4) in warning and show_id(mallory, 4) in warning
    (tmp_path / "friends.json").write_text("[1, 2]")
    with pytest.raises(IdentityError, match="expected a map of names"):
        Friends.load(tmp_path)


def test_id_command_shows_the_device_id(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("P2PCARDS_HOME", str(tmp_path))
    assert main(["id"]) == 0
    out = capsys.readouterr().out
    assert f"device id: {show_id(load_or_create(tmp_path).id)}" in out


def test_invites_round_trip_and_name_what_is_wrong() -> None:
    ident = device_id(b"h" * 32)
    for host in ("127.0.0.1", "::1", "table.example"):
        invite = Invite(host, 45450, ident, b"t" * 16)
        assert parse_invite(str(invite)) == invite
    tofu = Invite("127.0.0.1", 1, None, b"t" * 16)
    assert parse_invite(str(tofu)).fingerprint is None
    good = str(Invite("127.0.0.1", 45450, ident, b"t" * 16))
    cases = {
        "http://x": "starts with",
        good.replace(":45450", ":99999"): "is not HOST:PORT",
        good.replace("/" + good.split("/")[3] + "/", "/ABC/"): "the fingerprint",
        good[:-2]: "token",
        good + "/more": r"p2pcards://HOST:PORT\[,HOST:PORT\.\.\.\]/FINGERPRINT/TOKEN",
    }
    for text, problem in cases.items():
        with pytest.raises(InviteError, match=problem):
            parse_invite(text)


async def test_frames_are_checked_before_they_are_read() -> None:
    left, right = trio.testing.memory_stream_pair()
    reader, writer = Link(left), Link(right)
    await writer.send_map({"t": "hello", "x": b"\x00" * 10})
    assert await reader.receive_map() == {"t": "hello"}  # (a field not declared: skipped)
    bad = {
        struct.pack(">I", MAX_FRAME + 1): "over the",
        struct.pack(">I", 3) + b"\xc1\xc1\xc1": "not msgpack",
        struct.pack(">I", 1) + msgpack.packb(7): "must be a map",
        encode({"x": 1}): "name its type",
        encode({"t": 5}): "name its type",
    }
    for data, reason in bad.items():
        left, right = trio.testing.memory_stream_pair()
        await right.send_all(data)
        with pytest.raises(FrameError, match=reason):
            await Link(left).receive()
    left, right = trio.testing.memory_stream_pair()
    await right.send_all(encode({"t": "hello"})[:-1])
    await right.aclose()
    with pytest.raises(FrameError, match="closed inside a frame"):
        await Link(left).receive()
    left, right = trio.testing.memory_stream_pair()
    await right.aclose()
    with pytest.raises(LinkClosed):
        await Link(left).receive()
    with pytest.raises(FrameError, match="cap"):
        encode({"t": "msg", "wire": b"x" * (MAX_FRAME + 1)})


def test_chat_lines_are_signed_and_shown_once() -> None:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (  # noqa: PLC0415
        Ed25519PrivateKey,
    )

    from p2pcards.net.links import Chat  # noqa: PLC0415

    keys = [Ed25519PrivateKey.generate() for _ in range(2)]
    publics = [k.public_key() for k in keys]
    table = b"t" * 16
    sender, reader = Chat(), Chat()
    first = sender.frame(keys[1], table, 1, "hello\x1b[2J")
    second = sender.frame(keys[1], table, 1, "again")
    assert second.n > first.n
    assert reader.take(first, publics, table) == (1, "hello?[2J")  # no escapes printed
    with pytest.raises(FrameError, match="shown again"):  # a relay replaying a line
        reader.take(first, publics, table)
    assert reader.take(second, publics, table) == (1, "again")
    forged = replace(sender.frame(keys[0], table, 1, "I fold"), seat=1)
    with pytest.raises(FrameError, match="bad signature"):
        reader.take(forged, publics, table)


def test_private_text_is_the_owner_s_alone_even_over_a_readable_file(tmp_path: Path) -> None:
    """The invite file carries the table's token: written mode 0600 whatever the umask,
    and over a file that was readable by all (as plain write_text leaves it)."""
    path = tmp_path / "invite"
    old = os.umask(0o022)
    try:
        path.write_text("old\n")  # the way it was written before: readable by all
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        write_private_text(path, "p2pcards://host:1/fp/token\n")
    finally:
        os.umask(old)
    assert path.read_text() == "p2pcards://host:1/fp/token\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert not (tmp_path / "invite.part").exists()
