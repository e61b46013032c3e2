"""``help [topic]`` at the prompt: the commands, how to type moves, each game in brief.

Short summaries in the project's own words; the full rules, with every ruling,
are in docs/rules/.
"""

from __future__ import annotations

COMMANDS = """\
Type a move, or one of these commands:
  help [topic]   this text; topics: rules, moves, commands
  hint           what the bot would do in your place, with its share of the search
  hand           your cards          table   the table: bids, contract, trick
  score          the score so far    last    the previous trick
  history        this deal as you saw it (? for cards you did not see)
  save FILE      write the hand history of the game so far
  undo           take back your last move (local games against bots)
  quit           leave the game (asks first)
Tab completes the legal moves only; Up/Down recall what you typed."""

MOVES = """\
Moves are the action texts of a hand history, in any case:
  play AS, play 10h, play A♠ (or just the card: AS), pass, bid 4 cards,
  bid 5 notrump, trump H, direction downtown, discard 2C 3C 4D 9S LJ BJ,
  bid 2 (Nullern), play 7H take 2C 2D (Pasur), bid A3 W7 H13, give A3:1 W7:2 H13:0,
  play VALUE A7, star bank, bonus 9, order, sitout (Control Nut!).
Cards: rank then suit; T or 10; suits S H D C or the symbols; jokers BJ LJ.
Nullern cards are colour then rank (R12, B3); Control Nut! nuts are suit then
value (A7: acorn 7; H hazelnut, P pecan, W walnut) and the controls by
name (TRUMP, TRICK, STAR, HAND, ORDER, BONUS, VALUE, SCORE); a control card
is played with its verb: play TRUMP, play VALUE A7."""

RULES = {
    "bidwhist": """\
Bid Whist: two partnerships (you and the seat opposite), 54 cards with two
jokers, 12 cards each and a kitty. One round of bidding, each bid higher
than the last: books over six in cards (uptown: high cards win; downtown
with special: low cards win) or in notrump. The winner takes the kitty,
names trump or a direction and discards. Follow suit when you can; the
jokers are the highest trumps (in notrump they never win). Make the bid and
score the books over six; fall short and the other side scores the bid, plus
its books over six in a trump contract; notrump doubles either score. Full
rules: docs/rules/bidwhist.md""",
    "nullern": """\
Nullern: each for themselves, 80 cards in four colours ranked 1-20, twenty
rounds of 1 up to 10 cards and back, the last one blind (nobody sees their
own card). A turned card sets trump each round. Everyone bids the exact
number of tricks they will take: hit it for prize points (a made zero pays
most), miss it for a point per trick and a grasshopper (-5 at the end).
Colours need not be followed, but a trump lead must be answered with a
trump if you have one; the highest trump wins, else the highest rank (the
first played on a tie). Full rules: docs/rules/nullern.md""",
    "pasur": """\
Pasur: a fishing game for 2-4 players. Four cards each and four in the
pool. A number card captures pool number cards that add up to eleven with
it; a king takes one king, a queen one queen, a jack every jack and number
card. A card that takes nothing joins the pool. Emptying the pool is a sur
(not with a jack, not in the last deal). Points each round: most clubs 7,
10 of diamonds 3, 2 of clubs 2, each ace and jack 1, each sur 5; 62 wins.
Full rules: docs/rules/pasur.md""",
    "controlnut": """\
Control Nut!: two partnerships, 52 nut cards (acorn A, hazelnut H, pecan P,
walnut W, values 1-13) and control cards. Each round four controls are
auctioned: bid three nut cards (never equal to the high bid; you must bid
if you can), the highest total wins the control and hands its bid cards to
the other players. Trump is named, STAR is banked or kept, BONUS declared,
then the play: follow suit; each control bends one rule (TRICK wins a
trick, HAND steals cards, ORDER sits out, VALUE adds to a nut card...). A
side scores its tricks times the stars it took (1s two stars, 3s and 7s
one, marked *), plus points for controls; more than 300 wins.
Full rules: docs/rules/controlnut.md""",
}


def help_text(game: str, topic: str, options: dict[str, int] | None = None) -> str:
    """The text of ``help topic`` at a table of ``game`` with these table options."""
    topic = topic.strip().lower()
    if topic in ("rules", game) and options:
        table = ", ".join(f"{k} {v}" for k, v in sorted(options.items()))
        return f"{RULES[game]}\nThis table: {table}."
    if topic in ("", "commands"):
        return COMMANDS
    if topic in ("moves", "input", "cards"):
        return MOVES
    if topic in ("rules", game):
        return RULES[game]
    if topic in RULES:
        return RULES[topic]
    return f"no help on {topic!r}: try help, help rules, help moves"
