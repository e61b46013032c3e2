"""Random-deal simulation shared by the engine tests: a full state, one view per seat.

Each action is chosen at random from the full state, formatted as every seat
would log it (``?`` for cards it does not see), parsed back and applied to
that seat's view together with the seat's private observations; after every
action each view must equal ``full.view(seat)``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from p2pcards.games import CHANCE, Game, HandState, bidwhist, controlnut, nullern, pasur
from p2pcards.games.cards import bits
from p2pcards.history import HandRecord, History


def state_key(state: HandState) -> dict[str, object]:
    """Every slot of the state but the observer and the full-information stock order."""
    key: dict[str, object] = {}
    for cls in type(state).__mro__:
        for slot in getattr(cls, "__slots__", ()):
            if slot not in ("observer", "stock"):
                key[slot] = getattr(state, slot)
    return key


def choose(state: HandState, rng: random.Random) -> int:
    if state.current_player() == CHANCE:
        return state.chance_action(rng)
    if isinstance(state, bidwhist.BidWhistState) and state.phase == bidwhist.DISCARD_PHASE:
        return bidwhist.random_discard(state, rng.random)
    actions = state.legal_actions()
    return actions[int(rng.random() * len(actions))]


def check_cards_placed(state: HandState, deck_mask: int) -> None:
    """Every card is in exactly one place, and hidden counts match."""
    seen = 0
    places: list[int] = list(state.may)
    for p, m in enumerate(state.may):
        assert m.bit_count() == state.count[p], f"place {p}: count {state.count[p]} vs {bits(m)}"
    if isinstance(state, bidwhist.BidWhistState):
        places += [state.won[0], state.won[1], bidwhist.DECK_MASK[6] & sum(1 << c for c in
                                                                            state.trick)]
    elif isinstance(state, nullern.NullernState):
        places += [state.played, 1 << state.trump_card]
        assert state.played.bit_count() == state.players * state.tricks_played + len(state.trick)
    elif isinstance(state, controlnut.ControlNutState):
        on_table = 0
        for mask in state.bids:
            on_table |= max(mask, 0)
        for _, action in state.plays:
            on_table |= controlnut._cards_of(action)
        if state.phase == controlnut.GIVE_PHASE:
            on_table |= state.give_cards
        front = 1 << controlnut.ORDER_C if state.order_front >= 0 else 0
        places += [state.won[0], state.won[1], on_table & ~(state.won[0] | state.won[1]), front]
        deck_mask = controlnut.NUT_MASK | (deck_mask & controlnut.CONTROL_MASK)
        held = 0
        for m in places:
            held |= m
        deck_mask |= held & controlnut.CONTROL_MASK
    elif isinstance(state, pasur.PasurState):
        places += [state.pool, *state.piles]
        assert len(state.stock) == state.count[state.players]
        assert sum(1 << c for c in state.stock) == state.may[state.players]
    for m in places:
        assert not seen & m, f"cards in two places: {bits(seen & m)}"
        seen |= m
    assert seen == deck_mask, f"missing cards {bits(deck_mask & ~seen)}"


@dataclass
class DealRun:
    state: HandState
    record: HandRecord
    views_checked: int = 0
    actions: list[tuple[object, str]] = field(default_factory=list)


def run_deal(game: Game, players: int, options: dict[str, int], rng: random.Random, *,
             check_views: bool = True,
             chooser: Callable[[HandState, random.Random], int] = choose,
             number: int = 0) -> DealRun:
    """Deal ``number`` of a match (Nullern's round size depends on it), played at random."""
    options = game.resolve_options(options)
    deck = game.shuffled_deck(players, options, rng)
    deck_mask = sum(1 << c for c in deck)
    dealer = rng.randrange(players)
    full = game.deal(deck, dealer, players, options, number=number)
    record = HandRecord(dealer, [game.notation.name(c) for c in deck])
    run = DealRun(full, record)
    views = [game.deal(game.observed_deck(deck, dealer, players, options, s, number=number), dealer,
                       players, options, observer=s, number=number)
             for s in range(players)] if check_views else []
    for seat, view in enumerate(views):
        assert state_key(view) == state_key(full.view(seat)), f"seat {seat} after the deal"
    if full.is_terminal():
        record.void = True
        return run
    while not full.is_terminal():
        actor: int | str = full.current_player()
        if actor == CHANCE:
            actor = "chance"
        action = chooser(full, rng)
        texts = [full.format_action(action, seat=s) for s in range(players)]
        record.actions.append((actor, full.format_action(action)))
        full.apply(action)
        check_cards_placed(full, deck_mask)
        for seat, view in enumerate(views):
            view.apply_text(texts[seat], actor)
            for place in bits(view.awaiting):
                view.observe(place, full.may[place])
            want = state_key(full.view(seat))
            got = state_key(view)
            assert got == want, (f"seat {seat} after {texts[seat]!r}: "
                                 + ", ".join(k for k in want if want[k] != got[k]))
            run.views_checked += 1
    return run


def history_of(game: Game, players: int, options: dict[str, int],
               records: list[HandRecord]) -> History:
    names = [f"p{i}" for i in range(players)]
    return History(game.name, names, game.non_default(game.resolve_options(options)), records)
