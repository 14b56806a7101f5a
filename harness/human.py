"""A person at one seat, in the terminal (``league play GAME --human SEAT``).

The seat is an SDK bot (:class:`HumanSeat`) served in this process by the
match runner, like any in-process bot (``harness.local``): it is sent the
``start``, ``act`` and ``end`` messages a bot process of that seat would be
sent, and shows exactly those, so the person sees their own seat's view and
nothing else. What the others did shows only as far as it is public: in the
next view of this seat (the keys that changed since the last one are
marked ``*``), never in another seat's observation nor in the harness's log.

It reads a line per decision: a move's number (re-asked on anything else),
or ``q`` to quit; end of input quits too. Quitting raises :class:`HumanQuit`
out of the match, which is abandoned and recorded nowhere. Only plain lines
in and out, so it works without a terminal (a pipe, a test). A seat with a
single legal move plays it without asking.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Callable
from typing import Any

from bots.sdk import Bot
from games import get_game
from harness.proc.safe_text import printable

WIDTH = 100  # wrap long values of a view at this many characters


class HumanQuit(Exception):
    """The person quit (``q``, end of input, or Ctrl-C: ``interrupted``):
    the match is abandoned."""

    def __init__(self, how: str, interrupted: bool = False) -> None:
        super().__init__(how)
        self.interrupted = interrupted


def compact(value: Any) -> str:
    """One value of an observation or one action as short JSON."""
    return json.dumps(value, separators=(", ", ": "), default=repr)


def view_lines(obs: Any, previous: Any = None) -> list[str]:
    """An observation, a key a line, wrapped; ``*`` marks the keys whose
    value differs from ``previous`` (the seat's last view)."""
    if not isinstance(obs, dict):
        return textwrap.wrap(compact(obs), WIDTH)
    old = previous if isinstance(previous, dict) else None
    width = max((len(str(key)) for key in obs), default=0)
    lines = []
    for key, value in obs.items():
        mark = "*" if old is not None and old.get(key, object()) != value else " "
        head = f" {mark} {str(key):{width}}  "
        lines += textwrap.wrap(compact(value), WIDTH, initial_indent=head,
                               subsequent_indent=" " * len(head)) or [head]
    return lines


class HumanSeat(Bot):
    """One seat played by whoever types at ``read_line`` (a line, "" at end
    of input) and reads ``write`` (sys.stdin and sys.stdout by default)."""

    name = "human"

    def __init__(self, read_line: Callable[[], str] | None = None,
                 write: Callable[[str], object] | None = None) -> None:
        self.read_line = read_line or sys.stdin.readline
        self._write = write or sys.stdout.write
        self.previous: Any = None
        self.seat = 0

    def say(self, text: str = "") -> None:
        self._write(text + "\n")
        sys.stdout.flush()

    def on_start(self, match: dict[str, Any]) -> None:
        self.previous = None
        self.seat = match["seat"]
        names = match.get("names") or []
        title = get_game(match["game"]).INFO.title
        self.say(f"{title}, {match['players']} players: you play seat {self.seat}")
        self.say("seats: " + ", ".join(
            f"{seat} = {'you' if seat == self.seat else printable(str(name), False)}"
            for seat, name in enumerate(names)))
        if match.get("partners"):
            self.say(f"your partner: seat {', '.join(map(str, match['partners']))}")
        self.say(f"what the view's keys mean: docs/games/{match['game']}.md")

    def choose(self, obs: dict[str, Any], legal: list[Any], time_left_ms: int) -> int:
        self.show(obs, "your view")
        if len(legal) == 1:
            self.say(f"only one move: {compact(legal[0])} (played)")
            return 0
        self.say("your moves:")
        for number, action in enumerate(legal, 1):
            self.say(f"  {number:>3}. {compact(action)}")
        return self.ask(len(legal))

    def ask(self, count: int) -> int:
        """The index of the move whose number is typed; re-asks until one is."""
        while True:
            self._write(f"your move (1-{count}, q quits): ")
            sys.stdout.flush()
            try:
                line = self.read_line()
            except KeyboardInterrupt:
                self.say()
                raise HumanQuit("Ctrl-C", interrupted=True) from None
            if not line:
                self.say()
                raise HumanQuit("end of input")
            text = line.strip()
            if text.lower() in ("q", "quit"):
                raise HumanQuit("q")
            if text.isdigit() and 1 <= int(text) <= count:
                return int(text) - 1
            self.say(f"  {printable(text[:40], False)!r} is not a move: type a number from 1 to "
                     f"{count}, or q to quit")

    def on_end(self, result: dict[str, Any]) -> None:
        self.show(result.get("obs"), "the end: your last view")

    def show(self, obs: Any, title: str) -> None:
        marked = " (* changed since your last view)" if self.previous is not None else ""
        self.say(f"\n== {title}, seat {self.seat}{marked}")
        for line in view_lines(obs, self.previous):
            self.say(line)
        self.previous = obs
