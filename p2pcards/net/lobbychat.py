"""Chat in the lobby, before every seat is taken (link version 8, sans I/O).

At the table a chat line is signed by its seat's key, which every seat checks
against the roster.  In the lobby there is no roster yet: the ``lobby`` frame
names the joiners by device id, not by key, so no joiner can check another's
signature.  So a line said in the lobby is the host's word: a joiner sends its
``text`` alone (``lchat``) on its link, which the host authenticated; the host
makes it one printable line, counts it against a flood, and relays it to every
other link with who said it (``name`` and device ``id``), as it relays a
watcher's line.  A joiner shows it as relayed by the host (:func:`shown`).  A
link below version 8 is sent the same line as a ``notice`` (it shows it as the
host's), and never sends one: it holds what it types until the game begins.
Once the game has begun chat is signed again: a lobby line that crossed the
``start`` is counted, and dropped.
"""

from __future__ import annotations

from collections import deque

from p2pcards.net import links
from p2pcards.net.frames import MAX_CHAT, MAX_NOTICE, FrameError, LobbyChat, Notice
from p2pcards.table.roster import MAX_NAME

LOBBY_CHATS = 5
"""Lobby chat lines one identity may send in LOBBY_CHAT_WINDOW seconds, across its
links: more is a flood, and cuts its link (its seats are free again)."""
LOBBY_CHAT_WINDOW = 10.0
LOBBY_BACKLOG = 64
"""Frames a seat's link may have waiting to go out and still be sent a lobby line: a
link that reads nothing misses the lines past them (a seat's queue has no bound, for
the table waits for its seats; the lobby has no end in time)."""
LOBBY_SENDERS = 64
"""Identities whose lines of the last window the host remembers (the oldest forgotten
first): far more than ever sit in one lobby."""


def clean(text: str) -> str:
    """A line as the host relays it: one line of printable characters (a newline or a
    tab becomes a space; an escape, a bell, a bidirectional override ``?``), at most
    :data:`~p2pcards.net.frames.MAX_CHAT` characters, without the spaces around it."""
    spaced = "".join(" " if c.isspace() else c for c in text)
    return links.printable(spaced, MAX_CHAT).strip()


class LobbyTalk:
    """The host's lobby chat: lines counted per identity (sans I/O: the caller gives the
    time), and the frames that relay them."""

    def __init__(self, window: float = LOBBY_CHAT_WINDOW, most: int = LOBBY_CHATS):
        self.window = window
        self.most = most
        self._said: dict[bytes, deque[float]] = {}
        """Identity -> when its lines of the window were said (the most recent last)."""

    def take(self, key: bytes, text: str, now: float) -> str:
        """Count a line of identity ``key`` at ``now``: the line to relay
        (:func:`clean`; "" for nothing to show); FrameError for a flood."""
        said = self._said.pop(key, None) or deque()
        while said and said[0] <= now - self.window:
            said.popleft()
        if len(said) >= self.most:
            self._said[key] = said
            raise FrameError(f"more than {self.most} lobby chat lines in {self.window:g} s:"
                             " a flood")
        said.append(now)
        self._said[key] = said
        while len(self._said) > LOBBY_SENDERS:
            del self._said[next(iter(self._said))]
        return clean(text)

    @staticmethod
    def frames(name: str, id: bytes, text: str) -> tuple[LobbyChat, Notice]:
        """A line relayed: the ``lchat`` for a link of version 8, the ``notice`` saying
        the same for an older one."""
        who = links.printable(name, MAX_NAME)
        return (LobbyChat(text=text, name=who, id=id),
                Notice(text=links.printable(f"{who} said in the lobby: {text}", MAX_NOTICE)))


def shown(line: LobbyChat, host_id: bytes | None) -> str:
    """A relayed lobby line as a joiner shows it: printable, named by who said it, and
    marked as the host's word (``ana (via the host): hi``; the host's own line
    ``hal (the host): hi``)."""
    name = links.printable(line.name or "?", MAX_NAME)
    text = links.printable(line.text, MAX_CHAT)
    if line.id is not None and line.id == host_id:
        return f"{name} (the host): {text}"
    return f"{name} (via the host): {text}"
