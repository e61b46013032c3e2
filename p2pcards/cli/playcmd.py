"""``p2pcards play GAME``: a person at a local table against bots (the prompt of
:mod:`p2pcards.cli.repl`, the game kept to resume: :mod:`p2pcards.cli.localsave`), or
``--auto``, bots in every seat and the game printed as it goes."""

from __future__ import annotations

import argparse
import secrets
import sys
from collections.abc import Sequence

from p2pcards.bots import (
    SEARCH_SECONDS,
    SearchBot,
    default_think,
    default_workers,
    make_bot,
    share_pool,
)
from p2pcards.cli import localsave, outputs, repl
from p2pcards.games import GAMES, OptionError, get_game
from p2pcards.local import DEFAULT_NAMES, LocalGame

EXIT_OK, EXIT_MALFORMED, EXIT_INTERRUPTED = 0, 2, 130
"""As the command's (:mod:`p2pcards.cli.main`): done, a usage error, Ctrl-C."""


def option_flags() -> dict[str, str]:
    """Each table option of the registered games, as a flag of ``play`` (``--kitty 5``),
    with its help: which games have it, and what it does there."""
    flags: dict[str, list[str]] = {}
    for game in GAMES.values():
        for name, spec in game.options.items():
            allowed = " or ".join(map(str, spec.choices)) if spec.choices else \
                f"{spec.minimum}-{spec.maximum}"
            flags.setdefault(name, []).append(
                f"{game.title}: {spec.help or name} ({allowed}, default {spec.default})")
    return {name: "; ".join(helps) for name, helps in sorted(flags.items())}


def under(value: float | None, least: float, strictly_more: bool = False) -> bool:
    """An option given (not None) below ``least`` (or at it, if it must be more)."""
    return value is not None and (value <= least if strictly_more else value < least)


def cmd_play(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    options: dict[str, int] = dict(args.option)
    for key in option_flags():
        value = getattr(args, f"option_{key}")
        if value is not None:
            options[key] = value
    players = args.players if args.players is not None else game.default_players
    problem = ("--think must be more than 0 seconds" if under(args.think, 0, True) else
               "--iterations must be at least 1" if under(args.iterations, 1) else
               "--pace must not be negative" if under(args.pace, 0) else
               "--workers must be at least 1" if under(args.workers, 1) else "")
    if not args.auto and not 0 <= args.seat < players:
        problem = f"--seat must be a seat of the table: 0 to {players - 1}, not {args.seat}"
    if not args.auto and args.quiet:
        problem = "--quiet goes with --auto (at the prompt the game is the output)"
    problem = problem or outputs.check([("--save", args.save)]) or ""
    if problem:
        print(f"p2pcards: {problem}", file=sys.stderr)
        return EXIT_MALFORMED
    seed = args.seed if args.seed is not None else secrets.randbits(32)
    if not args.auto and (args.resume or args.new or localsave.path_for(game.name).exists()):
        try:
            saved = localsave.choose(game.name, _ask, new=args.new, resume=args.resume)
        except localsave.Unanswered as exc:
            print(f"p2pcards: {exc}", file=sys.stderr)
            return EXIT_MALFORMED
        except OSError as exc:  # (a kept game that cannot be moved aside)
            print(f"p2pcards: the kept game {localsave.path_for(game.name)}: "
                  f"{exc.strerror or exc}", file=sys.stderr)
            return outputs.EXIT_OUTPUT
        except KeyboardInterrupt:
            print()  # (the shell's prompt on a line of its own, not after ^C)
            return EXIT_INTERRUPTED
        if saved is not None:
            return _play_interactive(args, saved.table(seed), seed, seat=saved.seat,
                                     kinds=saved.bots)
    names = None if args.auto else [
        "you" if s == args.seat else name
        for s, name in enumerate(n for n in DEFAULT_NAMES if n != "you")][:players]
    try:
        table = LocalGame(game, players, options, seed, names=names)
    except OptionError as exc:
        print(f"p2pcards: {exc}", file=sys.stderr)
        return EXIT_MALFORMED
    if not args.auto:
        return _play_interactive(args, table, seed)
    print(f"seed {seed}")
    iterations = args.iterations if args.iterations is not None else \
        None if args.think is not None else 200
    bot = make_bot(args.bots or "heuristic", iterations, args.think, workers=args.workers or 1)
    if args.quiet:
        record = table.play(bot)
        print(table.totals_line())
        print(table.result_line())
    else:
        record = table.play(bot, say=lambda line: print(line, flush=True),
                            pace=args.pace or 0.0, show_pool=True)
    if args.save:
        if not outputs.write("--save", args.save, record.dumps()):
            return outputs.EXIT_OUTPUT
        print(f"hand history saved to {args.save}")
    return EXIT_OK


def _ask(question: str) -> str:
    """A line typed at the terminal (EOFError: none will come)."""
    if not sys.stdin.isatty():
        raise EOFError
    return input(question)


def _play_interactive(args: argparse.Namespace, table: LocalGame, seed: int, *,
                      seat: int | None = None, kinds: Sequence[str | None] | None = None) -> int:
    """The person at ``seat`` (``--seat``), bots of ``kinds`` (``--bots``) elsewhere; the
    game kept as it goes for the same command to resume."""
    seat = args.seat if seat is None else seat
    workers = args.workers or (1 if args.ponder else default_workers(table.game))
    think = None if args.iterations is not None else args.think or default_think(workers)
    kind = args.bots or "ismcts"
    kinds = kinds or [None if s == seat else kind for s in range(table.players)]
    try:
        bots = [None if k is None else make_bot(k, args.iterations, think, workers=workers)
                for k in kinds]
    except ValueError as exc:  # (a kept game naming a bot this version lacks)
        print(f"p2pcards: cannot resume: {exc}", file=sys.stderr)
        return EXIT_MALFORMED
    hint = SearchBot("ismcts", args.iterations,
                     None if think is None else min(think, SEARCH_SECONDS), workers)
    pool = share_pool([*bots, hint])
    manner = repl.Manner(pace=0.6 if args.pace is None else args.pace, autoplay=args.autoplay,
                         four_colour=args.four_colour, seed=seed, save_to=args.save,
                         ponder=args.ponder)
    session = repl.Repl(table, seat, bots, hint_bot=hint, manner=manner)
    session.keeper = localsave.Keeper(localsave.path_for(table.game.name), seat, list(kinds))
    session.resume_hint = f"p2pcards play {table.game.name}"
    try:
        return repl.play(session)
    finally:
        if pool is not None:
            pool.close()
