"""What the ladder's busiest pages show, kept until what they show changes.

The front page, a bot's page and the leaderboard's JSON are read far more
often than their data changes: the tables change only at a refit (every
``refit_s``), a bot's rows when it uploads, validates, pauses or edits its
description, and a bot's recent matches, faults and head-to-head counts
when a match it sat in is stored. Building them costs milliseconds of CPU
(SQL, the fit's rows, Jinja), which on a machine the matches keep busy is
taken from the matches; a cached one costs microseconds.

Every entry is kept under a *stamp* of what it shows, read before the
entry is built; a read whose stamp differs builds again. So a page is
never older than its stamp, and a change that lands while an entry is
being built only costs one more build (the stamp read after it differs).
One reader builds at a time per key; readers arriving meanwhile get the
entry as it was (so a page may be one build older than its stamp for the
few milliseconds a build takes). The stamps are cheap:

- ``catalog``: ServerStore.catalog_version, bumped in this process after
  each commit that changes the bots' rows (only this process writes them);
- ``refits``: LadderRun.refits, bumped after a refit's tables and rating
  history are all written;
- ``seats``: the newest seat row of a bot's versions in the ladder file
  (one indexed MAX(rowid), a few microseconds), which also sees matches
  that another process stored (an SPRT job's); read again at most once a
  second (``SeatStamps``), so a bot's recent matches lag by up to that.

A bot's rivals' head-to-head counts come from the scheduler's memory
(LadderRun.head_to_head), counted as matches are stored: a query for them
grows with the pool's matches, and on a busy ladder a bot's page is built
again about once a second (its recent matches change).

Who reads does not enter the data but does enter the key: a bot's data
with its owner's private parts (validation details, fault stderr) is kept
apart from the public one, and a whole rendered page only for a reader
who is not signed in (a signed-in page has that account's header and
CSRF token, so it is rendered per request from the cached data).

Cached values are shared between requests: callers must not change them.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any, TypeVar

Value = TypeVar("Value")
ENTRIES = 4096  # bounded: a bot's page is a few entries, and one per rival and pool
FRESH_S = 1.0  # how long a bot's newest-seat stamp is trusted before it is read again


class PageCache:
    """Values under a key, each valid while its stamp is the current one.

    One reader builds a missing or outdated entry at a time (per key); the
    others meanwhile get the entry as it was (outdated by that one build),
    or, when there is none yet, wait for the build. Without that, fifty
    readers arriving as a bot's stamp moves would all build its page at once,
    each slower for the others (measured: p99 over 8 s under
    harness.bench.ladder_load)."""

    def __init__(self, entries: int = ENTRIES) -> None:
        self.entries = entries
        self._kept: OrderedDict[Hashable, tuple[Hashable, Any]] = OrderedDict()
        self._building: dict[Hashable, threading.Event] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.builds = 0
        self.waits = 0  # readers that waited for another's first build

    def get(self, key: Hashable, stamp: Hashable, build: Callable[[], Value]) -> Value:
        while True:
            with self._lock:
                kept = self._kept.get(key)
                if kept is not None and kept[0] == stamp:
                    self._kept.move_to_end(key)
                    self.hits += 1
                    fresh: Value = kept[1]
                    return fresh
                underway = self._building.get(key)
                if underway is None:
                    underway = self._building[key] = threading.Event()
                    break
                if kept is not None:  # another reader is building it: the last one
                    self.hits += 1
                    last: Value = kept[1]
                    return last
                self.waits += 1
            underway.wait()  # the first build of this key: wait for it, then look again
        try:
            value = build()
        finally:
            with self._lock:
                self._building.pop(key).set()
        with self._lock:
            self.builds += 1
            self._kept[key] = (stamp, value)
            self._kept.move_to_end(key)
            while len(self._kept) > self.entries:
                self._kept.popitem(last=False)
        return value

    def counts(self) -> dict[str, int]:
        return {"hits": self.hits, "builds": self.builds, "waits": self.waits,
                "entries": len(self._kept)}


class SeatStamps:
    """The newest seat row of some entrants in the ladder file: it grows with
    every match stored with one of them, by this process or another.

    Read again at most every ``fresh_s`` seconds per set of entrants: a busy
    ladder stores a bot's matches many times a second, and a page rebuilt
    at every read costs the matches its CPU (docs/benchmarks.md, the ladder
    under readers). So a bot's recent matches may lag by up to ``fresh_s``;
    nothing else on its page waits on this stamp.

    One connection, kept open and shared under a lock: a query costs
    microseconds, opening a connection ten times as much."""

    def __init__(self, db_path: Path, fresh_s: float = FRESH_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.db_path = db_path
        self.fresh_s = fresh_s
        self.clock = clock
        self._connection: sqlite3.Connection | None = None
        self._lock = threading.Lock()
        self._read: dict[tuple[str, ...], tuple[float, int]] = {}

    def newest(self, entrants: list[str]) -> int:
        if not entrants:
            return 0
        key = tuple(entrants)
        now = self.clock()
        with self._lock:
            read = self._read.get(key)
        if read is not None and now - read[0] < self.fresh_s:
            return read[1]
        value = self._query(entrants)
        with self._lock:
            self._read[key] = (now, value)
            if len(self._read) > ENTRIES:  # bounded, as the pages are
                self._read.pop(next(iter(self._read)))
        return value

    def _query(self, entrants: list[str]) -> int:
        marks = ",".join("?" * len(entrants))
        with self._lock:
            if self._connection is None:
                self._connection = sqlite3.connect(self.db_path, timeout=30,
                                                   isolation_level=None,
                                                   check_same_thread=False)
            # fetchall: the statement ends here, so no read transaction stays
            # open to hold back the WAL's checkpoints
            rows = self._connection.execute(
                f"SELECT MAX(rowid) FROM seats WHERE bot IN ({marks})", entrants).fetchall()
        return int(rows[0][0] or 0)

    def close(self) -> None:
        with self._lock:
            if self._connection is not None:
                self._connection.close()
                self._connection = None
