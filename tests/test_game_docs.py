"""The bot authors' docs and JSON Schemas match the engines (games/schemas.py,
games/docs.py).

Three guarantees: every observation and legal action of seeded random games
validates against the game's schema (so an engine whose ``obs`` changes
without its declaration fails here); the committed docs and schemas are what
``python -m games.docs --write`` produces now; and the schemas are strict
enough to catch drift (extra keys, wrong types, missing keys).
"""

from __future__ import annotations

import json

import pytest
from jsonschema import Draft202012Validator

from games import get_game, implemented_games
from games import testing as kit
from games.docs import ROOT, SCHEMAS, example_game, main, stale_files
from games.playthrough import wire
from games.schemas import SPECS, action_schema, obs_schema, schema_for, spec_for, step_schemas

GAMES = implemented_games()
GAME_COUNTS = [
    pytest.param(slug, n, id=f"{slug}-{n}p")
    for slug in GAMES
    for n in get_game(slug).INFO.player_counts()
]
OBS_SEEDS = (0, 1, 2)
OBS_SAMPLES = 8  # states per game whose every seat's view is validated (plus the end)
# Declared because the engine's code can ask it, but random play never reaches it.
UNREACHED_STEPS = {("tenos_square", "put")}


def validators(slug: str):
    return kit.schema_validators(slug)


# ---- (1) real games validate (the conformance kit's schema checks) -----------------------
@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_observations_of_random_games_validate(slug, num_players):
    kit.check_observations_match_schema(slug, num_players, seeds=OBS_SEEDS, samples=OBS_SAMPLES)


@pytest.mark.parametrize("slug", GAMES)
def test_every_legal_action_validates_against_its_step(slug):
    """Every decision of one game per player count: the actor's obs selects
    exactly one declared step, whose action schema takes every legal action.
    Every declared step is asked somewhere (no stale declaration)."""
    seen = set()
    for num_players in get_game(slug).INFO.player_counts():
        seen |= kit.check_legal_actions_match_steps(slug, num_players, seed=7)
    declared = {s.name for s in spec_for(slug).steps}
    unreached = {name for name in declared - seen if (slug, name) not in UNREACHED_STEPS}
    assert not unreached, f"{slug}: declared steps never asked: {sorted(unreached)}"


def test_a_drifted_observation_fails_the_kit_with_the_path(monkeypatch):
    """The kit names where an engine's obs left its declaration."""
    cls = get_game("limit")
    original = cls.observation

    def drifted(self, player):
        return {**original(self, player), "secret_debug": [1, 2]}

    monkeypatch.setattr(cls, "observation", drifted)
    with pytest.raises(kit.ConformanceError, match="secret_debug"):
        kit.check_observations_match_schema("limit", 3, seeds=[0], samples=2)


def test_every_game_is_declared_and_its_schemas_are_valid_2020_12():
    assert sorted(SPECS) == sorted(GAMES)
    for slug in GAMES:
        Draft202012Validator.check_schema(obs_schema(slug))
        Draft202012Validator.check_schema(action_schema(slug))
        for step in step_schemas(slug):
            Draft202012Validator.check_schema(step["when"])
            Draft202012Validator.check_schema(step["action"])


# ---- (2) the committed docs are current --------------------------------------------------
def test_committed_docs_and_schemas_are_up_to_date():
    stale = stale_files()
    assert not stale, (
        "stale generated docs, run `python -m games.docs --write`: "
        + ", ".join(f"{path} ({reason})" for path, reason in stale)
    )


def test_committed_schema_file_is_what_schema_for_returns():
    for slug in GAMES:
        committed = json.loads((ROOT / SCHEMAS / f"{slug}.json").read_text(encoding="utf-8"))
        assert committed == schema_for(slug)


def test_check_names_stale_missing_and_unknown_files(tmp_path, capsys):
    assert main(["--write", "--root", str(tmp_path)]) == 0
    assert main(["--check", "--root", str(tmp_path)]) == 0
    page = tmp_path / "docs" / "games" / "limit.md"
    page.write_text(page.read_text().replace("basket", "bucket"))
    (tmp_path / "docs" / "schemas" / "grazia.json").unlink()
    (tmp_path / "docs" / "schemas" / "chess.json").write_text("{}")
    capsys.readouterr()
    assert main(["--check", "--root", str(tmp_path)]) == 1
    out = capsys.readouterr().out
    for name in ("docs/games/limit.md", "docs/schemas/grazia.json", "docs/schemas/chess.json"):
        assert name in out


# ---- (3) the schemas are strict -------------------------------------------------------------
WRONG_VALUES = ({"bogus": 1}, "bogus", 1.5, ["bogus"], True)


@pytest.mark.parametrize("slug", GAMES)
def test_obs_schema_rejects_extra_missing_and_mistyped_keys(slug):
    game, _ = example_game(slug)
    obs = wire(game.observation(game.current_player()))
    validator = validators(slug)[0]
    assert validator.is_valid(obs)
    assert not validator.is_valid({**obs, "extra": 1}), "an unknown key must fail"
    for key in obs:
        missing = {k: v for k, v in obs.items() if k != key}
        assert not validator.is_valid(missing), f"{slug}: obs without {key!r} validates"
        for wrong in WRONG_VALUES:
            if wrong is True and obs[key] in (True, False):
                continue
            assert not validator.is_valid({**obs, key: wrong}), f"{slug}: {key}={wrong!r} validates"


@pytest.mark.parametrize("slug", GAMES)
def test_per_seat_lists_and_seats_are_bounded(slug):
    game, _ = example_game(slug)
    obs = wire(game.observation(game.current_player()))
    validator = validators(slug)[0]
    too_many = get_game(slug).INFO.max_players + 1
    assert not validator.is_valid({**obs, "seat": too_many})
    assert not validator.is_valid({**obs, "scores": [0] * too_many})


@pytest.mark.parametrize("slug", GAMES)
def test_action_schema_rejects_what_no_step_offers(slug):
    validator = validators(slug)[1]
    for wrong in ("bogus", ["bogus"], 3.5, {}, None, [], -2):
        assert not validator.is_valid(wrong), f"{slug}: action {wrong!r} validates"
