"""The host between two games: the players' words, in the order the host takes them.

When a game is over here, its outputs are written once (not again for a game
restored after its end was recorded) and its result goes into the series
(:meth:`Interval.game_over`).  Then the host waits for the table's word
(:meth:`Interval.agreed`): every peer's consent to the same proposal (the next
game may begin), or someone leaving (no more games: every link is told, with
``end``).  The words themselves and their rules are the agreement's
(:class:`~p2pcards.net.again.Agreement`, sans I/O); here they are taken from
the links in one order, each relayed to every link (its sender's too), and a
headless host agrees on its own.  A word that comes before this host's game is
over waits for it.  A host that no person at the table can ask for another
game closes the table; one run with ``--once`` leaves.

What the interval keeps runs across games: their number, the table ids of the
games before this one, the consents that began this game (sent again to a
peer that comes back), why the table closed.
"""

from __future__ import annotations

import secrets
from collections.abc import Callable
from pathlib import Path

import trio
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.net.again import LEAVE, Agreement, tell
from p2pcards.net.driver import Driver
from p2pcards.net.frames import Again, End, Error, FrameError
from p2pcards.net.journal import Journal
from p2pcards.net.lobby import own_seat
from p2pcards.net.peer import Peer
from p2pcards.net.relay import Seated, TableRelay
from p2pcards.net.series import Place, fresh_journal, result_of, settle
from p2pcards.table.roster import Roster

TABLE_ID_BYTES = 16


class Interval:
    """The host's games one after another: the words between two of them."""

    def __init__(self, key: Ed25519PrivateKey, relay: TableRelay, place: Place, *,
                 game: Callable[[], Peer | None], say: Callable[[str], None], asks: bool,
                 headless: bool, once: bool):
        self.key = key
        """The host's identity key: it signs the host's own words (seat 0)."""
        self.relay = relay
        self.game = game
        """The host's peer of the game now (None before the first begins)."""
        self.say = say
        self.asks = asks
        """A person at this host may ask for another game."""
        self.headless = headless
        """No person at this host: it agrees to every proposal on its own."""
        self.once = once
        """Leave after the game (no other game with the same players)."""
        self.series = place.series
        """The record of the games played on this invite (None: kept in memory only)."""
        self.number = place.number
        """This game's number in the series."""
        assert place.first is not None
        self.first: Path = place.first
        """The first game's journal: the others' are named after it."""
        self.on_over = place.on_over
        self.tables: list[bytes] = list(self.series.tables[:-1]) if self.series else []
        """The table ids of the games played before this one."""
        self.agreement: Agreement | None = None
        """The players' words since this game ended (None: it is not over here yet)."""
        self.started_by: list[Again] = []
        """The consents that started this game (sent to a peer that comes back)."""
        self.early: dict[bytes, Again] = {}
        """Words that came before this host's game was over, the newest per identity."""
        self.ended = ""
        """Why no more games are played ("" while the table may go on)."""
        self.decided = trio.Event()

    def _peer(self) -> Peer:
        peer = self.game()
        assert peer is not None
        return peer

    async def game_over(self, peer: Peer, driver: Driver, journal: Journal) -> None:
        """The game is over here: its outputs (once: not again for a game restored after
        its end was recorded), its result in the series, its journal kept as done.
        What is queued for the links goes out first: verifying the whole transcript
        holds this loop for seconds on a busy machine, and the game's last message,
        relayed from the seat that sent it and still queued for the others, would reach
        them only after their grace period (they would claim its sender silent)."""
        recorded = self.series is not None and self.series.between
        await self.relay.sent()
        if not recorded:
            if self.on_over is not None:
                await self.on_over(peer, driver, self.number)
            if self.series is not None:
                self.series.finish(result_of(peer))
        settle(peer, journal)

    def _can_ask(self) -> bool:
        """Whether a person sits at the table who may ask for another game: at this
        host, or at a joiner linked now (its ``auth`` named no bot).  (A person away
        when the game ends does not keep a table of bots waiting.)"""
        return self.asks or self.relay.people()

    async def agreed(self) -> bool:
        """Between two games: wait for every peer's consent to another game (True: it
        may begin) or for someone to leave (False; every link is told)."""
        if self.agreement is None:
            self.agreement = Agreement(self._peer().roster, self.number)
        if self.ended:
            pass
        elif self.once:
            self.leave()
        elif not self._can_ask():
            self.end("no one at this table can ask for another game (a bot plays every"
                     " seat): the table closes")
        else:
            early, self.early = self.early, {}
            for key, word in early.items():  # (its sender may have gone since: a word
                try:                         # that leaves still counts)
                    self._take(word)
                except FrameError as exc:
                    seated = self.relay.by_key(key)
                    if seated is not None:
                        self.relay.closing(seated, str(exc))
                        self.relay.drop(seated, Error(reason=str(exc)))
            self._consent()
        await self.decided.wait()
        self.decided = trio.Event()
        return not self.ended

    def word(self, seated: Seated, word: Again) -> None:
        """A word from a link: checked and taken once this host's game is over (kept
        until then); FrameError if it may not be said."""
        own = own_seat(self.relay.lobby.entries, seated.key)
        if word.seat != own:
            raise FrameError(f"again: a word in seat {word.seat}'s name, not its own")
        if word.table in self.tables or self.ended:
            return  # (about a game before this one, or the table is closing: nothing)
        peer = self.game()
        if peer is None or word.table != peer.roster.table:
            raise FrameError("again: a word about another table's game")
        if self.agreement is None:
            self.early[seated.key] = word  # (this host's game is not over yet)
            return
        self._take(word)

    def _take(self, word: Again) -> None:
        assert self.agreement is not None
        outcome = self.agreement.take(word)
        if outcome == "stale":
            return
        self.relay.broadcast(word)  # to every link, the sender's too: the one order
        names = [e.name for e in self._peer().roster.seats]
        self.say(tell(self.agreement, word, outcome, names, 0, headless=self.headless))
        if outcome == "leave":
            self.end(f"{names[word.seat]} left: no more games at this table")
        elif self.agreement.complete:
            self.decided.set()
        elif outcome == "proposal":
            self._consent()

    def _consent(self) -> None:
        """A headless host agrees to the proposal that stands."""
        agreement = self.agreement
        if not self.headless or agreement is None or agreement.proposal is None \
                or 0 in agreement.agreed or self.ended:
            return
        self._take(agreement.word(self.key, 0, None, None))

    def say_again(self, game: str | None, options: dict[str, int] | None) -> str | None:
        """The host's person asks for another game (``game`` None: agrees to the
        proposal, or proposes the same game): None, or why not."""
        if self.agreement is None or self.ended:
            return "the game is not over yet" if not self.ended else self.ended
        try:
            word = self.agreement.word(self.key, 0, game, options)
        except ValueError as exc:
            return str(exc)
        if word.round == self.agreement.round and 0 in self.agreement.agreed:
            return "you agreed already: waiting for the others"
        self._take(word)
        return None

    def leave(self) -> None:
        """This host's player leaves: no more games (every link is told who left)."""
        if self.agreement is None:
            self.agreement = Agreement(self._peer().roster, self.number)
        if not self.ended:
            self._take(self.agreement.word(self.key, 0, LEAVE, None))

    def end(self, reason: str) -> None:
        """No more games at this table, for ``reason``: every link is told."""
        if self.ended:
            return
        self.ended = reason
        if self.series is not None:
            self.series.end(reason)
        self.relay.broadcast(End(reason=reason))
        if not reason.endswith("no more games at this table"):
            self.say(reason)
        self.decided.set()

    def advance(self, old: Peer) -> tuple[Roster, Journal]:
        """Every peer agreed: the next game's roster (a fresh table id, the same seats)
        and its journal, opened; the series goes on to it."""
        assert self.agreement is not None
        agreement = self.agreement
        table = secrets.token_bytes(TABLE_ID_BYTES)
        while table in self.tables or table == old.roster.table:
            table = secrets.token_bytes(TABLE_ID_BYTES)
        roster = agreement.next_roster(table)
        journal = Journal.open(fresh_journal(self.first, self.number + 1))
        self.number += 1
        if self.series is not None:
            self.series.begin(roster.table)
        self.tables.append(old.roster.table)
        self.started_by = agreement.frames()
        self.agreement = None
        return roster, journal
