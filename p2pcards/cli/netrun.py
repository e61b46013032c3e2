"""What the networked commands share: exit statuses, the play under a prompt or
headless, the game's outputs, lines said and questions asked.

``p2pcards host`` and ``join`` (:mod:`p2pcards.cli.netcmd`) and ``join --watch``
(:mod:`p2pcards.cli.watchcmd`) all end a game the same way and run it the same way,
with a person at a prompt (Trio as prompt-toolkit's guest) or headless (until the
game ends or a signal comes).
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Awaitable, Callable

import trio
from prompt_toolkit.patch_stdout import patch_stdout

from p2pcards.cli import guest, outputs
from p2pcards.cli.netrepl import Left, NetPrompt
from p2pcards.net.series import numbered
from p2pcards.table.verify import format_report, verify

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_REFUSED, EXIT_AWAY = 0, 1, 2, 3, 4
"""The exit statuses of host and join (docs/networking.md, "Exit statuses"): the game
over and verified (or left with quit); over but its transcript does not verify; a bad
option, an output that cannot be written, a port that cannot be listened on; refused
by the host; the game not over, the host or the other player away (the same command
resumes it).  Stopped by a signal: 128 + its number (130 Ctrl-C, 143 SIGTERM)."""
def positive_seconds(text: str) -> float:
    """An option's seconds when given (``host --timer``): a number more than 0 (argparse
    names the option in its one-line error)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"must be more than 0 seconds, not {text}")
    return value


def fail(message: str) -> int:
    print(f"p2pcards: {message}", file=sys.stderr)
    return EXIT_USAGE


def game_outputs(args: argparse.Namespace, transcript: bytes, number: int,
                 say: Callable[[str], None]) -> tuple[bool, bool]:
    """A finished game's transcript verified, its report said, and ``--transcript`` and
    ``--save`` written (named with the game's ``number`` past the first); whether it
    verified, and whether every output was written (one that cannot be is said, and the
    others are still written)."""
    report = verify(transcript)
    say(format_report(report, named=True))
    written = True
    if args.transcript:
        path = numbered(args.transcript, number)
        written = outputs.write("--transcript", path, transcript)
        if written:
            say(f"transcript written to {path}")
    if args.save and report.history is not None:
        path = numbered(args.save, number)
        if outputs.write("--save", path, report.history.dumps()):
            say(f"hand history saved to {path}")
        else:
            written = False
    return report.ok, written


def ask_yes(question: str) -> bool:
    """Whether the person types yes (no input left, as from /dev/null: no).  Ctrl-C
    (KeyboardInterrupt, raised on) or the end of input ends the question's line first,
    so that what is printed next starts a line of its own."""
    try:
        return input(question).strip().lower() == "yes"
    except EOFError:
        print(flush=True)
        return False
    except KeyboardInterrupt:
        print(flush=True)
        raise


SIGNALS = {"SIGINT": signal.SIGINT, "SIGTERM": signal.SIGTERM, "SIGHUP": signal.SIGHUP}
"""The signals a headless peer leaves the table on (its status: 128 + the number); at a
prompt, SIGTERM and SIGHUP (its terminal closed).  Either way the table is left as
``quit`` leaves it: the journal kept, a port mapping and an onion service deleted."""


def run_table(play: Callable[[], Awaitable[None]], prompt: NetPrompt | None) -> str:
    """Play to the end of the game (or until it stops); with a person, under the
    prompt.  "left" if the person left before the end; the name of the signal that
    stopped it (SIGINT, SIGTERM; at a prompt SIGTERM, since Ctrl-C asks); else ""."""
    if prompt is None:
        return trio.run(_headless, play)
    left = False

    async def seated() -> None:
        nonlocal left
        async with trio.open_nursery() as nursery:
            asking = trio.CancelScope()

            closed = trio.Event()

            async def the_prompt() -> None:
                nonlocal left
                with asking:
                    try:
                        await prompt.run()
                    except Left:
                        left = True
                        nursery.cancel_scope.cancel()
                    finally:
                        closed.set()

            nursery.start_soon(the_prompt)
            await play()
            asking.cancel()
            await closed.wait()
            if not left and prompt.table is not None and prompt.table.over:
                await prompt.finish()  # (the save prompt, with the line prompt closed)
            nursery.cancel_scope.cancel()

    with patch_stdout(raw=True):
        guest.run(seated)
    return prompt.terminated or ("left" if left else "")


async def _headless(play: Callable[[], Awaitable[None]]) -> str:
    """Play with no prompt, until the game ends or SIGINT or SIGTERM arrives (then the
    play is cancelled: what it journaled is committed by the caller, and the same
    command resumes it).  The signal's name, or ""."""
    stopped = ""
    async with trio.open_nursery() as nursery:

        async def signals(task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED
                          ) -> None:
            nonlocal stopped
            with trio.open_signal_receiver(*SIGNALS.values()) as received:
                task_status.started()
                async for number in received:
                    stopped = signal.Signals(number).name
                    nursery.cancel_scope.cancel()
                    return

        await nursery.start(signals)
        await play()
        nursery.cancel_scope.cancel()
    return stopped


def leaf(error: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first ``kind`` in ``error`` or the exception groups around it."""
    if isinstance(error, kind):
        return error
    if isinstance(error, BaseExceptionGroup):
        for inner in error.exceptions:
            found = leaf(inner, kind)
            if found is not None:
                return found
    return None


def show_line(line: str) -> None:
    print(line, flush=True)
