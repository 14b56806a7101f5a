"""Exact engines for the eleven games of ../shared/seeds, read as RULINGS.md says."""

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
)
from games.registry import GAMES, game_info, get_game, implemented_games

__all__ = [
    "Action", "Game", "GameError", "GameInfo", "IllegalActionError", "Observation",
    "PlayerCountError", "UnknownGameError", "competition_ranks", "normalize_action",
    "GAMES", "game_info", "get_game", "implemented_games",
]
