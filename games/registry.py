"""The registry of games, keyed by the slugs of RULINGS.md.

Declared as data: slug -> "module:Class". Modules are imported on first use,
so a broken game cannot break the others.
"""

from __future__ import annotations

import difflib
import importlib
from functools import cache

from games.base import Game, GameInfo, UnknownGameError

GAMES: dict[str, str] = {
    "limit": "games.limit:Limit",
    "cat_in_the_box": "games.cat_in_the_box:CatInTheBox",
    "tile_hunt": "games.tile_hunt:TileHunt",
    "grazia": "games.grazia:Grazia",
    "target": "games.target:Target",
    "all_aboard": "games.all_aboard:AllAboard",
    "tenos_square": "games.tenos_square:TenosSquare",
    "twin_shoot": "games.twin_shoot:TwinShoot",
    "tateyoko": "games.tateyoko:Tateyoko",
    "kings_order": "games.kings_order:KingsOrder",
    "seven_peak": "games.seven_peak:SevenPeak",
}


@cache
def get_game(slug: str) -> type[Game]:
    """The game class for a slug; a clear error for an unknown one."""
    target = GAMES.get(slug)
    if target is None:
        known = ", ".join(sorted(GAMES))
        close = difflib.get_close_matches(slug, list(GAMES), n=1)  # a typo: say which it meant
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise UnknownGameError(f"unknown game {slug!r}{hint}; known games: {known}")
    module_name, class_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            raise UnknownGameError(f"game {slug!r} is not implemented yet") from exc
        raise
    game_class: type[Game] = getattr(module, class_name)
    if game_class.INFO.slug != slug:
        raise RuntimeError(f"{target} declares slug {game_class.INFO.slug!r}, not {slug!r}")
    return game_class


def implemented_games() -> list[str]:
    """Slugs whose engine module exists, in registry order."""
    slugs = []
    for slug in GAMES:
        try:
            get_game(slug)
        except UnknownGameError:
            continue
        slugs.append(slug)
    return slugs


def game_info(slug: str) -> GameInfo:
    return get_game(slug).INFO
