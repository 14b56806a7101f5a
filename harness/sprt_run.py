"""`league sprt`: is B better than A? A sequential test on paired duplicate
deals, played and stored like a league, so it resumes where it stopped.

Each deal is played four times: A in one seat (a team, in team games) and
then B in the same seat, against the same field in the other seats; then
both again from the next seat. Each A/B twin is a pair (B ahead, level or
behind A on the same cards and seat); the two pairs of a deal make one
pentanomial outcome, as fastchess counts game pairs. After every batch the
test (harness.sprt) looks at all stored pairs and stops the run when the
log-likelihood ratio crosses a bound.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from harness.league import League, ScheduledMatch
from harness.sprt import Sprt, pair_outcome
from harness.store import Store

SEATINGS_PER_DEAL = 2


@dataclass
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

    def seating(self, deal: int, turn: int, player: str) -> tuple[str, ...]:
        """``player`` (A or B) in unit ``deal + turn`` (mod units), the field
        in the other units in a fixed cycle."""
        units = self._units()
        mine = (deal + turn) % len(units)
        seats = [""] * self.players
        others = iter(self.field_bots * len(units))
        for index, unit in enumerate(units):
            bot = player if index == mine else next(others)
            for seat in unit:
                seats[seat] = bot
        return tuple(seats)

    def schedule(self) -> Iterator[ScheduledMatch]:
        for deal in range(self.deals):
            seed = self.deal_seed(deal)
            for turn in range(SEATINGS_PER_DEAL):
                for role, player in (("A", self.baseline), ("B", self.candidate)):
                    seats = tuple(self.bot_id(name) for name in self.seating(deal, turn, player))
                    match_id = self.match_id(seats, deal, tag=f"{role}{turn}")
                    yield ScheduledMatch(match_id, deal, seed, seats)

    def size(self) -> int:
        return self.deals * SEATINGS_PER_DEAL * 2

    def table_count(self) -> int:
        return 1


def sprt_league(game: str, baseline: Any, candidate: Any, field: Sequence[Any], players: int,
                max_pairs: int, limits: Any) -> SprtLeague:
    """``baseline``, ``candidate`` and ``field`` are BotSpecs."""
    specs = {spec.name: spec for spec in (baseline, candidate, *field)}
    bundles = {name: spec.bundle() for name, spec in specs.items()}
    name = f"sprt-{game}-{players}p-{baseline.name}-vs-{candidate.name}"
    bots = [baseline.name, candidate.name, *[f.name for f in field]]
    return SprtLeague(name=name, game=game, bots=bots, players=players,
                      deals=-(-max_pairs // SEATINGS_PER_DEAL), rotation="none",
                      partners="copies", seed=None, limits=limits, specs=specs, bundles=bundles)


def deal_outcomes(store: Store, league: SprtLeague) -> list[float]:
    """Each fully played deal's pentanomial outcome, in deal order, from the
    stored results of this schedule (so the field may hold A or B too: the
    schedule, not the names, says which seat was tested)."""
    ranks: dict[str, dict[int, int]] = {}
    for row in store.seat_rows(league.name):
        ranks.setdefault(row["match_id"], {})[row["seat"]] = row["rank"]
    units = league._units()
    schedule = iter(league.schedule())
    outcomes = []
    for deal in range(league.deals):
        pairs = []
        for turn in range(SEATINGS_PER_DEAL):
            with_a, with_b = next(schedule), next(schedule)
            seat = units[(deal + turn) % len(units)][0]
            if with_a.match_id in ranks and with_b.match_id in ranks:
                pairs.append(pair_outcome(ranks[with_a.match_id][seat],
                                          ranks[with_b.match_id][seat]))
        if len(pairs) == SEATINGS_PER_DEAL:
            outcomes.append(sum(pairs) / SEATINGS_PER_DEAL)
    return outcomes


def current_test(store: Store, league: SprtLeague, elo0: float, elo1: float, alpha: float,
                 beta: float) -> Sprt:
    """The test over every stored pair of these versions of A and B."""
    test = Sprt(elo0=elo0, elo1=elo1, alpha=alpha, beta=beta, pentanomial=True)
    outcomes = deal_outcomes(store, league)
    if outcomes:
        test.update(outcomes)
    return test
