"""What the submission server keeps, in SQLite through sqlite-utils.

Two files, as with ``league run``:

- the ladder file ``ladder.db`` (a results file too, for the ladder's
  matches): ``accounts`` (public: names are shown as owners), ``ladder_bots``
  (a name, its owner and description), ``ladder_versions`` (one row per upload:
  its number, the sha256 of its files, its state) and ``validations`` (one per
  version: queued, running or done, its attempts, the verdict per step and
  the bot's stderr);
- ``ladder.db.secret`` (mode 0600, beside the deal keys): the password hashes
  (argon2id), the API tokens' SHA-256 digests, the sessions and the server's
  signing key. Nothing in it is ever served, and the ladder file can be
  shared without it.

Every change that must hold together is one transaction, taken with
``BEGIN IMMEDIATE`` so that two requests cannot both pass a check (a name
still free, a quota not yet spent) and then both write: claiming a name,
counting the quota and adding the version with its queued validation happen
at once or not at all. A version's row is written only after its files are
in place (harness.serve.app), so a server killed mid-upload leaves no
version to see. A validation is claimed by one server run (``run_id``) and
finished only by that run; a server that starts again puts the ones its
dead predecessor had running back in the queue (``requeue_interrupted``):
an interrupted validation is run again from the start, and its verdict is
written once.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import sqlite_utils

from harness.serve import auth
from harness.serve.names import skeleton
from harness.store import Store, secret_path

DAY_S = 24 * 3600
SESSION_TTL_S = 14 * DAY_S
VERSION_STATES = ("queued", "validating", "valid", "failed", "paused", "retired")


class Refused(ValueError):
    """A request the rules refuse; ``status`` is its HTTP status."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Account:
    id: int
    name: str
    organiser: bool


@dataclass(frozen=True)
class Version:
    id: int
    bot: str
    number: int
    sha256: str
    state: str
    created: float
    validated_at: float | None
    source: str
    size: int
    attempts: int = 0
    steps: tuple[dict[str, Any], ...] = ()
    stderr: str = ""


@dataclass(frozen=True)
class BotEntry:
    name: str
    owner: str
    owner_id: int
    description: str
    created: float


MAIN_SCHEMA = """
CREATE TABLE IF NOT EXISTS accounts (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, name_key TEXT NOT NULL UNIQUE,
    organiser INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL,
    disabled INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS ladder_bots (
    name TEXT PRIMARY KEY, name_key TEXT NOT NULL UNIQUE,
    owner INTEGER NOT NULL REFERENCES accounts(id), description TEXT NOT NULL DEFAULT '',
    created REAL NOT NULL);
CREATE TABLE IF NOT EXISTS ladder_versions (
    id INTEGER PRIMARY KEY, bot TEXT NOT NULL REFERENCES ladder_bots(name),
    number INTEGER NOT NULL, sha256 TEXT NOT NULL, state TEXT NOT NULL,
    created REAL NOT NULL, validated_at REAL, source TEXT NOT NULL, size INTEGER NOT NULL,
    submitted_by INTEGER NOT NULL REFERENCES accounts(id), paused_reason TEXT,
    UNIQUE (bot, number));
CREATE INDEX IF NOT EXISTS ladder_versions_by_submitter ON ladder_versions (submitted_by, created);
CREATE TABLE IF NOT EXISTS validations (
    version_id INTEGER PRIMARY KEY REFERENCES ladder_versions(id), state TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0, run_id TEXT, queued REAL NOT NULL, started REAL,
    finished REAL, ok INTEGER, steps TEXT, stderr TEXT);
CREATE INDEX IF NOT EXISTS validations_by_state ON validations (state, version_id);
CREATE TABLE IF NOT EXISTS ladder_groups (
    id INTEGER PRIMARY KEY, pool TEXT NOT NULL, lineup TEXT NOT NULL, state TEXT NOT NULL,
    created REAL NOT NULL, finished REAL, matches INTEGER NOT NULL DEFAULT 0,
    purpose TEXT NOT NULL DEFAULT 'rating');
CREATE INDEX IF NOT EXISTS ladder_groups_by_state ON ladder_groups (state, id);
CREATE TABLE IF NOT EXISTS ladder_ratings (
    pool TEXT NOT NULL, entrant TEXT NOT NULL, at REAL NOT NULL, elo REAL NOT NULL,
    low REAL NOT NULL, high REAL NOT NULL, games INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS ladder_ratings_by_entrant ON ladder_ratings (entrant, at);
"""

SECRET_SCHEMA = """
CREATE TABLE IF NOT EXISTS credentials (account INTEGER PRIMARY KEY, password_hash TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
    id TEXT PRIMARY KEY, account INTEGER NOT NULL, digest TEXT NOT NULL, label TEXT NOT NULL,
    created REAL NOT NULL, last_used REAL, revoked REAL);
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY, account INTEGER NOT NULL, created REAL NOT NULL, expires REAL NOT NULL);
CREATE TABLE IF NOT EXISTS server_keys (name TEXT PRIMARY KEY, key BLOB NOT NULL);
"""


class ServerStore:
    """The server's state; every method opens its own connection (requests
    run on several threads), so one ServerStore serves them all."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)
        self.secret = secret_path(self.path)
        # Bumped after each commit that changes what the pages show of the bots
        # (versions, their states, descriptions, pauses): the pages' cache key
        # (harness.serve.page_cache). Only this process writes those rows.
        self.catalog_version = 0
        self._catalog_lock = threading.Lock()
        Store(self.path)  # the results tables, its WAL mode and its 0600 file
        with self._main() as db:
            db.executescript(MAIN_SCHEMA)
        with self._secret() as db:
            db.executescript(SECRET_SCHEMA)

    # -- connections ---------------------------------------------------------
    @contextmanager
    def _main(self, write: bool = False, catalog: bool = False) -> Iterator[sqlite3.Connection]:
        """A connection to the ladder file; ``catalog``: a write that changes the
        bots' rows, counted in ``catalog_version`` once it has committed."""
        with closing(_connect(self.path)) as connection:
            yield from _transaction(connection, write)
        if catalog:
            with self._catalog_lock:  # += from two threads could lose a bump
                self.catalog_version += 1

    @contextmanager
    def _secret(self, write: bool = False) -> Iterator[sqlite3.Connection]:
        if not self.secret.exists():
            os.close(os.open(self.secret, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        with closing(_connect(self.secret)) as connection:
            yield from _transaction(connection, write)

    def database(self) -> sqlite_utils.Database:
        """The ladder file through sqlite-utils, for reports and tests."""
        return sqlite_utils.Database(_connect(self.path))

    # -- accounts ------------------------------------------------------------
    def add_account(self, name: str, organiser: bool = False) -> Account:
        key = skeleton(name)
        with self._main(write=True) as db:
            clash = db.execute("SELECT name FROM accounts WHERE name_key = ?", [key]).fetchone()
            if clash:
                same = clash[0] == name
                raise Refused(f"account name {name!r} is taken" if same else
                              f"account name {name!r} looks like {clash[0]!r}, which is taken",
                              409)
            cursor = db.execute("INSERT INTO accounts (name, name_key, organiser, created) "
                                "VALUES (?, ?, ?, ?)", [name, key, int(organiser), time.time()])
            return Account(int(cursor.lastrowid or 0), name, organiser)

    def account(self, name: str) -> Account | None:
        with self._main() as db:
            row = db.execute("SELECT id, name, organiser FROM accounts WHERE name = ? "
                             "AND disabled = 0", [name]).fetchone()
        return None if row is None else Account(row[0], row[1], bool(row[2]))

    def account_by_id(self, account_id: int) -> Account | None:
        with self._main() as db:
            row = db.execute("SELECT id, name, organiser FROM accounts WHERE id = ? "
                             "AND disabled = 0", [account_id]).fetchone()
        return None if row is None else Account(row[0], row[1], bool(row[2]))

    def accounts(self) -> list[dict[str, Any]]:
        with self._main() as db:
            rows = db.execute("SELECT a.name, a.organiser, a.created, a.disabled, "
                              "(SELECT COUNT(*) FROM ladder_bots b WHERE b.owner = a.id) "
                              "FROM accounts a ORDER BY a.name").fetchall()
        return [{"name": r[0], "organiser": bool(r[1]), "created": r[2], "disabled": bool(r[3]),
                 "bots": r[4]} for r in rows]

    def set_password(self, account: Account, password: str) -> None:
        hashed = auth.hash_password(password)
        with self._secret(write=True) as db:
            db.execute("INSERT OR REPLACE INTO credentials VALUES (?, ?)", [account.id, hashed])

    def check_password(self, name: str, password: str) -> Account | None:
        account = self.account(name)
        if account is None:
            auth.dummy_verify(password)  # the same time whether or not the name exists
            return None
        with self._secret() as db:
            row = db.execute("SELECT password_hash FROM credentials WHERE account = ?",
                             [account.id]).fetchone()
        if row is None or not auth.verify_password(row[0], password):
            return None
        return account

    # -- tokens --------------------------------------------------------------
    def add_token(self, account: Account, label: str) -> tuple[str, str]:
        """A new API token for ``account``: (its id, the token, shown once)."""
        issued = auth.new_token()
        with self._secret(write=True) as db:
            db.execute("INSERT INTO tokens (id, account, digest, label, created) "
                       "VALUES (?, ?, ?, ?, ?)",
                       [issued.token_id, account.id, issued.digest, label[:64], time.time()])
        return issued.token_id, issued.token

    def token_account(self, token: str) -> Account | None:
        parsed = auth.parse_token(token)
        if parsed is None:
            return None
        token_id, digest = parsed
        with self._secret() as db:
            row = db.execute("SELECT account, digest FROM tokens WHERE id = ? AND revoked IS NULL",
                             [token_id]).fetchone()
        if row is None or not auth.token_matches(digest, row[1]):
            return None
        return self.account_by_id(int(row[0]))

    def tokens(self, account: Account) -> list[dict[str, Any]]:
        with self._secret() as db:
            rows = db.execute("SELECT id, label, created, revoked FROM tokens WHERE account = ? "
                              "ORDER BY created", [account.id]).fetchall()
        return [{"id": r[0], "label": r[1], "created": r[2], "revoked": r[3]} for r in rows]

    def revoke_token(self, token_id: str, account: Account | None = None) -> bool:
        """Revoke a token (``account``: only if it is theirs); False if none was."""
        query = "UPDATE tokens SET revoked = ? WHERE id = ? AND revoked IS NULL"
        values: list[Any] = [time.time(), token_id]
        if account is not None:
            query += " AND account = ?"
            values.append(account.id)
        with self._secret(write=True) as db:
            return db.execute(query, values).rowcount > 0

    def revoke_all(self, account: Account) -> int:
        with self._secret(write=True) as db:
            db.execute("DELETE FROM sessions WHERE account = ?", [account.id])
            return db.execute("UPDATE tokens SET revoked = ? WHERE account = ? AND revoked IS NULL",
                              [time.time(), account.id]).rowcount

    # -- sessions ------------------------------------------------------------
    def new_session(self, account: Account, ttl_s: float = SESSION_TTL_S) -> str:
        session_id = auth.new_secret_key().hex()
        now = time.time()
        with self._secret(write=True) as db:
            db.execute("DELETE FROM sessions WHERE expires < ?", [now])
            db.execute("INSERT INTO sessions VALUES (?, ?, ?, ?)",
                       [session_id, account.id, now, now + ttl_s])
        return session_id

    def session_account(self, session_id: str) -> Account | None:
        with self._secret() as db:
            row = db.execute("SELECT account FROM sessions WHERE id = ? AND expires > ?",
                             [session_id, time.time()]).fetchone()
        return None if row is None else self.account_by_id(int(row[0]))

    def end_session(self, session_id: str) -> None:
        with self._secret(write=True) as db:
            db.execute("DELETE FROM sessions WHERE id = ?", [session_id])

    def server_key(self, name: str) -> bytes:
        """A signing key made on first use and kept (sessions survive a restart)."""
        with self._secret(write=True) as db:
            db.execute("INSERT OR IGNORE INTO server_keys VALUES (?, ?)",
                       [name, auth.new_secret_key()])
            return bytes(db.execute("SELECT key FROM server_keys WHERE name = ?",
                                    [name]).fetchone()[0])

    # -- bots and versions ---------------------------------------------------
    def bot(self, name: str) -> BotEntry | None:
        with self._main() as db:
            row = db.execute("SELECT b.name, a.name, a.id, b.description, b.created FROM "
                             "ladder_bots b JOIN accounts a ON a.id = b.owner WHERE b.name = ?",
                             [name]).fetchone()
        return None if row is None else BotEntry(*row)

    def bots(self) -> list[dict[str, Any]]:
        """Every bot with its latest version and the one that plays."""
        with self._main() as db:
            rows = db.execute(
                "SELECT b.name, a.name, b.description, b.created, "
                "(SELECT MAX(number) FROM ladder_versions v WHERE v.bot = b.name), "
                "(SELECT MAX(number) FROM ladder_versions v WHERE v.bot = b.name "
                " AND v.state = 'valid'), "
                "(SELECT state FROM ladder_versions v WHERE v.bot = b.name "
                " ORDER BY number DESC LIMIT 1) "
                "FROM ladder_bots b JOIN accounts a ON a.id = b.owner ORDER BY b.name"
            ).fetchall()
        return [{"name": r[0], "owner": r[1], "description": r[2], "created": r[3],
                 "latest": r[4], "playing": r[5], "state": r[6]} for r in rows]

    def add_version(self, account: Account, name: str, sha256: str, source: str, size: int,
                    description: str | None, quotas: Any) -> Version:
        """Claim ``name`` for ``account`` if it is new, check the quotas and
        add a version with its queued validation: all or nothing."""
        now = time.time()
        with self._main(write=True, catalog=True) as db:
            self._claim(db, account, name, description, quotas, now)
            recent = db.execute("SELECT COUNT(*) FROM ladder_versions WHERE submitted_by = ? "
                                "AND created > ?", [account.id, now - DAY_S]).fetchone()[0]
            if recent >= quotas.submissions_per_day:
                raise Refused(f"quota: {recent} submissions in the last 24 hours, the most this "
                              f"ladder allows per account is {quotas.submissions_per_day}", 429)
            number = db.execute("SELECT COALESCE(MAX(number), 0) + 1 FROM ladder_versions "
                                "WHERE bot = ?", [name]).fetchone()[0]
            cursor = db.execute(
                "INSERT INTO ladder_versions (bot, number, sha256, state, created, source, size, "
                "submitted_by) VALUES (?, ?, ?, 'queued', ?, ?, ?, ?)",
                [name, number, sha256, now, source, size, account.id])
            version_id = int(cursor.lastrowid or 0)
            db.execute("INSERT INTO validations (version_id, state, queued) VALUES (?, 'queued', ?)",
                       [version_id, now])
        return Version(version_id, name, number, sha256, "queued", now, None, source, size)

    def _claim(self, db: sqlite3.Connection, account: Account, name: str,
               description: str | None, quotas: Any, now: float) -> None:
        row = db.execute("SELECT name, owner FROM ladder_bots WHERE name_key = ?",
                         [skeleton(name)]).fetchone()
        if row is not None:
            if row[1] != account.id:
                raise Refused(f"bot name {name!r} belongs to another account" if row[0] == name
                              else f"bot name {name!r} looks like {row[0]!r}, which belongs to "
                                   "another account", 403 if row[0] == name else 409)
            if row[0] != name:
                raise Refused(f"bot name {name!r} looks like your bot {row[0]!r}: submit it "
                              f"as {row[0]!r}", 409)
            if description is not None:
                db.execute("UPDATE ladder_bots SET description = ? WHERE name = ?",
                           [description, name])
            return
        owned = db.execute("SELECT COUNT(*) FROM ladder_bots WHERE owner = ?",
                           [account.id]).fetchone()[0]
        if owned >= quotas.bots_per_account:
            raise Refused(f"quota: you own {owned} bots, the most this ladder allows per account "
                          f"is {quotas.bots_per_account}", 429)
        db.execute("INSERT INTO ladder_bots VALUES (?, ?, ?, ?, ?)",
                   [name, skeleton(name), account.id, description or "", now])

    def set_description(self, name: str, description: str) -> None:
        with self._main(write=True, catalog=True) as db:
            db.execute("UPDATE ladder_bots SET description = ? WHERE name = ?", [description, name])

    def versions(self, name: str) -> list[Version]:
        with self._main() as db:
            rows = db.execute(_VERSION_QUERY + " WHERE v.bot = ? ORDER BY v.number DESC",
                              [name]).fetchall()
        return [_version(row) for row in rows]

    def version(self, name: str, number: int) -> Version | None:
        with self._main() as db:
            row = db.execute(_VERSION_QUERY + " WHERE v.bot = ? AND v.number = ?",
                             [name, number]).fetchone()
        return None if row is None else _version(row)

    def sha256_used(self, sha256: str) -> bool:
        """Whether any version (retired ones too) has these files."""
        with self._main() as db:
            return db.execute("SELECT 1 FROM ladder_versions WHERE sha256 = ? LIMIT 1",
                              [sha256]).fetchone() is not None

    def retire(self, name: str, number: int) -> bool:
        with self._main(write=True, catalog=True) as db:
            return db.execute("UPDATE ladder_versions SET state = 'retired' WHERE bot = ? AND "
                              "number = ? AND state != 'retired'", [name, number]).rowcount > 0

    def active_versions(self) -> list[dict[str, Any]]:
        """The version of each bot that plays: its latest valid one, unless a
        newer one is paused (a broken bot waits for a new version)."""
        with self._main() as db:
            rows = db.execute(
                "SELECT v.id, v.bot, v.number, v.sha256, a.name, a.id, v.validated_at FROM "
                "ladder_versions v JOIN ladder_bots b ON b.name = v.bot JOIN accounts a ON "
                "a.id = b.owner WHERE v.state = 'valid' AND v.number = (SELECT MAX(w.number) "
                "FROM ladder_versions w WHERE w.bot = v.bot AND w.state IN ('valid', 'paused')) "
                "ORDER BY v.bot").fetchall()
        return [{"id": r[0], "bot": r[1], "number": r[2], "sha256": r[3], "owner": r[4],
                 "owner_id": r[5], "validated_at": r[6], "key": entrant_key(r[1], r[2])}
                for r in rows]

    def pause(self, bot: str, number: int, reason: str) -> bool:
        with self._main(write=True, catalog=True) as db:
            return db.execute("UPDATE ladder_versions SET state = 'paused', paused_reason = ? "
                              "WHERE bot = ? AND number = ? AND state = 'valid'",
                              [reason, bot, number]).rowcount > 0

    def paused_reason(self, bot: str, number: int) -> str | None:
        with self._main() as db:
            row = db.execute("SELECT paused_reason FROM ladder_versions WHERE bot = ? AND "
                             "number = ?", [bot, number]).fetchone()
        return None if row is None else row[0]

    def paused_versions(self) -> list[dict[str, Any]]:
        with self._main() as db:
            rows = db.execute("SELECT v.bot, v.number, v.paused_reason, a.name FROM "
                              "ladder_versions v JOIN ladder_bots b ON b.name = v.bot JOIN "
                              "accounts a ON a.id = b.owner WHERE v.state = 'paused' "
                              "ORDER BY v.bot").fetchall()
        return [{"bot": r[0], "number": r[1], "reason": r[2], "owner": r[3]} for r in rows]

    # -- groups and ratings --------------------------------------------------
    def add_group(self, pool: str, lineup: list[str], purpose: str = "rating") -> int:
        with self._main(write=True) as db:
            cursor = db.execute("INSERT INTO ladder_groups (pool, lineup, state, created, "
                                "purpose) VALUES (?, ?, 'pending', ?, ?)",
                                [pool, json.dumps(lineup), time.time(), purpose])
            return int(cursor.lastrowid or 0)

    def pending_groups(self) -> list[tuple[int, str, list[str]]]:
        with self._main() as db:
            rows = db.execute("SELECT id, pool, lineup FROM ladder_groups WHERE state = "
                              "'pending' ORDER BY id").fetchall()
        return [(r[0], r[1], json.loads(r[2])) for r in rows]

    def finish_group(self, group_id: int, matches: int) -> None:
        with self._main(write=True) as db:
            db.execute("UPDATE ladder_groups SET state = 'done', finished = ?, matches = ? "
                       "WHERE id = ?", [time.time(), matches, group_id])

    def group_counts(self) -> dict[str, int]:
        with self._main() as db:
            rows = dict(db.execute("SELECT state, COUNT(*) FROM ladder_groups GROUP BY state")
                        .fetchall())
        return {"pending": rows.get("pending", 0), "done": rows.get("done", 0)}

    def group_lineups(self) -> list[tuple[int, str, list[str]]]:
        """Every group's id, pool and line-up, sent or done (read once, at start)."""
        with self._main() as db:
            return [(group_id, pool, json.loads(lineup)) for group_id, pool, lineup in
                    db.execute("SELECT id, pool, lineup FROM ladder_groups ORDER BY id")]

    def save_ratings(self, pool: str, rows: list[tuple[str, float, float, float, int]],
                     at: float) -> None:
        with self._main(write=True) as db:
            db.executemany("INSERT INTO ladder_ratings VALUES (?, ?, ?, ?, ?, ?, ?)",
                           [(pool, key, at, elo, low, high, games)
                            for key, elo, low, high, games in rows])

    def rating_history(self, entrant: str) -> list[dict[str, Any]]:
        with self._main() as db:
            rows = db.execute("SELECT pool, at, elo, low, high, games FROM ladder_ratings "
                              "WHERE entrant = ? ORDER BY at", [entrant]).fetchall()
        return [{"pool": r[0], "at": r[1], "elo": r[2], "low": r[3], "high": r[4],
                 "games": r[5]} for r in rows]

    # -- validations ---------------------------------------------------------
    def claim_validation(self, run_id: str) -> Version | None:
        """The oldest queued validation, now running under ``run_id``."""
        with self._main(write=True, catalog=True) as db:
            row = db.execute("SELECT version_id FROM validations WHERE state = 'queued' "
                             "ORDER BY version_id LIMIT 1").fetchone()
            if row is None:
                return None
            db.execute("UPDATE validations SET state = 'running', attempts = attempts + 1, "
                       "run_id = ?, started = ? WHERE version_id = ?",
                       [run_id, time.time(), row[0]])
            db.execute("UPDATE ladder_versions SET state = 'validating' WHERE id = ? "
                       "AND state = 'queued'", [row[0]])
            version = db.execute(_VERSION_QUERY + " WHERE v.id = ?", [row[0]]).fetchone()
        return _version(version)

    def finish_validation(self, version_id: int, run_id: str, ok: bool,
                          steps: list[dict[str, Any]], stderr: str) -> bool:
        """Write a verdict, once: only the run that holds the validation can."""
        now = time.time()
        with self._main(write=True, catalog=True) as db:
            done = db.execute("UPDATE validations SET state = 'done', finished = ?, ok = ?, "
                              "steps = ?, stderr = ? WHERE version_id = ? AND state = 'running' "
                              "AND run_id = ?", [now, int(ok), json.dumps(steps), stderr,
                                                 version_id, run_id]).rowcount
            if done:
                db.execute("UPDATE ladder_versions SET state = ?, validated_at = ? WHERE id = ? "
                           "AND state = 'validating'", ["valid" if ok else "failed", now,
                                                        version_id])
        return bool(done)

    def requeue_interrupted(self) -> int:
        """Validations a dead server run held go back in the queue."""
        with self._main(write=True, catalog=True) as db:
            ids = [r[0] for r in db.execute("SELECT version_id FROM validations "
                                            "WHERE state = 'running'")]
            for version_id in ids:
                db.execute("UPDATE validations SET state = 'queued', run_id = NULL "
                           "WHERE version_id = ?", [version_id])
                db.execute("UPDATE ladder_versions SET state = 'queued' WHERE id = ? "
                           "AND state = 'validating'", [version_id])
        return len(ids)

    def queue_counts(self) -> dict[str, int]:
        with self._main() as db:
            rows = dict(db.execute("SELECT state, COUNT(*) FROM validations GROUP BY state")
                        .fetchall())
        return {"queued": rows.get("queued", 0), "running": rows.get("running", 0),
                "done": rows.get("done", 0)}


def entrant_key(bot: str, number: int) -> str:
    """How the ladder's results name a bot's version (its seat ids)."""
    return f"{bot}@v{number}"


_VERSION_QUERY = ("SELECT v.id, v.bot, v.number, v.sha256, v.state, v.created, v.validated_at, "
                  "v.source, v.size, COALESCE(c.attempts, 0), c.steps, c.stderr "
                  "FROM ladder_versions v LEFT JOIN validations c ON c.version_id = v.id")


def _version(row: tuple[Any, ...]) -> Version:
    steps = tuple(json.loads(row[10])) if row[10] else ()
    return Version(id=row[0], bot=row[1], number=row[2], sha256=row[3], state=row[4],
                   created=row[5], validated_at=row[6], source=row[7], size=row[8],
                   attempts=row[9], steps=steps, stderr=row[11] or "")


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, timeout=30, isolation_level=None)
    connection.execute("PRAGMA busy_timeout=30000")
    return connection


def _transaction(connection: sqlite3.Connection, write: bool) -> Iterator[sqlite3.Connection]:
    if not write:
        yield connection
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        yield connection
    except BaseException:
        connection.execute("ROLLBACK")
        raise
    connection.execute("COMMIT")
