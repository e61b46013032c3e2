"""Host and joiners in one process over real TLS on loopback: a whole game, and the
joiner pinning the host's certificate (tests/test_net_relay.py runs the host's logic
over memory streams)."""

from __future__ import annotations

from pathlib import Path

import pytest
import trio

from p2pcards.net.identity import Friends, encode_id, load_or_create, show_id
from p2pcards.net.invite import Invite
from tests.net_helpers import histories, make_host, make_joiner


async def test_a_game_over_tls_with_bots_on_two_peers(tmp_path: Path) -> None:
    host = make_host(tmp_path, players=4, bots=1)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.serve)
        joiner = make_joiner(tmp_path, invite, "joe", bots=1)
        nursery.start_soon(joiner.run)
    assert host.peer is not None and joiner.peer is not None
    assert host.peer.over and joiner.peer.over
    assert len(histories(host.peer, joiner.peer)) == 1
    roster = host.peer.roster
    assert [(e.name, e.bot, e.run_by) for e in roster.seats] == [
        ("hosty", "heuristic", 0), ("ben", "heuristic", 0), ("joe", "heuristic", 2),
        ("cy", "heuristic", 2)]
    said = "\n".join(joiner.say)  # type: ignore[arg-type]
    assert f"safety number: {roster.safety_number()}" in said
    assert "heuristic bot run by seat 2" in said
    assert not host.closed_reasons


async def test_pinned_fingerprint_mismatch_refuses_to_join(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.serve)
        other = load_or_create(tmp_path / "mallory").id
        joiner = make_joiner(tmp_path, Invite(invite.host, invite.port, other, invite.token),
                             "joe")
        with pytest.raises(BaseException) as caught:
            await joiner.run()
        assert "someone may be in between" in str(caught.value.exceptions[0]
                                                  if isinstance(caught.value, BaseExceptionGroup)
                                                  else caught.value)
        nursery.cancel_scope.cancel()


async def test_trust_on_first_use_shows_the_fingerprint(tmp_path: Path) -> None:
    host = make_host(tmp_path)
    asked: list[str] = []

    async def no(question: str) -> bool:
        asked.append(question)
        return False

    async def yes(question: str) -> bool:
        asked.append(question)
        return True

    async with trio.open_nursery() as nursery:
        invite = await nursery.start(host.serve)
        bare = Invite(invite.host, invite.port, None, invite.token)
        doubter = make_joiner(tmp_path, bare, "doubter")
        doubter.confirm = no
        with pytest.raises(BaseExceptionGroup, match="Exceptions from Trio nursery"):
            await doubter.run()
        joiner = make_joiner(tmp_path, bare, "joe")
        joiner.confirm = yes
        joiner.friends = Friends.load(tmp_path / "joe")
        nursery.start_soon(joiner.run)
    assert [show_id(host.identity.id) in q for q in asked] == [True, True]
    assert joiner.peer is not None and joiner.peer.over
    assert joiner.friends.pinned["hosty"] == encode_id(host.identity.id)
