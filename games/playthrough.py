"""Seeded random playthroughs and golden files.

A golden file records one seeded random playthrough: game, rules version,
player count, seed, the actions, a digest of every player's observation after
each step, and the final observations, scores and standings. Replaying it
must give the same bytes; any rules change that alters play shows up as a
diff (then bump the game's rules version and regenerate with
``python -m games.playthrough --write``).

The golden directory is an argument: the package never writes into a test
tree of its own accord. The command line takes ``--dir``; without it, the
``GOLDEN_DIR`` environment variable, else ``tests/golden`` *under the current
directory* if that folder exists (a checkout of this repository, as ``make
golden`` runs it), else it refuses.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
from pathlib import Path
from typing import Any

import msgpack

from games.base import Action, Game, normalize_action
from games.registry import get_game, implemented_games

# Where ``make golden`` keeps the files, relative to the current directory.
CHECKOUT_GOLDEN_DIR = Path("tests") / "golden"


def wire(value: Any) -> Any:
    """A value as a bot (or a JSON file) sees it: msgpack round trip."""
    return msgpack.unpackb(msgpack.packb(value), raw=False, strict_map_key=False)


def observation_bytes(game: Game) -> bytes:
    return msgpack.packb([game.observation(p) for p in range(game.num_players)])


def random_playthrough(
    slug: str | type[Game], num_players: int, seed: int, policy_seed: int | None = None
) -> tuple[Game, list[Action]]:
    """Play a game (a slug, or an engine class) to its end, or its cap, with
    uniformly random legal actions."""
    game = (get_game(slug) if isinstance(slug, str) else slug).new(num_players, seed)
    picker = random.Random(seed if policy_seed is None else policy_seed)
    actions = []
    cap = game.INFO.max_decisions
    while not game.is_terminal() and game.decisions < cap:
        action = picker.choice(game.legal_actions())
        actions.append(action)
        game.apply(action)
    return game, actions


def trace(slug: str, num_players: int, seed: int, actions: list[Action]) -> dict[str, Any]:
    """Replay actions from a fresh state and record what a golden file holds."""
    game = get_game(slug).new(num_players, seed)
    steps = []
    for action in actions:
        actor = game.current_player()
        action = normalize_action(action)
        game.apply(action)
        digest = hashlib.sha256(observation_bytes(game)).hexdigest()[:16]
        steps.append({"actor": actor, "action": wire(action), "obs": digest})
    return {
        "game": slug,
        "rules_version": game.INFO.rules_version,
        "players": num_players,
        "seed": seed,
        "steps": steps,
        "final_observations": wire([game.observation(p) for p in range(num_players)]),
        "scores": wire(game.scores()),
        "standings": game.standings(),
        "terminal": game.is_terminal(),
    }


def record(slug: str, num_players: int, seed: int) -> dict[str, Any]:
    _, actions = random_playthrough(slug, num_players, seed)
    return trace(slug, num_players, seed, actions)


def replay(golden: dict[str, Any]) -> dict[str, Any]:
    """Re-record a golden file's playthrough from its own actions."""
    actions = [step["action"] for step in golden["steps"]]
    return trace(golden["game"], golden["players"], golden["seed"], actions)


def golden_path(directory: Path, slug: str, num_players: int, seed: int) -> Path:
    return Path(directory) / f"{slug}_{num_players}p_seed{seed}.json"


def golden_cases(slug: str) -> list[tuple[int, int]]:
    """(players, seed) of the golden files kept for a game: min and max counts."""
    info = get_game(slug).INFO
    counts = sorted({info.min_players, info.max_players})
    return [(n, 1000 + n) for n in counts]


def write_golden(slug: str, directory: Path) -> list[Path]:
    """(Re)write a game's golden files into ``directory``."""
    Path(directory).mkdir(parents=True, exist_ok=True)
    written = []
    for num_players, seed in golden_cases(slug):
        path = golden_path(directory, slug, num_players, seed)
        path.write_text(json.dumps(record(slug, num_players, seed), indent=None) + "\n")
        written.append(path)
    return written


def check_golden(slug: str, num_players: int, seed: int, directory: Path) -> None:
    """Replay one golden file and require the same record (AssertionError
    otherwise): the conformance kit's golden check, for a game's own tests."""
    path = golden_path(directory, slug, num_players, seed)
    if not path.exists():
        raise AssertionError(
            f"missing {path.name}: python -m games.playthrough --write --dir {directory} {slug}"
        )
    golden = json.loads(path.read_text())
    if golden["rules_version"] != get_game(slug).INFO.rules_version:
        raise AssertionError(f"{path.name}: rules version changed: regenerate the golden files")
    again = replay(golden)
    if again != golden:
        raise AssertionError(f"{path.name}: the replay differs from the golden file ({_first_difference(golden, again)})")


def _first_difference(golden: dict[str, Any], again: dict[str, Any]) -> str:
    for i, (old, new) in enumerate(zip(golden["steps"], again["steps"])):
        if old != new:
            return f"step {i}: {old} != {new}"
    keys = [k for k in golden if golden[k] != again.get(k)]
    return f"keys {keys}"


def default_golden_dir() -> Path | None:
    """``GOLDEN_DIR`` from the environment, else ./tests/golden if it exists."""
    if os.environ.get("GOLDEN_DIR"):
        return Path(os.environ["GOLDEN_DIR"])
    return CHECKOUT_GOLDEN_DIR if CHECKOUT_GOLDEN_DIR.is_dir() else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="(re)write golden files")
    parser.add_argument("--dir", type=Path, help="golden directory (default: see the module doc)")
    parser.add_argument("games", nargs="*", help="slugs (default: every implemented game)")
    args = parser.parse_args()
    directory = args.dir or default_golden_dir()
    if args.write and directory is None:
        sys.exit("no golden directory: pass --dir (or set GOLDEN_DIR)")
    for slug in args.games or implemented_games():
        if args.write:
            assert directory is not None  # checked above
            for path in write_golden(slug, directory):
                print("wrote", path)


if __name__ == "__main__":
    main()
