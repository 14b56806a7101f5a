"""Replays: seed plus actions reproduce every observation of a match."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from games import Game, get_game, normalize_action
from harness.proc.safe_text import printable


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


def decision_line(game: Game, action: Any, elapsed_ms: int | None = None,
                  timed: bool = True) -> str:
    """One decision of the readable log, described before it is applied. It is
    numbered as the protocol's ``decision`` and fault details number it."""
    if not timed:
        took = ""
    elif elapsed_ms is None:
        took = "  (random stand-in)"
    else:
        took = f"  ({elapsed_ms} ms)"
    return f"[{game.decisions}] {game.describe_action(action)}{took}"


def fault_line(seat: int, bot: str, fault: Any) -> str:
    """Where a bot faulted, in the log (``fault`` has kind, decision, detail);
    the bot's name and the detail escaped (harness.proc.safe_text)."""
    return (f"  !! FAULT seat {seat} ({printable(bot, False)}) at decision {fault.decision}: "
            f"{fault.kind}: {printable(fault.detail, False)}; a random stand-in plays its seat "
            "from here")


def stderr_lines(seat: int, bot: str, text: str) -> list[str]:
    """A decision's stderr from one bot, a log line per line written,
    escaped (harness.proc.safe_text): each line stays one line."""
    who = f"seat {seat} ({printable(bot, False)})"
    return [f"     {who} stderr: {printable(line, False)}" for line in text.splitlines()]


def seats_header(bots: list[str]) -> str:
    return "seats: " + ", ".join(f"{seat} = {printable(bot, False)}" for seat, bot in enumerate(bots))


def drain_event_lines(game: Game) -> list[str]:
    """The game's narration since the last call, as log lines."""
    lines = [f"  -- {text}" for text in game.events or ()]
    if game.events:
        game.events.clear()
    return lines


def replay_lines(replay: dict[str, Any], faults: dict[int, Any] | None = None,
                 stderr: Sequence[tuple[int, int, str]] = ()) -> Iterator[str]:
    """The same readable log ``league play --verbose`` prints; ``faults`` maps
    a seat to its fault (kind, decision, detail), marked where it happened;
    ``stderr`` (decision, seat, text) shown after each decision's line."""
    times = replay.get("times_ms")
    said: dict[int, list[tuple[int, str]]] = {}
    for decision, seat, text in stderr:
        said.setdefault(decision, []).append((seat, text))
    by_decision: dict[int, list[tuple[int, Any]]] = {}
    for seat, fault in (faults or {}).items():
        by_decision.setdefault(fault.decision, []).append((seat, fault))
    bots = replay.get("bots", [])
    yield seats_header(bots)
    for index, (game, action) in enumerate(replay_game(replay, narrate=True)):
        yield from drain_event_lines(game)
        for seat, fault in by_decision.pop(game.decisions, []):
            yield fault_line(seat, bots[seat] if seat < len(bots) else "?", fault)
        if action is not None:
            elapsed = times[index] if times and index < len(times) else None
            yield decision_line(game, action, elapsed, timed=times is not None)
            for seat, text in said.pop(game.decisions, []):
                yield from stderr_lines(seat, bots[seat] if seat < len(bots) else "?", text)
