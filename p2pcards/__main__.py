"""``python -m p2pcards``: the same as the ``p2pcards`` command."""

from p2pcards.cli.start import main

raise SystemExit(main())
