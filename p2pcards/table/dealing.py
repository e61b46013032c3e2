"""Cards of the deal in progress at one seat: opening slots, moves to both views, chance.

Helpers of the phase machine and the handlers over a
:class:`~p2pcards.table.run.DealRun`; none of them changes what is due (a
chance move says which steps it needs, the phase machine queues them).
"""

from __future__ import annotations

from dataclasses import dataclass

from p2pcards.games.core import CHANCE, SPECTATOR, ChanceKind, HandState
from p2pcards.protocol.curve import SecretSource
from p2pcards.protocol.errors import RemoteProtocolError
from p2pcards.protocol.randomness import JointRandom, choice, sample
from p2pcards.table.events import Moved, TableEvent
from p2pcards.table.kinds import Act, Kind
from p2pcards.table.run import DealRun
from p2pcards.table.state import Step


def first_dealer_label(table: bytes) -> bytes:
    """The label of the table's joint draw of its first dealer (docs/protocol.md, "Joint
    randomness")."""
    return b"p2pcards/first-dealer/" + table


def chance_label(table: bytes, deal: int, draw: int) -> bytes:
    """The label of deal ``deal``'s ``draw``-th joint draw (0 for the deal's first)."""
    return b"p2pcards/chance/" + table + deal.to_bytes(8, "big") + draw.to_bytes(2, "big")


@dataclass(frozen=True, slots=True)
class SeedDraw:
    """A joint seed as a chance event draws from it (``HandState.drawn_chance``)."""

    seed: bytes

    def choice(self, n: int) -> int:
        return choice(self.seed, n)

    def sample(self, n: int, k: int) -> list[int]:
        return sample(self.seed, n, k)


def apply_both(run: DealRun, public: int, private: int, keep_states: bool) -> None:
    """A move to the public view, and as this seat knows it to its own view (unless
    that view has already met a contradiction)."""
    assert run.public is not None
    run.public.apply(public)
    if run.view is not None and run.view is not run.public and not run.suspect:
        run.view.apply(private)
    if keep_states and run.view is not None:  # awaiting: recorded once it has them
        run.views.append(None if run.view.awaiting else run.view.knowledge())


def seen_before(run: DealRun, tell: bool) -> HandState | None:
    """This seat's own view as it stands, before a move (the public one for a watcher,
    or for a seat whose own view has met a contradiction); None unless a prompt is to
    ``tell`` the moves (a copy per move, kept with the events)."""
    if not tell:
        return None
    view = run.public if run.suspect or run.view is None else run.view
    return None if view is None else view.clone()


def open_slots(run: DealRun, slots: list[int]) -> list[int] | None:
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


class Dealing:
    """This seat's side of the cards of a deal: chance moves, and opening its cards."""

    def __init__(self, table: bytes, players: int, me: int, source: SecretSource, *,
                 keep_states: bool, events: list[TableEvent]):
        self.table = table
        self.players = players
        self.me = me
        self.source = source
        self.keep_states = keep_states
        self.events = events
        self.tell = False
        """Whether a move's event carries the view before it (:class:`Moved`)."""

    def chance(self, run: DealRun) -> tuple[bool, list[Step]]:
        """A chance move: a secret reshuffle, or one drawn by joint randomness (Control
        Nut!'s controls in play, the control auctioned next, HAND's pick).  Makes the
        move once all it needs is in (True), else says what it needs (the steps)."""
        view = run.public
        assert view is not None
        chance = view.table_chance()
        ledger = run.ledger
        if chance.kind == ChanceKind.RESHUFFLE:
            return self._reshuffle(run, chance.source), []
        if chance.kind == ChanceKind.TAKE and ledger.take is None:
            return False, ledger.begin_take(chance.source, chance.target)
        if run.draw is None:
            label = chance_label(self.table, run.index, run.draws)
            run.draws += 1
            run.draw = JointRandom(label, self.players, self.me, self.source)
            return False, [*(Step(Kind.COMMIT, s) for s in range(self.players)),
                           *(Step(Kind.SHARE, s) for s in range(self.players))]
        seed = run.draw.seed()
        if ledger.take is not None:
            source, taker, slot = ledger.take
            if slot < 0:  # the pick: the source's key of the slot goes to the taker
                return False, ledger.pick_taken(seed)
            if self.me == taker and slot not in run.deck.opened:
                return False, []  # its cards did not open: its alarm stops the deal
            card = run.ids[run.deck.opened[slot]] if self.me in (source, taker) else None
            public, private = view.taken_chance(None), view.taken_chance(card)
            shown: tuple[int, ...] = (slot,)
            ledger.take = None
        else:
            public = private = view.drawn_chance(SeedDraw(seed))
            shown = ()
        text = view.format_action(public, seat=SPECTATOR)
        run.draw = None
        before = seen_before(run, self.tell)
        apply_both(run, public, private, self.keep_states)
        run.acts.append((CHANCE, Act(action=text, slots=shown)))
        self.events.append(Moved(None, run.index, text, public if run.suspect else private,
                                 before))
        return True, []

    def _reshuffle(self, run: DealRun, stock: int) -> bool:
        """A secret reshuffle of the stock (Pasur's opening jack put back): the deck's
        round; once it is locked, the new slots are the stock in order and every view
        takes the chance move.  True when the move was made."""
        ledger = run.ledger
        if not ledger.reshuffling:
            ledger.begin_reshuffle(stock)
            return False
        if run.deck.expected() is not None:
            return False
        view = run.public
        assert view is not None
        new = ledger.reshuffled(stock)
        text = view.format_action(view.reshuffled_chance(), seat=SPECTATOR)
        code = view.parse_action(text)
        apply_both(run, code, code, self.keep_states)
        run.acts.append((CHANCE, Act(action=text, slots=new)))
        return True

    def open_taken(self, run: DealRun) -> None:
        """The taker opens the card it took as soon as the source's key is in (before it
        reports in its ``opened``: a card that does not open stops the deal)."""
        take = run.ledger.take
        if take is None or take[1] != self.me or take[2] < 0:
            return
        slot = take[2]
        if slot not in run.deck.opened and not run.problem and run.deck.can_open(slot):
            open_slots(run, [slot])

    def observe(self, run: DealRun) -> None:
        """Deliver to this seat's view the cards it awaits, once it can open them."""
        view = run.view
        if view is None or view is run.public or run.suspect:
            return
        for place in range(len(view.count)):
            if not view.awaiting >> place & 1:
                continue
            slots = run.ledger.held(place)
            if not all(run.deck.can_open(s) for s in slots):
                return
            cards = open_slots(run, slots)
            if cards is None:
                return
            contents = 0
            for card in cards:
                contents |= 1 << card
            view.observe(place, contents)
        if self.keep_states and run.views and run.views[-1] is None and not view.awaiting:
            run.views[-1] = view.knowledge()
