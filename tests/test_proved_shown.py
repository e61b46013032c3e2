"""When a card counts as shown at a proved table (docs/protocol.md, "When a card counts
as shown"), against play: every ``pact`` carries its mover's shares of exactly the
slots it shows that do not count as shown, the slots kept by the doc's rule from the
transcript alone (a share to everyone makes a slot shown; in Control Nut! a bid card
goes back into a hand when its auction ends, the winner's at its ``give``), and a HAND
victim's re-mix takes a returned bid card, which the deck's messages read alone
(``verify_deal``) refuse as "was shown to everyone"."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.protocol.errors import RemoteProtocolError
from p2pcards.protocol.proved.deck import verify_deal
from p2pcards.protocol.proved.messages import KeyShare, Message, Remix, Shares, Shuffle
from p2pcards.table.kinds import Kind, ProvedAct, ProvedShares, decode_body
from p2pcards.table.memory import MemoryTable
from p2pcards.table.roster import PIPELINED_DECK, PROVED_DECK
from p2pcards.table.run import DealRun
from p2pcards.table.verify import verify


@dataclass
class Shown:
    """The doc's rule, kept from the transcript alone."""

    shown: set[int] = field(default_factory=set)
    """The slots that count as shown."""
    once: set[int] = field(default_factory=set)
    """Every slot ever shown to everyone."""
    bids: list[int] = field(default_factory=list)
    """Control Nut!: the slots bid in the auction under way."""
    again: list[int] = field(default_factory=list)
    """Slots whose shares a move carried although every seat knew the card."""
    remixed: list[int] = field(default_factory=list)
    """Slots shown once that a re-mix took."""

    def shares(self, shares: Shares) -> None:
        if shares.to is None:
            self.shown |= set(shares.slots)
            self.once |= set(shares.slots)
        else:
            self.shown -= set(shares.slots)

    def move(self, message: ProvedAct, game: str) -> None:
        due = [s for s in message.shown if s not in self.shown]
        got = [] if message.shares is None else list(message.shares.slots)
        assert got == due, f"{message.action}: shares of {got}, the rule says {due}"
        self.again += [s for s in due if s in self.once]
        if message.shares is not None:
            self.shares(message.shares)
        if game != "controlnut":
            return
        if message.action.startswith("bid "):
            self.bids += message.shown
        elif message.action.startswith("give "):  # the auction's bid cards are in hands
            self.shown -= set(self.bids)  # (the losers' since its last bid: nothing is
            self.bids = []  # shown in between)


def deck_messages(run: DealRun) -> list[Message]:
    """The deal's proved deck messages in transcript order (a move's shares included)."""
    out: list[Message] = []
    for env in run.envelopes:
        message = decode_body(env.kind, env.body, env.sender)
        if isinstance(message, KeyShare | Shuffle | Remix):
            out.append(message)
        elif isinstance(message, ProvedShares):
            out.extend(message.shares)
        elif isinstance(message, ProvedAct) and message.shares is not None:
            out.append(message.shares)
    return out


def follow(run: DealRun, game: str) -> Shown:
    rule = Shown()
    for env in run.envelopes:
        message = decode_body(env.kind, env.body, env.sender)
        if isinstance(message, ProvedShares):
            for shares in message.shares:
                rule.shares(shares)
        elif isinstance(message, ProvedAct):
            rule.move(message, game)
        elif isinstance(message, Remix):
            assert not set(message.slots) & rule.shown  # (the table's re-mix: never)
            rule.remixed += [s for s in message.slots if s in rule.once]
    return rule


@pytest.mark.parametrize(("game", "players", "seed", "deal", "number"), [
    ("bidwhist", 4, 1, 1, 0), ("nullern", 2, 5, 1, 19), ("pasur", 3, 12, 1, 0)])
def test_no_other_game_puts_a_shown_card_back_into_a_hand(
        game: str, players: int, seed: int, deal: int, number: int) -> None:
    table = MemoryTable(game, players, seed, [heuristic_bot] * players)
    for session in table.sessions:
        session.machine.deals, session.machine.scored = deal, number
    table.play(deals=1)
    assert not table.rejected
    run = table.sessions[0].finished[0]
    assert run.verdict == "ok" and run.index == deal
    rule = follow(run, game)
    assert rule.once and not rule.again and not rule.remixed


@pytest.mark.parametrize("deck", [PROVED_DECK, PIPELINED_DECK])
def test_a_control_nut_bid_card_back_in_a_hand_is_shown_with_its_movers_share_again(
        deck: str) -> None:
    """Seed 5, the first deal: later auctions and tricks show returned cards again, and
    a HAND victim re-mixes a hand holding bid cards returned to it."""
    table = MemoryTable("controlnut", 4, 5, [heuristic_bot] * 4, deck=deck)
    table.play(deals=1)
    assert not table.rejected
    runs = [session.finished[0] for session in table.sessions]
    assert {run.verdict for run in runs} == {"ok"}
    rule = follow(runs[0], "controlnut")
    assert rule.again  # each one a move the words "not yet shown to everyone" refuse
    assert rule.remixed
    report = verify(table.sessions[0].export())  # the watcher keeps the rule too
    assert report.refusal is None and report.deals[0].verdict == "ok"
    # the deck's messages alone do not say the card went back: they refuse the re-mix
    messages = deck_messages(runs[0])
    with pytest.raises(RemoteProtocolError) as refused:
        verify_deal(runs[0].deck.context, messages)
    assert refused.value.step == "remix"
    assert refused.value.reason == f"slot {rule.remixed[0]} was shown to everyone"
    first = next(i for i, m in enumerate(messages) if isinstance(m, Remix))
    verify_deal(runs[0].deck.context, messages[:first])  # (all well up to it)
    assert any(env.kind == Kind.PROVED_REMIX for env in runs[0].envelopes)
