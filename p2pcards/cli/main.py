"""The ``p2pcards`` command: its parser and the commands replay, arena, table, rules,
verify and bench (play: :mod:`p2pcards.cli.playcmd`; host, join, lan and id:
:mod:`p2pcards.cli.netcmd`)."""

from __future__ import annotations

import argparse
import json
import pydoc
import sys
from collections.abc import Sequence
from importlib import metadata
from typing import NoReturn

from p2pcards import bench, history
from p2pcards.bots import (
    BOT_NAMES,
    arena,
    parse_bot,
    unsplit_games,
)
from p2pcards.cli import helptext, netcmd, netrun, outputs
from p2pcards.cli.playcmd import cmd_play, option_flags, under
from p2pcards.games import GAMES, OptionError, get_game
from p2pcards.games.prose import name_seats
from p2pcards.local import DEFAULT_NAMES
from p2pcards.table.events import Moved, tell
from p2pcards.table.kinds import printable
from p2pcards.table.roster import (
    DEFAULT_DECK,
    LOCK_DECK,
    PROVED_DECK,
    PROVED_RULES,
    describe_deck,
    table_deck,
)

EXIT_OK, EXIT_ILLEGAL, EXIT_MALFORMED = 0, 1, 2

EVERYDAY_BOTS = ("ismcts", "heuristic", "random", "pimc")
"""The bots ``--help`` offers; the experimental searches (``ismcts-full``, ``ismcts-mo``,
``ismcts-own``, ``ismcts-backoff``) are accepted too, and told in docs/bots.md."""


class Parser(argparse.ArgumentParser):
    """argparse's parser, but a usage error is one line (the command, what is wrong,
    where to read more) and exit status 2, with no usage block before it."""

    def error(self, message: str) -> NoReturn:
        game = message.startswith(("argument game: ", "argument GAME: "))  # (names them all)
        more = "" if game or message.endswith(")") else f" ({self.prog} --help tells more)"
        self.exit(EXIT_MALFORMED, f"{self.prog}: {message.partition(': ')[2] if game else message}"
                  f"{more}\n")


def game_word(text: str) -> str:
    """A game as a person names it on the command line: its name in any case, with or
    without spaces and punctuation (``Pasur``, ``"Bid Whist"``), or the beginning of one
    name only (``bid``); else argparse's error naming the word and the games."""
    word = "".join(c for c in text.lower() if c.isalnum())
    if word in GAMES:
        return word
    found = [name for name in sorted(GAMES) if word and name.startswith(word)]
    if len(found) == 1:
        return found[0]
    raise argparse.ArgumentTypeError(
        f"unknown game {text!r} (games: {', '.join(sorted(GAMES))})" if not found else
        f"{text!r} may be {' or '.join(found)}: name one")


def rules_word(text: str) -> str:
    """``p2pcards rules``'s page: a game (:func:`game_word`) or ``common``."""
    if text.strip().lower() == helptext.COMMON:
        return helptext.COMMON
    try:
        return game_word(text)
    except argparse.ArgumentTypeError:
        raise argparse.ArgumentTypeError(
            f"no rules called {text!r} (rules: {', '.join(helptext.rules_pages())})") from None


def bot_kind(text: str) -> str:
    """``--bots``: a bot's kind (:data:`BOT_NAMES`, the everyday ones in the help)."""
    if text in BOT_NAMES:
        return text
    raise argparse.ArgumentTypeError(f"unknown bot {text!r} (bots: {', '.join(EVERYDAY_BOTS)};"
                                     " the experimental searches: docs/bots.md)")


def _games_by_any_name(parser: argparse.ArgumentParser) -> None:
    """Every command's game argument (``play``, ``host``, ...) takes the game as
    :func:`game_word` reads it; its usage still lists the games' names."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in action.choices.values():
                _games_by_any_name(command)
        elif action.dest == "game" and action.choices is not None \
                and set(action.choices) == set(GAMES):
            action.type = game_word

def _option_pair(text: str) -> tuple[str, int]:
    key, sep, value = text.partition("=")
    if not sep or not (value.isascii() and value.lstrip("-").isdigit()):
        raise argparse.ArgumentTypeError(f"expected NAME=NUMBER, got {text!r}")
    return key.strip(), int(value)


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog="p2pcards",
        description="A serverless card table: "
        + ", ".join(game.title for game in GAMES.values()) + ".",
        epilog="p2pcards COMMAND --help tells more about a command; to start, play a game"
        " against bots: p2pcards play bidwhist")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    play = sub.add_parser("play", help="play a game against bots at a local table",
                          description="Play a game against bots at a local table: you take "
                          "a seat, bots take the others (--auto: bots in every seat).")
    play.add_argument("game", choices=sorted(GAMES), help="the game")
    play.add_argument("--seat", type=int, default=0, help="your seat (default 0)")
    play.add_argument("--bots", type=bot_kind, metavar="{" + ",".join(EVERYDAY_BOTS) + "}",
                      help="the other seats' bots: search (ismcts, the default), the rule-based "
                      "heuristic, random legal moves, or the determinized-UCT baseline (pimc);"
                      " with --auto the default is heuristic (experimental searches:"
                      " docs/bots.md)")
    play.add_argument("--think", type=float,
                      help="seconds a searching bot thinks per move (default: one second of "
                      "search shared by its --workers, so 0.5 on two; with --auto 200"
                      " iterations a move unless --think is given)")
    play.add_argument("--iterations", type=int,
                      help="search iterations per move instead of --think (same seed, same "
                      "game; --auto default 200)")
    play.add_argument("--workers", type=int,
                      help="processes per searching bot (root parallelism; default 2 where "
                      "the machine has two cores or more, else 1; 1 in " + unsplit_games()
                      + " and with --ponder)")
    play.add_argument("--seed", type=int, help="seed for the deals and the bots (same seed, "
                      "same game); random if absent")
    play.add_argument("--players", type=int, help="number of players (where the game allows)")
    for name, help_text in option_flags().items():
        play.add_argument(f"--{name}", type=int, dest=f"option_{name}", metavar="N",
                          help=help_text)
    play.add_argument("-o", "--option", type=_option_pair, action="append", default=[],
                      metavar="NAME=N", help="any other table option")
    play.add_argument("--pace", type=float,
                      help="seconds between the bots' moves on screen (default 0.6; with"
                      " --auto none unless given, and --quiet shows no moves)")
    play.add_argument("--autoplay", action="store_true",
                      help="play your move for you when it is the only legal one")
    play.add_argument("--four-colour", action="store_true",
                      help="four suit colours (spades black, hearts red, diamonds blue, clubs "
                      "green); NO_COLOR turns colour off")
    play.add_argument("--ponder", action="store_true",
                      help="let the searching bots think while you do (measured: no shorter"
                      " waits yet; docs/bots.md)")
    play.add_argument("--auto", action="store_true",
                      help="bots in every seat; print the game as it goes")
    play.add_argument("--save", metavar="FILE", help="write the game's hand history at the end")
    play.add_argument("--quiet", action="store_true", help="--auto: print only the result")
    kept = play.add_mutually_exclusive_group()
    kept.add_argument("--resume", action="store_true",
                      help="resume the unfinished game of GAME without asking (a local game is"
                      " kept after every move: leaving loses nothing)")
    kept.add_argument("--new", action="store_true",
                      help="begin a new game; an unfinished one is set aside (GAME.json.old)")
    play.set_defaults(func=cmd_play)

    replay = sub.add_parser("replay", help="check a hand history and print its results",
                            description="Re-run a hand history through the rules engines. "
                            "Exit status 0: all legal; 1: an illegal action; 2: a malformed file.")
    replay.add_argument("file", help="a p2pcards-history/1 JSON file")
    replay.add_argument("--json", action="store_true", help="print one JSON object")
    replay.set_defaults(func=cmd_replay)

    arena_p = sub.add_parser("arena", help="bots against bots, with confidence intervals",
                             description="Play bots against each other over duplicate deals "
                             "or whole games and report wins and points with 95% confidence"
                             " intervals.")
    arena_p.add_argument("game", choices=sorted(GAMES))
    arena_p.add_argument("--players", required=True, metavar="BOT,BOT,...",
                         help=f"one bot per seat ({', '.join(EVERYDAY_BOTS)}, or an"
                         " experimental search of docs/bots.md); a searching bot"
                         " may carry parameters: ismcts:c=0.5 (exploration),"
                         " ismcts:w=2 (processes), ismcts:i=1 (worlds inferred from the"
                         " bids; i=2 from the bids and plays), ismcts:e=8 (the last 8"
                         " moves solved exactly)")
    arena_p.add_argument("--games", type=int, default=10, help="whole games (default 10)")
    arena_p.add_argument("--deals", type=int,
                         help="play N duplicate deal pairs instead of whole games")
    arena_p.add_argument("--seed", type=int, default=1)
    budget = arena_p.add_mutually_exclusive_group()
    budget.add_argument("--iterations", type=int, help="search iterations per move")
    budget.add_argument("--think", type=float, help="search seconds per move")
    arena_p.add_argument("--json", action="store_true", help="print one JSON object")
    arena_p.add_argument("--save", metavar="DIR", help="keep every hand history in DIR")
    arena_p.add_argument("--jobs", type=int, default=1,
                         help="processes playing sets side by side (default 1; with "
                         "--iterations the report does not depend on it)")
    arena_p.add_argument("--results", metavar="FILE",
                         help="keep each set in FILE as it ends; run the same command "
                         "again to go on where it stopped")
    arena_p.add_argument("--cluster", metavar="ADDRESS",
                         help="play the sets on the workers of a Dask scheduler (tcp://HOST:8786;"
                         " the optional extra: pip install -e \".[cluster]\"; docs/bots.md):"
                         " the same results and report as a local run")
    arena_p.set_defaults(func=cmd_arena)

    table_p = sub.add_parser(
        "table", help="a secure session per seat plays a game in memory (the mental-poker deck)",
        description="Seat a table session per seat in one process (bots in every seat), play a "
        "whole game with the mental-poker deck (the proved one, or the older lock deck with a "
        "commit-reveal audit after every deal) and signed messages, and print each deal's"
        " verdict.")
    table_p.add_argument("game", choices=sorted(GAMES))
    table_p.add_argument("--seed", type=int, default=1,
                         help="seed of the seats' keys, secrets and bots (same seed, same game"
                         " and transcript; default 1)")
    table_p.add_argument("--players", type=int,
                         help="seats (where the game allows; default the game's usual)")
    table_p.add_argument("--bots", default="heuristic", choices=("heuristic", "random"),
                         help="the bot in every seat (default heuristic)")
    table_p.add_argument("--transcript", metavar="FILE",
                         help="write seat 0's transcript (for p2pcards verify)")
    table_p.add_argument("--deck", default=DEFAULT_DECK, choices=(PROVED_DECK, LOCK_DECK),
                         help="the deck: proved (every step proved, a false one refused before "
                         "any card it made opens; no audit: docs/proved-deck.md; the default)"
                         " or lock (the older commit-reveal deck, every card revealed and"
                         " audited after each deal)")
    table_p.set_defaults(func=cmd_table)

    verify_p = sub.add_parser(
        "verify", help="re-check a table transcript offline",
        description="Re-check an exported table transcript: every signature, deck step, "
        "key, move and verdict, and what every seat signed. Exit status 0: verified; "
        "1: a message is refused or a seat signed another result; 2: not a transcript.")
    verify_p.add_argument("file", help="a p2pcards-transcript/1 file")
    verify_p.add_argument("--history", metavar="OUT",
                          help="write the verified hand history (for p2pcards replay)")
    verify_p.add_argument("--explain", action="store_true",
                          help="first tell, deal by deal, what was checked, the cards each"
                          " seat was dealt and how the deal ended")
    verify_p.set_defaults(func=cmd_verify)

    netcmd.add_parsers(sub, _option_pair)

    rules_p = sub.add_parser(
        "rules", help="the full rules of a game, in the terminal",
        description="Print the full rules of a game (or common: what the four games share),"
        " through the pager when the output is a terminal ($PAGER, else less). At a table's"
        " prompt: help rules (in brief), help rules full (section by section).")
    rules_p.add_argument("game", nargs="?", type=rules_word, metavar="GAME",
                         help=f"{', '.join(helptext.rules_pages())}; without it, the list")
    rules_p.set_defaults(func=cmd_rules)

    bench_p = sub.add_parser("bench", help="measure speed", description="Measure speed.")
    bench_p.add_argument("suite", nargs="?", default="engines", choices=sorted(bench.SUITES))
    bench_p.add_argument("--json", action="store_true", help="print a JSON list of records")
    bench_p.add_argument("--seconds", type=float, default=2.0,
                         help="measuring time per figure (default 2)")
    bench_p.add_argument("--rtt", type=_round_trips, nargs="+", action="extend",
                         metavar="MS[,MS]",
                         help="net only: play the games with each joiner's link to the host MS"
                         " ms round trip away, once per MS (records net.rttMS.GAME.*: deal,"
                         " move, next hand, wait), in place of the usual ones; several:"
                         " --rtt 50,150,300, --rtt 50 150 300 or --rtt 50 --rtt 150")
    bench_p.add_argument("--games", metavar="GAME[,GAME]",
                         help="net only: these games only (default: every one)")
    bench_p.set_defaults(func=cmd_bench)
    _games_by_any_name(parser)
    return parser


def _version() -> str:
    try:
        return metadata.version("p2pcards")
    except metadata.PackageNotFoundError:  # run from a source tree not installed
        return "(not installed)"


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:  # p2pcards alone: what it can do
        parser.print_help()
        return EXIT_OK
    try:
        return int(args.func(args))
    except BaseException as exc:  # (Trio wraps what its tasks raise in exception groups)
        if netrun.leaf(exc, KeyboardInterrupt) is not None:
            return EXIT_INTERRUPTED
        if netrun.leaf(exc, BrokenPipeError) is not None:
            return 0
        raise


EXIT_INTERRUPTED = 130
"""Ctrl-C (SIGINT): 128 + 2, as shells report it (docs/networking.md, "Exit statuses")."""


def cmd_replay(args: argparse.Namespace) -> int:
    try:
        doc = history.load(args.file)
        result = history.replay(doc)
    except OSError as exc:
        return _malformed(args, f"{args.file}: {exc.strerror}")
    except history.HistoryFormatError as exc:
        return _malformed(args, f"{args.file}: {exc}")
    except history.ReplayError as exc:
        if args.json:
            print(json.dumps(exc.to_json()))
        else:
            print(f"p2pcards: {args.file}: illegal action in {exc}", file=sys.stderr)
        return EXIT_ILLEGAL
    if args.json:
        print(json.dumps(result.to_json()))
        return EXIT_OK
    game = result.game
    names = doc.players
    print(f"{game.title}, {len(names)} players: {', '.join(names)}")
    if doc.options:
        print("options: " + ", ".join(f"{k} {v}" for k, v in sorted(doc.options.items())))
    running = [0] * game.unit_count(len(names))
    for k, hand in enumerate(result.hands):
        if hand.points is not None:
            running = [a + b for a, b in zip(running, hand.points, strict=True)]
        dealer = (doc.hands[k].players or names)[doc.hands[k].dealer]
        print(f"deal {k + 1} (dealer {dealer}): {hand.summary}")
        print("  totals: " + ", ".join(f"{game.unit_name(u, names)} {t}"
                                       for u, t in enumerate(running)))
    if isinstance(result.winner, list):
        print("shared win: " + ", ".join(game.unit_name(u, names) for u in result.winner))
    elif result.winner is not None:
        print(f"winner: {game.unit_name(result.winner, names)}")
    else:
        print("the game is not over")
    return EXIT_OK


def cmd_table(args: argparse.Namespace) -> int:
    from p2pcards.bots import heuristic_bot, random_bot  # noqa: PLC0415
    from p2pcards.table.memory import MemoryTable  # noqa: PLC0415

    bot = heuristic_bot if args.bots == "heuristic" else random_bot
    game = GAMES[args.game]
    players = game.default_players if args.players is None else args.players
    try:
        game.check_players(players)
    except OptionError as exc:
        print(f"p2pcards: {exc}", file=sys.stderr)
        return EXIT_MALFORMED
    unwritable = outputs.check([("--transcript", args.transcript)])
    if unwritable:
        print(f"p2pcards: {unwritable}", file=sys.stderr)
        return outputs.EXIT_OUTPUT
    table = MemoryTable(args.game, players, args.seed, [bot] * players,
                        deck=table_deck(args.deck, set(PROVED_RULES)),  # (one build)
                        names=DEFAULT_NAMES[:players])
    print(describe_deck(args.deck))
    table.play()
    seat = table.sessions[0]
    names = [entry.name for entry in seat.roster.seats]
    for event in seat.events:
        if not isinstance(event, Moved):
            print(printable(tell(event, game, names), 1000))
    for rejection in table.rejected:
        print(printable(name_seats(f"seat {rejection.at} refused {rejection.rejection}",
                                   names), 1000))
    print(f"{table.messages} messages, {table.bytes_sent // 1024} KiB")
    if args.transcript:
        if not outputs.write("--transcript", args.transcript, seat.export()):
            return outputs.EXIT_OUTPUT
        print(f"transcript written to {args.transcript}")
    return EXIT_OK


def cmd_rules(args: argparse.Namespace) -> int:
    if args.game is None:
        print("The rules: p2pcards rules GAME (through the pager at a terminal)")
        for page in helptext.rules_pages():
            title = GAMES[page].title if page in GAMES else "what the four games share"
            print(f"  {page:<11} {title}")
        return EXIT_OK
    try:
        text = helptext.plain(helptext.full_rules(args.game))
    except OSError as exc:
        print(f"p2pcards: the rules of {args.game} are not installed: {exc.strerror or exc}",
              file=sys.stderr)
        return EXIT_MALFORMED
    pydoc.pager(text)  # (a terminal: $PAGER, else less; otherwise printed as it is)
    return EXIT_OK


def cmd_verify(args: argparse.Namespace) -> int:
    from p2pcards.table.verify import (  # noqa: PLC0415
        MAX_TRANSCRIPT,
        TranscriptError,
        format_report,
        verify,
    )

    unwritable = outputs.check([("--history", args.history)])
    if unwritable:
        print(f"p2pcards: {unwritable}", file=sys.stderr)
        return outputs.EXIT_OUTPUT
    try:
        with open(args.file, "rb") as f:
            data = f.read(MAX_TRANSCRIPT + 1)  # (a larger file is refused, not read)
        report = verify(data)
    except OSError as exc:
        print(f"p2pcards: {args.file}: {exc.strerror}", file=sys.stderr)
        return EXIT_MALFORMED
    except TranscriptError as exc:
        print(f"p2pcards: {args.file}: not a transcript: {exc}", file=sys.stderr)
        return EXIT_MALFORMED
    if args.explain:
        from p2pcards.table.explain import explain  # noqa: PLC0415

        print(explain(report))
    print(format_report(report, named=True))
    written = True
    if args.history and report.history is not None:
        written = outputs.write("--history", args.history, report.history.dumps())
    return EXIT_ILLEGAL if not report.ok else EXIT_OK if written else outputs.EXIT_OUTPUT


def _malformed(args: argparse.Namespace, message: str) -> int:
    line = " ".join(message.split())
    print(f"p2pcards: malformed hand history: {line}", file=sys.stderr)
    if args.json:
        print(json.dumps({"error": {"malformed": line}}))
    return EXIT_MALFORMED


def cmd_arena(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    lineup = [name.strip() for name in args.players.split(",")]
    try:
        for name in lineup:
            parse_bot(name)
    except ValueError as exc:
        print(f"p2pcards: --players: {exc}", file=sys.stderr)
        return EXIT_MALFORMED
    try:
        game.check_players(len(lineup))
    except OptionError as exc:
        print(f"p2pcards: {exc}", file=sys.stderr)
        return EXIT_MALFORMED
    count = args.deals if args.deals is not None else args.games
    problems = [f"--deals/--games must be at least 1, not {count}" if count < 1 else "",
                "--iterations must be at least 1" if under(args.iterations, 1) else "",
                "--think must be more than 0 seconds" if under(args.think, 0, True) else "",
                outputs.check([("--save", args.save), ("--results", args.results)],
                              directories=["--save"]) or ""]
    try:
        if any(problems):
            raise ValueError(next(p for p in problems if p))
        setup = arena.Setup(game.name, tuple(lineup), args.seed, args.deals is not None,
                            args.iterations, args.think, args.save)
        result = arena.run(setup, count, jobs=args.jobs, results=args.results,
                           progress=arena.progress_bar,
                           say=lambda line: print(line, file=sys.stderr),
                           cluster=args.cluster)
    except ValueError as exc:
        print(f"p2pcards: {exc}", file=sys.stderr)
        return EXIT_MALFORMED
    except KeyboardInterrupt:
        kept = (f"; the sets played are kept in {args.results}, and the same command goes "
                "on from there") if args.results else ""
        print(f"\narena: stopped{kept}", file=sys.stderr)
        return EXIT_INTERRUPTED
    print(json.dumps(result) if args.json else arena.format_report(result))
    return EXIT_OK


def _milliseconds(text: str) -> float:
    value = float(text)
    if not 0 < value <= 10_000:
        raise argparse.ArgumentTypeError("a round trip is more than 0 and at most 10000 ms")
    return value


def _round_trips(text: str) -> list[float]:
    """``150`` or ``50,150,300``: round trips in ms."""
    parts = [part for part in text.split(",") if part.strip()]
    if not parts:
        raise argparse.ArgumentTypeError("a round trip in ms, or several: 50,150,300")
    return [_milliseconds(part) for part in parts]


def cmd_bench(args: argparse.Namespace) -> int:
    games, unknown = [], []
    for word in (g.strip() for g in (args.games or "").split(",") if g.strip()):
        try:
            games.append(game_word(word))
        except argparse.ArgumentTypeError as exc:
            unknown.append(str(exc))
    if (args.rtt or args.games) and (args.suite != "net" or unknown):
        problem = (f"--games: {unknown[0]}" if unknown else
                   "--rtt goes with net" if args.rtt else "--games goes with net")
        print(f"p2pcards bench: {problem}", file=sys.stderr)
        return EXIT_MALFORMED
    if args.rtt:  # (each --rtt's values, each value a list of round trips)
        rtts = [ms for values in args.rtt for ms in values]
        records = bench.bench_net_rtt(rtts, games or None)
    elif args.suite == "net":
        records = bench.bench_net(args.seconds, games or None)
    else:
        records = bench.SUITES[args.suite](args.seconds)
    print(json.dumps([r.as_json() for r in records]) if args.json
          else bench.format_table(records))
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
