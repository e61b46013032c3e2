"""How lines of the game read on screen: the person as "you", seats by name, cards
by the faces a hand shows.

The games narrate in the third person with the table's names (``cy wins the
trick``); where the person's own seat is named ``you`` the verbs must agree
(``you win the trick``).  Refusals from the rules name seats by number
(``seat 0 does not hold AS``); a person reads names and faces (``you do not
hold A♠``).  Both prompts shape their lines here.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from p2pcards.games.cards import STANDARD, Notation
from p2pcards.games.prose import YOU, name_seats

_VERBS = {
    "wins": "win", "takes": "take", "clears": "clear", "adds": "add", "bids": "bid",
    "leads": "lead", "holds": "hold", "has": "have", "does": "do", "is": "are", "was": "were",
    "names": "name", "chooses": "choose", "declares": "declare", "hands": "hand",
    "plays": "play", "passes": "pass", "sits": "sit", "follows": "follow", "gets": "get",
    "scores": "score", "goes": "go", "needs": "need", "shows": "show", "steals": "steal",
    "proposes": "propose", "forfeits": "forfeit", "claims": "claim", "refuses": "refuse",
    "leaves": "leave", "returns": "return", "consents": "consent", "signs": "sign",
}
"""The verbs of the games' lines and refusals, third person to second."""
_VERB = "|".join(sorted(_VERBS, key=len, reverse=True))
_YOU_VERB = re.compile(rf"\byou( \([^()]*\))? ({_VERB})\b")
_AND_VERB = re.compile(rf"\b(you (?:{'|'.join(_VERBS.values())})\b[^;:()]*? and )({_VERB})\b")
_UNSEEN = re.compile(r"\?( \?){7,}")
_WORD = re.compile(r"[^\s,;:()]+")


def second_person(line: str) -> str:
    """A line that names the person "you" with its verbs agreeing: "you wins the bid
    ... and takes the kitty" reads "you win the bid ... and take the kitty"."""
    if YOU not in line:
        return line
    line = _YOU_VERB.sub(lambda m: f"you{m.group(1) or ''} {_VERBS[m.group(2)]}", line)
    return _AND_VERB.sub(lambda m: m.group(1) + _VERBS[m.group(2)], line)


def unseen_runs(line: str) -> str:
    """A long run of unseen cards (a reshuffled stock) as a count: ``stock (40 unseen)``."""
    return _UNSEEN.sub(lambda m: f"({(len(m.group(0)) + 1) // 2} unseen)", line)


def faces(line: str, notation: Notation = STANDARD) -> str:
    """The canonical card names in ``line`` (exactly as a hand history writes them:
    ``TH``, ``A1``) written as the screen shows cards in text (``10♥``, ``A1``)."""
    index = _canonical(notation)
    return _WORD.sub(lambda m: notation.face(index[m.group(0)]) if m.group(0) in index
                     else m.group(0), line)


def narration(line: str, notation: Notation = STANDARD) -> str:
    """One line of narration as the screen shows it: cards by their faces, the person
    in the second person, long runs of unseen cards counted."""
    return unseen_runs(second_person(faces(line, notation)))


def seats_named(text: str, names: Sequence[str]) -> str:
    """``text`` of the rules (a refusal) with each ``seat N`` by its name, the person's
    own seat (named "you") as "you" and "your": ``you do not hold AS``."""
    return second_person(name_seats(text, names))


def speak(text: str, names: Sequence[str], notation: Notation = STANDARD) -> str:
    """A refusal or note of the rules for a person: seats by name, cards by face."""
    return seats_named(faces(text, notation), names)


_INDEXES: dict[int, dict[str, int]] = {}


def _canonical(notation: Notation) -> dict[str, int]:
    index = _INDEXES.get(id(notation))
    if index is None:
        index = _INDEXES[id(notation)] = {n: c for c, n in enumerate(notation.names)
                                          if notation.face(c) != n}
    return index
