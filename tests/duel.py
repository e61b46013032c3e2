"""Duel: a small fifth game written inside the tests, to show that a game is one module.

Two players, twelve cards (nine to ace of spades and hearts).  Five cards each;
the last two stay face down in a stock that nobody sees.  Each player first
discards one card face down (the other sees only that a card went); then four
tricks: follow suit when you can, the highest card of the suit led wins, the
winner leads.  A trick is a point; the first to reach the target (6) with the
most points wins the game.  A proven cheat scores nothing, the other player
every trick.

Nothing outside this file knows the game: :func:`register_duel` registers it
with the games and its heuristic with the bots, at run time.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from p2pcards.bots import Playbook
from p2pcards.bots import registry as bot_registry
from p2pcards.games import GAMES, Capabilities, register
from p2pcards.games.cards import STANDARD, bits, mask_of
from p2pcards.games.core import (
    FULL,
    TERMINAL,
    ActionSyntaxError,
    HandState,
    IllegalAction,
    reading,
)
from p2pcards.games.display import Row, last_trick, seated, trick_row
from p2pcards.games.game import Game, OptionSpec, highest_unique

DECK = [suit * 13 + rank for suit in (0, 1) for rank in range(7, 13)]  # 9S..AS, 9H..AH
DECK_MASK = mask_of(DECK)
SUITS = (sum(1 << c for c in DECK if c // 13 == 0), sum(1 << c for c in DECK if c // 13 == 1))
STOCK = 2
DISCARD, PLAY, DONE = range(3)
UNSEEN = 99
"""A discard as the other player sees it."""
DISCARDS = 100
"""``DISCARDS + card``: a discard of that card."""


class DuelState(HandState):
    """One deal of Duel.  Places: the two hands, the stock, each player's discard."""

    __slots__ = ("dealer", "discarded", "last_trick", "leader", "penalty", "phase", "played",
                 "trick", "tricks_played", "turn", "won")

    notation = STANDARD
    game = "duel"
    other_places = ("the stock", "seat 0's discard", "seat 1's discard")
    reward_bound = 4.0

    dealer: int
    phase: int
    turn: int
    leader: int
    trick: list[int]
    won: list[int]
    played: int
    discarded: int
    tricks_played: int
    last_trick: tuple[int, tuple[int, ...]] | None
    penalty: tuple[int, str] | None

    def clone(self) -> DuelState:
        new = DuelState.__new__(DuelState)
        self._copy_core(new)
        new.dealer, new.phase, new.turn, new.leader = (self.dealer, self.phase, self.turn,
                                                       self.leader)
        new.trick, new.won = self.trick[:], self.won[:]
        new.played, new.discarded, new.tricks_played = (self.played, self.discarded,
                                                        self.tricks_played)
        new.last_trick, new.penalty = self.last_trick, self.penalty
        return new

    # --------------------------------------------------------------- queries

    def visible(self, place: int, seat: int) -> bool:
        return seat >= 0 and place in (seat, STOCK + 1 + seat)

    def current_player(self) -> int:
        return TERMINAL if self.phase == DONE else self.turn

    def is_terminal(self) -> bool:
        return self.phase == DONE

    def hidden_mask(self) -> int:
        return DECK_MASK & ~self.played

    def public_action(self, action: int, seat: int) -> int:
        return UNSEEN if action >= DISCARDS and seat != self.turn else action

    def legal_mask(self) -> int:
        hand = self.may[self.turn]
        if self.trick:
            follow = hand & SUITS[self.trick[0] // 13]
            if follow:
                return follow
        return hand

    def legal_actions(self) -> list[int]:
        if self.phase == DISCARD:
            if not self._sees(self.turn):
                return [UNSEEN]
            return [DISCARDS + card for card in bits(self.may[self.turn])]
        if self.phase == PLAY:
            return bits(self.legal_mask())
        return []

    # ---------------------------------------------------------------- checks

    def check(self, action: int) -> None:
        seat = self.turn
        if self.phase == DONE:
            raise IllegalAction("phase", "the deal is over")
        if action == UNSEEN or action >= DISCARDS:
            if self.phase != DISCARD:
                raise IllegalAction("phase", "the discards are over")
            if action == UNSEEN:
                if self._sees(seat):
                    raise IllegalAction("discard", "name the card you discard", seat)
                return
            self._check_held(seat, action - DISCARDS)
            return
        if self.phase != PLAY:
            raise IllegalAction("phase", "discard first")
        self._check_held(seat, action)
        if self._sees(seat) and not self.legal_mask() >> action & 1:
            raise IllegalAction("renege", f"seat {seat} must follow suit", seat)

    def _check_held(self, seat: int, card: int) -> None:
        if not DECK_MASK >> card & 1:
            raise IllegalAction("not-held", f"card {card} is not in this deck", seat)
        if not self._sees(seat):
            self._check_unseen(seat, 1 << card, self.played)
        elif not self.may[seat] >> card & 1:
            raise IllegalAction("not-held", f"seat {seat} does not hold "
                                f"{STANDARD.name(card)}", seat)

    # ----------------------------------------------------------------- steps

    def step(self, action: int) -> None:
        self.moves += 1
        seat = self.turn
        if self.phase == DISCARD:
            known = 1 << (action - DISCARDS) if action >= DISCARDS else -1
            self._move_hidden(1, seat, STOCK + 1 + seat, known)
            self.discarded += 1
            if self.discarded == 2:
                self.phase = PLAY
                self.leader = self.turn = (self.dealer + 1) % 2
            else:
                self.turn = 1 - seat
            return
        bit = 1 << action
        if self.observer == FULL:
            self.may[seat] ^= bit
            self.count[seat] -= 1
        else:
            self._take_shown(action, seat, seat)
        self.played |= bit
        trick = self.trick
        if trick and action // 13 != trick[0] // 13:
            self._claim_void(seat, SUITS[trick[0] // 13], seat)
        trick.append(action)
        if len(trick) < 2:
            self.turn = 1 - seat
            return
        first, second = trick
        wins_second = second // 13 == first // 13 and second > first
        winner = (self.leader + wins_second) % 2
        self.won[winner] += 1
        self.last_trick = (self.leader, tuple(trick))
        self.tricks_played += 1
        self.trick = []
        self.leader = self.turn = winner
        if self.tricks_played == 4:
            self.phase = DONE

    def penalize(self, seat: int, code: str) -> None:
        self.penalty = (seat, code)
        self.phase = DONE

    # --------------------------------------------------------------- results

    def points(self) -> list[int]:
        if self.phase != DONE:
            raise ValueError("the deal is not over")
        if self.penalty is not None:
            out = [4, 4]
            out[self.penalty[0]] = 0
            return out
        return self.won[:]

    def detail(self) -> dict[str, object]:
        return {"tricks": self.won[:]}

    def summary(self, names: Sequence[str]) -> str:
        text = f"tricks {self.won[0]}/{self.won[1]}"
        if self.penalty is not None:
            text += f"; {self.penalty[1]} by {names[self.penalty[0]]}"
        if self.phase == DONE:
            text += "; points " + " ".join(str(p) for p in self.points())
        return text

    def narrate(self, before: DuelState, action: int, names: Sequence[str]) -> list[str]:
        if self.tricks_played > before.tricks_played:
            return [f"trick {self.tricks_played}: {names[self.leader]} wins"]
        return []

    # ------------------------------------------------------- table and screen

    def shown_cards(self, action: int) -> list[int]:
        return [action] if action < 64 else []

    def face_down(self, action: int) -> list[int | None]:
        if action == UNSEEN:
            return [None]
        return [action - DISCARDS] if action >= DISCARDS else []

    def table_rows(self, names: Sequence[str]) -> list[Row]:
        if self.phase != PLAY:
            return []
        return [trick_row("trick", seated(self.leader, self.trick, 2), names)]

    def last_trick_row(self, names: Sequence[str]) -> Row:
        return last_trick(self.last_trick, 2, names, self.leader)

    def phase_name(self) -> str:
        return ("discard", "play", "done")[self.phase]

    # ------------------------------------------------------------------ text

    def format_action(self, action: int, seat: int = FULL) -> str:
        if action < 64:
            return f"play {STANDARD.name(action)}"
        if action == UNSEEN or seat not in (FULL, self.turn):
            return "discard ?"
        return f"discard {STANDARD.name(action - DISCARDS)}"

    def parse_action(self, text: str) -> int:
        words = text.split()
        with reading(text):
            if len(words) == 2 and words[0].lower() in ("play", "discard"):
                if words[0].lower() == "discard" and words[1] == "?":
                    return UNSEEN
                card = STANDARD.parse(words[1])
                if not DECK_MASK >> card & 1:
                    raise ActionSyntaxError(f"{words[1]} is not a Duel card")
                return card if words[0].lower() == "play" else DISCARDS + card
        raise ActionSyntaxError(f"cannot read Duel action {text!r}")


class Duel(Game):
    name = "duel"
    title = "Duel"
    brief = "Duel: two players, twelve cards, a face-down discard, four tricks."
    moves_help = "discard 9S, play AH (or just the card: AH)."
    notation = STANDARD
    units = "seats"
    player_counts = (2,)
    default_players = 2
    options = {"target": OptionSpec(6, minimum=1, maximum=100, help="points that win")}
    capabilities = Capabilities(shown_cards=True, face_down=True)

    def deck(self, players: int, options: Mapping[str, int]) -> list[int]:
        return list(DECK)

    def deal(self, deck: Sequence[int | None], dealer: int, players: int,
             options: Mapping[str, int], *, observer: int = FULL, number: int = 0
             ) -> DuelState:
        self.check_players(players)
        if len(deck) != len(DECK):
            raise ValueError(f"a Duel deck has {len(DECK)} cards, not {len(deck)}")
        state = DuelState.__new__(DuelState)
        state._init_core(2, 5, observer)
        places = [(dealer + 1 + i) % 2 if i < 10 else STOCK for i in range(len(DECK))]
        state._place_deck(deck, places, 0, DECK_MASK)
        state.dealer = dealer
        state.phase = DISCARD
        state.turn = state.leader = (dealer + 1) % 2
        state.trick, state.won = [], [0, 0]
        state.played = state.discarded = state.tricks_played = 0
        state.last_trick = state.penalty = None
        return state

    def observed_deck(self, deck: Sequence[int], dealer: int, players: int,
                      options: Mapping[str, int], seat: int, *,
                      number: int = 0) -> list[int | None]:
        return [c if i < 10 and (dealer + 1 + i) % 2 == seat else None
                for i, c in enumerate(deck)]

    def winner(self, totals: Sequence[int], deals: int,
               options: Mapping[str, int]) -> int | None:
        if max(totals) < options.get("target", 6):
            return None
        return highest_unique(totals)


GAME = Duel()


def heuristic(view: HandState, rng: random.Random) -> int:
    """Discard the lowest card; win a trick as cheaply as possible, else throw the lowest."""
    assert isinstance(view, DuelState)
    legal = view.legal_actions()
    if view.phase == DISCARD:
        return min(legal)
    if view.trick:
        winners = [c for c in legal if c // 13 == view.trick[0] // 13 and c > view.trick[0]]
        if winners:
            return min(winners)
    return min(legal, key=lambda c: c % 13) if view.trick else max(legal, key=lambda c: c % 13)


def register_duel() -> None:
    register(GAME)
    bot_registry.register(GAME.name, Playbook(heuristic=heuristic))


def unregister_duel() -> None:
    GAMES.pop(GAME.name, None)
    bot_registry.PLAYBOOKS.pop(GAME.name, None)
