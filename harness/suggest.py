"""Did you mean: the known name closest to a mistyped one, for every message
that refuses an unknown bot, game, league, fault kind or file key. Click
already suggests for commands and options; these are the names it cannot
know."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# difflib's ratio above which a name is offered: 0.6, its own default, offers
# 'heuristic' for 'heuristc' and 'limit' for 'limt' but nothing for a name
# unlike every known one.
CUTOFF = 0.6


def closest(word: str, known: Iterable[str]) -> str | None:
    """The known name most like ``word``, if one is like it at all."""
    found = difflib.get_close_matches(word, list(known), n=1, cutoff=CUTOFF)
    return found[0] if found else None


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """" (did you mean 'x'?)" to follow the unknown name in a refusal, or ""."""
    match = closest(word, known)
    return f" (did you mean {match!r}?)" if match is not None else ""


def unknown_keys(unknown: Iterable[str], known: Iterable[str], prefix: str = "") -> str:
    """The unknown keys of a file, each with the known key it may have meant
    (``prefix``: the table they are in): "mathces (did you mean 'matches'?), x"."""
    known = list(known)
    parts = []
    for key in unknown:
        match = closest(key, known)
        hint = f" (did you mean '{prefix}{match}'?)" if match is not None else ""
        parts.append(f"{prefix}{key}{hint}")
    return ", ".join(parts)
