"""Ratings from all results at once: a team-strength Bradley-Terry model.

What the Elo means
------------------
Every bot has a strength; a team's strength is the sum of its members'
strengths (a team of one in individual games; two copies of a bot count
twice). For any two teams (or players) at a table,

    P(a finishes ahead of b) / P(b finishes ahead of a) = 10 ** ((Elo_a - Elo_b) / 400)

where Elo_a is the sum of a's members' Elo (relative to the mean). So a bot
100 Elo above another finishes ahead of it 64% of the time when they do not
tie, in a two-player game as at a seven-player table (Plackett-Luce orders
have exactly these pairwise odds). In team games the Elo is per member:
swapping partner B for A moves a team by Elo_A - Elo_B, so a team of two
copies of A is 2 * (Elo_A - Elo_B) above two copies of B.

Ties (shared ranks) say nothing about who was ahead, so they do not move the
Elo: it is the odds of finishing ahead when the two do not tie. A game with
many ties therefore does not squeeze every Elo towards the mean, as counting
a tie as half a win each way did. Ties still count in games, average rank and
the head-to-head score rates (half a point each). Davidson's tie model would
also read ties as a sign of equal strength, but that is a model of the game's
tie rule: where it is wrong (say strong players tie more often) it biases the
fit, and where it is right it adds little, since its tie probability hardly
changes with the strength difference near equality.

How it is fitted
----------------
Each match gives one comparison per pair of its teams (A+B against A+B, or a
bot against its own copy, says nothing and is skipped). Comparisons are
counted by pair of line-ups and deal group before fitting, so the fit works
on a small table whatever the number of matches; the store keeps those
counts as matches are stored (``Tallies``), so a league's table reads them
rather than every seat row, and rates exactly as its seat rows do. The
strengths maximise the pairwise log-likelihood with Firth's bias-reducing
penalty (the Jeffreys prior): a bot that never loses still gets a finite
rating, the penalty's weight falls as the data grow, and unlike a fixed
prior (BayesElo's virtual draws) it does not shrink the spread of ratings
in a small league. In a
k-team match the k - 1 comparisons of one team are correlated ((k + 1) / 3
times the variance of independent ones, for equals), so their penalty is
scaled by that factor. A very weak normal prior (sd 2000 Elo) only anchors
what the data cannot see at all: a bot with no decisive comparison, or
groups of bots that never met.

95% intervals and LOS
---------------------
One approximation of the fit gives every interval and every likelihood of
superiority (LOS): the estimates are taken as normal about the fit with
covariance A^-1 J A^-1, and read through Student's t with G + 4 degrees of
freedom for G deal groups. An interval is the estimate -+ t s (s its
standard error, t the t's 97.5% quantile) and the LOS of a difference d is
P(T < d / s) under the same t, so a difference's interval lies above 0
exactly when its LOS exceeds 97.5%.

* A is the curvature of what the fit maximises (minus the Jacobian of its
  penalised score): with few comparisons Firth's penalty adds to it (its
  pull towards the mean leaves the estimates less spread than the plain
  information says); with many it is the Fisher information.
* J is the score's variance, pooled from two estimates as a variance is
  pooled with a prior guess: the model's (matches independent, comparisons
  within one correlated as in a Plackett-Luce order), worth
  DEFF_PRIOR_DOF = 5 degrees of freedom, and the one measured between the
  G deal groups, worth G - 1: J = (5 model + (G - 1) measured) / (G + 4).
  A deal group is all matches of one deal of one league: every table and
  seat rotation played those cards, so their results are not independent.
  The measured variance is cluster-robust with Bell and McCaffrey's
  small-sample correction (CR2): each group's score is scaled by
  (I - B_g)^-1/2, B_g its share of the information, G / (G - 1) when the
  groups hold alike shares, more where a group holds much of what is known
  about a bot (a sparse league). With more than 1000 groups, groups are
  pooled into 1000 blocks by a hash of their key; rows without a deal make
  each match a group. The t with G + 4 degrees of freedom is what a
  variance pooled so calls for (the conjugate prior's answer).

After one deal the variance is the model's and the t widens it by 31%
(t(5) / z): nothing measures yet how a league's deals correlate its
results, and that can go either way. Duplicate deals that cancel seat luck
make the model's variance too large (leagues of a few deals are then
conservative); deals that make a game more predictable for every bot make
it too small for bots far from the mean. Each deal shifts the variance
towards the measured one, and past about 5 deals the intervals cover
90-98% of the time (docs/ratings-calibration.md, by shape and size). The
width never grows as deals are added, and bots alike in games get widths
alike. The bootstrap over deal groups that this replaces (the wider of it
and a Laplace interval) stretched intervals several times over at 2-3
deals and could contradict the LOS (issue 45); ``rating_fit(samples=n)``
still draws it, to compare against.

Results do not depend on the order of the seat rows: bots, deal groups and
line-ups are put in a canonical order before anything is random, and sums
are exact.
"""
from __future__ import annotations

import functools
import json
import math
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain, combinations, compress, islice
from operator import itemgetter
from typing import Any

import numpy as np

ELO_PER_UNIT = 400 / math.log(10)
ELO_MEAN = 1500.0
BOOTSTRAP_BLOCKS = 1000
PRIOR_SD_ELO = 2000.0
RIDGE = (ELO_PER_UNIT / PRIOR_SD_ELO) ** 2
DEFF_PRIOR_DOF = 5.0  # the model's variance counts as this many deal groups (intervals)
CHUNK = 65536


# ---- reading seat rows ------------------------------------------------------
@dataclass
class Seats:
    """Seat rows as columns, sorted by match, team, bot and seat, so that a
    team's seats, and copies of a bot within a team, are adjacent. ``bot``
    indexes ``bots`` (sorted names); ``match`` numbers matches; ``block`` is
    each row's bootstrap block (canonical: it depends on the deal group's
    key only)."""

    bots: list[str]
    match: np.ndarray
    seat: np.ndarray
    bot: np.ndarray
    team: np.ndarray
    rank: np.ndarray
    score: np.ndarray
    fault: np.ndarray
    block: np.ndarray
    blocks: int

    def starts(self, by_bot: bool = False) -> np.ndarray:
        """First row of each team of each match (or of each bot in a team)."""
        change = (self.match[1:] != self.match[:-1]) | (self.team[1:] != self.team[:-1])
        if by_bot:
            change |= self.bot[1:] != self.bot[:-1]
        return np.flatnonzero(np.r_[True, change])


def _encode(index: dict[Any, int], keys: list[Any]) -> np.ndarray:
    """Codes of ``keys`` in ``index``, adding unseen keys (C loops: the
    unseen ones are few for bots and leagues)."""
    for key in dict.fromkeys(keys).keys() - index.keys():
        index[key] = len(index)
    return np.fromiter(map(index.__getitem__, keys), dtype=np.int32, count=len(keys))


def _chunks(rows: Iterable[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    if isinstance(rows, list):
        yield from (rows[i:i + CHUNK] for i in range(0, len(rows), CHUNK))
        return
    iterator = iter(rows)
    while chunk := list(islice(iterator, CHUNK)):
        yield chunk


@dataclass(frozen=True)
class RowTuples:
    """Seat rows as tuples of ``columns``, in lists (``chunks``): what a
    database cursor gives, read without building a dict per row (a million
    matches are three million rows)."""

    columns: tuple[str, ...]
    chunks: Iterable[list[tuple[Any, ...]]]


@dataclass(frozen=True)
class Tallies:
    """A league's sufficient statistics, as the store keeps them match by
    match (``match_tallies``): what the ratings read instead of its seat
    rows, a table whose size does not grow with the number of matches.

    ``bots``: (bot, games, score sum, rank sum, faults), one game per match,
    team and bot as ``_seat_stats`` counts. ``pairs``: (key, first line-up,
    second line-up, comparisons, wins, losses, order effect numerator) per
    deal group (key: the deal) and pair of line-ups (``lineup_key``; first
    <= second; a win: first ahead); past BOOTSTRAP_BLOCKS groups the key is
    the group's bootstrap block (``deal_block``) and ``deals`` is None, else
    ``deals`` lists every deal group's deal. ``triples``: (line-ups, sorted;
    how often those three met)."""

    league: str
    bots: list[tuple[str, int, float, int, int]]
    pairs: list[tuple[int, str, str, int, int, int, int]]
    triples: list[tuple[str, str, str, int]]
    deals: list[int] | None


# what the ratings read: seat rows as dicts, as tuples, or as columns already, or
# the sufficient statistics the store keeps
SeatRows = Iterable[dict[str, Any]] | RowTuples | Seats | Tallies
# a chunk's rows and where each field is in them: a name (dicts) or a position (tuples)
Chunk = tuple[list[Any], Callable[[str], "str | int | None"]]


def _column(chunk: Chunk, key: str, dtype: Any) -> np.ndarray:
    return np.fromiter(_field(chunk, key), dtype=dtype, count=len(chunk[0]))


def _field(chunk: Chunk, key: str) -> Iterator[Any]:
    rows, at = chunk
    return map(itemgetter(at(key)), rows)


@dataclass
class _Columns:
    """Columns collected chunk by chunk."""

    ids: list[list[Any]]
    parts: dict[str, list[np.ndarray]]
    bots: dict[str, int]
    leagues: dict[Any, int]
    with_deal: bool
    distinct_hashes: bool = False  # known: no two match IDs share a hash

    def add(self, chunk: Chunk) -> None:
        rows, at = chunk
        ids = list(_field(chunk, "match_id"))
        self.ids.append(ids)
        columns = {
            "hash": np.fromiter(map(hash, ids), dtype=np.int64, count=len(ids)),
            "bot": _encode(self.bots, list(_field(chunk, "bot"))),
            "seat": _column(chunk, "seat", np.int32), "team": _column(chunk, "team", np.int32),
            "rank": _column(chunk, "rank", np.int32), "score": _column(chunk, "score", float),
            "fault": np.fromiter(map(bool, _field(chunk, "fault_kind")), dtype=bool,
                                 count=len(rows)),
        }
        if self.with_deal:
            columns["deal"] = _column(chunk, "deal", np.int64)
            leagues = (list(_field(chunk, "league")) if at("league") is not None
                       else [None] * len(rows))
            columns["league"] = _encode(self.leagues, leagues)
        for name, values in columns.items():
            self.parts.setdefault(name, []).append(values)

    def pop(self, name: str) -> np.ndarray:
        """The whole column, freeing its chunks."""
        return np.concatenate(self.parts.pop(name))

    def select(self, keep: np.ndarray) -> _Columns:
        """The rows where ``keep`` holds, as if only they had been read:
        bots and leagues that none of them has are gone."""
        ids = [list(compress(chain.from_iterable(self.ids), keep.tolist()))] if self.ids else []
        parts = {name: [np.concatenate(chunks)[keep]] for name, chunks in self.parts.items()}
        bots = _recode(parts["bot"], self.bots)
        leagues = _recode(parts["league"], self.leagues) if "league" in parts else {}
        return _Columns(ids, parts, bots, leagues, self.with_deal, self.distinct_hashes)


def _recode(parts: list[np.ndarray], index: dict[Any, int]) -> dict[Any, int]:
    """Renumber the codes in ``parts[0]`` to those present, in place; their
    keys' new index."""
    present = np.zeros(len(index) + 1, dtype=bool)
    present[parts[0]] = True
    kept = {key: code for key, code in index.items() if present[code]}
    new_code = np.zeros(len(index) + 1, dtype=np.int32)
    new_code[list(kept.values())] = np.arange(len(kept), dtype=np.int32)
    parts[0] = new_code[parts[0]]
    return {key: i for i, key in enumerate(kept)}


class FinishOrder:
    """Seat rows read once, from which the ratings of the first k matches
    to finish are fitted as if only their rows had been read: the report's
    convergence chart refits a dozen prefixes without holding the rows or
    reading the store again. ``finished``: the match IDs in the order the
    matches finished; a row of another match (one stored after that list was
    read, while a league runs) is in no prefix."""

    def __init__(self, seat_rows: Iterable[dict[str, Any]] | RowTuples,
                 finished: Sequence[Any]) -> None:
        place = {match_id: i for i, match_id in enumerate(finished)}
        self.matches = len(place)
        self.columns = columns = _read_columns(seat_rows)
        ids: Iterator[Any] = chain.from_iterable(columns.ids) if columns else iter(())
        self.finish = np.fromiter((place.get(match_id, self.matches) for match_id in ids),
                                  dtype=np.int64)
        del place
        # the IDs are only needed to tell apart matches whose IDs share a hash;
        # without such a pair, drop them (a third of the memory)
        if columns is not None and columns.with_deal and _one_id_per_hash(
                len(np.unique(np.concatenate(columns.parts["hash"]))), columns.ids):
            columns.ids, columns.distinct_hashes = [], True

    def first(self, matches: int) -> Seats:
        keep = self.finish < matches
        if self.columns is None or not keep.any():
            return read_seats([])
        return _seats_of(self.columns.select(keep))


def read_seats(seat_rows: SeatRows) -> Seats:
    """Columns from seat rows (match_id, seat, bot, team, score, rank,
    fault_kind, and optionally deal and league), read in chunks with C
    loops, so that a generator is never held whole."""
    if isinstance(seat_rows, Seats):
        return seat_rows
    if isinstance(seat_rows, Tallies):
        raise TypeError("read_seats needs seat rows: a league's Tallies hold none")
    columns = _read_columns(seat_rows)
    if columns is None:
        empty = np.zeros(0, np.int64)
        return Seats([], empty, empty, empty, empty, empty, np.zeros(0), np.zeros(0, bool), empty, 0)
    return _seats_of(columns)


def _read_columns(seat_rows: Iterable[dict[str, Any]] | RowTuples) -> _Columns | None:
    columns: _Columns | None = None
    for chunk in _located_chunks(seat_rows):
        if columns is None:
            deal = chunk[1]("deal")
            columns = _Columns([], {}, {}, {}, deal is not None and chunk[0][0][deal] is not None)
        columns.add(chunk)
    return columns


def _located_chunks(seat_rows: Iterable[dict[str, Any]] | RowTuples) -> Iterator[Chunk]:
    if isinstance(seat_rows, RowTuples):
        position = {name: i for i, name in enumerate(seat_rows.columns)}
        yield from ((rows, position.get) for rows in seat_rows.chunks if rows)
        return
    for rows in _chunks(seat_rows):
        yield rows, _key_in(rows[0])


def _key_in(row: dict[str, Any]) -> Callable[[str], str | None]:
    def key(name: str) -> str | None:
        return name if name in row else None
    return key


def _seats_of(columns: _Columns) -> Seats:
    """The sorted columns (consumes ``columns``)."""
    match = _match_codes(columns)
    if columns.with_deal:
        block, blocks = _deal_blocks(columns)
    else:
        per_match, blocks = _match_blocks(_match_ids(columns, match))
        block = per_match[match]
    columns.ids.clear()
    names = sorted(columns.bots)
    to_sorted = np.array([names.index(name) for name in columns.bots], dtype=np.int32)
    bot = to_sorted[columns.pop("bot")]
    seat, team = columns.pop("seat"), columns.pop("team")
    order = _seat_order(match, team, bot, seat, len(names))
    return Seats(bots=names, match=match[order], seat=seat[order], bot=bot[order],
                 team=team[order], rank=columns.pop("rank")[order],
                 score=columns.pop("score")[order], fault=columns.pop("fault")[order],
                 block=block[order], blocks=blocks)


def _seat_order(match: np.ndarray, team: np.ndarray, bot: np.ndarray, seat: np.ndarray,
                n_bots: int) -> np.ndarray:
    """Rows sorted by match, team, bot and seat: one sort of a combined key
    when it fits in 63 bits."""
    if not len(match):
        return np.zeros(0, np.int64)
    labels, seats = int(team.max()) + 1, int(seat.max()) + 1
    if int(match.max() + 1) * labels * max(n_bots, 1) * seats < 2**62 and team.min() >= 0 \
            and seat.min() >= 0:
        key = match.astype(np.int64) * labels + team
        key *= n_bots
        key += bot
        key *= seats
        key += seat
        return np.argsort(key)
    return np.lexsort((seat, bot, team, match))


def _match_codes(columns: _Columns) -> np.ndarray:
    """A code per row for its match. Matches are told apart by the hash of
    their ID, checked for collisions (then they are numbered exactly)."""
    hashes = columns.pop("hash")
    order = np.argsort(hashes)
    hashes = hashes[order]
    new = np.r_[True, hashes[1:] != hashes[:-1]]
    del hashes
    match = np.empty(len(order), dtype=np.int32)
    match[order] = np.cumsum(new, dtype=np.int32) - 1
    if columns.distinct_hashes or _one_id_per_hash(int(new.sum()), columns.ids):
        return match
    index: dict[Any, int] = {}
    return np.concatenate([_encode(index, ids) for ids in columns.ids])


def _one_id_per_hash(distinct_hashes: int, ids: Iterable[list[Any]]) -> bool:
    """No two of the match IDs share a hash, given how many distinct hashes they have."""
    seen: set[Any] = set()
    for chunk in ids:
        seen.update(chunk)
    return len(seen) == distinct_hashes


def _match_ids(columns: _Columns, match: np.ndarray) -> list[Any]:
    """The match ID of each match code."""
    ids: list[Any] = [None] * (int(match.max()) + 1 if len(match) else 0)
    flat = [i for chunk in columns.ids for i in chunk]
    first = np.unique(match, return_index=True)[1]
    for code, row in enumerate(first.tolist()):
        ids[code] = flat[row]
    return ids


def _deal_blocks(columns: _Columns) -> tuple[np.ndarray, int]:
    """Bootstrap block per row from its deal group (league, deal), numbered
    in the order of (league name, deal)."""
    leagues = sorted(columns.leagues, key=str)
    to_sorted = np.array([leagues.index(x) for x in columns.leagues], dtype=np.int64)
    league, deal = to_sorted[columns.pop("league")], columns.pop("deal")
    low, span = int(deal.min()), int(deal.max() - deal.min()) + 1
    keys, group = _unique(league * span + (deal - low))
    group = group.astype(np.int32)
    if len(keys) <= BOOTSTRAP_BLOCKS:
        return group, len(keys)
    names = [f"{leagues[k // span]}\x00{k % span + low}" for k in keys.tolist()]
    return _hash_blocks(names)[group], BOOTSTRAP_BLOCKS


def _match_blocks(ids: list[Any]) -> tuple[np.ndarray, int]:
    """Bootstrap block per match when rows carry no deal: each match is its
    own group, numbered in the order of match IDs."""
    if len(ids) <= BOOTSTRAP_BLOCKS:
        order = sorted(range(len(ids)), key=lambda i: str(ids[i]))
        block = np.empty(len(ids), dtype=np.int32)
        block[order] = np.arange(len(ids))
        return block, len(ids)
    return _hash_blocks([str(i) for i in ids]), BOOTSTRAP_BLOCKS


def _hash_blocks(keys: list[str]) -> np.ndarray:
    """One of BOOTSTRAP_BLOCKS blocks per key, by a hash that is the same in
    every run (unlike Python's)."""
    hashes = np.fromiter(map(zlib.crc32, map(str.encode, keys)), dtype=np.int64, count=len(keys))
    return (hashes % BOOTSTRAP_BLOCKS).astype(np.int32)


def _unique(values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """np.unique(values, return_inverse=True) of non-negative integers, by
    counting instead of sorting when their range is small."""
    if len(values) and values.min() >= 0 and values.max() < max(4 * len(values), 1 << 20):
        present = np.bincount(values) > 0
        code = np.cumsum(present) - 1
        return np.flatnonzero(present), code[values]
    return np.unique(values, return_inverse=True)


# ---- sufficient statistics, kept match by match ------------------------------
_LINEUP_KEYS: dict[tuple[str, ...], str] = {}


def lineup_key(members: Iterable[str]) -> str:
    """A team's line-up (a multiset of bots) as text: its members, sorted
    (remembered: a store writing match after match sees few line-ups)."""
    team = tuple(sorted(members))
    key = _LINEUP_KEYS.get(team)
    if key is None:
        if len(_LINEUP_KEYS) >= 65536:
            _LINEUP_KEYS.clear()
        key = _LINEUP_KEYS[team] = json.dumps(team)
    return key


def deal_block(league: str, deal: int) -> int:
    """The bootstrap block of a deal group when a league has more than
    BOOTSTRAP_BLOCKS of them (as ``_deal_blocks`` numbers it)."""
    return zlib.crc32(f"{league}\x00{deal}".encode()) % BOOTSTRAP_BLOCKS


@dataclass(frozen=True)
class MatchTallies:
    """One match's share of a league's ``Tallies``: ``units`` (bot, score,
    rank, faulted) for each team and bot (copies in one team are one unit,
    with their first seat's score and rank, faulted if either faulted);
    ``pairs`` (first line-up, second line-up, first ahead, second ahead)
    for each two teams, first <= second (equal line-ups: in the order of
    their team labels, as ``_pairs`` takes them); ``triples`` the line-ups
    of each three teams, sorted; ``teams`` how many teams played."""

    units: list[tuple[str, float, int, bool]]
    pairs: list[tuple[str, str, int, int]]
    triples: list[tuple[str, str, str]]
    teams: int


def match_tallies(bots: Sequence[str], teams: Sequence[int], ranks: Sequence[int],
                  scores: Sequence[float], faulted: Sequence[bool]) -> MatchTallies:
    """What one match adds to the sufficient statistics, from its seats'
    bots, team labels, ranks, scores and faults: the same counts the seat
    rows give (``_seat_stats``, ``_teams``, ``_pairs`` and ``_triples``)."""
    units: list[tuple[str, float, int, bool]]
    if len(set(teams)) == len(teams):  # a seat a team: each seat is a unit
        order = sorted(range(len(teams)), key=teams.__getitem__)
        keys = [lineup_key((bots[s],)) for s in order]
        team_ranks = [ranks[s] for s in order]
        units = [(bots[s], scores[s], ranks[s], bool(faulted[s])) for s in order]
    else:
        seats_of: dict[int, list[int]] = {}
        for seat, team in enumerate(teams):
            seats_of.setdefault(team, []).append(seat)
        keys, team_ranks, units = [], [], []
        for label in sorted(seats_of):
            seats = seats_of[label]
            keys.append(lineup_key([bots[s] for s in seats]))
            team_ranks.append(min(ranks[s] for s in seats))
            first: dict[str, int] = {}
            faults: dict[str, bool] = {}
            for s in seats:
                first.setdefault(bots[s], s)
                faults[bots[s]] = faults.get(bots[s], False) or bool(faulted[s])
            units += [(bot, scores[s], ranks[s], faults[bot]) for bot, s in first.items()]
    pairs = []
    for i, j in combinations(range(len(keys)), 2):
        a, b, rank_a, rank_b = keys[i], keys[j], team_ranks[i], team_ranks[j]
        if a > b:
            a, b, rank_a, rank_b = b, a, rank_b, rank_a
        pairs.append((a, b, int(rank_a < rank_b), int(rank_b < rank_a)))  # wins: a ahead
    triples: list[tuple[str, str, str]] = [tuple(sorted(three))  # type: ignore[misc]
                                           for three in combinations(keys, 3)]
    return MatchTallies(units, pairs, triples, len(keys))


def _tallied(tallies: Tallies) -> tuple[list[tuple[int, float, float, int]], Comparisons]:
    """The seat stats and the comparisons from a league's sufficient
    statistics: what ``_seat_stats`` and ``_pairs`` make of its seat rows
    (line-ups, deal groups and blocks numbered the same way)."""
    if not tallies.bots:
        seats = read_seats([])
        return [], _pairs(seats, *_teams(seats))
    names = sorted(row[0] for row in tallies.bots)
    index = {name: i for i, name in enumerate(names)}
    n = len(names)
    stats = [(int(g), float(s / g), float(r / g), int(f)) if g else (0, 0.0, 0.0, int(f))
             for _, g, s, r, f in sorted(tallies.bots)]
    keys = sorted({key for row in tallies.pairs for key in row[1:3]}
                  | {key for row in tallies.triples for key in row[:3]})
    members = [[index[bot] for bot in json.loads(key)] for key in keys]
    size = max(map(len, members), default=1)
    if (n + 1) ** size < 2**62:  # line-ups in the order of _lineup_codes
        codes = [sum((bot + 1) * (n + 1) ** place for place, bot in enumerate(m)) for m in members]
        keys = [keys[i] for i in sorted(range(len(keys)), key=codes.__getitem__)]
        members = [[index[bot] for bot in json.loads(key)] for key in keys]
    position = {key: i for i, key in enumerate(keys)}
    counts = np.zeros((len(keys), n))
    for i, m in enumerate(members):
        np.add.at(counts[i], m, 1)
    n_lineups = len(keys)
    if tallies.deals is None:
        blocks = BOOTSTRAP_BLOCKS
        block = np.array([row[0] for row in tallies.pairs], dtype=np.int64)
    else:
        deals = np.array(sorted(tallies.deals), dtype=np.int64)
        block_of = (np.arange(len(deals)) if len(deals) <= BOOTSTRAP_BLOCKS else
                    np.array([deal_block(tallies.league, d) for d in deals.tolist()]))
        blocks = min(len(deals), BOOTSTRAP_BLOCKS)
        block = block_of[np.searchsorted(deals, [row[0] for row in tallies.pairs])]
    first = np.array([position[row[1]] for row in tallies.pairs], dtype=np.int64)
    second = np.array([position[row[2]] for row in tallies.pairs], dtype=np.int64)
    count, wins, losses, effect = (np.array([row[c] for row in tallies.pairs], dtype=float)
                                   for c in (3, 4, 5, 6))
    swap = first > second
    first, second = np.where(swap, second, first), np.where(swap, first, second)
    wins, losses = np.where(swap, losses, wins), np.where(swap, wins, losses)
    tally = _Tally(max(blocks, 1) * n_lineups * n_lineups, 4)
    tally.add((block * n_lineups + first) * n_lineups + second, [count, wins, losses, effect])
    unique, (count, wins, losses, effect) = tally.result()
    three = np.sort(np.array([[position[key] for key in row[:3]] for row in tallies.triples],
                             dtype=np.int64).reshape(-1, 3), 1)
    met = np.array([row[3] for row in tallies.triples], dtype=float)
    if n_lineups**3 < 2**62:
        codes3, at = np.unique((three[:, 0] * n_lineups + three[:, 1]) * n_lineups + three[:, 2],
                               return_inverse=True)
        triples = np.stack([codes3 // n_lineups**2, codes3 // n_lineups % n_lineups,
                            codes3 % n_lineups], 1)
    else:
        triples, at = np.unique(three, axis=0, return_inverse=True)
    triple_count = np.bincount(at.reshape(-1), weights=met, minlength=len(triples))
    return stats, _compared(names, counts, unique, count, wins, losses, effect, blocks,
                            triples, triple_count)


def _summary(seat_rows: SeatRows) -> tuple[list[tuple[int, float, float, int]], Comparisons]:
    """Per bot (games, average score, average rank, faults) and the pairwise
    comparisons: from seat rows, or from the sufficient statistics."""
    if isinstance(seat_rows, Tallies):
        return _tallied(seat_rows)
    seats = read_seats(seat_rows)
    stats = _seat_stats(seats) if len(seats.bots) else []
    if seats is not seat_rows:  # read here: free what is not needed any more
        seats.score = seats.seat = seats.fault = np.zeros(0)
    return stats, _pairs(seats, *_teams(seats))


# ---- comparisons -------------------------------------------------------------
@dataclass
class Comparisons:
    """Outcomes between pairs of team line-ups, counted per bootstrap block.

    A line-up is a multiset of bots (``lineups[c]`` counts each bot's seats).
    Entry e counts, for line-up ``first[row[e]]`` against ``second[row[e]]``
    in block ``block[e]``, its wins, losses and ties. ``triples`` lists the
    line-ups of every three teams that met in one match (sorted, with how
    many times they met): the comparisons of such a match are correlated,
    which ``order_effect`` measures (the factor by which the k - 1
    comparisons of one team in a k-team match vary more than independent
    ones would, for equals: (k + 1) / 3)."""

    bots: list[str]
    lineups: np.ndarray      # (line-ups, bots)
    first: np.ndarray        # (rows,) line-up index
    second: np.ndarray       # (rows,)
    row: np.ndarray          # (entries,)
    block: np.ndarray        # (entries,)
    wins: np.ndarray
    losses: np.ndarray
    ties: np.ndarray
    blocks: int
    triples: np.ndarray      # (triples, 3) line-up index, sorted
    triple_count: np.ndarray
    order_effect: np.ndarray  # (rows,) mean (k + 1) / 3 over the row's k-team matches

    @property
    def design(self) -> np.ndarray:
        """Members of the first line-up minus the second's, one row per pair."""
        return self.lineups[self.first] - self.lineups[self.second]

    def totals(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Wins, losses and ties per row, all blocks together."""
        rows = len(self.first)
        return tuple(np.bincount(self.row, weights=x, minlength=rows)  # type: ignore[return-value]
                     for x in (self.wins, self.losses, self.ties))

    def row_of(self, first: np.ndarray, second: np.ndarray) -> np.ndarray:
        """Row of each (first, second) pair of line-ups, first <= second."""
        n = len(self.lineups)
        return np.searchsorted(self.first * n + self.second, first * n + second)

    def wins_matrix(self) -> np.ndarray:
        """Score between bots, as the head-to-head table counts it: each
        bot of one team against each different bot of the other, a win 1,
        a tie half to each."""
        n = len(self.bots)
        wins, losses, ties = self.totals()
        matrix = np.zeros((n, n))
        present_a, present_b = self.lineups[self.first] > 0, self.lineups[self.second] > 0
        for r in np.flatnonzero(wins + losses + ties):
            a, b = np.flatnonzero(present_a[r]), np.flatnonzero(present_b[r])
            ia, ib = np.meshgrid(a, b, indexing="ij")
            cross = ia != ib
            np.add.at(matrix, (ia[cross], ib[cross]), wins[r] + ties[r] / 2)
            np.add.at(matrix, (ib[cross], ia[cross]), losses[r] + ties[r] / 2)
        return matrix


def comparisons(seat_rows: SeatRows) -> Comparisons:
    """Pairwise outcomes between the teams of every match, aggregated."""
    if isinstance(seat_rows, Tallies):
        return _tallied(seat_rows)[1]
    seats = read_seats(seat_rows)
    return _pairs(seats, *_teams(seats))


def _teams(seats: Seats) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per team (one per match and team label): its match, line-up index,
    rank and block, sorted by match; and the line-ups' member counts."""
    n_bots = len(seats.bots)
    if not len(seats.match):
        empty = np.zeros(0, np.int64)
        return empty, empty, empty, empty, np.zeros((0, n_bots))
    start = seats.starts()
    team_of_row = np.zeros(len(seats.match), dtype=np.int32)
    team_of_row[start[1:]] = 1
    np.cumsum(team_of_row, out=team_of_row)
    position = np.arange(len(seats.match), dtype=np.int32) - start.astype(np.int32)[team_of_row]
    codes, lineup = _unique(_lineup_codes(seats.bot, position, start, n_bots))
    lineup = lineup.astype(np.int32)
    members = np.bincount(lineup[team_of_row].astype(np.int64) * n_bots + seats.bot,
                          minlength=len(codes) * n_bots)
    counts = members.reshape(len(codes), n_bots) / np.bincount(lineup)[:, None]
    rank = np.minimum.reduceat(seats.rank, start)
    return seats.match[start], lineup, rank, seats.block[start], counts


def _lineup_codes(bot: np.ndarray, position: np.ndarray, start: np.ndarray,
                  n_bots: int) -> np.ndarray:
    """One integer per team naming its multiset of bots: its members (sorted,
    team by team from ``start``) as digits in base n_bots + 1."""
    size = int(position.max()) + 1
    if (n_bots + 1) ** size < 2**62:
        digits = (bot + 1).astype(np.int64) * (n_bots + 1) ** position.astype(np.int64)
        return np.add.reduceat(digits, start)
    members: dict[tuple[int, ...], int] = {}
    return np.array([members.setdefault(tuple(m), len(members)) for m in np.split(bot, start[1:])],
                    dtype=np.int64)


DENSE_TALLY = 1 << 22


class _Tally:
    """Sums of a few columns by integer key, added batch by batch: in dense
    arrays when the keys' range is small, else as sorted sparse batches."""

    def __init__(self, size: int, columns: int) -> None:
        self.size, self.columns = size, columns
        self.dense = np.zeros((columns, size)) if size <= DENSE_TALLY else None
        self.batches: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, key: np.ndarray, values: list[np.ndarray]) -> None:
        if self.dense is not None:
            for column, weight in enumerate(values):
                self.dense[column] += np.bincount(key, weights=weight, minlength=self.size)
            return
        unique, inverse = np.unique(key, return_inverse=True)
        self.batches.append((unique, np.stack([np.bincount(inverse, weights=w, minlength=len(unique))
                                               for w in values])))

    def result(self) -> tuple[np.ndarray, np.ndarray]:
        """Keys seen (sorted; a key is seen when its first column is not 0)
        and the sums, (columns, keys)."""
        if self.dense is not None:
            seen = np.flatnonzero(self.dense[0])
            return seen, self.dense[:, seen]
        if not self.batches:
            return np.zeros(0, np.int64), np.zeros((self.columns, 0))
        unique, inverse = np.unique(np.concatenate([k for k, _ in self.batches]),
                                    return_inverse=True)
        sums = np.concatenate([v for _, v in self.batches], axis=1)
        return unique, np.stack([np.bincount(inverse, weights=c, minlength=len(unique))
                                 for c in sums])


def _pairs(seats: Seats, match: np.ndarray, lineup: np.ndarray, rank: np.ndarray,
           block: np.ndarray, counts: np.ndarray) -> Comparisons:
    """Every pair of teams within a match, counted by (block, line-up pair),
    and every triple, counted by line-ups."""
    n_lineups = len(counts)
    if not len(match):
        empty = np.zeros(0, np.int64)
        return Comparisons(seats.bots, counts, empty, empty, empty, empty, np.zeros(0),
                           np.zeros(0), np.zeros(0), seats.blocks, np.zeros((0, 3), np.int64),
                           np.zeros(0), np.zeros(0))
    per_match = np.bincount(match)
    most = int(per_match.max())
    tally = _Tally(max(seats.blocks, 1) * n_lineups * n_lineups, 4)
    for d in range(1, most):
        a = np.flatnonzero(match[:-d] == match[d:])
        b = a + d
        swap = lineup[a] > lineup[b]
        first, second = np.where(swap, lineup[b], lineup[a]), np.where(swap, lineup[a], lineup[b])
        outcome = np.sign(rank[b] - rank[a]) * np.where(swap, -1, 1)  # +1: first ahead
        key = (block[a].astype(np.int64) * n_lineups + first) * n_lineups + second
        # the comparison count, and the order effect's numerator (integers: sums are exact)
        tally.add(key, [np.ones(len(a)), (outcome == 1) * 1.0, (outcome == -1) * 1.0,
                        per_match[match[a]] + 1.0])
    unique, (count, wins, losses, effect) = tally.result()
    triples, triple_count = _triples(match, lineup, most, n_lineups)
    return _compared(seats.bots, counts, unique, count, wins, losses, effect, seats.blocks,
                     triples, triple_count)


def _compared(bots: list[str], counts: np.ndarray, unique: np.ndarray, count: np.ndarray,
              wins: np.ndarray, losses: np.ndarray, effect: np.ndarray, blocks: int,
              triples: np.ndarray, triple_count: np.ndarray) -> Comparisons:
    """The comparisons from their sums by key (block, first line-up, second
    line-up), sorted, as ``_Tally`` gives them."""
    n_lineups = len(counts)
    pair = unique % (n_lineups * n_lineups)
    rows, row = _unique(pair)
    per_row = np.bincount(row, weights=count, minlength=len(rows))
    order_effect = np.bincount(row, weights=effect, minlength=len(rows)) / (3 * per_row)
    return Comparisons(bots, counts, rows // n_lineups, rows % n_lineups, row,
                       unique // (n_lineups * n_lineups), wins, losses, count - wins - losses,
                       blocks, triples, triple_count, order_effect)


def _triples(match: np.ndarray, lineup: np.ndarray, most: int,
             n_lineups: int) -> tuple[np.ndarray, np.ndarray]:
    """Line-ups of every three teams of one match (sorted), with counts."""
    if most < 3:
        return np.zeros((0, 3), np.int64), np.zeros(0)
    if n_lineups**3 >= 2**62:
        found = [np.sort(np.stack([lineup[a], lineup[a + d1], lineup[a + d2]], 1), 1)
                 for d1, d2, a in _triple_offsets(match, most)]
        triples, count = np.unique(np.concatenate(found), axis=0, return_counts=True)
        return triples, count.astype(float)
    tally = _Tally(n_lineups**3, 1)
    for d1, d2, a in _triple_offsets(match, most):
        three = np.sort(np.stack([lineup[a], lineup[a + d1], lineup[a + d2]]), 0)
        three = three.astype(np.int64)
        tally.add((three[0] * n_lineups + three[1]) * n_lineups + three[2], [np.ones(len(a))])
    codes, (count,) = tally.result()
    triples = np.stack([codes // n_lineups**2, codes // n_lineups % n_lineups,
                        codes % n_lineups], 1)
    return triples, count


def _triple_offsets(match: np.ndarray, most: int) -> Iterator[tuple[int, int, np.ndarray]]:
    """(d1, d2, a): teams a, a + d1 and a + d2 play in one match."""
    for d1 in range(1, most - 1):
        for d2 in range(d1 + 1, most):
            yield d1, d2, np.flatnonzero(match[:-d2] == match[d2:])


# ---- the fit -------------------------------------------------------------------
MAX_STEP = 1.0
PLAIN_STEPS = 8
MIXING_DEPTH = 5
NEWTON_AFTER = 40
NEWTON_PROBE = 1e-6
NEWTON_VALUES = 4_000_000
OUTER_VALUES = 4_000_000  # 32 MB
SAMPLE_CHUNK_VALUES = 1_000_000
BOOTSTRAP_TOL = 1e-5  # strengths; 0.002 Elo


def _basis(design: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the strengths the fit estimates: those summing to
    zero when every comparison sets teams of equal size against each other
    (the mean strength then means nothing), else all."""
    n = design.shape[1]
    if n and np.all(design.sum(1) == 0):
        q, _ = np.linalg.qr(np.eye(n) - 1 / n)
        return q[:, :n - 1]
    return np.eye(n)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (1 + np.tanh(0.5 * x))


def _information(x: np.ndarray, w: np.ndarray, ridge: float,
                 outer: np.ndarray | None = None) -> np.ndarray:
    """X' diag(w) X + ridge, batched over the leading axes of w (``outer``:
    ``_outer_products(x)``, when there are any)."""
    dim = x.shape[1]
    if outer is None:
        info = np.matmul(x.T * w[..., None, :], x)
    else:
        info = (w @ outer).reshape(w.shape[:-1] + (dim, dim))
    return info + ridge * np.eye(dim)


def _outer_products(x: np.ndarray) -> np.ndarray | None:
    """Each row's x x', flattened (rows, dim^2), where that is at most
    OUTER_VALUES values: the information and the leverages of every sample
    are then one matrix product each, two to three times faster."""
    rows, dim = x.shape
    if rows * dim * dim > OUTER_VALUES:
        return None
    return (x[:, :, None] * x[:, None, :]).reshape(rows, dim * dim)


def _leverages(x: np.ndarray, inverse: np.ndarray, outer: np.ndarray | None) -> np.ndarray:
    """x' M x for each row x, batched over the leading axes of M."""
    if outer is None:
        return (np.matmul(x, inverse) * x).sum(-1)
    return inverse.reshape(inverse.shape[:-2] + (-1,)) @ outer.T


def fit_strengths(design: np.ndarray, wins: np.ndarray, decisive: np.ndarray,
                  firth: float | np.ndarray = 1.0, ridge: float = RIDGE, tol: float = 1e-7,
                  max_iter: int = 200, start: np.ndarray | None = None) -> np.ndarray:
    """Log-strengths (..., bots), mean zero, from wins and decisive counts
    (..., rows) of the comparisons ``design`` (rows, bots), batched over the
    leading axes: Fisher scoring on the log-likelihood with Firth's
    Jeffreys-prior penalty: the modified score adds, for each row, its
    leverage times (1/2 - p) times ``firth`` (0: plain maximum likelihood;
    per row, the order effect of multiplayer matches, whose correlated
    comparisons leave a bias that many times larger). ``start``: strengths
    to start from (the bootstrap starts from the fit of all the data).

    The first ``PLAIN_STEPS`` steps are plain Fisher scoring, damped where a
    step overshoots; every fit of the calibration's dense settings
    (tests/test_ratings_calibration.py) converges within 7, and those are
    unchanged. Fisher scoring leaves out how the penalty's leverages move
    with the strengths, so where the penalty is large next to the data (a
    sparse league's bootstrap samples) it converges only linearly, sometimes
    at 0.97 a step: past those steps each sample is accelerated by Anderson
    mixing of its last ``MIXING_DEPTH`` steps (the sparse setting's slowest
    resample: 17 steps rather than 200). Mixing can wander, though (about
    one resample in a thousand, and which one turns on rounding), so the
    samples still moving after ``NEWTON_AFTER`` steps take Newton steps,
    with the step's Jacobian from finite differences: a dimension's worth
    of scoring steps each, for a handful of samples."""
    basis = _basis(design)
    x = design @ basis
    shape = wins.shape[:-1]
    batch = math.prod(shape)
    wins, decisive = wins.reshape(batch, x.shape[0]), decisive.reshape(batch, x.shape[0])
    beta = np.zeros((len(wins), x.shape[1]))
    if start is not None:
        beta += start @ basis
    active = np.arange(len(wins)) if x.shape[1] else np.zeros(0, np.int64)
    damping, last = np.ones(len(wins)), np.full(len(wins), np.inf)
    mixing = _AndersonMixing(len(wins), x.shape[1])
    outer = _outer_products(x)
    # a league too large for a sample's probes to fit in memory keeps mixing
    newton_after = NEWTON_AFTER if _probe_values(x, outer) <= NEWTON_VALUES else max_iter
    for iteration in range(max_iter):
        if not len(active):
            break
        step = _scoring_step(x, outer, beta[active], wins[active], decisive[active], firth, ridge)
        biggest = np.abs(step).max(-1)
        if iteration < PLAIN_STEPS:
            # a step no smaller than the last one is an overshoot: halve the next ones
            damping[active] = np.where(biggest < last[active],
                                       np.minimum(1.0, 2 * damping[active]), damping[active] / 2)
            last[active] = biggest
            beta[active] += step * (damping[active] * _capped(biggest))[:, None]
        else:
            if iteration < newton_after:
                # a step larger than the last: the mix went astray, start its history afresh
                mixing.forget(active[biggest > last[active]])
                last[active] = biggest
                move = mixing.move(active, beta[active], step)
            else:
                move = _newton_move(x, outer, beta[active], wins[active], decisive[active],
                                    firth, ridge, step)
            beta[active] += move * _capped(np.abs(move).max(-1))[:, None]
        active = active[biggest >= tol]
    theta = (beta @ basis.T).reshape(shape + (design.shape[1],))
    return theta - theta.mean(-1, keepdims=True)


def _newton_move(x: np.ndarray, outer: np.ndarray | None, beta: np.ndarray, wins: np.ndarray,
                 decisive: np.ndarray, firth: float | np.ndarray, ridge: float,
                 step: np.ndarray) -> np.ndarray:
    """Newton's move to the root of the scoring step (where the penalised
    score is zero), for each row of ``beta``, whose steps are ``step``."""
    samples, dim = beta.shape
    chunk = max(1, NEWTON_VALUES // _probe_values(x, outer))
    probed = np.concatenate([
        _scoring_step(x, outer, (beta[lo:lo + chunk, None, :] + NEWTON_PROBE * np.eye(dim))
                      .reshape(-1, dim), np.repeat(wins[lo:lo + chunk], dim, 0),
                      np.repeat(decisive[lo:lo + chunk], dim, 0), firth, ridge)
        for lo in range(0, samples, chunk)]).reshape(samples, dim, dim)
    jacobian = np.swapaxes(probed - step[:, None, :], 1, 2) / NEWTON_PROBE
    try:
        return -np.linalg.solve(jacobian, step[..., None])[..., 0]
    except np.linalg.LinAlgError:  # a singular Jacobian: the plain step, for all of them
        return step


def _probe_values(x: np.ndarray, outer: np.ndarray | None) -> int:
    """The values the scoring steps of one sample's Newton probes hold at once."""
    rows, dim = x.shape
    return dim * (dim * dim + rows if outer is not None else dim * rows)


def _capped(largest: np.ndarray) -> np.ndarray:
    """The share of each move that keeps its largest change within MAX_STEP."""
    return np.minimum(1.0, MAX_STEP / np.maximum(largest, 1e-300))


class _AndersonMixing:
    """Anderson acceleration of the iteration beta <- g(beta) = beta + step,
    one history per sample: the next point is the mix of the last
    ``MIXING_DEPTH`` + 1 values of g whose steps cancel best (least
    squares); with no history it is g itself, the plain step."""

    def __init__(self, samples: int, dim: int) -> None:
        self.step_changes = np.zeros((samples, 0, dim))
        self.point_changes = np.zeros((samples, 0, dim))
        self.last_step = np.zeros((samples, dim))
        self.last_point = np.zeros((samples, dim))
        self.started = False

    def move(self, active: np.ndarray, beta: np.ndarray, step: np.ndarray) -> np.ndarray:
        point = beta + step
        if self.started:
            self._remember(active, step - self.last_step[active], point - self.last_point[active])
        self.started = True
        self.last_step[active], self.last_point[active] = step, point
        steps, points = self.step_changes[active], self.point_changes[active]
        if not steps.shape[1]:
            return step
        gram = steps @ np.swapaxes(steps, 1, 2)
        # a relative nudge keeps a history of (nearly) equal steps solvable
        nudge = 1e-10 * np.trace(gram, axis1=1, axis2=2) + 1e-300
        gram += nudge[:, None, None] * np.eye(gram.shape[1])
        weights = np.linalg.solve(gram, steps @ step[..., None])
        return point - (np.swapaxes(weights, 1, 2) @ points)[:, 0] - beta

    def forget(self, samples: np.ndarray) -> None:
        self.step_changes[samples] = 0.0
        self.point_changes[samples] = 0.0

    def _remember(self, active: np.ndarray, step_change: np.ndarray,
                  point_change: np.ndarray) -> None:
        shape = (len(self.last_step), 1, self.last_step.shape[1])
        new_steps, new_points = np.zeros(shape), np.zeros(shape)
        new_steps[active, 0], new_points[active, 0] = step_change, point_change
        self.step_changes = np.concatenate([self.step_changes, new_steps], 1)[:, -MIXING_DEPTH:]
        self.point_changes = np.concatenate([self.point_changes, new_points], 1)[:, -MIXING_DEPTH:]


def _scoring_step(x: np.ndarray, outer: np.ndarray | None, beta: np.ndarray, wins: np.ndarray,
                  decisive: np.ndarray, firth: float | np.ndarray, ridge: float) -> np.ndarray:
    """One Fisher-scoring step for each row of ``beta``."""
    score, inverse = _penalised_score(x, outer, beta, wins, decisive, firth, ridge)
    return np.matmul(inverse, score[..., None])[..., 0]


def _penalised_score(x: np.ndarray, outer: np.ndarray | None, beta: np.ndarray,
                     wins: np.ndarray, decisive: np.ndarray, firth: float | np.ndarray,
                     ridge: float) -> tuple[np.ndarray, np.ndarray]:
    """The score with Firth's modification and the prior's term, the
    equations the fit solves, for each row of ``beta``; and the inverse of
    the information there."""
    p = _sigmoid(beta @ x.T)
    w = decisive * p * (1 - p)
    inverse = np.linalg.inv(_information(x, w, ridge, outer))
    residual = wins - decisive * p
    if np.any(firth):
        leverage = w * _leverages(x, inverse, outer)
        residual = residual + firth * leverage * (0.5 - p)
    return residual @ x - ridge * beta, inverse


def to_elo(theta: np.ndarray) -> np.ndarray:
    return ELO_MEAN + ELO_PER_UNIT * (theta - theta.mean(-1, keepdims=True))


def _laplace(data: Comparisons, fitted_rows: np.ndarray,
             theta: np.ndarray) -> tuple[np.ndarray, float]:
    """Covariance of the strengths, A^-1 J A^-1, and the degrees of freedom
    of the Student t that intervals read it through (module docstring): A
    minus the Jacobian of the penalised score (the Fisher information H
    should that not be positive definite), J the model's score variance
    and the one measured between G deal groups, pooled with weights 5 and
    G - 1; G + 4 degrees of freedom."""
    design = data.design[fitted_rows]
    basis = _basis(design)
    x = design @ basis
    wins, losses, _ = data.totals()
    decisive = (wins + losses)[fitted_rows]
    p = _sigmoid(x @ (basis.T @ theta))
    info = _information(x, decisive * p * (1 - p), RIDGE)
    model = info - RIDGE * np.eye(len(info)) + basis.T @ _order_covariance(data, theta) @ basis
    bread = _penalised_information(x, basis.T @ theta, wins[fitted_rows], decisive,
                                   data.order_effect[fitted_rows])
    if len(bread) and np.linalg.eigvalsh(bread).min() > 0:
        info = bread
    measured, groups = _measured_variance(data, fitted_rows, x, p, info)
    measured_dof = max(groups - 1, 0)
    weight = measured_dof / (DEFF_PRIOR_DOF + measured_dof)
    inverse = basis @ np.linalg.inv(info)
    # the prior's own term keeps directions without data as wide as the prior
    score_variance = (1 - weight) * model + weight * measured + RIDGE * np.eye(len(info))
    return inverse @ score_variance @ inverse.T, DEFF_PRIOR_DOF + measured_dof


JACOBIAN_STEP = 1e-5


def _penalised_information(x: np.ndarray, beta: np.ndarray, wins: np.ndarray,
                           decisive: np.ndarray, firth: np.ndarray) -> np.ndarray:
    """Minus the Jacobian of the penalised score at ``beta`` (central
    differences), symmetrised."""
    dim = len(beta)
    if not dim:
        return np.zeros((0, 0))
    probes = beta + JACOBIAN_STEP * np.concatenate([np.eye(dim), -np.eye(dim)])
    outer = _outer_products(x)
    # a probe's scoring step holds dim x dim + rows values, or dim x rows without ``outer``
    chunk = max(1, NEWTON_VALUES // (_probe_values(x, outer) // dim))
    score = np.concatenate([
        _penalised_score(x, outer, probes[lo:lo + chunk], np.tile(wins, (len(part), 1)),
                         np.tile(decisive, (len(part), 1)), firth, RIDGE)[0]
        for lo in range(0, 2 * dim, chunk) if len(part := probes[lo:lo + chunk])])
    jacobian = (score[:dim] - score[dim:]) / (2 * JACOBIAN_STEP)
    return -(jacobian + jacobian.T) / 2


TRIPLE_DESIGN = np.array([[1.0, -1.0, 0.0], [1.0, 0.0, -1.0], [0.0, 1.0, -1.0]])


def _order_covariance(data: Comparisons, theta: np.ndarray) -> np.ndarray:
    """The part of the score's variance that comes from comparisons sharing
    a team in one match (bots x bots): for each triple of teams a, b, c the
    covariances of [a ahead of b], [a ahead of c], [b ahead of c] under the
    race that makes Plackett-Luce orders, scaled down by the share of those
    comparisons that were decisive."""
    if not len(data.triples):
        return np.zeros((len(theta), len(theta)))
    t = data.triples
    eta = data.lineups @ theta
    ea, eb, ec = eta[t[:, 0]], eta[t[:, 1]], eta[t[:, 2]]
    top = np.maximum(np.maximum(ea, eb), ec)
    la, lb, lc = np.exp(ea - top), np.exp(eb - top), np.exp(ec - top)
    total = la + lb + lc
    pab, pac, pbc = _sigmoid(ea - eb), _sigmoid(ea - ec), _sigmoid(eb - ec)
    a_first_b_second = la / total * lb / (lb + lc)
    cov = np.stack([la / total - pab * pac,                                     # ab, ac
                    a_first_b_second - pab * pbc,                               # ab, bc
                    a_first_b_second + lb / total * la / (la + lc) - pac * pbc], 1)  # ac, bc
    wins, losses, ties = data.totals()
    share = np.sqrt((wins + losses) / np.maximum(wins + losses + ties, 1))
    sab, sac, sbc = (share[data.row_of(t[:, i], t[:, j])] for i, j in ((0, 1), (0, 2), (1, 2)))
    cov *= np.stack([sab * sac, sab * sbc, sac * sbc], 1) * data.triple_count[:, None]
    pair_cov = np.zeros((len(t), 3, 3))
    for k, (i, j) in enumerate(((0, 1), (0, 2), (1, 2))):
        pair_cov[:, i, j] = pair_cov[:, j, i] = cov[:, k]
    team_cov = TRIPLE_DESIGN.T @ pair_cov @ TRIPLE_DESIGN        # (triples, 3, 3)
    members = data.lineups[t]                                     # (triples, 3, bots)
    return np.einsum("tib,tij,tjc->bc", members, team_cov, members)


def _measured_variance(data: Comparisons, fitted_rows: np.ndarray, x: np.ndarray,
                       p: np.ndarray, bread: np.ndarray) -> tuple[np.ndarray, int]:
    """Variance of the score between deal groups (bootstrap blocks), a
    cluster-robust estimate with Bell and McCaffrey's small-sample
    correction (CR2), and how many groups hold comparisons. Each group's
    score (less the mean over groups) is scaled by (I - B_g)^-1/2, B_g the
    group's share of the information (whitened by ``bread``): the fit has
    leaned towards each group's data, by more where a group holds much of
    what is known about a bot (a sparse league). With G groups that hold
    alike shares, B_g = I / G, this is the familiar G / (G - 1)."""
    dim = x.shape[1]
    position = np.full(len(data.first), -1)
    position[fitted_rows] = np.arange(len(fitted_rows))
    keep = position[data.row] >= 0
    row = position[data.row[keep]]
    decisive = data.wins[keep] + data.losses[keep]
    residual = data.wins[keep] - decisive * p[row]
    used, block = np.unique(data.block[keep], return_inverse=True)
    groups = len(used)
    if groups < 2:
        return np.zeros((dim, dim)), 0
    scores = np.zeros((groups, dim))
    np.add.at(scores, block, residual[:, None] * x[row])
    centred = scores - scores.mean(0)
    if groups * dim**3 > CR2_VALUES or len(row) * dim**2 > CR2_VALUES:
        # many groups, each a small share of the information: the plain correction
        return centred.T @ centred * groups / (groups - 1), groups
    values, vectors = np.linalg.eigh(bread)
    if values.min() <= 0:
        return centred.T @ centred * groups / (groups - 1), groups
    whiten = (vectors / np.sqrt(values)) @ vectors.T
    root = (vectors * np.sqrt(values)) @ vectors.T
    # each group's information, whitened: Z_g' diag(w_g) Z_g, Z = X W
    order = np.argsort(block, kind="stable")
    z = x[row[order]] @ whiten
    weighted = z * (decisive * (p * (1 - p))[row])[order, None]
    bounds = np.r_[0, np.cumsum(np.bincount(block, minlength=groups))]
    shares = np.stack([z[lo:hi].T @ weighted[lo:hi] for lo, hi in zip(bounds, bounds[1:])])
    left, left_vectors = np.linalg.eigh(np.eye(dim) - shares)
    # a group that holds all that is known in some direction would scale it without
    # bound: no group is taken to hold more than CR2_MOST_SHARE of anything
    scale = np.maximum(left, 1 - CR2_MOST_SHARE) ** -0.5
    along = np.einsum("gkj,gk->gj", left_vectors, centred @ whiten)
    adjusted = np.einsum("gij,gj->gi", left_vectors, scale * along)
    return root @ (adjusted.T @ adjusted) @ root, groups


CR2_VALUES = 50_000_000
CR2_MOST_SHARE = 0.9


def _bootstrap(data: Comparisons, fitted_rows: np.ndarray, samples: int, seed: int,
               start: np.ndarray) -> np.ndarray:
    """Strengths (samples, bots) refitted on resampled bootstrap blocks."""
    if not len(fitted_rows):  # no decisive comparison: every resample is the fit
        return np.tile(start, (samples, 1))
    design = data.design[fitted_rows]
    theta = np.zeros((samples, design.shape[1]))
    for lo, sampled_wins, sampled_decisive in _resamples(data, fitted_rows, samples, seed):
        theta[lo:lo + len(sampled_wins)] = fit_strengths(
            design, sampled_wins, sampled_decisive, data.order_effect[fitted_rows], start=start,
            tol=BOOTSTRAP_TOL)
    return theta


def _resamples(data: Comparisons, fitted_rows: np.ndarray, samples: int,
               seed: int) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """The bootstrap's resamples of whole blocks, in chunks that bound
    memory: (first sample, wins, decisive counts) with counts per sample
    and fitted row."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(data.blocks, np.full(data.blocks, 1 / data.blocks), size=samples)
    position = np.full(len(data.first), -1)
    position[fitted_rows] = np.arange(len(fitted_rows))
    keep = np.flatnonzero(position[data.row] >= 0)
    keep = keep[np.argsort(position[data.row[keep]], kind="stable")]
    row = position[data.row[keep]]
    starts = np.flatnonzero(np.r_[True, row[1:] != row[:-1]])
    block, wins, losses = data.block[keep], data.wins[keep], data.losses[keep]
    dim = data.design.shape[1]
    chunk = max(1, SAMPLE_CHUNK_VALUES // max(1, len(keep) + len(fitted_rows) * dim))
    for lo in range(0, samples, chunk):
        weight = counts[lo:lo + chunk][:, block].astype(float)
        yield (lo, np.add.reduceat(weight * wins, starts, axis=1),
               np.add.reduceat(weight * (wins + losses), starts, axis=1))


# ---- the table ---------------------------------------------------------------------
@dataclass
class RatingRow:
    bot: str
    elo: float
    elo_low: float
    elo_high: float
    games: int
    avg_score: float
    avg_rank: float
    faults: int

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Difference:
    """Elo of ``first`` minus ``second``, its 95% interval, and the likelihood
    of superiority: the probability that ``first`` is the stronger."""

    first: str
    second: str
    elo: float
    elo_low: float
    elo_high: float
    los: float

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class RatingFit:
    """Everything the table and the pairwise differences come from: the
    Elo, its covariance and the degrees of freedom of the Student t that
    every interval and LOS read from them (one approximation for all)."""

    bots: list[str]
    elo: np.ndarray            # (bots,)
    covariance: np.ndarray     # covariance of the Elo, (bots, bots)
    draws: np.ndarray          # bootstrap Elo, (samples, bots), when asked for (a diagnostic)
    rows: list[RatingRow]      # the table, best first
    dof: float = math.inf      # degrees of freedom of the intervals' t

    def index(self, name: str) -> int:
        """A bot by its full name (name@version) or its unique name."""
        if name in self.bots:
            return self.bots.index(name)
        found = [i for i, bot in enumerate(self.bots) if bot.split("@")[0] == name]
        if len(found) != 1:
            raise KeyError(f"{'no' if not found else 'more than one'} bot named {name!r} "
                           f"(known: {', '.join(self.bots)})")
        return found[0]

    def difference(self, first: str, second: str) -> Difference:
        """Elo of ``first`` minus ``second``, d, with its standard error s:
        the interval d -+ t s and LOS = P(T < d / s), T Student's t with
        ``dof`` degrees of freedom and t its 97.5% quantile. So the interval
        lies above 0 exactly when LOS exceeds 97.5%, below 0 exactly when
        LOS is under 2.5%."""
        a, b = self.index(first), self.index(second)
        elo = float(self.elo[a] - self.elo[b])
        contrast = np.zeros(len(self.bots))
        contrast[a] += 1
        contrast[b] -= 1
        sd = self.standard_error(contrast)
        half = t_quantile(0.975, self.dof) * sd
        los = t_cdf(elo / sd, self.dof) if sd > 0 else 0.5 if elo == 0 else float(elo > 0)
        return Difference(self.bots[a], self.bots[b], elo, elo - half, elo + half, los)

    def standard_error(self, contrast: np.ndarray) -> float:
        """Standard error of ``contrast @ elo`` (the intervals' and LOS's s)."""
        return math.sqrt(max(float(contrast @ self.covariance @ contrast), 0.0))

    def differences(self) -> list[Difference]:
        """Every pair, each bot against those below it in the table."""
        order = [row.bot for row in self.rows]
        return [self.difference(order[i], order[j])
                for i in range(len(order)) for j in range(i + 1, len(order))]


def rating_fit(seat_rows: SeatRows, samples: int = 0, seed: int = 0) -> RatingFit:
    """Fit the ratings and their uncertainty from seat rows (any order; a
    generator is read in chunks). ``samples``: that many bootstrap resamples
    of whole deal groups, kept in ``draws`` to compare against (the
    intervals do not use them)."""
    stats, data = _summary(seat_rows)
    if not data.bots:
        return RatingFit([], np.zeros(0), np.zeros((0, 0)), np.zeros((samples, 0)), [])
    wins, losses, _ = data.totals()
    fitted_rows = np.flatnonzero((data.first != data.second) & (wins + losses > 0))
    design = data.design[fitted_rows]
    theta = fit_strengths(design, wins[fitted_rows], (wins + losses)[fitted_rows],
                          data.order_effect[fitted_rows])
    covariance, dof = _laplace(data, fitted_rows, theta)
    covariance *= ELO_PER_UNIT**2
    elo = to_elo(theta)
    draws = (to_elo(_bootstrap(data, fitted_rows, samples, seed, theta)) if samples
             else np.zeros((0, len(elo))))
    fit = RatingFit(data.bots, elo, covariance, draws, [], dof)
    # each bot's Elo less the mean: the Elo of e_i - 1/n
    centring = np.eye(len(elo)) - 1 / len(elo)
    rows = []
    for i, bot in enumerate(data.bots):
        sd = fit.standard_error(centring[i])
        half = t_quantile(0.975, dof) * sd
        rows.append(RatingRow(bot, float(elo[i]), float(elo[i] - half), float(elo[i] + half),
                              *stats[i]))
    fit.rows = sorted(rows, key=lambda r: (-r.elo, r.bot))
    return fit


def t_cdf(x: float, dof: float) -> float:
    """P(T <= x) for Student's t with ``dof`` (> 0, real; inf: the normal)
    degrees of freedom."""
    if math.isinf(dof) or dof > 1e7:
        return 0.5 * math.erfc(-x / math.sqrt(2))
    tail = 0.5 * _incomplete_beta(dof / 2, 0.5, dof / (dof + x * x))
    return 1 - tail if x > 0 else tail


@functools.cache
def t_quantile(p: float, dof: float) -> float:
    """The ``p`` quantile of Student's t (bisection on ``t_cdf``: exact to
    1e-12; p = 0.975 with 4 degrees of freedom is 2.7764)."""
    if p < 0.5:
        return -t_quantile(1 - p, dof)
    low, high = 0.0, 1.0
    while t_cdf(high, dof) < p:
        low, high = high, 2 * high
    while high - low > 1e-12 * high:
        middle = (low + high) / 2
        low, high = (middle, high) if t_cdf(middle, dof) < p else (low, middle)
    return (low + high) / 2


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), by its continued
    fraction (modified Lentz), on the side where it converges fast."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1 - _incomplete_beta(b, a, 1 - x)
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                 + a * math.log(x) + b * math.log1p(-x))
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    value = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + numerator * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + numerator / c
            c = c if abs(c) > tiny else tiny
            value *= c * d
        if abs(c * d - 1) < 1e-15:
            break
    return math.exp(log_front) * value / a


def rate(seat_rows: SeatRows, samples: int = 0, seed: int = 0) -> list[RatingRow]:
    """The rating table, best first."""
    return rating_fit(seat_rows, samples, seed).rows


def elo_difference(seat_rows: Iterable[dict[str, Any]], first: str, second: str,
                   samples: int = 0, seed: int = 0) -> Difference:
    """Elo of ``first`` minus ``second`` with its interval and LOS."""
    return rating_fit(seat_rows, samples, seed).difference(first, second)


def _seat_stats(seats: Seats) -> list[tuple[int, float, float, int]]:
    """Games, average score, average rank and faults per bot, counting one
    entry per (match, team, bot): partners that are copies play one game
    (with the score of their first seat), faulted if either copy faulted.
    Sums are exact, so the table does not depend on the order of the rows."""
    n = len(seats.bots)
    first = np.r_[True, (seats.match[1:] != seats.match[:-1]) | (seats.team[1:] != seats.team[:-1])
                  | (seats.bot[1:] != seats.bot[:-1])]
    bot = seats.bot[first]
    games = np.bincount(bot, minlength=n)
    rank_sum = np.bincount(bot, weights=seats.rank[first], minlength=n)
    # a unit is faulted if any of its seats is: count units with a faulted seat
    faulted_unit = np.cumsum(first)[seats.fault] - 1
    faults = np.bincount(bot[np.unique(faulted_unit)], minlength=n)
    score = seats.score[first]
    if np.all(score == np.round(score)) and np.abs(score).sum() < 2**52:
        score_sum = np.bincount(bot, weights=score, minlength=n)   # integers: exact
    else:
        order = np.argsort(bot, kind="stable")
        bounds = np.r_[0, np.cumsum(games)]
        score_sum = np.array([math.fsum(score[order[a:b]]) for a, b in zip(bounds, bounds[1:])])
    return [(int(g), float(s / g), float(r / g), int(f)) if g else (0, 0.0, 0.0, int(f))
            for g, s, r, f in zip(games, score_sum, rank_sum, faults, strict=True)]


def head_to_head(seat_rows: SeatRows) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Score rate of row bot against column bot (wins + ties/2) and counts:
    each bot of a team against each different bot of another team."""
    data = comparisons(seat_rows)
    wins = data.wins_matrix()
    games = wins + wins.T
    with np.errstate(invalid="ignore", divide="ignore"):
        rate_matrix = np.where(games > 0, wins / games, np.nan)
    return data.bots, rate_matrix, games
