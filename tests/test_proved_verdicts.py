"""The verdict texts of a proved table (docs/protocol.md, "The verdict at a proved
table") against the code: every template of the doc is a text the code's format strings
make, every refusal the code can make at a table has its template (the deck's other
refusals are named below as never a refused step), and cheats provoked at a table give
verdicts the templates match, at every honest seat and in ``p2pcards verify``."""

from __future__ import annotations

import ast
import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.protocol.proved import deck as deck_module
from p2pcards.protocol.proved.group import N
from p2pcards.protocol.proved.messages import KeyShare, Remix, Shuffle
from p2pcards.protocol.proved.sigma import KeyProof
from p2pcards.table.kinds import Kind, Message, Opened
from p2pcards.table.memory import MemoryTable
from p2pcards.table.roster import PIPELINED_DECK, PROVED_DECK
from p2pcards.table.session import Session, Step
from p2pcards.table.verify import verify
from tests.test_table_proved import forging, swap_two, wrong_share

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "protocol.md"
SECTION = "### The verdict at a proved table"
PLACEHOLDER = re.compile(r"\{(\w+)\}")
VALUES = {
    "seat": r"\d+", "seq": r"\d+", "index": r"\d+", "at": r"\d+", "slot": r"\d+",
    "card": r"\d+", "round": r"\d+", "current": r"\d+", "m": r"\d+", "n": r"\d+",
    "kind": "pkey|pshuffle|premix|pshares|pact|pmove", "rule": r"[a-z-]+",
    "check": r"s·G = R \+ c·X|s·G = A \+ c·X|s·C1 = B \+ c·D|t1|t2|t3|t4|t_hat\[\d+\]",
    "earlier": r"party \d+|the sender of a key share|the sender of an earlier step",
}
"""What each placeholder of the doc stands for, as the doc's notes say (the others: any
text)."""

NEVER_AT_A_TABLE = {
    "message: not a proved deck message: {}", "message: in this party's own name",
    "message: no party {} at this table", "message: out of order in the record: {}",
    "key: a second key share",
    "remix: a re-mix before the deck is dealt or during a round",
    "remix: a slot named twice", "remix: more than {} re-mixes or {} slots",
    "remix: slot {} is not in play", "remix: slot {} was shown to everyone",
    "remix: slot {} was never given to party {} as far as party {} knows",
    "remix: slot {} is held by party {}", "share: shares for party {}, not at this table",
    "share: slot {} is not in play", "shuffle: {}",
}
"""The deck's refusals (as skeletons) that are never a refused step at a table: the
table refuses such a message first (docs/protocol.md: "The deck's other refusals"), or
the doc gives the text in full (``shuffle: {}``: a verify_deal reshuffle that cannot
begin, never at a table)."""
NEVER_CARRIED = {f"ahead {text}" for text in NEVER_AT_A_TABLE
                 if text.startswith(("key: ", "shuffle: "))} | {
    "ahead shuffle: a shuffle of round {} during round {}",
    "ahead shuffle: out of order (due: {} of round {})",
    "ahead shuffle: a shuffle of other slots than the round's"}
"""The deck's refusals of a step carried on a move (``ahead`` and the deck's text) that
the move's own checks rule out: its step is the one due (else ``ahead``, refused), of
round 0 and no slots (else ``malformed``)."""


# ------------------------------------------------------------------ the doc


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n{SECTION}\n")
    return text[start:text.index("\n### ", start + 1)]


def verdict_templates() -> list[str]:
    block = section().split("```")[1]
    return re.findall(r'"([^"\n]+)"', block)


def refusal_templates() -> list[tuple[str, str]]:
    rows = []
    for line in section().splitlines():
        found = re.fullmatch(r"\| `(\w+)` \| `(.+)` \|", line)
        if found:
            rows.append((found[1], found[2]))
    return rows


def pattern(template: str, strict: bool = True) -> str:
    """A regex of a template: literal text, each placeholder what the doc says it is
    (``strict``) or any text."""
    out, last = [], 0
    for found in PLACEHOLDER.finditer(template):
        out.append(re.escape(template[last:found.start()]))
        name = found[1]
        out.append(f"(?:{VALUES[name]})" if strict and name in VALUES else ".+")
        last = found.end()
    return "".join(out) + re.escape(template[last:])


# ------------------------------------------------------------------ the code


def skeleton(node: ast.expr) -> str | None:
    """An f-string or a string as a template with anonymous placeholders ``{}``."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
            else:
                parts.append("{}")
        return "".join(parts)
    return None


def code_refusals() -> list[str]:
    """Every refusal text of the proved deck (``step: reason``) and of the table's proved
    deck (a proven cheat's reason), as skeletons."""
    out: list[str] = []
    tree = ast.parse((ROOT / "protocol" / "proved" / "deck.py").read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "Refused":
            step = node.args[1]
            assert isinstance(step, ast.Name)
            text = skeleton(node.args[2]) or "{}"  # (str(error): verify_deal's own)
            steps = [deck_module.SHUFFLE, deck_module.REMIX] if step.id == "step" \
                else [getattr(deck_module, step.id)]  # (_verify: a shuffle's or a re-mix's)
            out += [f"{name}: {text}" for name in steps]
    deck = list(out)
    for path in ("decks/proved.py", "phases/ahead.py"):
        tree = ast.parse((ROOT / "p2pcards" / "table" / path).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "ProvenCheat":
                text = skeleton(node.args[1])
                if text == "ahead {}: {}":  # (a step carried on a move: the deck's text)
                    out += [f"ahead {t}" for t in deck if t.startswith(("key:", "shuffle:"))]
                elif text is not None and text != "{}: {}":  # (a deck refusal, passed on)
                    out.append(text)
    return out


def code_verdicts() -> list[str]:
    """Every verdict text a proved table's code makes, as skeletons."""
    out: list[str] = []
    for path in ("p2pcards/table/phases/forfeits.py", "p2pcards/table/proved.py",
                 "p2pcards/table/decks/proved.py"):
        for node in ast.walk(ast.parse((ROOT / path).read_text())):
            text = skeleton(node) if isinstance(node, ast.expr) else None
            if text and re.match(r"seat \{\} (forfeits|broke the rules|raised)|void: |ok$",
                                 text):
                out.append(text)
    return out


def fills(template: str) -> str:
    return PLACEHOLDER.sub("x", template)


def either_way(code: str, doc: str) -> bool:
    """Whether a code skeleton and a doc template can give the same text."""
    return re.fullmatch(pattern(code.replace("{}", "{any}"), strict=False), fills(doc)) \
        is not None or re.fullmatch(pattern(doc, strict=False),
                                    code.replace("{}", "x")) is not None


# ------------------------------------------------------------------ static


def test_every_template_is_a_text_of_the_code_and_every_refusal_has_one() -> None:
    verdicts, refusals = verdict_templates(), refusal_templates()
    assert len(verdicts) == 8 and "ok" in verdicts
    assert {kind for kind, _ in refusals} == {"pkey", "pshuffle", "premix", "pshares",
                                              "pact", "pmove"}
    code = code_refusals()
    for kind, template in refusals:
        assert any(re.fullmatch(pattern(c.replace("{}", "{any}"), strict=False),
                                fills(template)) for c in code), (kind, template)
    assert set(code) >= NEVER_AT_A_TABLE | NEVER_CARRIED  # (texts the code has)
    for text in set(code) - NEVER_AT_A_TABLE - NEVER_CARRIED:
        assert any(either_way(text, template) for _, template in refusals), text
    said = code_verdicts()
    for template in verdicts:  # the refusal's parenthesis is the code's "({what})"
        assert any(re.fullmatch(pattern(c.replace("{}", "{any}"), strict=False),
                                fills(template)) for c in said), template
    # the parenthesis of a refused step's verdict is forfeits.refute's
    forfeits = (ROOT / "p2pcards" / "table" / "phases" / "forfeits.py").read_text()
    assert 'proven=f"its {proven.kind} refused: {proven.reason}"' in forfeits
    assert sum("(its {kind} refused: {refusal})" in t for t in verdicts) == 1


# ------------------------------------------------------------------ at a table


def prefix(regex: str) -> str:
    """A regex of every prefix of what ``regex`` (a :func:`pattern`) matches: the text a
    verdict cut to 200 characters keeps."""
    tokens = re.findall(r"\(\?:[^()]*(?:\[[^]]*\][^()]*)*\)|\\.|\.\+|.", regex)
    out = ""
    for token in reversed(tokens):
        out = f"(?:{token}{out})?"
    return out


def matches(verdict: str) -> bool:
    """Whether a template of the doc gives ``verdict``, made safe and cut to 200
    characters as the doc says."""
    cut = len(verdict) == 200 and verdict.endswith("…")
    text = verdict[:-1] if cut else verdict
    refusals = refusal_templates()
    for template in verdict_templates():
        whole = [pattern(template)]
        if "{refusal}" in template:
            kind = re.search(r"its (\w+) refused: ", verdict)
            head, tail = template.split("{refusal}")
            whole = [pattern(head) + pattern(t) + pattern(tail)
                     for k, t in refusals if kind and k == kind[1]]
        for regex in whole:
            if re.fullmatch(prefix(regex) if cut else regex, text):
                return True
    return False


def bad_key(message: KeyShare) -> KeyShare:
    return dataclasses.replace(message, proof=KeyProof(message.proof.r,
                                                       (message.proof.s + 1) % N))


def other_prior(message: Shuffle) -> Shuffle:
    return dataclasses.replace(message, prior=bytes(32))


def bad_remix(message: Remix) -> Remix:
    deck = list(message.deck)
    deck[0], deck[1] = deck[1], deck[0]
    return dataclasses.replace(message, deck=tuple(deck))


def false_alarm(session: Session, step: Step, make: Callable[[], Message]) -> Message:
    if step.kind == Kind.OPENED:
        return Opened(problem="my cards do not open (a lie)")
    return make()


Forges = Callable[[], dict[int, Any]]
"""The cheats of a case, made afresh for each test (a forge changes one message once)."""

CASES: list[tuple[str, str, int, int, Forges, str]] = [
    ("key proof", "nullern", 3, 47, lambda: {1: forging(Kind.PROVED_KEY, bad_key)},
     "its pkey refused: key: its proof of knowledge does not hold (s·G = R + c·X)"),
    ("prior", "nullern", 3, 47, lambda: {1: forging(Kind.PROVED_SHUFFLE, other_prior)},
     "its pshuffle refused: shuffle: party 1 computed its shuffle from another deck"),
    ("shuffle proof", "nullern", 3, 47, lambda: {1: forging(Kind.PROVED_SHUFFLE, swap_two)},
     "its pshuffle refused: shuffle: its shuffle proof: t"),
    ("re-mix proof", "bidwhist", 4, 47,
     lambda: {s: forging(Kind.PROVED_REMIX, bad_remix) for s in range(4)},
     "its premix refused: remix: its shuffle proof: t"),
    ("decryption share", "nullern", 3, 47,
     lambda: {1: forging(Kind.PROVED_SHARES, wrong_share)},
     "its pshares refused: share: slot "),
    ("false alarm", "nullern", 3, 47, lambda: {2: false_alarm},
     "seat 2 raised a false alarm (my cards do not open (a lie))"),
]


@pytest.mark.parametrize(("deck", "case"), [
    (deck, case) for case in CASES for deck in (PROVED_DECK, PIPELINED_DECK)
    if deck == PIPELINED_DECK or case[0] in ("prior", "shuffle proof")],
    ids=lambda v: v if isinstance(v, str) else v[0])
def test_a_cheat_at_a_table_gets_a_verdict_of_the_doc(
        deck: str, case: tuple[str, str, int, int, Forges, str]) -> None:
    _, game, players, seed, forges, expected = case
    table = MemoryTable(game, players, seed, [heuristic_bot] * players, deck=deck,
                        forges=forges())
    table.play(deals=1)
    verdicts = [s.finished[0].verdict if s.finished else "" for s in table.sessions]
    verdict = max(set(verdicts), key=verdicts.count)  # (the cheat's own may differ)
    named = re.match(r"seat (\d+) ", verdict)
    assert named is not None
    cheat = int(named[1])
    assert all(v == verdict for s, v in enumerate(verdicts) if s != cheat), verdicts
    assert expected in verdict
    assert matches(verdict), verdict
    assert not matches(verdict + " ") and not matches("x" + verdict)
    report = verify(table.sessions[(cheat + 1) % players].export())
    assert report.deals[0].verdict == verdict
