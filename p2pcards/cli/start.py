"""The ``p2pcards`` command's entry point (and ``python -m p2pcards``'s).

Loading the program takes a moment (longer on a busy machine); Ctrl-C meanwhile
ends it as Ctrl-C does later, quietly with status 130, rather than with the
traceback of whichever import it interrupted.
"""

from __future__ import annotations

EXIT_INTERRUPTED = 130
"""As ``p2pcards.cli.main.EXIT_INTERRUPTED`` (not imported: this module loads nothing)."""


def main() -> int:
    try:
        from p2pcards.cli.main import main as run  # noqa: PLC0415  (the load it guards)

        return run()
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
