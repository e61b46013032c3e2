"""What the REPL shows: cards in suit colours, the hand by suit, the table, the toolbar.

Everything here reads one seat's *view* (never the full state), so the
screen can show nothing the seat does not know.  Output is prompt-toolkit
formatted text: a list of ``(style, text)`` pairs; the styles are classes of
:data:`STYLE` (or of :data:`FOUR_COLOUR`), and ``NO_COLOR`` in the
environment turns colour off (see :func:`color_depth`).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.output import ColorDepth
from prompt_toolkit.styles import Style

from p2pcards.games import HandState, bidwhist, controlnut, nullern, pasur
from p2pcards.games.cards import COLOURS, CONTROLNUT, NULLERN, NUT_SUITS, STANDARD, Notation, bits
from p2pcards.games.game import Game

SYMBOLS = "♠♥♦♣"
_COMMON = {
    "joker": "ansimagenta bold",
    "control": "reverse bold",
    "star": "bold",
    "title": "bold",
    "dim": "ansibrightblack",
    "you": "bold underline",
    "error": "ansired bold",
    "bottom-toolbar": "noreverse bg:ansiblue fg:ansiwhite",
}
STYLE = Style.from_dict({
    **_COMMON,
    "suit-0": "", "suit-1": "ansired", "suit-2": "ansired", "suit-3": "",
    "colour-0": "ansired", "colour-1": "ansiyellow", "colour-2": "ansigreen",
    "colour-3": "ansiblue",
    "nut-0": "ansiyellow", "nut-1": "ansired", "nut-2": "ansigreen", "nut-3": "ansicyan",
})
FOUR_COLOUR = Style.from_dict({
    **{k: v for k, v in STYLE.style_rules},
    "suit-2": "ansiblue", "suit-3": "ansigreen",
})
"""The four-colour deck: spades black, hearts red, diamonds blue, clubs green."""


def color_depth() -> ColorDepth | None:
    """Monochrome when ``NO_COLOR`` is set (https://no-color.org), else the terminal's."""
    return ColorDepth.DEPTH_1_BIT if os.environ.get("NO_COLOR") else None


# ---------------------------------------------------------------------- cards

def card_text(notation: Notation, card: int) -> str:
    """A card as shown: ``A♠``, ``10♥`` and jokers ``BJ`` ``LJ``; ``R12``; ``A7``, ``TRUMP``."""
    name = notation.name(card)
    if notation is STANDARD and card < 52:
        rank = name[0]
        return ("10" if rank == "T" else rank) + SYMBOLS[card // 13]
    return name


def card_style(notation: Notation, card: int) -> str:
    if notation is STANDARD:
        return f"class:suit-{card // 13}" if card < 52 else "class:joker"
    if notation is NULLERN:
        return f"class:colour-{card // 20}"
    if card >= 52:
        return "class:control"
    star = " class:star" if controlnut.STARS[card] else ""
    return f"class:nut-{card // 13}{star}"


def card_fragment(notation: Notation, card: int) -> tuple[str, str]:
    text = card_text(notation, card)
    if notation is CONTROLNUT and card < 52 and controlnut.STARS[card]:
        text += "*"
    return (card_style(notation, card), text)


def cards_fragments(notation: Notation, cards: Sequence[int]) -> StyleAndTextTuples:
    out: StyleAndTextTuples = []
    for i, card in enumerate(cards):
        if i:
            out.append(("", " "))
        out.append(card_fragment(notation, card))
    return out


def _group(notation: Notation, card: int) -> int:
    if notation is STANDARD:
        return card // 13
    if notation is NULLERN:
        return card // 20
    return min(card // 13, 4)


def _rank(notation: Notation, card: int) -> int:
    if notation is STANDARD:
        return card % 13 if card < 52 else 13 + (card == 52)
    if notation is NULLERN:
        return card % 20
    return card % 13 if card < 52 else -card


def hand_fragments(notation: Notation, hand: int) -> StyleAndTextTuples:
    """The hand grouped by suit (jokers and controls last), high cards first."""
    groups: dict[int, list[int]] = {}
    for card in bits(hand):
        groups.setdefault(_group(notation, card), []).append(card)
    out: StyleAndTextTuples = []
    for key in sorted(groups):
        if out:
            out.append(("", "   "))
        out += cards_fragments(notation, sorted(groups[key], key=lambda c: -_rank(notation, c)))
    return out or [("class:dim", "(no cards)")]


# ---------------------------------------------------------------------- table

def own_hand(view: HandState) -> int:
    """The cards in the observer's hand (its view knows them exactly)."""
    return view.may[view.observer]


def table_fragments(view: HandState, names: Sequence[str]) -> StyleAndTextTuples:
    """The state of play as the view's seat knows it: status line and the trick."""
    out: StyleAndTextTuples = [("class:title", "table: "), ("", view.summary(names)), ("", "\n")]
    if isinstance(view, bidwhist.BidWhistState):
        out += _bidwhist(view, names)
    elif isinstance(view, nullern.NullernState):
        out += _nullern(view, names)
    elif isinstance(view, pasur.PasurState):
        out += _pasur(view, names)
    elif isinstance(view, controlnut.ControlNutState):
        out += _controlnut(view, names)
    return out


def _trick_line(label: str, notation: Notation, plays: Sequence[tuple[int, int]],
                names: Sequence[str]) -> StyleAndTextTuples:
    out: StyleAndTextTuples = [("class:title", f"{label}: ")]
    if not plays:
        out.append(("class:dim", "(empty)"))
    for i, (seat, card) in enumerate(plays):
        if i:
            out.append(("", ", "))
        out.append(("", f"{names[seat]} "))
        out.append(card_fragment(notation, card))
    out.append(("", "\n"))
    return out


def _seated(leader: int, cards: Sequence[int], players: int) -> list[tuple[int, int]]:
    return [((leader + i) % players, c) for i, c in enumerate(cards)]


def _bidwhist(view: bidwhist.BidWhistState, names: Sequence[str]) -> StyleAndTextTuples:
    if view.phase == bidwhist.BID:
        bids = ", ".join(f"{names[s]} {view._bid_text(code)}" for s, code in view.bids)
        return [("class:title", "bids: "), ("", bids or "(none yet)"), ("", "\n")]
    if view.phase != bidwhist.PLAY:
        return []
    return _trick_line("trick", STANDARD, _seated(view.leader, view.trick, 4), names)


def _nullern(view: nullern.NullernState, names: Sequence[str]) -> StyleAndTextTuples:
    out: StyleAndTextTuples = [("class:title", "trump: "), ("", f"{COLOURS[view.trump]} "),
                               card_fragment(NULLERN, view.trump_card), ("", "\n")]
    rows = []
    for seat in range(view.players):
        bid = "-" if view.bids[seat] < 0 else str(view.bids[seat])
        rows.append(f"{names[seat]} bid {bid} took {view.tricks[seat]}")
    out += [("class:title", "bids: "), ("", ", ".join(rows)), ("", "\n")]
    if view.phase == nullern.PLAY:
        out += _trick_line("trick", NULLERN, _seated(view.leader, view.trick, view.players),
                           names)
    return out


def _pasur(view: pasur.PasurState, names: Sequence[str]) -> StyleAndTextTuples:
    out: StyleAndTextTuples = [("class:title", "pool: ")]
    out += cards_fragments(STANDARD, bits(view.pool)) or [("class:dim", "(empty)")]
    out.append(("", "\n"))
    piles = ", ".join(f"{names[s]} {view.piles[s].bit_count()} cards"
                      + (f" {view.surs[s]} sur" if view.surs[s] else "")
                      for s in range(view.players))
    stock = view.count[view.stock_place]
    out += [("class:title", "taken: "), ("", piles), ("", f"; stock {stock}\n")]
    return out


def _controlnut(view: controlnut.ControlNutState, names: Sequence[str]) -> StyleAndTextTuples:
    out: StyleAndTextTuples = []
    if view.in_play:
        out += [("class:title", "controls: ")]
        out += cards_fragments(CONTROLNUT, bits(view.in_play & ~view.set_aside))
        held = [f"{names[s]} " + " ".join(CONTROLNUT.name(c) for c in bits(view.ctrl_hand[s]))
                for s in range(4) if view.ctrl_hand[s]]
        if held:
            out.append(("", "  (held: " + "; ".join(held) + ")"))
        out.append(("", "\n"))
    if view.phase == controlnut.AUCTION and view.auction_card >= 0:
        out += [("class:title", "auction: ")]
        out.append(card_fragment(CONTROLNUT, view.auction_card))
        bids = [f"{names[s]} " + ("pass" if m == 0 else controlnut._bid_text(m))
                for s, m in enumerate(view.bids) if m >= 0]
        out.append(("", f", high {view.high}" + ("; " + ", ".join(bids) if bids else "")))
        out.append(("", "\n"))
    if view.trump >= 0:
        out += [("class:title", "trump: "), (f"class:nut-{view.trump}", NUT_SUITS[view.trump]),
                ("", "\n")]
    if view.phase == controlnut.PLAY:
        out += [("class:title", "trick: ")]
        if not view.plays:
            out.append(("class:dim", "(empty)"))
        for i, (seat, action) in enumerate(view.plays):
            if i:
                out.append(("", ", "))
            out.append(("", f"{names[seat]} "))
            out += cards_fragments(CONTROLNUT, bits(controlnut._cards_of(action)))
        out.append(("", "\n"))
    return out


def last_trick_fragments(view: HandState, names: Sequence[str]) -> StyleAndTextTuples:
    """The previous trick and who won it (``last``)."""
    if isinstance(view, bidwhist.BidWhistState | nullern.NullernState):
        if view.last_trick is None:
            return [("class:dim", "no trick has been played yet\n")]
        leader, cards = view.last_trick
        seated = _seated(leader, cards, view.players)
        line = _trick_line("last trick", view.notation, seated, names)
        return [*line[:-1], ("", f"; won by {names[view.leader]}\n")]
    if isinstance(view, controlnut.ControlNutState):
        if view.last_trick is None:
            return [("class:dim", "no trick has been played yet\n")]
        plays, winner = view.last_trick
        out: StyleAndTextTuples = [("class:title", "last trick: ")]
        for i, (seat, action) in enumerate(plays):
            if i:
                out.append(("", ", "))
            out.append(("", f"{names[seat]} "))
            out += cards_fragments(CONTROLNUT, bits(controlnut._cards_of(action)))
        return [*out, ("", f"; won by {names[winner]}\n")]
    return [("class:dim", "Pasur has no tricks: see the pool and the taken piles\n")]


def phase_name(view: HandState) -> str:
    if view.is_terminal():
        return "done"
    if isinstance(view, bidwhist.BidWhistState):
        return bidwhist.PHASE_NAMES[view.phase]
    if isinstance(view, nullern.NullernState):
        return nullern.PHASE_NAMES[view.phase]
    if isinstance(view, controlnut.ControlNutState):
        return controlnut.PHASE_NAMES[view.phase]
    return "play"


def scores_text(game: Game, names: Sequence[str], totals: Sequence[int]) -> str:
    return ", ".join(f"{game.unit_name(u, names)} {t}" for u, t in enumerate(totals))


def score_table(game: Game, names: Sequence[str], rows: Sequence[Sequence[int]]) -> str:
    """Points per deal and the running totals, one row per deal."""
    units = [game.unit_name(u, names) for u in range(game.unit_count(len(names)))]
    width = max(8, *(len(u) for u in units))
    lines = ["deal  " + "".join(f"{u:>{width + 2}}" for u in units)]
    running = [0] * len(units)
    for k, row in enumerate(rows, 1):
        running = [a + b for a, b in zip(running, row, strict=True)]
        cells = "".join(f"{f'{p:+d} ={t}':>{width + 2}}" for p, t in zip(row, running,
                                                                           strict=True))
        lines.append(f"{k:>4}  {cells}")
    return "\n".join(lines)
