"""Results in SQLite, through sqlite-utils.

Tables: ``leagues``, ``bots`` (one row per bot version: name + hash of its
files), ``matches``, ``seats`` (per-seat score, rank, fault), ``end_faults``
(faults made after a match ended, while the bot handled ``end``: a worker
sees them at the process's next use, so they amend a stored match, by match
and seat, and change no score or rank), ``replays``, ``decision_stderr``
(each decision's stderr, by match, seat and decision, for a league whose
file asks for it: ``[logs] stderr = "all"``), ``ratings`` and ``runs``. Each finished match is written in its own
transaction, so a crash loses at most the matches in flight. WAL mode keeps
readers (``league status``) from blocking the writer.

The leagues' secret deal keys are not in the results file but beside it
(``results.db.secret``, DealKeys): the results file can be shared or served
as it is. An older results file's ``league_keys`` table moves there on its
first writable open.

The ``rating_*`` tables keep each league's sufficient statistics for the
ratings (``harness.stats.ratings.Tallies``): ``league table`` reads them, and the
league's matches not folded into them yet, instead of every seat row.
``save_match`` folds a league's new matches in, in the transaction of the
match that finds more than FOLD_EVERY of them (by rowid), so the ones left
stay few. ``rating_leagues`` holds per league the rowid of the last match
folded in, how many matches and faulted matches were, and whether its deal
groups are pooled into bootstrap blocks; ``rating_deals`` its deals (until
pooled); ``rating_pairs``, ``rating_triples`` and ``rating_bots`` the
counts. A results file from before them gets them on its first writable
open (which folds every match once, as it folds a league again whose count
of matches no longer adds up). Matches stored by an older harness are
folded in with the next ones; until then, and in a read-only open of an
older file, the ratings fold the matches left over when they are few, and
read seat rows when they are not.
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import socket
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any, cast

import numpy as np
import sqlite_utils
from sqlite_utils.db import Table

from harness.proc.processes import pid_alive
from harness.records import EndFault, MatchResult
from harness.stats.ratings import (
    BOOTSTRAP_BLOCKS,
    CHUNK,
    RowTuples,
    Tallies,
    deal_block,
    match_tallies,
)

# the kept statistics' layout, and the pooling they assume: other values make them anew
RATING_STATS_VERSION = f"1 blocks={BOOTSTRAP_BLOCKS}"
RATING_TABLES = {
    "rating_meta": "key TEXT PRIMARY KEY, value TEXT",
    "rating_leagues": "league TEXT PRIMARY KEY, folded INTEGER NOT NULL, matches INTEGER NOT NULL, "
                      "faulted INTEGER NOT NULL, pooled INTEGER NOT NULL, usable INTEGER NOT NULL",
    "rating_deals": "league TEXT, deal INTEGER, PRIMARY KEY (league, deal)",
    "rating_pairs": "league TEXT, key INTEGER, first TEXT, second TEXT, count INTEGER NOT NULL, "
                    "wins INTEGER NOT NULL, losses INTEGER NOT NULL, effect INTEGER NOT NULL, "
                    "PRIMARY KEY (league, key, first, second)",
    "rating_triples": "league TEXT, a TEXT, b TEXT, c TEXT, count INTEGER NOT NULL, "
                      "PRIMARY KEY (league, a, b, c)",
    "rating_bots": "league TEXT, bot TEXT, games INTEGER NOT NULL, score REAL NOT NULL, "
                   "rank INTEGER NOT NULL, faults INTEGER NOT NULL, moves INTEGER NOT NULL, "
                   "think_ms REAL NOT NULL, think_max_ms REAL NOT NULL, PRIMARY KEY (league, bot)",
}
ADD_PAIRS = ("INSERT INTO rating_pairs VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
             "count = count + excluded.count, wins = wins + excluded.wins, "
             "losses = losses + excluded.losses, effect = effect + excluded.effect")
ADD_TRIPLES = ("INSERT INTO rating_triples VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
               "count = count + excluded.count")
ADD_BOTS = ("INSERT INTO rating_bots VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
            "games = games + excluded.games, score = score + excluded.score, "
            "rank = rank + excluded.rank, faults = faults + excluded.faults, "
            "moves = moves + excluded.moves, think_ms = think_ms + excluded.think_ms, "
            "think_max_ms = MAX(think_max_ms, excluded.think_max_ms)")
SET_LEAGUE = ("INSERT INTO rating_leagues VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET "
              "folded = excluded.folded, matches = matches + excluded.matches, "
              "faulted = faulted + excluded.faulted, pooled = excluded.pooled, "
              "usable = excluded.usable")
# a league's matches (by rowid, in index order) and their seats, a match's rows together;
# CROSS JOIN keeps matches the outer loop: no sort
TAIL = ("SELECT m.rowid, m.deal, m.faulted, s.seat, s.bot, s.team, s.score, s.rank, s.fault_kind, "
        "{think} FROM matches m CROSS JOIN seats s ON s.match_id = m.id "
        "WHERE m.league = ? AND m.rowid > ? AND m.rowid <= ?")
FOLD_EVERY = 1000     # matches (by rowid) a league may have unfolded before save_match folds them
FOLD_CHUNK = 50_000   # matches (by rowid) folded in one transaction when a results file is upgraded
TAIL_LIMIT = 20_000   # more unfolded matches than this: the ratings read seat rows instead
LAST_ROWID = 2**63 - 1


SECRET_SUFFIX = ".secret"  # results.db -> results.db.secret: not *.db, so no glob serves it
log = logging.getLogger(__name__)


class StoreError(RuntimeError):
    """The results file cannot be used; the message says why and what to do."""


def secret_path(results: Path) -> Path:
    """The file beside a results file that keeps its leagues' deal keys."""
    return results.with_name(results.name + SECRET_SUFFIX)


class DealKeys:
    """Each league's secret deal key, in a small SQLite file of its own beside
    the results file (``results.db.secret``, mode 0600). Kept apart so that
    the results file can be shared, copied or served (Datasette) without
    letting anyone compute a league's deals; SQLite makes each new key
    durable before a match dealt from it is stored (a run killed at any
    point resumes with the same deals) and lets runs of other leagues add
    keys at the same time. The runner reads a key and passes it to its
    workers: no worker opens this file. To resume a league on another
    machine, copy both files."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def get(self, league: str) -> str | None:
        if not self.path.exists():
            return None
        try:
            with closing(self._connect(readonly=True)) as connection:
                row = connection.execute("SELECT key FROM league_keys WHERE league = ?",
                                         [league]).fetchone()
        except sqlite3.OperationalError:  # made, and killed before its table was
            return None
        return None if row is None else str(row[0])

    def get_or_make(self, league: str) -> str:
        """The league's key, made on its first use; a run racing another for
        the same new league gets the key that was stored first."""
        with closing(self._connect()) as connection, connection:
            connection.execute("INSERT OR IGNORE INTO league_keys VALUES (?, ?, ?)",
                               [league, secrets.token_hex(32), time.time()])
            row = connection.execute("SELECT key FROM league_keys WHERE league = ?",
                                     [league]).fetchone()
        return str(row[0])

    def adopt(self, rows: Iterable[tuple[str, str, float]]) -> None:
        """Keys from elsewhere (an older results file); a league's key here stays."""
        with closing(self._connect()) as connection, connection:
            connection.executemany("INSERT OR IGNORE INTO league_keys VALUES (?, ?, ?)", rows)

    def _connect(self, readonly: bool = False) -> sqlite3.Connection:
        if readonly:
            return sqlite3.connect(f"file:{self.path.resolve()}?mode=ro", uri=True, timeout=10)
        try:  # made 0600 before SQLite writes a byte to it (SQLite would use the umask)
            os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            pass
        connection = sqlite3.connect(self.path, timeout=10)
        connection.execute("CREATE TABLE IF NOT EXISTS league_keys "
                           "(league TEXT PRIMARY KEY, key TEXT NOT NULL, created_at REAL)")
        return connection


class Store:
    """The results file. ``readonly`` opens it without writing a byte (the read
    commands): no tables are created and the file must exist."""

    def __init__(self, path: Path | str, readonly: bool = False) -> None:
        self.path = Path(path)
        self.readonly = readonly
        self._folded: dict[str, int] = {}  # per league, the last match folded in (as last seen)
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
            self._move_keys_out()
            self._keep_rating_stats()
        except sqlite3.DatabaseError as exc:
            raise StoreError(f"{self.path} is not a usable results database ({exc}); "
                             "choose another --db, or move this file away") from exc

    def close(self) -> None:
        self.db.conn.close()

    def _table(self, name: str) -> Table:
        return cast(Table, self.db[name])

    def has_table(self, name: str) -> bool:
        return name in self.db.table_names()

    def _create(self) -> None:
        db = self.db
        if "leagues" not in db.table_names():
            self._table("leagues").create({"name": str, "game": str, "config": str, "scheduled": int,
                                  "created_at": float, "updated_at": float, "bot_ids": str,
                                  "stopped": str}, pk="name")
        elif "bot_ids" not in self._table("leagues").columns_dict:  # a file from before them
            self._table("leagues").add_column("bot_ids", str)
            self._table("leagues").add_column("stopped", str)
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
        # a bot's faults without reading all its seats (faults are rare; a
        # ladder's bot page lists them: 45 ms at 60,000 matches without it)
        db.execute("CREATE INDEX IF NOT EXISTS idx_seats_faulted ON seats (bot) "
                   "WHERE fault_kind IS NOT NULL")
        if "end_faults" not in db.table_names():  # amendments: faults after a match's end
            self._table("end_faults").create({
                "match_id": str, "seat": int, "bot": str, "kind": str, "detail": str,
                "stderr": str, "recorded_at": float,
            }, pk=("match_id", "seat"))
        if "replays" not in db.table_names():
            self._table("replays").create({"match_id": str, "replay": str}, pk="match_id")
        if "decision_stderr" not in db.table_names():  # kept for leagues with [logs] stderr = "all"
            self._table("decision_stderr").create({
                "match_id": str, "seat": int, "decision": int, "text": str,
            }, pk=("match_id", "seat", "decision"))
        if "ratings" not in db.table_names():
            self._table("ratings").create({
                "league": str, "bot": str, "elo": float, "elo_low": float, "elo_high": float,
                "games": int, "avg_score": float, "avg_rank": float, "faults": int,
                "computed_at": float,
            }, pk=("league", "bot"))
        if "runs" not in db.table_names():
            self._table("runs").create({
                "id": int, "league": str, "pid": int, "host": str, "started_at": float,
                "heartbeat_at": float, "finished_at": float, "state": str, "in_flight": int,
                "workers": int, "done": int,
            }, pk="id")

    # ---- leagues and bots ---------------------------------------------------
    def register_league(self, config: dict[str, Any], scheduled: int,
                        bot_ids: Sequence[str] | None = None) -> None:
        """Record a league as a run is about to play it: its schedule's size and
        its bots' current versions (``bot_ids``, name@version), which say
        which stored matches count for the schedule (league_counts). A run
        that plays is not stopped: any earlier ``stopped`` note is cleared."""
        now = time.time()
        existing = self._table("leagues").count_where("name = ?", [config["name"]])
        row = {"name": config["name"], "game": config["game"],
               "config": json.dumps(config, sort_keys=True), "scheduled": scheduled,
               "updated_at": now, "stopped": None}
        if bot_ids is not None:
            row["bot_ids"] = json.dumps(sorted(set(bot_ids)))
        if existing:
            self._table("leagues").update(config["name"], row)
        else:
            self._table("leagues").insert({**row, "created_at": now})

    @property
    def secret_path(self) -> Path:
        """Where the leagues' secret deal keys are kept (DealKeys)."""
        return secret_path(self.path)

    def league_secret(self, league: str) -> str:
        """The league's secret deal key, made on first use and kept beside the
        results file (DealKeys), never in it: the results file may be shared
        or served (Datasette), and no bot can reach either."""
        keys = DealKeys(self.secret_path)
        if self.readonly:
            key = keys.get(league)
            if key is None:
                raise StoreError(f"no deal key for league {league!r} in {self.secret_path}: "
                                 "a league without a public seed needs the results file's "
                                 f"{SECRET_SUFFIX} file beside it")
            return key
        return keys.get_or_make(league)

    def _move_keys_out(self) -> None:
        """A results file from before DealKeys holds its keys in a
        ``league_keys`` table: move them to the secret file (durably, first),
        then drop the table with secure_delete on and checkpoint the WAL, so
        the key bytes are overwritten in the file, not merely unlinked."""
        if "league_keys" not in self.db.table_names():
            return
        rows = self.db.execute("SELECT league, key, created_at FROM league_keys").fetchall()
        DealKeys(self.secret_path).adopt(rows)
        self.db.execute("PRAGMA secure_delete=ON")
        with self.db.conn:
            self.db.execute("DROP TABLE league_keys")
        self.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        self.db.execute("PRAGMA secure_delete=OFF")
        log.warning("%s: moved %d league deal key(s) out of the results file into %s; "
                    "copy both files to resume these leagues elsewhere",
                    self.path, len(rows), self.secret_path)

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
            rowid = self._insert("matches", {
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
            for end_fault in result.end_faults:
                self._insert_end_fault(end_fault, seat_ids[end_fault.seat])
            self._insert("replays", {"match_id": result.match_id,
                                     "replay": json.dumps(result.replay)})
            if result.stderr:
                self.db.conn.executemany(
                    "INSERT OR IGNORE INTO decision_stderr (match_id, seat, decision, text) "
                    "VALUES (?, ?, ?, ?)",
                    [(result.match_id, e.seat, e.decision, e.text) for e in result.stderr])
            if rowid - self._folded_to(league) > FOLD_EVERY:
                self._fold(league)
        return True

    def save_end_fault(self, fault: EndFault) -> bool:
        """Amend a stored match with a fault a bot made after it ended (seen
        only at the process's next use, so often after the match was stored).
        Its scores and ranks stand: the game was over. False if the match is
        not stored (a later run plays it again)."""
        with self.db.conn:
            row = self.db.execute("SELECT bot FROM seats WHERE match_id = ? AND seat = ?",
                                  [fault.match_id, fault.seat]).fetchone()
            if row is None:
                return False
            self._insert_end_fault(fault, row[0])
        return True

    def _insert_end_fault(self, fault: EndFault, bot_id: str) -> None:
        """One end fault a seat (the first, should a seat be amended twice)."""
        self.db.execute(
            "INSERT OR IGNORE INTO end_faults (match_id, seat, bot, kind, detail, stderr, "
            "recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
            [fault.match_id, fault.seat, bot_id, fault.kind, fault.detail, fault.stderr_tail,
             time.time()])

    def end_faults(self, match_id: str) -> list[dict[str, Any]]:
        """The faults a match's bots made after it ended, by seat."""
        if not self.has_table("end_faults"):  # a read-only file from before them
            return []
        return list(self.db.query("SELECT * FROM end_faults WHERE match_id = ? ORDER BY seat",
                                  [match_id]))

    # ---- the ratings' sufficient statistics -----------------------------------
    def _folded_to(self, league: str) -> int:
        """The rowid of the league's last match folded in, as last seen."""
        if league not in self._folded:
            row = self.db.execute("SELECT folded FROM rating_leagues WHERE league = ?",
                                  [league]).fetchone()
            self._folded[league] = row[0] if row else 0
        return self._folded[league]

    def _fold(self, league: str, last: int = LAST_ROWID) -> int:
        """Fold the league's matches stored since its last fold (up to rowid
        ``last``) into its kept statistics, in the caller's transaction; the
        rowid of the last match now folded in."""
        state = self.db.execute("SELECT folded, pooled, usable FROM rating_leagues "
                                "WHERE league = ?", [league]).fetchone()
        folded, pooled, usable = state or (0, 0, 1)
        fold = _Fold(league, bool(pooled), bool(usable))
        fold.add(self._tail(league, folded, last))
        if not fold.last:
            self._folded[league] = folded
            return int(folded)
        conn = self.db.conn
        if fold.usable and not fold.pooled:
            conn.executemany("INSERT OR IGNORE INTO rating_deals VALUES (?, ?)",
                             [(league, deal) for deal in fold.deals])
            groups = conn.execute("SELECT COUNT(*) FROM rating_deals WHERE league = ?",
                                  [league]).fetchone()[0]
            if groups > BOOTSTRAP_BLOCKS:
                self._pool(league)
                fold.pool()
        if fold.usable:
            conn.executemany(ADD_PAIRS, fold.pair_rows())
            conn.executemany(ADD_TRIPLES, fold.triple_rows())
            conn.executemany(ADD_BOTS, fold.bot_rows())
        matches, faulted = conn.execute(
            "SELECT COUNT(*), COALESCE(SUM(faulted > 0), 0) FROM matches "
            "WHERE league = ? AND rowid > ? AND rowid <= ?", [league, folded, fold.last]).fetchone()
        conn.execute(SET_LEAGUE, [league, fold.last, matches, faulted, int(fold.pooled),
                                  int(fold.usable)])
        self._folded[league] = fold.last
        return fold.last

    def _tail(self, league: str, after: int, last: int = LAST_ROWID) -> Iterator[tuple[Any, ...]]:
        """The league's seat rows (TAIL) of its matches with rowids in (after, last]."""
        timed = "moves" in self._table("seats").columns_dict
        cursor = self.db.conn.execute(
            TAIL.format(think="s.moves, s.think_ms, s.think_max_ms" if timed else "NULL, NULL, NULL"),
            [league, after, last])
        return (row for chunk in iter(lambda: cursor.fetchmany(CHUNK), []) for row in chunk)

    def _pool(self, league: str) -> None:
        """Past BOOTSTRAP_BLOCKS deal groups the ratings pool groups into
        blocks: key the league's kept pairs by block, and forget its deals."""
        pooled: dict[tuple[int, str, str], list[int]] = {}
        for key, first, second, *sums in self.db.execute(
                "SELECT key, first, second, count, wins, losses, effect FROM rating_pairs "
                "WHERE league = ?", [league]).fetchall():
            _add(pooled, (deal_block(league, key), first, second), sums)
        self.db.execute("DELETE FROM rating_pairs WHERE league = ?", [league])
        self.db.execute("DELETE FROM rating_deals WHERE league = ?", [league])
        self.db.conn.executemany("INSERT INTO rating_pairs VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                                 [(league, *key, *sums) for key, sums in pooled.items()])

    def _keep_rating_stats(self) -> None:
        """Make the rating tables, where they are missing or of another
        version, and fold every match not folded in yet, FOLD_CHUNK matches
        a transaction (for a results file from before them: minutes for
        millions of matches, once). A league whose matches no longer add up
        to those folded in and those after them (a rowid changed) is folded
        again from its first match."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            if self._rating_version() != RATING_STATS_VERSION:
                for name in RATING_TABLES:
                    self.db.execute(f"DROP TABLE IF EXISTS {name}")
                for name, columns in RATING_TABLES.items():
                    self.db.execute(f"CREATE TABLE {name} ({columns}) WITHOUT ROWID")
                self.db.execute("INSERT INTO rating_meta VALUES ('version', ?)",
                                [RATING_STATS_VERSION])
            leagues = self.db.execute(
                "SELECT league, COUNT(*), MAX(rowid) FROM matches GROUP BY league").fetchall()
            for league, count, _ in leagues:
                if not self._adds_up(league, count):
                    for name in RATING_TABLES:
                        if name != "rating_meta":
                            self.db.execute(f"DELETE FROM {name} WHERE league = ?", [league])
            self.db.conn.commit()
        except BaseException:
            self.db.conn.rollback()
            raise
        for league, _, newest in leagues:
            upto = self._folded_to(league)
            while upto < newest:
                upto += FOLD_CHUNK
                with self.db.conn:
                    self.db.execute("BEGIN IMMEDIATE")
                    self._fold(league, upto)

    def _adds_up(self, league: str, count: int) -> bool:
        """Whether the league's ``count`` matches are those folded in and those after them."""
        folded, matches, _, _, _ = self._league_state(league)
        rest = self.db.execute("SELECT COUNT(*) FROM matches WHERE league = ? AND rowid > ?",
                               [league, folded]).fetchone()[0]
        return bool(matches + rest == count)

    def _rating_version(self) -> str | None:
        if "rating_meta" not in self.db.table_names():
            return None
        row = self.db.execute("SELECT value FROM rating_meta WHERE key = 'version'").fetchone()
        return row[0] if row else None

    def _league_state(self, league: str) -> tuple[int, int, int, int, int]:
        """The league's kept (folded, matches, faulted, pooled, usable), or
        where there are none of this version (a read-only older file), (0, 0,
        0, 0, 1): nothing folded in."""
        if self._rating_version() != RATING_STATS_VERSION:
            return 0, 0, 0, 0, 1
        row = self.db.execute("SELECT folded, matches, faulted, pooled, usable "
                              "FROM rating_leagues WHERE league = ?", [league]).fetchone()
        return (int(row[0]), int(row[1]), int(row[2]), int(row[3]), int(row[4])) if row \
            else (0, 0, 0, 0, 1)

    def _kept(self, league: str) -> _Fold | None:
        """All the league's sufficient statistics: the kept ones, and those of
        its matches not folded in yet (read in one transaction: one snapshot,
        whatever a league run stores meanwhile). None where they cannot be
        had cheaply or trusted: more than TAIL_LIMIT matches not folded in, a
        count of matches that does not add up, or a match without a deal."""
        own = not self.db.conn.in_transaction
        if own:
            self.db.execute("BEGIN")
        try:
            folded, matches, _, pooled, usable = self._league_state(league)
            count = self.db.execute("SELECT COUNT(*) FROM matches WHERE league = ?",
                                    [league]).fetchone()[0]
            rest = self.db.execute("SELECT COUNT(*) FROM matches WHERE league = ? AND rowid > ?",
                                   [league, folded]).fetchone()[0]
            if not usable or rest > TAIL_LIMIT or matches + rest != count:
                return None
            fold = _Fold(league, bool(pooled))
            if folded:
                fold.load(self.db.conn)
            fold.add(self._tail(league, folded))
            return fold if fold.usable else None
        finally:
            if own:
                self.db.conn.rollback()

    def rating_tallies(self, league: str) -> Tallies | None:
        """The league's sufficient statistics for the ratings (``_kept``);
        None where they cannot be had cheaply, or the league has no seats."""
        fold = self._kept(league)
        return fold.tallies() if fold is not None and fold.bots else None

    def ratings_source(self, league: str) -> Tallies | RowTuples:
        """What the ratings of a league read: its sufficient statistics, or
        its seat rows where those cannot be had cheaply."""
        tallies = self.rating_tallies(league)
        return tallies if tallies is not None else self.seat_tuples(league, ordered=False)

    def think_times(self, league: str) -> dict[str, tuple[int, float, float]]:
        """Per bot of a league: (moves timed, mean ms a move, slowest move ms)."""
        if "moves" not in self._table("seats").columns_dict:  # read-only, from before times
            return {}
        fold = self._kept(league)
        if fold is not None:
            return {bot: (int(sums[4]), sums[5] / sums[4], sums[6])
                    for bot, sums in sorted(fold.bots.items()) if sums[4] > 0}
        # summed here, not by GROUP BY: its sort of every seat row spills to a temporary file
        index: dict[str, int] = {}
        sums = np.zeros((3, 0))  # per bot: moves, total ms, slowest ms
        cursor = self.db.execute(
            "SELECT s.bot, s.moves, COALESCE(s.think_ms, 0), COALESCE(s.think_max_ms, 0) "
            "FROM matches m CROSS JOIN seats s ON s.match_id = m.id "
            "WHERE m.league = ? AND s.moves > 0", [league])
        for chunk in iter(lambda: cursor.fetchmany(CHUNK), []):
            bots, moves, total, slowest = zip(*chunk)
            for bot in set(bots) - index.keys():
                index[bot] = len(index)
            code = np.fromiter(map(index.__getitem__, bots), np.int64, len(bots))
            sums = np.pad(sums, ((0, 0), (0, len(index) - sums.shape[1])))
            sums[0] += np.bincount(code, moves, len(index))
            sums[1] += np.bincount(code, total, len(index))
            np.maximum.at(sums[2], code, slowest)
        return {bot: (int(sums[0, i]), float(sums[1, i] / sums[0, i]), float(sums[2, i]))
                for bot, i in sorted(index.items())}

    def _insert(self, table: str, row: dict[str, Any]) -> int:
        """Insert one row; its rowid."""
        columns = ", ".join(row)
        marks = ", ".join("?" * len(row))
        return int(self.db.execute(f"INSERT INTO {table} ({columns}) VALUES ({marks})",
                                   list(row.values())).lastrowid or 0)

    def league_match_count(self, league: str) -> tuple[int, int]:
        """Matches stored and how many of them faulted (the faulted ones
        counted among the matches folded into the kept statistics, and among
        the rest)."""
        folded, _, faulted, _, _ = self._league_state(league)
        count = self.db.execute("SELECT COUNT(*) FROM matches WHERE league = ?",
                                [league]).fetchone()[0]
        rest = self.db.execute("SELECT COALESCE(SUM(faulted > 0), 0) FROM matches "
                               "WHERE league = ? AND rowid > ?", [league, folded]).fetchone()[0]
        return int(count), faulted + int(rest)

    def league_counts(self, league: str, bot_ids: Sequence[str] | None = None,
                      deals: int | None = None) -> LeagueCounts:
        """How the league's stored matches stand against its schedule as last
        run: for its bots' versions then (or ``bot_ids``), its game's rules
        now and its first ``deals`` deals (or the config's). A match ID names
        its bots' versions, its rules and its deal, so a stored match with
        another is not one the schedule holds: kept and rated, never counted
        as played for it. A file from before bot_ids were kept: each bot's
        latest version. KeyError for an unknown league."""
        row = next((r for r in self.leagues() if r["name"] == league), None)
        if row is None:
            raise KeyError(f"no league {league!r} in {self.path}")
        config = json.loads(row["config"] or "{}")
        if bot_ids is None:
            bot_ids = _current_bot_ids(row, config, self.bot_versions())
        deals = config.get("deals", LAST_ROWID) if deals is None else deals
        rules = _rules_version(row["game"])
        known = None if bot_ids is None else set(bot_ids)
        current = faulted = past = older = 0
        # grouped by seats (a few per table), so each group's bots are checked once
        for seats, rules_version, within, count, faults in self.db.execute(
                "SELECT seats, rules_version, COALESCE(deal, 0) < ?, COUNT(*), SUM(faulted > 0) "
                "FROM matches WHERE league = ? GROUP BY 1, 2, 3", [deals, league]):
            if (rules is not None and rules_version != rules
                    or known is not None and not known.issuperset(json.loads(seats))):
                older += count
            elif within:
                current, faulted = current + count, faulted + faults
            else:
                past += count
        return LeagueCounts(int(row["scheduled"] or 0), current, faulted, older, past,
                            row.get("stopped"))

    def set_league_stopped(self, league: str, why: str | None) -> None:
        """Note why a league ends short of its schedule (a decided SPRT, in a
        few words), or clear the note (None): its remaining matches are then
        none (league_counts)."""
        with self.db.conn:
            self.db.execute("UPDATE leagues SET stopped = ? WHERE name = ?", [why, league])

    def seat_rows(self, league: str) -> Iterator[dict[str, Any]]:
        """Every seat result of a league, ordered by match ID then seat, so
        anything computed from them does not depend on finishing order."""
        rows = self.seat_tuples(league)
        for chunk in rows.chunks:
            for values in chunk:
                yield dict(zip(rows.columns, values))

    def seat_tuples(self, league: str, ordered: bool = True) -> RowTuples:
        """``seat_rows`` as tuples, in chunks: the ratings read them without
        a dict per row. ``ordered=False``: in the order stored, which needs
        no sort (and so no temporary file), for readers that do not mind."""
        cursor = self.db.execute(
            "SELECT s.match_id, s.seat, s.bot, s.team, s.score, s.rank, s.fault_kind, m.deal, "
            "m.league FROM " + ("seats s JOIN matches m ON m.id = s.match_id WHERE m.league = ? "
                                "ORDER BY s.match_id, s.seat" if ordered else
                                "matches m CROSS JOIN seats s ON s.match_id = m.id "
                                "WHERE m.league = ?"), [league])
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
            after = (" OR m.id IN (SELECT match_id FROM end_faults WHERE kind = ?)"
                     if self.has_table("end_faults") else "")
            where.append(f"(m.id IN (SELECT match_id FROM seats WHERE fault_kind = ?){after})")
            params += [fault, fault] if after else [fault]
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

    def decision_stderr(self, match_id: str) -> list[tuple[int, int, str]]:
        """A match's stderr per decision, (decision, seat, text) in decision
        order: kept for a league with ``[logs] stderr = "all"``, else none."""
        if not self.has_table("decision_stderr"):  # a read-only file from before it
            return []
        return [(int(d), int(s), str(t)) for d, s, t in self.db.execute(
            "SELECT decision, seat, text FROM decision_stderr WHERE match_id = ? "
            "ORDER BY decision, seat", [match_id])]

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


@dataclass(frozen=True)
class LeagueCounts:
    """A league's stored matches against its schedule (Store.league_counts).
    ``current + remaining == scheduled`` unless ``stopped``; ``current +
    older + past_deals`` is every match stored for the league."""

    scheduled: int
    current: int  # the schedule's matches stored: these bot versions, rules and deals
    faulted: int  # of those, with a fault
    older: int  # stored for earlier versions of a bot (or of the game's rules)
    past_deals: int  # stored for these versions on deals past the league's ``deals``
    stopped: str | None = None  # why it ends short of its schedule (a decided SPRT)

    @property
    def stored(self) -> int:
        return self.current + self.older + self.past_deals

    @property
    def unplayed(self) -> int:
        return max(self.scheduled - self.current, 0)

    @property
    def remaining(self) -> int:
        """What a run would still play: none once the league is stopped."""
        return 0 if self.stopped else self.unplayed

    def elsewhere(self) -> str:
        """The stored matches not counted, in words ("" where there are none)."""
        parts = [f"{self.older} for earlier bot versions"] if self.older else []
        if self.past_deals:
            parts.append(f"{self.past_deals} on deals past the league's deals")
        return " and ".join(parts)


def _current_bot_ids(row: dict[str, Any], config: dict[str, Any],
                     versions: dict[str, list[str]]) -> list[str] | None:
    """The league's bots as last run (name@version); for a file from before
    they were kept, each of its bots' latest version; None: not known."""
    if row.get("bot_ids"):
        return list(json.loads(row["bot_ids"]))
    names = config.get("bots")
    if not names or any(name not in versions for name in names):
        return None
    return [versions[name][-1] for name in names]


def _rules_version(game: str) -> str | None:
    """The game's rules now (None: a game this harness does not know)."""
    from games import UnknownGameError, get_game

    try:
        return str(get_game(game).INFO.rules_version)
    except UnknownGameError:
        return None


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


def _think_columns(result: MatchResult, seat: int) -> dict[str, Any]:
    if result.think is None:
        return {}
    think = result.think[seat]
    return {"moves": think.moves, "think_ms": round(think.total_ms, 3),
            "think_max_ms": round(think.max_ms, 3)}


class _Fold:
    """Sufficient statistics of some of one league's matches, in memory,
    keyed as the rating tables key them: pairs by deal, or by bootstrap
    block once ``pooled``. ``last``: the rowid of the last match added."""

    def __init__(self, league: str, pooled: bool = False, usable: bool = True) -> None:
        self.league, self.pooled, self.usable = league, pooled, usable
        self.last = 0
        self.deals: set[int] = set()
        self.pairs: dict[tuple[int, str, str], list[int]] = {}
        self.triples: dict[tuple[str, str, str], int] = {}
        self.bots: dict[str, list[Any]] = {}

    def add(self, rows: Iterable[tuple[Any, ...]]) -> None:
        """Matches, as TAIL rows (each match's together)."""
        for rowid, match in groupby(rows, key=itemgetter(0)):
            seats = sorted(match, key=itemgetter(3))
            deal = seats[0][1]
            self.last = rowid
            if deal is None:  # the ratings then group by match, which these tables cannot
                self.usable = False
            if not self.usable:
                continue
            if self.pooled:
                key = deal_block(self.league, deal)
            else:
                key = deal
                self.deals.add(deal)
            self._add_match(key, seats)

    def _add_match(self, key: int, seats: list[tuple[Any, ...]]) -> None:
        """One match's comparisons (under ``key``), triples, games and think
        times (of the seats timed, as ``think_times`` counts them), from its
        TAIL rows in seat order. (Sums in place: this runs for every match.)"""
        tallies = match_tallies([r[4] for r in seats], [r[5] for r in seats],
                                [r[7] for r in seats], [r[6] for r in seats],
                                [bool(r[8]) for r in seats])
        effect = tallies.teams + 1
        pairs, triples, bots = self.pairs, self.triples, self.bots
        for first, second, win, loss in tallies.pairs:
            pair = pairs.get((key, first, second))
            if pair is None:
                pairs[key, first, second] = [1, win, loss, effect]
            else:
                pair[0] += 1
                pair[1] += win
                pair[2] += loss
                pair[3] += effect
        for three in tallies.triples:
            triples[three] = triples.get(three, 0) + 1
        for bot, score, rank, faulted in tallies.units:
            sums = bots.get(bot)
            if sums is None:
                bots[bot] = [1, score, rank, int(faulted), 0, 0.0, 0.0]
            else:
                sums[0] += 1
                sums[1] += score
                sums[2] += rank
                sums[3] += faulted
        for row in seats:
            if row[9]:  # moves timed (none in a results file from before think times)
                sums = bots[row[4]]
                sums[4] += row[9]
                sums[5] += row[10] or 0.0
                sums[6] = max(sums[6], row[11] or 0.0)

    def load(self, conn: sqlite3.Connection) -> None:
        """Add the league's kept statistics (before any match)."""
        league = [self.league]
        if not self.pooled:
            self.deals.update(deal for (deal,) in conn.execute(
                "SELECT deal FROM rating_deals WHERE league = ?", league))
        for key, first, second, *sums in conn.execute(
                "SELECT key, first, second, count, wins, losses, effect FROM rating_pairs "
                "WHERE league = ?", league):
            self.pairs[key, first, second] = sums
        for a, b, c, count in conn.execute(
                "SELECT a, b, c, count FROM rating_triples WHERE league = ?", league):
            self.triples[a, b, c] = count
        for bot, *sums in conn.execute(
                "SELECT bot, games, score, rank, faults, moves, think_ms, think_max_ms "
                "FROM rating_bots WHERE league = ?", league):
            self.bots[bot] = sums

    def pool(self) -> None:
        """Key the pairs by bootstrap block (past BOOTSTRAP_BLOCKS deal groups)."""
        if not self.pooled:
            pairs, self.pairs = self.pairs, {}
            for (deal, first, second), sums in pairs.items():
                _add(self.pairs, (deal_block(self.league, deal), first, second), sums)
            self.pooled, self.deals = True, set()

    def pair_rows(self) -> list[tuple[Any, ...]]:
        return [(self.league, *key, *sums) for key, sums in self.pairs.items()]

    def triple_rows(self) -> list[tuple[Any, ...]]:
        return [(self.league, *three, count) for three, count in self.triples.items()]

    def bot_rows(self) -> list[tuple[Any, ...]]:
        return [(self.league, bot, *sums) for bot, sums in self.bots.items()]

    def tallies(self) -> Tallies:
        return Tallies(self.league,
                       [(bot, int(s[0]), float(s[1]), int(s[2]), int(s[3]))
                        for bot, s in sorted(self.bots.items())],
                       [(key, first, second, s[0], s[1], s[2], s[3])
                        for (key, first, second), s in sorted(self.pairs.items())],
                       [(*three, count) for three, count in sorted(self.triples.items())],
                       None if self.pooled else sorted(self.deals))


def _add(sums: dict[Any, list[Any]], key: Any, values: Sequence[Any]) -> None:
    """Add ``values`` to the sums under ``key``."""
    total = sums.get(key)
    if total is None:
        sums[key] = list(values)
        return
    for i, value in enumerate(values):
        total[i] += value
