"""Replays: seed plus actions reproduce every observation of a match."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from games import Game, get_game, normalize_action


def replay_game(replay: dict[str, Any], narrate: bool = False) -> Iterator[tuple[Game, Any]]:
    """Yield (state before the action, action) for every stored action."""
    game_class = get_game(replay["game"])
    if game_class.INFO.rules_version != replay["rules_version"]:
        raise ValueError(f"replay is of {replay['game']} rules v{replay['rules_version']}, "
                         f"this engine is v{game_class.INFO.rules_version}")
    game = game_class.new(replay["players"], replay["seed"], narrate=narrate)
    for action in replay["actions"]:
        action = normalize_action(action)
        yield game, action
        game.apply(action)
    yield game, None


def decision_line(game: Game, action: Any) -> str:
    """One decision of the readable log, described before it is applied."""
    return f"[{game.decisions + 1}] {game.describe_action(action)}"


def drain_event_lines(game: Game) -> list[str]:
    """The game's narration since the last call, as log lines."""
    lines = [f"  -- {text}" for text in game.events or ()]
    if game.events:
        game.events.clear()
    return lines


def replay_lines(replay: dict[str, Any]) -> Iterator[str]:
    """The same readable log ``league play --verbose`` prints."""
    for game, action in replay_game(replay, narrate=True):
        yield from drain_event_lines(game)
        if action is not None:
            yield decision_line(game, action)
