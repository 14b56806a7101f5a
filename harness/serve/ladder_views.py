"""What the ladder's pages and API show, as data: a bot's standings, history,
rivals, matches and faults; a match; the organiser's view.

Reads go to the ladder file through a read-only Store opened per request
(WAL: readers never wait for the scheduler's writes). Who sees what is the
caller's to decide (``private``): a fault's detail and its stderr tail are
the bot's owner's and the organiser's; kinds and counts are public.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness.serve.db import entrant_key
from harness.serve.ladder_run import LadderRun
from harness.store import Store

RIVALS_EACH_SIDE = 2
RECENT_MATCHES = 20
RECENT_FAULTS = 10


def results(db_path: Path) -> Store:
    return Store(db_path, readonly=True)


HeadToHead = Callable[[Store, str, str, str], dict[str, int]]


def bot_ladder(run: LadderRun, store: Store, name: str, numbers: list[int],
               private: bool, rivals: HeadToHead | None = None) -> dict[str, Any]:
    """The ladder side of a bot's page: per version, its standing in each
    pool, its rating history, its nearest rivals head to head (``rivals``:
    how the counts are had, by default head_to_head); its recent matches
    and faults over all versions."""
    versions = []
    keys = [entrant_key(name, n) for n in numbers]
    for number, key in zip(numbers, keys, strict=True):
        pools = [_standing(run, store, pool, key, rivals or head_to_head) for pool in run.boards]
        pools = [p for p in pools if p is not None]
        history = run.store.rating_history(key)
        if pools or history:
            versions.append({"number": number, "entrant": key, "pools": pools,
                             "history": history})
    return {"versions": versions, "matches": recent_matches(store, keys),
            "faults": faults(store, keys, private)}


def _standing(run: LadderRun, store: Store, pool: str, key: str,
              rivals_of: HeadToHead) -> dict[str, Any] | None:
    board = run.boards[pool]
    rows = board.rows
    index = next((i for i, row in enumerate(rows) if row["entrant"] == key), None)
    if index is None:
        return None
    row = rows[index]
    near = rows[max(0, index - RIVALS_EACH_SIDE):index] + \
        rows[index + 1:index + 1 + RIVALS_EACH_SIDE]
    rivals = [{"entrant": r["entrant"], "elo": r["elo"], "boss": r["boss"],
               **rivals_of(store, pool, key, r["entrant"])} for r in near]
    return {"pool": pool, "game": board.game, "players": board.players, "rank": row["rank"],
            "of": len(rows), "elo": row["elo"], "low": row["low"], "high": row["high"],
            "games": row["games"], "moved": row["moved"], "rivals": rivals}


def head_to_head(store: Store, pool: str, first: str, second: str) -> dict[str, int]:
    """Matches of ``pool`` where both sat: how often ``first`` finished ahead,
    behind, level (teams: by their ranks)."""
    # "+b.bot": SQLite would otherwise find b's seat through the bot index,
    # reading all of ``second``'s seats for each of ``first``'s (quadratic:
    # 95 s at 20,000 matches, against 28 ms by the match's primary key).
    row = store.db.execute(
        "SELECT SUM(a.rank < b.rank), SUM(a.rank > b.rank), SUM(a.rank = b.rank) FROM seats a "
        "JOIN seats b ON b.match_id = a.match_id JOIN matches m ON m.id = a.match_id "
        "WHERE m.league = ? AND a.bot = ? AND +b.bot = ?", [pool, first, second]).fetchone()
    ahead, behind, level = (int(v or 0) for v in row)
    return {"ahead": ahead, "behind": behind, "level": level}


def recent_matches(store: Store, keys: list[str], limit: int = RECENT_MATCHES
                   ) -> list[dict[str, Any]]:
    if not keys:
        return []
    # the newest seats of each version by rowid (the order they were stored),
    # walking the bot index backwards: ``limit`` rows each, however many
    # matches a version has (ordering all of them cost 130 ms at 60,000)
    newest: list[tuple[int, str]] = []
    for key in keys:
        newest += store.db.execute("SELECT rowid, match_id FROM seats WHERE bot = ? "
                                   "ORDER BY rowid DESC LIMIT ?", [key, limit]).fetchall()
    chosen = list(dict.fromkeys(match_id for _, match_id in sorted(newest, reverse=True)))[:limit]
    marks = ",".join("?" * len(chosen))
    rows = store.db.execute(
        f"SELECT m.id, m.league, m.finished_at, m.seats, m.status FROM matches m "
        f"WHERE m.id IN ({marks}) ORDER BY m.finished_at DESC", chosen).fetchall() if chosen else []
    ranks: dict[tuple[str, int], int] = {}  # every seat of those matches, in one query
    if rows:
        ids = [row[0] for row in rows]
        ranks = {(match_id, seat): rank for match_id, seat, rank in store.db.execute(
            f"SELECT match_id, seat, rank FROM seats WHERE match_id IN ({','.join('?' * len(ids))})",
            ids)}
    found = []
    for match_id, pool, finished, seats_json, status in rows:
        seats = json.loads(seats_json)
        found.append({"id": match_id, "pool": pool, "finished_at": finished, "status": status,
                      "seats": [{"seat": i, "entrant": bot, "rank": ranks.get((match_id, i))}
                                for i, bot in enumerate(seats)]})
    return found


def faults(store: Store, keys: list[str], private: bool) -> dict[str, Any]:
    if not keys:
        return {"by_kind": {}, "recent": []}
    marks = ",".join("?" * len(keys))
    kinds = dict(store.db.execute(
        f"SELECT fault_kind, COUNT(*) FROM seats WHERE bot IN ({marks}) AND fault_kind IS NOT "
        "NULL GROUP BY fault_kind", keys).fetchall())
    rows = store.db.execute(
        f"SELECT s.match_id, s.bot, s.fault_kind, s.fault_decision, s.fault_detail, "
        f"s.fault_stderr, m.finished_at FROM seats s JOIN matches m ON m.id = s.match_id "
        f"WHERE s.bot IN ({marks}) AND s.fault_kind IS NOT NULL ORDER BY m.finished_at DESC "
        "LIMIT ?", [*keys, RECENT_FAULTS]).fetchall()
    recent = []
    for match_id, bot, kind, decision, detail, stderr, finished in rows:
        item: dict[str, Any] = {"match": match_id, "entrant": bot, "kind": kind,
                                "decision": decision, "finished_at": finished}
        if private:
            item["detail"] = detail or ""
            item["stderr"] = stderr or ""
        recent.append(item)
    return {"by_kind": kinds, "recent": recent}


def match_data(store: Store, match_id: str, private_of: Any) -> dict[str, Any]:
    """One stored match; ``private_of(entrant)`` says whether the caller may
    see that seat's fault detail and stderr."""
    row, seats, _ = store.match(match_id)
    shown = []
    for seat in seats:
        item = {"seat": seat["seat"], "entrant": seat["bot"], "team": seat["team"],
                "score": seat["score"], "rank": seat["rank"], "fault": seat["fault_kind"],
                "fault_decision": seat["fault_decision"]}
        if seat["fault_kind"] and private_of(seat["bot"]):
            item["fault_detail"] = seat["fault_detail"] or ""
            item["fault_stderr"] = seat["fault_stderr"] or ""
        shown.append(item)
    return {"id": row["id"], "pool": row["league"], "game": row["game"], "group": row["deal"],
            "finished_at": row["finished_at"], "decisions": row["decisions"],
            "duration_s": row["duration_s"], "status": row["status"], "seats": shown,
            "replay": f"/matches/{row['id']}"}


def organiser(run: LadderRun, store: Store) -> dict[str, Any]:
    kinds = dict(store.db.execute(
        "SELECT s.fault_kind, COUNT(*) FROM seats s JOIN matches m ON m.id = s.match_id "
        "WHERE m.league LIKE 'ladder:%' AND s.fault_kind IS NOT NULL GROUP BY s.fault_kind "
        "ORDER BY 2 DESC").fetchall())
    day = store.db.execute("SELECT COUNT(*) FROM matches WHERE league LIKE 'ladder:%' AND "
                           "finished_at > ?", [time.time() - 86400]).fetchone()[0]
    return {**run.status(), "faults_by_kind": kinds, "matches_last_24h": day,
            "paused_versions": run.store.paused_versions(),
            "validations": run.store.queue_counts()}
