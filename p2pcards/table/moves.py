"""How each game's cards move through the deck: the deal mapping, the ledger of slots,
key releases, re-mixes, reshuffles and chance (docs/protocol.md, "Cards and slots").

:class:`Movements` is the part of :class:`p2pcards.table.session.Session` that knows
the games: which cards a move shows, where hidden cards went, what the deal shows
after looking at other cards (Pasur's opening jack), how a stock is dealt in order
and reshuffled, how Control Nut!'s chance moves are drawn jointly and HAND's steal
made, how Nullern's blind cards are shown.  The session drives it.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from p2pcards.games import Game, HandState
from p2pcards.games.core import CHANCE, SPECTATOR, ChanceKind
from p2pcards.protocol.curve import SecretSource
from p2pcards.protocol.errors import RemoteProtocolError
from p2pcards.protocol.messages import Remixed
from p2pcards.protocol.randomness import JointRandom, choice, sample
from p2pcards.table.kinds import Act
from p2pcards.table.state import (
    AUDIT,
    DEAL,
    EVERYONE,
    PLAY,
    SHOWN,
    WATCHER,
    DealRun,
    Event,
    Step,
)


@dataclass(frozen=True, slots=True)
class SeedDraw:
    """A joint seed as a chance event draws from it (``HandState.drawn_chance``)."""

    seed: bytes

    def choice(self, n: int) -> int:
        return choice(self.seed, n)

    def sample(self, n: int, k: int) -> list[int]:
        return sample(self.seed, n, k)


class Movements:
    """The game-knowing half of a session (see the module's docstring)."""

    me: int
    players: int
    game: Game
    options: dict[str, int]
    table: bytes
    source: SecretSource
    keep_states: bool
    queue: deque[Step]
    events: list[Event]
    phase: str
    run: DealRun | None

    def _forced(self) -> int | None:
        """The move the table makes for the seat to move when it has no choice and
        does not see its card (Nullern's blind round), once everyone has shown it."""
        run = self.run
        if run is None or run.public is None or self.phase != PLAY:
            return None
        view = run.public
        seat = view.current_player()
        if not self._blind_play(view, seat):
            return None
        held = self._held(run, seat)
        if not held or held[0] not in run.deck.opened:
            return None
        return run.ids[run.deck.opened[held[0]]]

    def _blind_play(self, view: HandState, seat: int) -> bool:
        """Whether ``seat`` must now play a card it does not see."""
        if seat < 0 or view.visible(seat, seat) or not view.count[seat]:
            return False
        return all(view.shown_cards(code) for code in view.legal_actions())

    def _held(self, run: DealRun, place: int) -> list[int]:
        """The slots in ``place``, in slot order."""
        return sorted(s for s, p in run.place.items() if p == place and s not in run.deck.retired)

    def _moved(self, run: DealRun, before: HandState, after: HandState,
               slots: tuple[int, ...]) -> None:
        """Follow the engine's face-down moves in the ledger and queue the key releases
        and re-mixes they call for.

        The engine says how many cards each hidden place holds; the ledger says which
        slots are there, shown ones and hidden ones.  Where a place must hold more
        hidden slots than the ledger gives it, hidden cards have moved there: the
        slots the move names, a whole place, or the next ones of a stock."""
        fell, rose = self._hidden_gaps(run, after)
        if not rose:
            return
        if len(rose) > 1:
            self._deal_in_order(run, before, after, fell[0])
            return
        (src,), (dst,) = fell, rose
        moving = list(slots) if slots else sorted(s for s, p in run.place.items()
                                                  if p == src and s not in run.deck.retired)
        for slot in moving:
            run.place[slot] = dst
        seers = [t for t in range(self.players) if after.visible(dst, t)]
        for seat in seers:
            need = tuple(s for s in moving if seat not in run.knows.get(s, set()))
            if not need:
                continue
            lockers = sorted({p for s in need for p in run.deck.lockers[s]} - {seat})
            for locker in lockers:
                self.queue.append(Step("keys", locker, ((seat, need),)))
            for slot in need:
                run.knows.setdefault(slot, set()).add(seat)
            self.queue.append(Step("opened", seat))
            if not slots:  # a whole place picked up: its holder re-mixes what it holds
                held = tuple(sorted(s for s, p in run.place.items()
                                    if p == dst and s not in run.deck.retired))
                self.queue.append(Step("remix", seat, slots=held))

    def _hidden_gaps(self, run: DealRun, view: HandState) -> tuple[list[int], list[int]]:
        """(places with more hidden slots in the ledger than the engine's count allows,
        places with fewer)."""
        everyone = self.players
        have = [0] * len(view.count)
        shown = [0] * len(view.count)
        for slot, place in run.place.items():
            if place < 0 or slot in run.deck.retired:
                continue
            if len(run.knows.get(slot, ())) == everyone:
                shown[place] += 1
            else:
                have[place] += 1
        deck_mask = run.deck_mask
        fell, rose = [], []
        for place, count in enumerate(view.count):
            need = count - (view.may[place] & ~deck_mask).bit_count() - shown[place]
            if have[place] > need:
                fell.append(place)
            elif have[place] < need:
                rose.append(place)
        return fell, rose

    def _deal_in_order(self, run: DealRun, before: HandState, after: HandState,
                       src: int) -> None:
        """Cards dealt one at a time from ``src`` (Pasur's stock, next card first) from
        the dealer's left: each seat gets its keys from every other, then reports."""
        total = before.count[src] - after.count[src]
        slots = self._held(run, src)[:total]
        got: dict[int, list[int]] = {}
        for i, slot in enumerate(slots):
            seat = (run.dealer + 1 + i) % self.players
            run.place[slot] = seat
            run.knows[slot] = {seat}
            got.setdefault(seat, []).append(slot)
        for sender in range(self.players):
            self.queue.append(Step("keys", sender, tuple(
                (seat, tuple(mine)) for seat, mine in sorted(got.items()) if seat != sender)))
        self.queue.extend(Step("opened", seat) for seat in range(self.players))

    def _remixed(self, run: DealRun, sender: int, message: Remixed) -> None:
        first = len(run.deck.points) - len(message.slots)
        place = run.place[message.slots[0]]
        for m in range(len(message.slots)):
            run.place[first + m] = place
            run.knows[first + m] = {sender}

    def _reshuffle(self, run: DealRun) -> bool:
        """The chance move of a secret reshuffle of the stock (Pasur's opening jack put
        back): begin the deck's round; once it is locked, the new slots are the stock
        in order and every view takes the chance move.  True when the move was made."""
        assert run.public is not None
        stock = run.public.table_chance().source
        if not run.reshuffling:
            run.reshuffling = tuple(self._held(run, stock))
            run.deck.begin_reshuffle(list(run.reshuffling))
            return False
        if run.deck.expected() is not None:
            return False
        view = run.public
        assert view is not None
        first = len(run.deck.points) - len(run.reshuffling)
        new = tuple(range(first, len(run.deck.points)))
        for slot in new:
            run.place[slot] = stock
            run.knows[slot] = set()
        run.reshuffling = ()
        text = view.format_action(view.reshuffled_chance(), seat=SPECTATOR)
        code = view.parse_action(text)
        self._apply_both(run, code, code)
        run.acts.append((CHANCE, Act(action=text, slots=new)))
        return True

    def _apply_both(self, run: DealRun, public: int, private: int) -> None:
        """A move to the public view, and as this seat knows it to its own view (unless
        that view has already met a contradiction)."""
        assert run.public is not None
        run.public.apply(public)
        if run.view is not None and run.view is not run.public and not run.suspect:
            run.view.apply(private)
        if self.keep_states and run.view is not None:  # awaiting: recorded once it has them
            run.views.append(None if run.view.awaiting else run.view.knowledge())

    def _chance(self, run: DealRun) -> bool:
        """A chance move drawn by joint randomness (Control Nut!: the controls in play,
        the control auctioned next, HAND's pick).  Queues what it needs, and makes the
        move when it is all in; True when the move was made."""
        view = run.public
        assert view is not None
        chance = view.table_chance()
        if chance.kind == ChanceKind.TAKE and run.steal is None:
            # the source first re-mixes every card it holds, then a draw picks one
            victim, thief = chance.source, chance.target
            run.steal = (victim, thief, -1)
            self.queue.append(Step("remix", victim, slots=tuple(self._held(run, victim))))
            return False
        if run.draw is None:
            label = b"p2pcards/chance/" + self.table + run.index.to_bytes(8, "big") \
                + run.draws.to_bytes(2, "big")
            run.draws += 1
            run.draw = JointRandom(label, self.players, self.me, self.source)
            self.queue.extend(Step("commit", s) for s in range(self.players))
            self.queue.extend(Step("share", s) for s in range(self.players))
            return False
        seed = run.draw.seed()
        if run.steal is not None:
            victim, thief, slot = run.steal
            if slot < 0:  # the pick: the victim's key of the slot goes to the thief
                held = self._held(run, victim)
                slot = held[choice(seed, len(held))]
                run.steal = (victim, thief, slot)
                run.place[slot] = thief
                run.knows[slot] = {victim, thief}
                self.queue.append(Step("keys", victim, ((thief, (slot,)),)))
                self.queue.append(Step("opened", thief))
                return False
            if self.me == thief and slot not in run.deck.opened:
                return False  # its cards did not open: its alarm stops the deal
            card = run.ids[run.deck.opened[slot]] if self.me in (victim, thief) else None
            public = view.taken_chance(None)
            private = view.taken_chance(card)
            shown: tuple[int, ...] = (slot,)
            run.steal = None
        else:
            public = private = view.drawn_chance(SeedDraw(seed))
            shown = ()
        text = view.format_action(public, seat=SPECTATOR)
        run.draw = None
        self._apply_both(run, public, private)
        run.acts.append((CHANCE, Act(action=text, slots=shown)))
        self.events.append(Event("act", f"chance: {text}"))
        return True

    def _reveal_blind(self, run: DealRun, seat: int) -> None:
        """A seat to move that does not see its own card (Nullern's blind round): every
        seat shows its key of the card, which the table then plays."""
        view = run.public
        assert view is not None
        if not self._blind_play(view, seat):
            return
        held = self._held(run, seat)
        if not held or len(run.knows.get(held[0], ())) == self.players:
            return  # shown already (or being shown)
        slot = held[0]
        for locker in run.deck.lockers[slot]:
            self.queue.append(Step("keys", locker, ((EVERYONE, (slot,)),)))

    def _plan(self, run: DealRun) -> tuple[list[int], list[set[int]]]:
        """Each deck position's place at the deal (SHOWN: face up) and who sees it.

        The deal mapping is read off a deal of a deck in which no card changes the
        mapping (a rotation of the id order; Pasur shows one more card when the pool
        holds a lone jack, and the session asks for that card itself when it
        happens: ``Game.shown_after_deal``)."""
        ids = self._blank_deck(run)
        full = self.game.deal(ids, run.dealer, self.players, self.options, number=run.number)
        places = []
        for card in ids:  # (slot numbers are positions: the card ids are only a tool here)
            where = full.candidates(card)
            places.append(where[0] if where else SHOWN)
        seen: list[set[int]] = [set() for _ in ids]
        for seat in range(self.players):
            observed = self.game.observed_deck(ids, run.dealer, self.players, self.options, seat,
                                               run.number)
            for i, seen_card in enumerate(observed):
                if seen_card is not None:
                    seen[i].add(seat)
        return places, seen

    def _blank_deck(self, run: DealRun) -> list[int]:
        """A deck in which no card changes the deal mapping (a rotation of the id order:
        ``Game.cards_change_mapping``): the mapping is read off it, and a record whose
        cards are unknown (a forfeit before the audit) deals it."""
        for turn in range(len(run.ids)):
            ids = run.ids[turn:] + run.ids[:turn]
            if not self.game.cards_change_mapping(ids, self.players):
                return ids
        return list(run.ids)

    def _queue_deal(self, run: DealRun) -> None:
        places, seen = self._plan(run)
        everyone = set(range(self.players))
        for slot, (place, seers) in enumerate(zip(places, seen, strict=True)):
            run.place[slot] = place
            run.knows[slot] = set(seers)
        for sender in range(self.players):
            grants: dict[int, list[int]] = {}
            for slot, seers in enumerate(seen):
                if seers == everyone:
                    grants.setdefault(EVERYONE, []).append(slot)
                else:
                    for seat in sorted(seers - {sender}):
                        grants.setdefault(seat, []).append(slot)
            self.queue.append(Step("keys", sender, tuple((r, tuple(s))
                                                         for r, s in sorted(grants.items()))))
        self.queue.extend(Step("opened", s) for s in range(self.players))
        self.phase = DEAL

    def _dealt(self, run: DealRun) -> None:
        """Every key of the deal is in: open this seat's cards (and those shown)."""
        run.opened = True
        mine = [slot for slot in range(len(run.ids)) if self.me in run.knows[slot]]
        self._open_all(run, mine)

    def _after_deal(self, run: DealRun) -> None:
        """Every seat has opened its cards: show what the deal shows after looking at
        other cards (Pasur's replacement for a lone opening jack), then make the view."""
        observed: list[int | None] = [None] * len(run.ids)
        for slot in range(len(run.ids)):
            if slot in run.deck.opened:
                observed[slot] = run.ids[run.deck.opened[slot]]
        extra = self.game.shown_after_deal(observed, self.players)
        if extra and not run.shown_extra:
            run.shown_extra = True
            for locker in range(self.players):
                self.queue.append(Step("keys", locker, ((EVERYONE, tuple(extra)),)))
            return
        shown = [card if len(run.knows.get(slot, ())) == self.players else None
                 for slot, card in enumerate(observed)]
        run.public = self.game.deal(shown, run.dealer, self.players, self.options,
                                    observer=SPECTATOR, number=run.number)
        if self.me == WATCHER:  # the watcher has no view of its own
            run.view = run.public
        else:
            run.view = self.game.deal(observed, run.dealer, self.players, self.options,
                                      observer=self.me, number=run.number)
        self._reconcile(run)
        if self.keep_states:
            run.views.append(run.view.knowledge())
        self.phase = PLAY

    def _reconcile(self, run: DealRun) -> None:
        """Put the cards shown to everyone where the engine put them (Pasur's opening
        jack goes back onto the stock, its replacement into the pool)."""
        view = run.public
        assert view is not None
        for slot, card in run.deck.opened.items():
            if len(run.knows.get(slot, ())) != self.players:
                continue
            where = view.candidates(run.ids[card])
            run.place[slot] = where[0] if len(where) == 1 else SHOWN
            if 0 <= run.place[slot] < self.players and run.deck.in_play(slot):
                run.deck.assign(slot, run.place[slot])  # a shown card back in a hand

    def _open_stolen(self, run: DealRun) -> None:
        """The thief opens the card it took as soon as the victim's key is in (before it
        reports in its ``opened``: a card that does not open stops the deal)."""
        if run.steal is None or run.steal[1] != self.me or run.steal[2] < 0:
            return
        slot = run.steal[2]
        if slot not in run.deck.opened and not run.problem and run.deck.can_open(slot):
            self._open_all(run, [slot])

    def _observe(self, run: DealRun) -> None:
        """Deliver to this seat's view the cards it awaits, once it can open them."""
        view = run.view
        if view is None or view is run.public or run.suspect:
            return
        for place in range(len(view.count)):
            if not view.awaiting >> place & 1:
                continue
            slots = [s for s, p in run.place.items() if p == place and s not in run.deck.retired]
            if not all(run.deck.can_open(s) for s in slots):
                return
            cards = self._open_all(run, slots)
            if cards is None:
                return
            contents = 0
            for card in cards:
                contents |= 1 << card
            view.observe(place, contents)
        if self.keep_states and run.views and run.views[-1] is None and not view.awaiting:
            run.views[-1] = view.knowledge()

    def _open_all(self, run: DealRun, slots: list[int]) -> list[int] | None:
        """The cards of ``slots`` (game ids), or None with :attr:`DealRun.problem` set."""
        cards = []
        for slot in slots:
            if not run.deck.can_open(slot):
                run.problem = run.problem or f"slot {slot}: a key is missing"
                return None
            try:
                cards.append(run.ids[run.deck.open(slot)])
            except RemoteProtocolError as error:
                run.problem = run.problem or error.reason
                return None
        return cards

    def _show(self, run: DealRun, slot: int) -> None:
        """Open a slot every key of which is public; one that opens to no card (a deck
        broken somewhere) stops the deal for its audit at every seat alike."""
        try:
            run.deck.open(slot)
        except RemoteProtocolError as error:
            run.problem = run.problem or error.reason
            self._alarm(run)

    def _alarm(self, run: DealRun) -> None:
        """A seat could not open its cards: the deal stops for its audit."""
        self.queue.clear()
        self.phase = AUDIT
        self.queue.extend(Step("audit", s) for s in range(self.players))
