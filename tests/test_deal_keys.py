"""The leagues' secret deal keys live beside the results file, never in it:
the results file can be shared or served (Datasette) without anyone being
able to compute a league's deals; an older file's keys move out on open."""

from __future__ import annotations

import json
import sqlite3
import stat
from pathlib import Path

import pytest

from harness.league import load_league
from harness.runner import run_league
from harness.store import Store, StoreError, secret_path

LEAGUE = ('name = "secretive"\ngame = "limit"\nbots = ["random", "heuristic"]\n'
          "players = 3\ndeals = 1\n")


def results_bytes(db: Path) -> bytes:
    """The results file and whatever SQLite keeps beside it (WAL, journal)."""
    return b"".join(path.read_bytes() for path in db.parent.glob(db.name + "*")
                    if path != secret_path(db))


def tables_holding(db: Path, needle: str) -> list[str]:
    """The tables of ``db`` with a value that contains ``needle``."""
    found = []
    with sqlite3.connect(db) as conn:
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
            for row in conn.execute(f"SELECT * FROM [{table}]"):
                if any(needle in str(value) for value in row):
                    found.append(table)
                    break
    return found


def make_old_format(db: Path, league: str, key: str) -> None:
    """A results file as an older harness left it: the key in a table inside."""
    secret_path(db).unlink(missing_ok=True)
    with sqlite3.connect(db) as conn:
        conn.execute("CREATE TABLE league_keys (league TEXT PRIMARY KEY, key TEXT, created_at FLOAT)")
        conn.execute("INSERT INTO league_keys VALUES (?, ?, 0)", [league, key])
    assert key.encode() in results_bytes(db)


def test_the_key_is_kept_beside_the_results_file_and_nowhere_in_it(tmp_path):
    db = tmp_path / "results.db"
    key = Store(db).league_secret("s")
    assert Store(db).league_secret("s") == key, "a resume gets the same key"
    assert stat.S_IMODE(secret_path(db).stat().st_mode) == 0o600
    assert tables_holding(db, key) == []
    assert key.encode() not in results_bytes(db)
    assert Store(db, readonly=True).league_secret("s") == key
    with pytest.raises(StoreError, match=r"no deal key for league 'other'.*results\.db\.secret"):
        Store(db, readonly=True).league_secret("other")


def test_an_old_results_file_moves_its_key_out_and_overwrites_it(tmp_path, caplog):
    db = tmp_path / "old.db"
    Store(db)
    key = "ab" * 32
    make_old_format(db, "s", key)
    with caplog.at_level("WARNING", logger="harness.store"):
        store = Store(db)
    assert "moved 1 league deal key(s)" in caplog.text and "copy both files" in caplog.text
    assert store.league_secret("s") == key, "the key the old file dealt from"
    assert "league_keys" not in store.db.table_names()
    assert key.encode() not in results_bytes(db), "dropped with secure_delete, WAL checkpointed"
    assert Store(db).league_secret("s") == key


def test_a_league_resumed_after_the_move_deals_from_the_same_key(tmp_path):
    (tmp_path / "l.toml").write_text(LEAGUE)
    league = load_league(str(tmp_path / "l.toml"))
    db = tmp_path / "results.db"
    store = Store(db)
    first = run_league(league, store, workers=1, engine="inline", max_matches=2)
    assert first.played == 2
    key = store.league_secret(league.name)
    store.db.close()
    make_old_format(db, league.name, key)  # as if an older harness had played those two

    store = Store(db)
    run_league(league, store, workers=1, engine="inline")
    deals = {row["id"]: row["deal"] for row in store.db.query("SELECT id, deal FROM matches")}
    assert len(deals) == len(list(league.schedule())) > 2
    for row in store.db.query("SELECT match_id, replay FROM replays"):
        seed = json.loads(row["replay"])["seed"]
        assert seed == league.deal_seed(deals[row["match_id"]], key), "same deals after the move"
    assert key.encode() not in results_bytes(db)


@pytest.mark.slow
def test_datasette_serves_no_deal_key(tmp_path):
    from datasette import app as datasette_app  # a test dependency (pyproject.toml)

    db = tmp_path / "results.db"
    Store(db)
    key = "cd" * 32
    make_old_format(db, "s", key)
    Store(db).league_secret("s")  # the open that moves it out
    metadata = json.loads((Path(__file__).parent.parent / "docs/datasette-metadata.json").read_text())
    served = datasette_app.Datasette([str(db)], metadata=metadata)

    import asyncio

    async def fetch_all() -> list[str]:
        tables = (await served.client.get("/results.json")).json()["tables"]
        pages = [(await served.client.get(f"/results/{t['name']}.json?_size=max")).text
                 for t in tables]
        return [t["name"] for t in tables] + pages

    served_text = "\n".join(asyncio.run(fetch_all()))
    assert "matches" in served_text and "league_keys" not in served_text
    assert key not in served_text
