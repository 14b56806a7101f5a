"""One match in this process: an engine and a mover per seat, no bot
processes, no harness. The experiment tools (``bots.search.lab``) and
``bots.evaluate`` play their matches through it; they differ only in how
each seat's moves are chosen.

A mover is ``mover(view, legal, rng) -> index``. With ``view="wire"`` it
gets the seat's observation and the legal actions after a msgpack round
trip, exactly as a bot process receives them (tuples become lists): a
heuristic's ``choose`` fits as it is, and a bot sees nothing it could not
see in a league. With ``view="state"`` it gets the engine state itself
and its legal actions, for policies that read the state (the search's
rollout policies, self-play that records the state).

This is the bare loop, for experiments that play many matches fast: no
protocol messages, match IDs, faults or records. To play Python bots as a
league plays bot processes (the ``start``/``act``/``end`` messages, faults,
standings with faults ranked last, replays, rating tables), use
``harness.local``, which serves them through the harness's own match runner.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Literal

from games import Game
from games.playthrough import wire

Mover = Callable[[Any, list, random.Random], int]


def play_match(game: Game, movers: Sequence[Mover], rngs: Sequence[random.Random], *,
               view: Literal["wire", "state"] = "wire", forced: bool = True,
               checked: bool = True, capped: bool = True) -> Game:
    """Plays ``game`` to its end, each decision by the mover of the seat to
    act, with that seat's rng, and returns it.

    ``forced``: ask the mover when only one move is legal (else it is
    played without a call, and the mover's rng draws nothing);
    ``checked``: apply through the engine's legality check (``apply``, else
    ``apply_unchecked``); ``capped``: stop at the game's ``max_decisions``,
    as the harness does."""
    cap = game.INFO.max_decisions
    apply = game.apply if checked else game.apply_unchecked
    while not game.is_terminal() and not (capped and game.decisions >= cap):
        seat = game.current_player()
        legal = game.legal_actions()
        if not forced and len(legal) == 1:
            index = 0
        elif view == "wire":
            obs, wire_legal = wire([game.observation(seat), legal])
            index = movers[seat](obs, wire_legal, rngs[seat])
        else:
            index = movers[seat](game, legal, rngs[seat])
        apply(legal[index])
    return game
