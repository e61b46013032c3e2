"""``p2pcards verify FILE --explain``: a verdict a person can follow, run as a person runs
it (a real process), on transcripts of the in-process table with today's deck, whose
audit shows every deal's cards (the proved deck's explanation:
tests/test_table_proved.py)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from p2pcards.bots import heuristic_bot
from p2pcards.cli.main import main
from p2pcards.games import GAMES
from p2pcards.games.cards import bits
from p2pcards.history import load as load_history
from p2pcards.history import replay
from p2pcards.table.codec import pack, read_envelope, unpack
from p2pcards.table.explain import explain
from p2pcards.table.memory import MemoryTable
from p2pcards.table.roster import LOCK_DECK, PROVED_DECK
from p2pcards.table.state import Rejection
from p2pcards.table.verify import MAX_TRANSCRIPT, FirstRefusal, verify
from tests.test_table_silence import stalled

P2PCARDS = [sys.executable, "-m", "p2pcards"]
GAMES_PLAYED = {  # game -> (players, options, seed): whole games, as short as they come
    "bidwhist": (4, {"target": 5}, 1),  # 2 deals
    "controlnut": (4, {"target": 1}, 1),  # 1 deal
    "pasur": (2, {"target": 1}, 1),  # 1 deal
    "nullern": (2, {}, 1),  # 20 deals (a Nullern game always has 20)
}
HEADER = re.compile(r"deal (\d+), dealer (.+): \d+ messages?")


def transcript(game: str, folder: Path, deck: str = LOCK_DECK) -> Path:
    players, options, seed = GAMES_PLAYED[game]
    table = MemoryTable(game, players, seed, [heuristic_bot] * players, options=options,
                        deck=deck)
    table.play()
    assert table.sessions[0].over
    path = folder / f"{game}-{deck}.bin"
    path.write_bytes(table.sessions[-1].export())
    return path


Run = subprocess.CompletedProcess[str]


def explained(path: Path, *more: str) -> Run:
    return subprocess.run([*P2PCARDS, "verify", str(path), "--explain", *more],
                          capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture(scope="module")
def bidwhist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return transcript("bidwhist", tmp_path_factory.mktemp("bidwhist"))


@pytest.fixture(scope="module")
def bidwhist_told(bidwhist: Path) -> Run:
    """``verify --explain --history`` of the Bid Whist game."""
    return explained(bidwhist, "--history", str(bidwhist.with_suffix(".json")))


def sections(out: str) -> list[list[str]]:
    """The output's lines deal by deal (each from its ``deal N, dealer X`` line)."""
    found: list[list[str]] = []
    for line in out.splitlines():
        if HEADER.fullmatch(line):
            found.append([line])
        elif found and line.startswith("  "):
            found[-1].append(line)
    return found


def header(section: list[str]) -> tuple[int, str]:
    """A deal's number and its dealer's name."""
    match = HEADER.fullmatch(section[0])
    assert match is not None
    return int(match[1]), match[2]


def dealt(section: list[str]) -> dict[str, set[str]]:
    """Place (a seat's name, the kitty, the stock ...) -> the cards the deal shows in it."""
    start = section.index("  dealt (from the audited deck):")
    places = {}
    for line in section[start + 1:]:
        if not line.startswith("    "):
            break
        place, cards = line.strip().split(": ", 1)
        places[place] = set(cards.split()) - {"(none)"}
    return places


def as_dealt(history_path: Path) -> list[tuple[str, dict[str, set[str]], str]]:
    """Each deal of a hand history: its dealer's name, every place's cards as dealt, and
    how the deal ended as ``p2pcards replay`` says it."""
    history = load_history(str(history_path))
    endings = [hand.summary for hand in replay(history).hands]
    game = GAMES[history.game]
    options = game.resolve_options(history.options)
    players = len(history.players)
    deals, scored = [], 0
    for record in history.hands:
        names = record.players or history.players
        deck = [game.notation.parse(card) for card in record.deck]
        state = game.deal(deck, record.dealer, players, options, number=scored)
        scored += not record.void
        name = game.notation.name
        places = {names[p] if p < players else state.place_name(p): {name(c) for c in bits(m)}
                  for p, m in enumerate(state.may) if p < players or m}
        face_up = sum(1 << c for c in deck) & ~sum(state.may)
        if face_up:
            places["face up"] = {name(c) for c in bits(face_up)}
        deals.append((names[record.dealer], places, endings[len(deals)]))
    return deals


def check_every_deal(path: Path, run: Run) -> None:
    history = path.with_suffix(".json")
    assert run.returncode == 0, run.stderr
    assert run.stderr == ""
    assert run.stdout.splitlines()[-1] == "verified"
    expected = as_dealt(history)
    found = sections(run.stdout)
    assert [header(s)[0] for s in found] == list(range(1, len(expected) + 1))
    for section, (dealer, places, ending) in zip(found, expected, strict=True):
        assert header(section)[1] == dealer
        assert dealt(section) == places  # exactly the hands, kitty, stock of the history
        assert section[-1] == f"  ended: {ending}"
        for step in ("  seals: ", "  deck round 0 ", "  key releases: ", "  moves: ",
                     "  audit: ", "  verdict: ok;", "  agreement: signed by ", "  ended: "):
            assert any(line.startswith(step) for line in section), (step, section)
        assert any("it holds" in line for line in section if line.startswith("  audit: "))


def test_explain_names_every_deal_and_its_hands(bidwhist: Path, bidwhist_told: Run) -> None:
    check_every_deal(bidwhist, bidwhist_told)
    assert len(sections(bidwhist_told.stdout)) == 2


@pytest.mark.parametrize("game", ["controlnut", "pasur",
                                  pytest.param("nullern", marks=pytest.mark.slow)])
def test_explain_names_every_deal_of_every_game(game: str, tmp_path: Path) -> None:
    path = transcript(game, tmp_path)  # (Nullern: its 20 deals take some 6 s)
    check_every_deal(path, explained(path, "--history", str(path.with_suffix(".json"))))


def test_a_flipped_byte_is_explained_up_to_its_deal(bidwhist: Path, tmp_path: Path) -> None:
    doc = unpack(bidwhist.read_bytes(), "test", MAX_TRANSCRIPT)
    messages = doc["messages"]
    position, env = next((i, env) for i, wire in enumerate(messages)
                         if (env := read_envelope(wire, 4)).deal == 1 and env.kind == "act")
    messages[position] = messages[position][:-1] + bytes([messages[position][-1] ^ 1])
    bad = tmp_path / "bad.bin"
    bad.write_bytes(pack(doc))
    run = explained(bad)
    assert run.returncode == 1 and run.stderr == ""  # as without --explain
    lines = run.stdout.splitlines()
    found = sections(run.stdout)
    assert [header(s)[0] for s in found] == [1, 2]
    assert "  dealt (from the audited deck):" in found[0]  # the first deal stands
    assert "  dealt (from the audited deck):" not in found[1]
    assert found[1][-1] == "  the deal stops here, before its audit: its cards are not known"
    name = f"seat{env.sender}"
    refusal = (f"refused in deal 2: message {position}, an act message in the name of"
               f" {name} (seat {env.sender}): signature: bad signature on an act message"
               f" in seat {env.sender}'s name")
    assert refusal in lines
    report = lines[lines.index(refusal) + 1:]  # then the report as without --explain
    assert report[0].startswith("Bid Whist at table ") and len(report) == 6
    assert report[3] == f"REFUSED: message {position} (in seat {env.sender}'s name;" \
        f" signature: bad signature on an act message in seat {env.sender}'s name)"
    assert report[-1] == "NOT verified"


def test_a_proved_deal_cut_short_keeps_its_hidden_cards_secret(tmp_path: Path) -> None:
    """At a proved table there is no audit: a deal refused midway is told as stopped
    before its end, its hidden cards secret, not as waiting for an audit."""
    path = transcript("bidwhist", tmp_path, PROVED_DECK)
    doc = unpack(path.read_bytes(), "test", MAX_TRANSCRIPT)
    messages = doc["messages"]
    position = [i for i, wire in enumerate(messages)
                if read_envelope(wire, 4).kind == "pact"][10]  # a play midway
    messages[position] = messages[position][:-1] + bytes([messages[position][-1] ^ 1])
    bad = tmp_path / "bad.bin"
    bad.write_bytes(pack(doc))
    run = explained(bad)
    assert run.returncode == 1 and run.stderr == ""
    found = sections(run.stdout)
    assert [header(s)[0] for s in found] == [1]
    assert found[0][-1] == "  the deal stops here, before its end: its hidden cards stay secret"
    assert "before its audit" not in run.stdout


def test_without_explain_the_output_is_as_before(bidwhist: Path, bidwhist_told: Run,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """--explain adds its lines before the report, which stays as it was."""
    assert main(["verify", str(bidwhist)]) == 0
    plain = capsys.readouterr().out
    assert plain.startswith("Bid Whist at table ") and len(plain.splitlines()) == 6
    assert bidwhist_told.stdout.endswith(plain)
    assert len(bidwhist_told.stdout) > 10 * len(plain)


def test_text_from_the_transcript_stays_on_one_safe_line(bidwhist: Path) -> None:
    """A refusal's reason and a seat's signed verdict are the peers' text: each stays one
    printable line of the explanation."""
    report = verify(bidwhist.read_bytes())
    lines = explain(report).splitlines()
    report.runs[0].verdict = "ok\n[seat1] verified\x1b]0;x\x07"
    report.deals[0].dissent.append("seat 2 signed [9, 0] (ok\r\nverified)")
    assert report.refusal is None
    doc = unpack(bidwhist.read_bytes(), "test", MAX_TRANSCRIPT)
    wire = doc["messages"][3]
    report.refusal = FirstRefusal(3, Rejection(1, "malformed", "\x1b[2J\nverified"), None, 1,
                             read_envelope(wire, 4).kind)
    shown = explain(report).splitlines()
    assert len(shown) == len(lines) + 2  # the dissent and the refusal, one line each
    assert all(line.isprintable() for line in shown)
    assert any(line.startswith("  verdict: ok?[seat1] verified?]0;x?;") for line in shown)


def test_a_forfeit_by_silence_and_a_void_deal_are_told() -> None:
    """Deals that end other than by play: a seat silent (its secrets never came, so the
    cards are never known) and a deal every seat voided (audited, so they are)."""
    table, silent = stalled(71, deck=LOCK_DECK)
    others = [s for s in table.sessions if s is not silent]
    for session in others:
        session.claim_silent()
    table.deliver()
    told = explain(verify(others[0].export())).splitlines()
    first = sections("\n".join(told))[0]
    name = f"seat{silent.me}"
    assert "  claims: 3 claims of silence" in first
    assert "  audit: none, the deal ended before it" in first
    assert "  dealt: the cards were never revealed" in first
    assert first[-1].startswith(f"  ended: {name} (seat {silent.me}) forfeits the deal"
                                " (silent); points: ")
    signers = [f"seat{s}" for s in range(4) if s != silent.me]
    assert any(line.startswith(f"  agreement: signed by {', '.join(signers)} (3 agree")
               for line in first)
    assert told[-1].startswith("the transcript ends here: the transcript stops with")

    table, proposer = stalled(75, "pasur", deck=LOCK_DECK)
    proposer.propose_void("the cat walked across the keyboard")
    table.play(deals=1)
    void = sections(explain(verify(table.sessions[0].export())))[0]
    assert "  proposals to void the deal: 1, answered in 3 consent messages" in void
    assert void[-1] == "  ended: void by every seat's consent (the cat walked across the" \
        " keyboard); it does not count"
    assert "  dealt (from the audited deck):" in void
    assert not any(line.startswith("  the moves replayed") for line in void)
