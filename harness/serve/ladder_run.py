"""The live ladder: a scheduler that never stops playing, in the server.

Each (game, player count) of the ladder file is a *pool*, rated apart and
stored as a league of its own in the ladder file (``ladder:GAME:Np``), so
``league table``, ``report`` and ``sprt`` read it as they read a league.
Its entrants are the bosses (the reference bots, which mark levels and pin
the scale) and each bot's playing version (ServerStore.active_versions).

The scheduler thread keeps every worker of the arena (harness.serve.arena)
holding ``groups_per_worker`` groups. For a free slot it picks the pool
with the fewest groups in flight, asks the matchmaker
(harness.serve.matchmaking) for a line-up, writes the group (``pending``)
and sends it. A group is one deal in every seating of the seat design;
its deal number is its id, so its matches' IDs and cards are fixed when it
is written. When the group's results come back, each match is stored in
its own transaction (Store.save_match, which refuses an ID stored
already) and the group is marked done.

Nothing is lost or doubled by a kill: a server that starts again sends its
pending groups once more, and only their unstored matches are played
(results that arrive for a stored ID are dropped by save_match). A Ray
worker that dies is replaced and its groups resent (RayArena).

A version whose seats fault in BROKEN_AFTER matches in a row is paused,
with the reason, which its owner sees; a new version plays again. A
retired version is simply no longer an entrant.

The official table is the project's fit (harness.stats.ratings.rating_fit)
per pool, from the store's sufficient statistics, so a refit costs the
same at 1,000 matches as at 1,000,000. It is refitted every ``refit_s``
seconds while results arrive, and each refit is kept (``ladder_ratings``)
for the bots' rating histories and the leaderboard's "moved by" arrows.
The matchmaker reads the same fit: there is one rating, not a fast online
one beside the official one.
"""

from __future__ import annotations

import logging
import math
import os
import random
import threading
import time
from collections import Counter, deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from games import get_game
from harness.league import League
from harness.proc.catalog import BotBundle, BotSpec, load_manifest, resolve
from harness.proc.sandbox import Sandbox
from harness.runner import BROKEN_AFTER, MatchError
from harness.serve.arena import (
    Arena,
    GroupJob,
    GroupMatch,
    GroupReply,
    LocalArena,
    RayArena,
    name_os_thread,
)
from harness.serve.db import ServerStore
from harness.serve.ladder import Ladder
from harness.serve.matchmaking import Covariance, Entrant, Matchmaker, Standing
from harness.serve.storage import Storage
from harness.stats.ratings import rating_fit
from harness.store import Store

log = logging.getLogger(__name__)
ENTRANTS_EVERY_S = 2.0
ARENA_START_WAIT_S = 120.0  # how long a validation waits for the arena's start
RATE_WINDOW_S = 300.0  # matches per minute: over the last five minutes
UNRATED_WIDTH = 10_000.0  # the half-width a pool's need counts for an entrant not rated yet


def pool_name(game: str, players: int) -> str:
    return f"ladder:{game}:{players}p"


@dataclass
class Leaderboard:
    """One pool's official table at its last refit."""

    pool: str
    game: str
    players: int
    at: float = 0.0
    rows: list[dict[str, Any]] = field(default_factory=list)


class LadderRun:
    def __init__(self, ladder: Ladder, store: ServerStore, db_path: Path, storage: Storage,
                 sandbox: Sandbox) -> None:
        self.ladder, self.store, self.db_path = ladder, store, db_path
        self.storage, self.sandbox = storage, sandbox
        self.pools = {pool_name(g, n): (g, n) for g, n in ladder.pools()}
        self._makers: dict[str, Matchmaker] = {}  # per pool: its groups' comparisons differ
        self._covariance: dict[str, Covariance] = {}  # per pool, from its last refit
        self.rng = random.Random()
        self.arena: Arena | None = None
        self.boards: dict[str, Leaderboard] = {
            name: Leaderboard(name, g, n) for name, (g, n) in self.pools.items()}
        self._leagues: dict[str, League] = {}
        self._keys: dict[str, str] = {}
        self._files: dict[str, tuple[BotSpec, BotBundle]] = {}
        self._entrants: dict[str, dict[str, Any]] = {}
        self._in_flight: dict[int, tuple[str, list[str]]] = {}
        self._streaks: Counter[str] = Counter()
        self._pairs: dict[str, Counter[tuple[str, str]]] = {}  # groups per pair, per pool
        # per pool, (a, b) -> [a ahead, a behind, level] over the matches both
        # sat in: counted once from the file at start, then as matches are
        # stored, so a bot page's rivals cost no query (one grows with the pool)
        self._head_to_head: dict[str, dict[tuple[str, str], list[int]]] = {}
        self._head_to_head_lock = threading.Lock()
        # groups per (pool, entrant), sent or done: each pool is rated apart, so
        # placement and the matchmaker's counts are per pool
        self._groups: Counter[tuple[str, str]] = Counter()
        self._last_group: dict[str, int] = {}  # the latest group each entrant was sent in
        self._entrants_at = 0.0
        self._stored_at: deque[float] = deque()
        self._since_refit = 0
        self._last_refit = 0.0
        self.refits = 0  # bumped once a refit's tables and history are all written
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._arena_up = threading.Event()  # its arena started and is not stopping
        self._arena_settled = threading.Event()  # its arena started, or never will
        self.workers = 0
        self.errors: deque[str] = deque(maxlen=20)

    # -- lifecycle -----------------------------------------------------------
    def start(self) -> None:
        self._thread = threading.Thread(target=self._main, name="ladder", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=60)

    def _main(self) -> None:
        name_os_thread("ladder")
        try:
            results = Store(self.db_path)
            self._prepare(results)
            self.arena = self._arena()
            self.workers = self.arena.start()
            self._arena_up.set()
            self._arena_settled.set()
            self._refresh_entrants(results)
            self._refit(results)
            self._resend_pending()
            while not self._stopping.is_set():
                self._tick(results)
        except Exception:  # noqa: BLE001 - logged; the site goes on serving pages
            log.exception("the ladder's scheduler stopped")
            self.errors.append("the scheduler stopped: see the server's log")
        finally:
            self._arena_up.clear()
            self._arena_settled.set()
            if self.arena is not None:
                self.arena.stop()

    def validation_arena(self, wait_s: float = ARENA_START_WAIT_S) -> Arena | None:
        """Where validations run: the arena, once started (waiting for its
        start, as Ray's takes seconds); None (the server's own threads) while
        play is paused, or when the scheduler does not run or has stopped."""
        if self.ladder.play.paused or self._thread is None:
            return None
        waited = 0.0
        while not self._arena_settled.wait(0.5) and waited < wait_s:
            if self._stopping.is_set():  # the server stops while Ray starts
                return None
            waited += 0.5
        return self.arena if self._arena_up.is_set() and not self._stopping.is_set() else None

    def _arena(self) -> Arena:
        play = self.ladder.play
        engine = play.engine
        if engine == "auto":
            # Ray's workers are processes: the pages then do not take the
            # interpreter lock from the matches (threads here lost 18% of their
            # CPU to 50 readers, Ray's 9%: docs/benchmarks.md); a long-lived
            # server pays Ray's start once
            engine = "ray"
        if engine == "ray":
            arena = RayArena(play.workers or None, self.ladder.limits, self.sandbox,
                             play.address or None, play.groups_per_worker)
            arena.files_of = self._files_for
            return arena
        workers = play.workers or max(1, (os.cpu_count() or 2) // 2)
        return LocalArena(workers, self.ladder.limits, self.sandbox, play.groups_per_worker,
                          self.ladder.validation_workers)

    def _prepare(self, results: Store) -> None:
        for name, (game, players) in self.pools.items():
            league = League(name=name, game=game, bots=[], players=players, deals=0,
                            rotation=self.ladder.play.rotation, partners="copies", seed=None,
                            limits=self.ladder.limits)
            self._leagues[name] = league
            self._keys[name] = results.league_secret(name)
            config = league.config()
            config["ladder"] = self.ladder.name
            results.register_league(config, scheduled=0)
        for group_id, pool, lineup in self.store.group_lineups():
            self._count_group(pool, lineup, group_id)
        for name in self.pools:
            counts = {(first, second): [ahead, behind, level] for first, second, ahead, behind,
                      level in results.db.execute(
                          "SELECT a.bot, b.bot, SUM(a.rank < b.rank), SUM(a.rank > b.rank), "
                          "SUM(a.rank = b.rank) FROM matches m "
                          "JOIN seats a ON a.match_id = m.id "
                          "JOIN seats b ON b.match_id = m.id AND b.seat != a.seat "
                          "WHERE m.league = ? GROUP BY a.bot, b.bot", [name])}
            with self._head_to_head_lock:
                self._head_to_head[name] = counts
        for boss in self.ladder.play.bosses:
            spec = resolve(boss)
            self._files[boss] = (spec, spec.bundle())
            results.register_bot(boss, boss, self._files[boss][1].version, str(spec.manifest),
                                 spec.command)

    # -- one turn of the loop -------------------------------------------------
    def _tick(self, results: Store) -> None:
        assert self.arena is not None
        now = time.time()
        if now - self._entrants_at > ENTRANTS_EVERY_S:
            self._entrants_at = now
            self._refresh_entrants(results)
        if self._since_refit and now - self._last_refit >= self.ladder.play.refit_s:
            self._refit(results)
        if not self.ladder.play.paused:
            for worker in self.arena.free():
                if not self._send_group(worker):
                    break
        reply = self.arena.next_done(timeout=0.5)
        if reply is not None:
            self._store(results, reply)

    def _refresh_entrants(self, results: Store) -> None:
        active = {row["key"]: row for row in self.store.active_versions()}
        left = [key for key in self._entrants if key not in active]
        for key, row in active.items():
            if key in self._entrants:
                continue
            try:
                spec = load_manifest(self.storage.ready(row["sha256"]) / "bot.toml")
                self._files[key] = (spec, spec.bundle())
            except (OSError, ValueError) as exc:  # its files are gone or changed: pause it
                self.store.pause(row["bot"], row["number"], f"its files cannot be read: {exc}")
                continue
            results.register_bot(key, row["bot"], self._files[key][1].version,
                                 str(spec.manifest), spec.command)
        self._entrants = {k: v for k, v in active.items() if k in self._files}
        if left and self.arena is not None:
            self.arena.forget(left)
            for key in left:
                self._files.pop(key, None)

    def _files_for(self, keys: set[str]) -> dict[str, tuple[BotSpec, BotBundle]]:
        return {key: self._files[key] for key in keys if key in self._files}

    # -- sending -------------------------------------------------------------
    def entrants(self, pool: str) -> list[Entrant]:
        game = self.pools[pool][0]
        in_flight = Counter(key for sent_to, lineup in self._in_flight.values()
                            if sent_to == pool for key in set(lineup))
        # Entrant.groups counts played groups only; in-flight ones are its in_flight
        done = {key: self._groups[(pool, key)] - in_flight[key] for key in
                [*self.ladder.play.bosses, *self._entrants]}
        found = [Entrant(key=boss, owner="", boss=True, groups=done[boss],
                         in_flight=in_flight[boss], last_played=self._last_group.get(boss, 0))
                 for boss in self.ladder.play.bosses if self._files[boss][0].plays(game)]
        for key, row in self._entrants.items():
            if self._files[key][0].plays(game):
                found.append(Entrant(key=key, owner=row["owner"], boss=False,
                                     groups=done[key], in_flight=in_flight[key],
                                     last_played=self._last_group.get(key, 0)))
        return found

    def _send_group(self, worker: int) -> bool:
        for pool in self._pools_by_need():
            lineup = self._lineup(pool)
            if lineup:
                group_id = self.store.add_group(pool, list(lineup))
                self._count_group(pool, list(lineup), group_id)
                self._dispatch(worker, group_id, pool, list(lineup))
                return True
        return False

    def _pools_by_need(self) -> list[str]:
        """Pools by how much a group there would teach: the widest interval
        among its entrants (an unrated one: widest of all), shared among the
        groups in flight there. Counting groups alone would starve a 2-player
        pool, whose group holds a third of a 3-player group's comparisons."""
        busy = Counter(pool for pool, _ in self._in_flight.values())

        def need(pool: str) -> float:
            widths = {row["entrant"]: (row["high"] - row["low"]) / 2
                      for row in self.boards[pool].rows}
            keys = [e.key for e in self.entrants(pool)]
            widest = max((widths.get(key, math.inf) for key in keys), default=0.0)
            return min(widest, UNRATED_WIDTH) / (1 + busy[pool])

        return sorted(self.pools, key=lambda p: (-need(p), self.rng.random()))

    def _lineup(self, pool: str) -> tuple[str, ...] | None:
        game, players = self.pools[pool]
        teams = get_game(game).INFO.teams(players)
        units = len(teams) if teams else players
        entrants = self.entrants(pool)
        if len(entrants) < units:
            return None
        standings = {row["entrant"]: Standing(row["elo"], (row["high"] - row["low"]) / 2)
                     for row in self.boards[pool].rows}
        on_the_way = [lineup for sent_to, lineup in self._in_flight.values() if sent_to == pool]
        return self._maker(pool, units).next_lineup(
            entrants, standings, units, self.rng, self._pair_counts(pool),
            covariance=self._covariance.get(pool), in_flight=on_the_way)

    def _maker(self, pool: str, units: int) -> Matchmaker:
        """The pool's matchmaker: a group compares each pair once per seating."""
        maker = self._makers.get(pool)
        if maker is None:
            seatings = len(self._leagues[pool].seatings([f"u{i}" for i in range(units)]))
            maker = self._makers[pool] = Matchmaker(placement=self.ladder.play.placement,
                                                    comparisons=seatings)
        return maker

    def _pair_counts(self, pool: str) -> Counter[tuple[str, str]]:
        return self._pairs.get(pool, Counter())

    def _dispatch(self, worker: int, group_id: int, pool: str, lineup: list[str]) -> None:
        assert self.arena is not None
        league, key = self._leagues[pool], self._keys[pool]
        matches = []
        seen: Counter[tuple[str, ...]] = Counter()
        for seats in league.seatings(lineup):
            again = seen[seats]
            seen[seats] += 1
            matches.append(GroupMatch(league.match_id(seats, group_id,
                                                      f"again{again}" if again else ""),
                                      league.deal_seed(group_id, key), seats))
        known = self.arena.knows(worker)
        bots = {k: self._files[k] for k in set(lineup) - known}
        self._in_flight[group_id] = (pool, lineup)
        self.arena.submit(worker, GroupJob(group_id, league.game, tuple(matches), bots))

    def _count_group(self, pool: str, lineup: list[str], group_id: int) -> None:
        """A group in the counts the matchmaker reads: per entrant, per pair."""
        self._groups.update((pool, key) for key in set(lineup))
        for key in lineup:
            self._last_group[key] = group_id
        counter = self._pairs.setdefault(pool, Counter())
        for a in set(lineup):
            for b in set(lineup):
                if a < b:
                    counter[(a, b)] += 1

    def _resend_pending(self) -> None:
        """Groups a killed server had sent: their unstored matches go again."""
        assert self.arena is not None
        pending = self.store.pending_groups()
        free = self.arena.free()
        for index, (group_id, pool, lineup) in enumerate(pending):
            if pool not in self.pools or any(k not in self._files for k in lineup):
                self.store.finish_group(group_id, 0)  # an entrant left meanwhile: dropped
                continue
            worker = free[index % len(free)] if free else 0
            self._dispatch(worker, group_id, pool, lineup)

    # -- receiving -----------------------------------------------------------
    def _store(self, results: Store, reply: GroupReply) -> None:
        pool, lineup = self._in_flight.pop(reply.group_id, (None, []))
        if pool is None:
            return
        stored = 0
        for result in reply.results:
            if isinstance(result, MatchError):
                self.errors.append(f"group {reply.group_id}: {result.traceback[-300:]}")
                log.error("a ladder match failed in the harness: %s", result.traceback)
                continue
            seats = list(result.bots)
            if results.save_match(pool, reply.group_id, seats, result, None,
                                  (reply.node, reply.worker)):
                stored += 1
                self._count_head_to_head(pool, seats, result.ranks)
                self._stored_at.append(time.time())
                self._since_refit += 1
            self._note_faults(result)
        for fault in reply.end_faults:
            results.save_end_fault(fault)
        self.store.finish_group(reply.group_id, stored)

    def _count_head_to_head(self, pool: str, seats: list[str], ranks: list[int]) -> None:
        with self._head_to_head_lock:
            counts = self._head_to_head.setdefault(pool, {})
            for a, first in enumerate(seats):
                for b, second in enumerate(seats):
                    if a != b:
                        tally = counts.setdefault((first, second), [0, 0, 0])
                        tally[0 if ranks[a] < ranks[b] else 1 if ranks[a] > ranks[b] else 2] += 1

    def head_to_head(self, pool: str, first: str, second: str) -> dict[str, int] | None:
        """Matches of ``pool`` where both sat: how often ``first`` finished
        ahead, behind, level; None before the scheduler has counted them."""
        with self._head_to_head_lock:
            counts = self._head_to_head.get(pool)
            if counts is None:
                return None
            ahead, behind, level = counts.get((first, second), (0, 0, 0))
        return {"ahead": ahead, "behind": behind, "level": level}

    def _note_faults(self, result: Any) -> None:
        for seat, key in enumerate(result.bots):
            fault = result.faults[seat]
            if fault is None:
                self._streaks[key] = 0
                continue
            self._streaks[key] += 1
            row = self._entrants.get(key)
            if row is not None and self._streaks[key] >= BROKEN_AFTER:
                reason = (f"faulted in {self._streaks[key]} matches in a row; the last: "
                          f"{fault.kind} at decision {fault.decision}: {fault.detail[:300]}")
                if self.store.pause(row["bot"], row["number"], reason):
                    log.warning("paused %s: %s", key, reason)
                self._streaks[key] = 0

    # -- ratings -------------------------------------------------------------
    def _refit(self, results: Store) -> None:
        now = time.time()
        for pool, board in self.boards.items():
            if results.league_match_count(pool)[0] == 0:
                continue
            fit = rating_fit(results.ratings_source(pool))
            self._covariance[pool] = Covariance.from_fit(fit)
            before = {row["entrant"]: row["elo"] for row in board.rows}
            rows: list[dict[str, Any]] = []
            for rank, row in enumerate(fit.rows, 1):
                rows.append({"rank": rank, "entrant": row.bot, "elo": row.elo,
                             "low": row.elo_low, "high": row.elo_high, "games": row.games,
                             "faults": row.faults, "avg_rank": row.avg_rank,
                             "moved": (row.elo - before[row.bot]) if row.bot in before else None,
                             "boss": row.bot in self.ladder.play.bosses})
            board.rows, board.at = rows, now
            self.store.save_ratings(pool, [(row.bot, row.elo, row.elo_low, row.elo_high,
                                            row.games) for row in fit.rows], now)
        self._since_refit = 0
        self._last_refit = now
        # last: a page cached under this count (harness.serve.page_cache) was
        # read after every table and the rating history above were written
        self.refits += 1

    # -- what the pages show -------------------------------------------------
    def status(self) -> dict[str, Any]:
        now = time.time()
        while self._stored_at and self._stored_at[0] < now - RATE_WINDOW_S:
            self._stored_at.popleft()
        window = min(RATE_WINDOW_S, max(1.0, now - (self._stored_at[0] if self._stored_at
                                                    else now)))
        counts = self.store.group_counts()
        return {"workers": self.workers, "groups_in_flight": len(self._in_flight),
                "groups_queued": max(0, counts["pending"] - len(self._in_flight)),
                "groups_done": counts["done"],
                "matches_per_minute": round(len(self._stored_at) * 60 / window, 1),
                "entrants": len(self._entrants) + len(self.ladder.play.bosses),
                "last_refit": self._last_refit, "paused": self.ladder.play.paused,
                "errors": list(self.errors)}
