"""Exact, seeded engines for eleven multiplayer card and dice games, and their registry."""

from games.base import (
    Action,
    Game,
    GameError,
    GameInfo,
    IllegalActionError,
    Observation,
    PlayerCountError,
    UnknownGameError,
    competition_ranks,
    normalize_action,
    ranks_by_unit,
)
from games.registry import GAMES, game_info, get_game, implemented_games

__all__ = [
    "Action", "Game", "GameError", "GameInfo", "IllegalActionError", "Observation",
    "PlayerCountError", "UnknownGameError", "competition_ranks", "normalize_action",
    "ranks_by_unit",
    "GAMES", "game_info", "get_game", "implemented_games",
]
