"""``p2pcards join --watch``: watch a networked table, with no seat.

With a terminal, the read-only prompt (:mod:`p2pcards.cli.watchrepl`); without
one (input from a file or a pipe), headless: the table's events are printed.
At the end of each game the watcher's own watching session's transcript is
verified, and ``--save`` and ``--transcript`` are written as a player's are
(the same hand history, byte for byte), and the match score shows: the games
watched, and the ones before the watcher came as the host told them.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path

import trio

from p2pcards.cli import outputs
from p2pcards.cli.netrun import (
    EXIT_AWAY,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_REFUSED,
    SIGNALS,
    ask_yes,
    fail,
    game_outputs,
    leaf,
    run_table,
    show_line,
)
from p2pcards.cli.reachopts import dial_of
from p2pcards.cli.watchrepl import WatchPrompt
from p2pcards.net import lan
from p2pcards.net.identity import Friends, IdentityError, load_or_create, show_id
from p2pcards.net.invite import Invite
from p2pcards.table.session import Session

RECORD_VARIABLE = "P2PCARDS_WATCH_RECORD"
"""For the tests: a file to which a watcher appends every frame it receives, as it came
(its length, then its bytes)."""


def cmd_watch(args: argparse.Namespace, invite: Invite, heard: lan.Heard | None) -> int:
    """Watch the table of ``invite`` (``heard``: found on the LAN, its fingerprint to be
    confirmed)."""
    from p2pcards.net.client import HostLost, JoinError  # noqa: PLC0415
    from p2pcards.net.watch import Watch  # noqa: PLC0415

    if args.bot is not None or args.bots:
        return fail("--watch takes no seat: --bot and --bots do not go with it")
    unwritable = outputs.check([("--save", args.save), ("--transcript", args.transcript)])
    if unwritable:
        return fail(unwritable)
    try:
        identity = load_or_create()
        friends = Friends.load()
    except IdentityError as exc:
        return fail(str(exc))
    if heard is not None:
        print(f"its fingerprint is {show_id(heard.fingerprint)}; is it the one the host"
              " shows?")
        if not args.yes and not ask_yes("type yes to watch: "):
            print("p2pcards: the fingerprint was not confirmed; not watching", file=sys.stderr)
            return EXIT_REFUSED
    prompt = WatchPrompt("", hint_bot=None) if sys.stdin.isatty() else None
    if prompt is not None:
        prompt.save_to = args.save
        prompt.pace, prompt.pause = args.pace, args.pause
    say = prompt.show if prompt is not None else show_line
    statuses: list[int] = []

    async def over(session: Session, number: int) -> None:
        ok, written = game_outputs(args, session.export(), number, say)
        statuses.append(EXIT_FAILED if not ok else EXIT_OK if written
                        else outputs.EXIT_OUTPUT)
        match = watch.match()
        if prompt is not None:
            prompt.game_over(match, goes_on=True)
        else:
            for line in match:
                say(line)

    async def confirm(question: str) -> bool:
        if args.yes:
            print(question)
            return True
        if prompt is not None:
            return await prompt.yes_or_no(f"{question} Trust it?")
        print(question)
        return await trio.to_thread.run_sync(ask_yes, "type yes to trust it: ",
                                             abandon_on_cancel=True)

    watch = Watch(identity, invite, args.name, friends, confirm, say, prompt, on_over=over,
                  tap=_recorder(), dial=dial_of(args))
    try:
        stopped = run_table(watch.run, prompt)
    except Exception as exc:  # Trio wraps what its tasks raise in groups
        for kind, status in ((HostLost, EXIT_AWAY), (JoinError, EXIT_REFUSED)):
            found = leaf(exc, kind)
            if found is not None:
                print(f"p2pcards: {found}", file=sys.stderr)
                return status
        raise
    if stopped in SIGNALS:
        print(f"p2pcards: stopped by {stopped}: no longer watching", file=sys.stderr)
        return 128 + int(SIGNALS[stopped])
    if stopped == "left":
        print("stopped watching; the same command watches again")
        return EXIT_OK
    if watch.session is not None and not watch.session.over and not statuses:
        print("p2pcards: the watch ended before the game did", file=sys.stderr)
        return EXIT_AWAY
    if EXIT_FAILED in statuses:
        return EXIT_FAILED
    return max(statuses, default=EXIT_OK)


def _recorder() -> Callable[[bytes], None] | None:
    path = os.environ.get(RECORD_VARIABLE)
    if not path:
        return None
    out = Path(path).open("ab")  # noqa: SIM115 (open for the whole watch)

    def record(body: bytes) -> None:
        out.write(len(body).to_bytes(4, "big") + body)
        out.flush()
    return record

