"""`league sprt`: is B better than A? A sequential test on paired duplicate
deals, played and stored like a league, so it resumes where it stopped.

Each deal is played four times: A in one seat (a team of copies, in team
games) and then B in the same seat, against the same field in the other
seats; then both again from the next seat. Each match compares the tested
seat with every field seat (ahead, behind or level), and a deal's tally
counts B's and A's wins and losses against the field (harness.stats.sprt turns
them into the table's Elo). After every batch of matches the test looks at
the stored deals in deal order and the run stops once it has its verdict.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from harness.league import League, ScheduledMatch
from harness.stats.sprt import DealTally, Sprt
from harness.store import Store

SEATINGS_PER_DEAL = 2
STALL_MATCHES = 200   # matches stored without a deal completed: stop the run


@dataclass(frozen=True)
class SprtLeague(League):
    """A league whose schedule is paired deals: its bots are [A, B, *field]."""

    @property
    def baseline(self) -> str:
        return self.bots[0]

    @property
    def candidate(self) -> str:
        return self.bots[1]

    @property
    def field_bots(self) -> list[str]:
        return self.bots[2:]

    @property
    def team_size(self) -> int:
        """Seats per unit: the size of a team of copies (1 without teams)."""
        return len(self._units()[0])

    def tested_unit(self, deal: int, turn: int) -> int:
        return (deal + turn) % len(self._units())

    def seating(self, deal: int, turn: int, player: str) -> tuple[str, ...]:
        """``player`` (A or B) in unit ``deal + turn`` (mod units), the field
        in the other units in a fixed cycle."""
        units = self._units()
        mine = self.tested_unit(deal, turn)
        seats = [""] * self.players
        others = iter(self.field_bots * len(units))
        for index, unit in enumerate(units):
            bot = player if index == mine else next(others)
            for seat in unit:
                seats[seat] = bot
        return tuple(seats)

    def deal_matches(self, deal: int) -> Iterator[ScheduledMatch]:
        """The deal's matches: A then B, from each seating (so on the same cards)."""
        for turn in range(SEATINGS_PER_DEAL):
            for role, player in (("A", self.baseline), ("B", self.candidate)):
                seats = tuple(self.bot_id(name) for name in self.seating(deal, turn, player))
                match_id = self.match_id(seats, deal, tag=f"{role}{turn}")
                yield ScheduledMatch(match_id, deal, seats)

    def schedule(self) -> Iterator[ScheduledMatch]:
        for deal in range(self.deals):
            yield from self.deal_matches(deal)

    def size(self) -> int:
        return self.deals * SEATINGS_PER_DEAL * 2

    def table_count(self) -> int:
        return 1


def league_name(game: str, players: int, baseline: str, candidate: str, field: Sequence[str],
                seed: int | None) -> str:
    """One stored test per game, seats, A, B, field and public seed: another
    field or seed is another test, not a mix of two."""
    name = f"sprt-{game}-{players}p-{baseline}-vs-{candidate}-field-{'+'.join(field)}"
    return name if seed is None else f"{name}-seed-{seed}"


def sprt_league(game: str, baseline: Any, candidate: Any, field: Sequence[Any], players: int,
                max_deals: int, limits: Any, seed: int | None = None) -> SprtLeague:
    """``baseline``, ``candidate`` and ``field`` are BotSpecs; ``seed`` a
    public deal seed (None: deals from the league's secret key)."""
    specs = {spec.name: spec for spec in (baseline, candidate, *field)}
    bundles = {name: spec.bundle() for name, spec in specs.items()}
    field_names = [f.name for f in field]
    name = league_name(game, players, baseline.name, candidate.name, field_names, seed)
    return SprtLeague(name=name, game=game, bots=[baseline.name, candidate.name, *field_names],
                      players=players, deals=max_deals, rotation="none", partners="copies",
                      seed=seed, limits=limits, specs=specs, bundles=bundles)


def tally(league: SprtLeague, deal: int, ranks: dict[str, dict[int, int]]) -> DealTally | None:
    """One deal's comparisons with the field from its matches' ranks (by
    match, by seat); None until all four are stored. A unit's rank is its
    first seat's (partners share their team's rank)."""
    units = league._units()
    matches = list(league.deal_matches(deal))
    if any(m.match_id not in ranks for m in matches):
        return None
    counts = [0, 0, 0, 0]
    for turn in range(SEATINGS_PER_DEAL):
        mine = league.tested_unit(deal, turn)
        for column, match in ((2, matches[2 * turn]), (0, matches[2 * turn + 1])):
            seat_rank = ranks[match.match_id]
            rank = [seat_rank[unit[0]] for unit in units]
            counts[column] += sum(rank[mine] < r for i, r in enumerate(rank) if i != mine)
            counts[column + 1] += sum(rank[mine] > r for i, r in enumerate(rank) if i != mine)
    return DealTally(*counts)


@dataclass
class StoredTest:
    """The test over this schedule's stored deals, read incrementally: each
    call reads only the matches stored since the last."""

    store: Store
    league: SprtLeague
    elo0: float
    elo1: float
    alpha: float
    beta: float
    _ranks: dict[str, dict[int, int]] = field(default_factory=dict, repr=False)
    _tallies: dict[int, DealTally] = field(default_factory=dict, repr=False)
    _last_row: int = 0
    _pending: set[int] = field(default_factory=set, repr=False)
    _since_a_deal: int = 0    # matches stored since a deal was last completed

    def _read(self) -> None:
        rows = self.store.db.execute(
            "SELECT m.rowid, m.deal, s.match_id, s.seat, s.rank FROM matches m "
            "JOIN seats s ON s.match_id = m.id WHERE m.league = ? AND m.rowid > ? "
            "ORDER BY m.rowid", [self.league.name, self._last_row]).fetchall()
        for rowid, deal, match_id, seat, rank in rows:
            self._ranks.setdefault(match_id, {})[seat] = rank
            self._last_row = max(self._last_row, rowid)
            if deal is not None and 0 <= deal < self.league.deals:
                self._pending.add(deal)
        self._since_a_deal += len({row[2] for row in rows})
        for deal in sorted(self._pending):
            found = tally(self.league, deal, self._ranks)
            if found is not None:
                self._tallies[deal] = found
                self._pending.discard(deal)
                self._since_a_deal = 0

    def test(self) -> Sprt:
        """The test over every fully played deal, in deal order."""
        self._read()
        test = Sprt(elo0=self.elo0, elo1=self.elo1, alpha=self.alpha, beta=self.beta,
                    team_size=self.league.team_size, max_deals=self.league.deals)
        if self._tallies:
            test.update(self._tallies[deal] for deal in sorted(self._tallies))
        return test

    def decided(self) -> bool:
        """The run's ``stop_when``: the test has stopped (a bound, or the
        cap), or it is stalled: STALL_MATCHES matches stored and not one deal
        completed (A or B broken, or not starting: the run leaves their
        matches and would play the other half of every deal for nothing)."""
        test = self.test()
        return test.stop() is not None or self._since_a_deal >= STALL_MATCHES

    def missing(self) -> int:
        """Deals below the last complete one with a match not stored."""
        if not self._tallies:
            return 0
        return max(self._tallies) + 1 - len(self._tallies)


def current_test(store: Store, league: SprtLeague, elo0: float, elo1: float, alpha: float,
                 beta: float) -> Sprt:
    """The test over every stored deal of these versions of A and B."""
    return StoredTest(store, league, elo0, elo1, alpha, beta).test()
