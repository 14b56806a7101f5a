"""Results in SQLite, through sqlite-utils.

Tables: ``leagues``, ``bots`` (one row per bot version: name + hash of its
files), ``matches``, ``seats`` (per-seat score, rank, fault), ``replays``,
``ratings`` and ``runs``. Each finished match is written in its own
transaction, so a crash loses at most the matches in flight. WAL mode keeps
readers (``league status``) from blocking the writer.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, cast

import sqlite_utils
from sqlite_utils.db import Table

from harness.ratings import CHUNK, RowTuples
from harness.records import MatchResult


class StoreError(RuntimeError):
    """The results file cannot be used; the message says why and what to do."""


class Store:
    """The results file. ``readonly`` opens it without writing a byte (the read
    commands): no tables are created and the file must exist."""

    def __init__(self, path: Path | str, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        _check_path(self.path, readonly)
        try:
            if readonly:
                connection = sqlite3.connect(f"file:{self.path.resolve()}?mode=ro", uri=True)
                self.db = sqlite_utils.Database(connection)
                self.db.execute("PRAGMA busy_timeout=10000")
                self.db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                return
            if not self.path.exists():
                # results are nobody else's business, bots' least of all
                self.path.touch(mode=0o600)
            self.db = sqlite_utils.Database(self.path)
            self.db.execute("PRAGMA journal_mode=WAL")
            self.db.execute("PRAGMA synchronous=NORMAL")
            self.db.execute("PRAGMA busy_timeout=10000")
            self._create()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a usable results database ({exc}); "
                             "choose another --db, or move this file away") from exc

    def _table(self, name: str) -> Table:
        return cast(Table, self.db[name])

    def has_table(self, name: str) -> bool:
        return name in self.db.table_names()

    def _create(self) -> None:
        db = self.db
        if "leagues" not in db.table_names():
            self._table("leagues").create({"name": str, "game": str, "config": str, "scheduled": int,
                                  "created_at": float, "updated_at": float}, pk="name")
        if "bots" not in db.table_names():
            self._table("bots").create({"id": str, "name": str, "version": str, "manifest": str,
                               "command": str, "first_seen": float}, pk="id")
        if "matches" not in db.table_names():
            self._table("matches").create({
                "id": str, "league": str, "game": str, "rules_version": str, "seed": int,
                "deal": int, "seats": str, "status": str, "capped": int, "faulted": int,
                "decisions": int, "started_at": float, "duration_s": float,
                "finished_at": float, "run_id": int, "node": str, "worker": int,
            }, pk="id")
            self._table("matches").create_index(["league"])
        elif "node" not in self._table("matches").columns_dict:  # a results file from before nodes
            self._table("matches").add_column("node", str)
            self._table("matches").add_column("worker", int)
        if "seats" not in db.table_names():
            self._table("seats").create({
                "match_id": str, "seat": int, "bot": str, "team": int, "score": float,
                "rank": int, "fault_kind": str, "fault_decision": int, "fault_detail": str,
                "fault_stderr": str, "moves": int, "think_ms": float, "think_max_ms": float,
            }, pk=("match_id", "seat"))
            self._table("seats").create_index(["bot"])
        elif "moves" not in self._table("seats").columns_dict:  # a results file from before times
            for column, kind in (("moves", int), ("think_ms", float), ("think_max_ms", float)):
                self._table("seats").add_column(column, kind)
        if "replays" not in db.table_names():
            self._table("replays").create({"match_id": str, "replay": str}, pk="match_id")
        if "ratings" not in db.table_names():
            self._table("ratings").create({
                "league": str, "bot": str, "elo": float, "elo_low": float, "elo_high": float,
                "games": int, "avg_score": float, "avg_rank": float, "faults": int,
                "computed_at": float,
            }, pk=("league", "bot"))
        if "league_keys" not in db.table_names():
            self._table("league_keys").create({"league": str, "key": str, "created_at": float}, pk="league")
        if "runs" not in db.table_names():
            self._table("runs").create({
                "id": int, "league": str, "pid": int, "host": str, "started_at": float,
                "heartbeat_at": float, "finished_at": float, "state": str, "in_flight": int,
                "workers": int, "done": int,
            }, pk="id")

    # ---- leagues and bots ---------------------------------------------------
    def register_league(self, config: dict[str, Any], scheduled: int) -> None:
        now = time.time()
        existing = self._table("leagues").count_where("name = ?", [config["name"]])
        row = {"name": config["name"], "game": config["game"],
               "config": json.dumps(config, sort_keys=True), "scheduled": scheduled,
               "updated_at": now}
        if existing:
            self._table("leagues").update(config["name"], row)
        else:
            self._table("leagues").insert({**row, "created_at": now})

    def league_secret(self, league: str) -> str:
        """The league's secret deal key, made on first use and kept here: the
        results file is out of every bot's reach, so no bot can compute a deal."""
        with self.db.conn:
            row = self.db.execute("SELECT key FROM league_keys WHERE league = ?", [league]).fetchone()
            if row:
                return str(row[0])
            key = secrets.token_hex(32)
            self._insert("league_keys", {"league": league, "key": key, "created_at": time.time()})
        return key

    def register_bot(self, bot_id: str, name: str, version: str, manifest: str,
                     command: Sequence[str]) -> None:
        self._table("bots").insert({"id": bot_id, "name": name, "version": version,
                                "manifest": manifest, "command": json.dumps(list(command)),
                                "first_seen": time.time()}, ignore=True)

    # ---- matches ------------------------------------------------------------
    def done_ids(self, ids: Sequence[str]) -> set[str]:
        """Which of these match IDs are stored (queried in chunks: the schedule
        is never loaded whole)."""
        found: set[str] = set()
        for start in range(0, len(ids), 500):
            chunk = list(ids[start:start + 500])
            marks = ",".join("?" * len(chunk))
            found.update(r[0] for r in self.db.execute(
                f"SELECT id FROM matches WHERE id IN ({marks})", chunk).fetchall())
        return found

    def save_match(self, league: str, deal: int, seat_ids: Sequence[str],
                   result: MatchResult, run_id: int | None,
                   where: tuple[str, int] | None = None) -> bool:
        """Store one finished match in one transaction; False if already stored."""
        faulted = sum(1 for f in result.faults if f)
        team_of = {}
        for index, team in enumerate(result.teams or []):
            for seat in team:
                team_of[seat] = index
        # Plain INSERTs in one explicit transaction: sqlite-utils' insert helpers
        # commit on their own, which would split a match across transactions.
        with self.db.conn:
            if self.db.execute("SELECT 1 FROM matches WHERE id = ?", [result.match_id]).fetchone():
                return False
            self._insert("matches", {
                "id": result.match_id, "league": league, "game": result.game,
                "rules_version": result.rules_version, "seed": result.seed, "deal": deal,
                "seats": json.dumps(list(seat_ids)),
                "status": "faulted" if faulted else "ok", "capped": int(result.capped),
                "faulted": faulted, "decisions": result.decisions,
                "started_at": result.started_at, "duration_s": result.duration_s,
                "finished_at": time.time(), "run_id": run_id,
                "node": where[0] if where else None, "worker": where[1] if where else None,
            })
            for row in [{
                "match_id": result.match_id, "seat": seat, "bot": seat_ids[seat],
                "team": team_of.get(seat, seat), "score": result.scores[seat],
                "rank": result.ranks[seat],
                "fault_kind": fault.kind if fault else None,
                "fault_decision": fault.decision if fault else None,
                "fault_detail": fault.detail if fault else None,
                "fault_stderr": fault.stderr_tail if fault else None,
                **_think_columns(result, seat),
            } for seat, fault in enumerate(result.faults)]:
                self._insert("seats", row)
            self._insert("replays", {"match_id": result.match_id,
                                     "replay": json.dumps(result.replay)})
        return True

    def think_times(self, league: str) -> dict[str, tuple[int, float, float]]:
        """Per bot of a league: (moves timed, mean ms a move, slowest move ms)."""
        if "moves" not in self._table("seats").columns_dict:  # read-only, from before times
            return {}
        rows = self.db.execute(
            "SELECT s.bot, SUM(s.moves), SUM(s.think_ms), MAX(s.think_max_ms) FROM seats s "
            "JOIN matches m ON m.id = s.match_id WHERE m.league = ? AND s.moves > 0 "
            "GROUP BY s.bot", [league]).fetchall()
        return {bot: (int(moves), total / moves, slowest) for bot, moves, total, slowest in rows}

    def _insert(self, table: str, row: dict[str, Any]) -> None:
        columns = ", ".join(row)
        marks = ", ".join("?" * len(row))
        self.db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})", list(row.values()))

    def league_match_count(self, league: str) -> tuple[int, int]:
        row = self.db.execute(
            "SELECT COUNT(*), COALESCE(SUM(faulted > 0), 0) FROM matches WHERE league = ?",
            [league]).fetchone()
        return int(row[0]), int(row[1])

    def seat_rows(self, league: str) -> Iterator[dict[str, Any]]:
        """Every seat result of a league, ordered by match ID then seat, so
        anything computed from them does not depend on finishing order."""
        rows = self.seat_tuples(league)
        for chunk in rows.chunks:
            for values in chunk:
                yield dict(zip(rows.columns, values))

    def seat_tuples(self, league: str) -> RowTuples:
        """``seat_rows`` as tuples, in chunks: the ratings read them without
        a dict per row."""
        cursor = self.db.execute(
            "SELECT s.match_id, s.seat, s.bot, s.team, s.score, s.rank, s.fault_kind, m.deal, "
            "m.league FROM seats s JOIN matches m ON m.id = s.match_id WHERE m.league = ? "
            "ORDER BY s.match_id, s.seat", [league])
        columns = tuple(c[0] for c in cursor.description)
        return RowTuples(columns, iter(lambda: cursor.fetchmany(CHUNK), []))

    def finish_order(self, league: str) -> list[str]:
        """A league's match IDs in the order they finished (then by ID)."""
        return [row[0] for row in self.db.execute(
            "SELECT id FROM matches WHERE league = ? ORDER BY COALESCE(finished_at, 0), id",
            [league])]

    def matches(self, league: str | None = None, bot: str | None = None,
                fault: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        where, params = [], []
        if league:
            where.append("m.league = ?")
            params.append(league)
        if bot:
            where.append("m.id IN (SELECT match_id FROM seats WHERE bot = ? OR bot LIKE ?)")
            params += [bot, f"{bot}@%"]
        if fault:
            where.append("m.id IN (SELECT match_id FROM seats WHERE fault_kind = ?)")
            params.append(fault)
        clause = f"WHERE {' AND '.join(where)}" if where else ""
        return list(self.db.query(
            f"SELECT m.* FROM matches m {clause} ORDER BY m.finished_at DESC LIMIT ?",
            [*params, limit]))

    def match(self, match_id: str) -> tuple[dict[str, Any], list[dict[str, Any]], dict[str, Any]]:
        rows = list(self.db.query("SELECT * FROM matches WHERE id = ? OR id LIKE ?",
                                  [match_id, f"{match_id}%"]))
        if len(rows) != 1:
            raise KeyError(f"{'no' if not rows else 'more than one'} match with ID {match_id!r}")
        row = rows[0]
        seats = list(self.db.query("SELECT * FROM seats WHERE match_id = ? ORDER BY seat",
                                   [row["id"]]))
        replay = json.loads(self._table("replays").get(row["id"])["replay"])
        return row, seats, replay

    def save_ratings(self, league: str, rows: Iterable[dict[str, Any]]) -> None:
        now = time.time()
        with self.db.conn:
            self.db.execute("DELETE FROM ratings WHERE league = ?", [league])
            for row in rows:
                self._insert("ratings", {**row, "league": league, "computed_at": now})

    # ---- runs ---------------------------------------------------------------
    def start_run(self, league: str, workers: int) -> int:
        now = time.time()
        return self._table("runs").insert({
            "league": league, "pid": os.getpid(), "host": socket.gethostname(),
            "started_at": now, "heartbeat_at": now, "finished_at": None, "state": "running",
            "in_flight": 0, "workers": workers, "done": 0,
        }).last_pk or 0

    def heartbeat(self, run_id: int, in_flight: int, done: int, workers: int | None = None) -> None:
        row = {"heartbeat_at": time.time(), "in_flight": in_flight, "done": done}
        if workers is not None:
            row["workers"] = workers
        self._table("runs").update(run_id, row)

    def finish_run(self, run_id: int, state: str) -> None:
        self._table("runs").update(run_id, {"finished_at": time.time(), "state": state,
                                        "in_flight": 0})

    def live_runs(self, league: str, stale_after_s: float = 120.0) -> list[dict[str, Any]]:
        """Runs of a league still going: marked running, a recent heartbeat,
        and (on this host) a live process. A killed run is not live."""
        rows = self.db.query(
            "SELECT * FROM runs WHERE league = ? AND state = 'running' AND heartbeat_at > ?",
            [league, time.time() - stale_after_s])
        here = socket.gethostname()
        return [row for row in rows if row["host"] != here or pid_alive(row["pid"])]

    def in_flight(self, league: str) -> int:
        return sum(row["in_flight"] or 0 for row in self.live_runs(league))

    def leagues(self) -> list[dict[str, Any]]:
        if not self.has_table("leagues"):
            return []
        return list(self.db.query("SELECT * FROM leagues ORDER BY name"))

    def league_config(self, name: str) -> dict[str, Any] | None:
        if not self.has_table("leagues"):
            return None
        row = self.db.execute("SELECT config FROM leagues WHERE name = ?", [name]).fetchone()
        return json.loads(row[0]) if row else None

    def bot_versions(self) -> dict[str, list[str]]:
        """Each bot name's stored versions (as name@version), oldest first."""
        versions: dict[str, list[str]] = {}
        if self.has_table("bots"):
            for bot_id, name in self.db.execute(
                    "SELECT id, name FROM bots ORDER BY first_seen, id").fetchall():
                versions.setdefault(name, []).append(bot_id)
        return versions

    def fault_kinds(self) -> list[str]:
        return [r[0] for r in self.db.execute(
            "SELECT DISTINCT fault_kind FROM seats WHERE fault_kind IS NOT NULL ORDER BY 1")]


def _check_path(path: Path, readonly: bool) -> None:
    if path.is_dir():
        raise StoreError(f"--db {path} is a directory; give a file name, e.g. {path / 'results.db'}")
    if not path.parent.is_dir():
        raise StoreError(f"--db {path}: the folder {path.parent} does not exist; create it first")
    if readonly and not path.exists():
        raise StoreError(f"no results database {path} (run a league first, or pass --db FILE)")
    if not readonly:
        if path.exists() and not os.access(path, os.W_OK):
            raise StoreError(f"--db {path} is read-only; results cannot be stored there")
        if not path.exists() and not os.access(path.parent, os.W_OK):
            raise StoreError(f"--db {path}: cannot create a file in {path.parent}")


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this machine (any owner)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _think_columns(result: MatchResult, seat: int) -> dict[str, Any]:
    if result.think is None:
        return {}
    think = result.think[seat]
    return {"moves": think.moves, "think_ms": round(think.total_ms, 3),
            "think_max_ms": round(think.max_ms, 3)}
