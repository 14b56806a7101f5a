"""limit: number cards into a basket without passing the limit (seed 000).

Rules (RULINGS.md, "limit")
---------------------------
3-5 players, each owning the cards 1..9 in a colour of their own. The 15 limit
cards (limit, 1st points, 2nd points) are shuffled; one is revealed per round.
12 rounds with 3-4 players, 10 with 5. Round r's start player is seat r mod n.

From the start player clockwise, each player on their turn puts one
*available* card into the basket or passes; passing does not end their round.
The phase ends after n passes in a row, or when nobody has an available card.
Available = in hand and not put in the basket in the previous round.

Judging walks the basket in order, adding values:
* bust (sum passes the limit): the bust card's owner scores nothing this
  round and cards after the bust card are not counted;
* exact hit: only the player whose card hit the limit scores, 1st + 2nd;
* otherwise players are ranked by the sum of their counted cards. Tied 1st
  among k: each gets floor((1st + 2nd) / k) and no 2nd place is given. Tied
  2nd among k: each floor(2nd / k). Every other player with counted cards gets
  4 points per counted card (5 with 5 players). A player with no counted card
  scores 0; a lone ranked player gets the 1st-place points only.

Rulings made here (the seed and RULINGS.md are silent)
------------------------------------------------------
* A player with no available card is skipped; the skip counts as a pass, so
  "n passes in a row" still closes the phase.
* After an exact hit, cards after the hitting card are not counted (judging
  stops there, as the seed's "この時点で得点計算に入ります" says).
* The basket's contents (and so its running sum) are public, and players may
  go on adding cards after the sum has passed the limit: judging happens
  only once the phase ends.
* Standings: by total score; there is no tie-break, tied players share a rank.
* The previous round is kept whole in ``last_rounds``: a seat's last
  decision of a round can come before the round's end, and the cards put in
  after it would otherwise reach it only as ``blocked`` (sets, not their
  order) and points. A round in which nobody holds an available card (every
  player put all nine into the round before; common in random play) ends at
  once, in the step that ended the round before: ``last_rounds`` then holds
  both, so that one is not lost.
* Flow (nothing hidden decides it): a player is skipped only when they hold
  no available card, which everyone sees (every hand is public); otherwise
  "pass or a card" is always asked. A round's end turns the next limit card
  up: the one reveal declared in ``REVEALS``.

Actions
-------
``0`` = pass, ``1..9`` = put that card in the basket. Order: pass, then cards
ascending.

Observation layout (everything is public but the limit deck's order)
--------------------------------------------------------------------
``seat``, ``num_players``, ``round`` (0-based), ``rounds``, ``start_player``,
``current_player``, ``limit`` ([limit, first, second] of this round),
``basket`` (list of [seat, value] in play order), ``hands`` (per seat, sorted
card values in hand and available: neither in this round's basket nor
blocked), ``blocked`` (per seat, the values put in the basket last round:
they lie out of hand, unavailable, until this round ends; not listed in
``hands``), ``passes`` (passes in a row),
``scores`` (per seat), ``unrevealed_limits`` (sorted limits of the cards
still in the deck), ``last_round`` (per-seat points of the previous round),
``last_rounds`` (the rounds the last round end closed, oldest first, as
[limit card, basket, per-seat points], each as ``limit``, ``basket`` and
``last_round``: the previous round, whole, and the empty round after it when
that one ended at once; [] before the first).

From an observation (``from_observation``): the limit deck's order is sampled
(nothing else is hidden).
"""

from __future__ import annotations

from games.base import Action, Game, GameInfo, Observation, reshuffle

# (limit, 1st-place points, 2nd-place points), as listed at the end of seed 000.
LIMIT_CARDS: tuple[tuple[int, int, int], ...] = (
    (21, 10, 6), (24, 11, 6), (27, 12, 7), (29, 13, 7), (30, 13, 8),
    (33, 14, 8), (35, 15, 9), (36, 15, 9), (38, 16, 9), (39, 16, 9),
    (41, 17, 10), (43, 17, 10), (46, 18, 11), (48, 19, 11), (51, 20, 12),
)
PASS = 0
# (limit card, basket as (seat, value) in play order, per-seat points)
FinishedRound = tuple[tuple[int, int, int], tuple[tuple[int, int], ...], tuple[int, ...]]
COLOURS = ("red", "blue", "green", "yellow", "purple")


def score_basket(
    basket: list[tuple[int, int]], limit_card: tuple[int, int, int], num_players: int
) -> list[int]:
    """Points per seat for one round's basket (list of (seat, value) in order)."""
    limit, first, second = limit_card
    points = [0] * num_players
    running = 0
    counted: list[tuple[int, int]] = []
    bust_owner = None
    for seat, value in basket:
        running += value
        if running == limit:
            points[seat] = first + second
            return points
        if running > limit:
            bust_owner = seat
            break
        counted.append((seat, value))

    sums: dict[int, int] = {}
    cards: dict[int, int] = {}
    for seat, value in counted:
        if seat == bust_owner:
            continue
        sums[seat] = sums.get(seat, 0) + value
        cards[seat] = cards.get(seat, 0) + 1
    if not sums:
        return points
    per_card = 5 if num_players == 5 else 4
    levels = sorted(set(sums.values()), reverse=True)
    top = [s for s in sums if sums[s] == levels[0]]
    if len(top) > 1:
        for seat in top:
            points[seat] = (first + second) // len(top)
        paid = set(top)
    else:
        points[top[0]] = first
        paid = set(top)
        if len(levels) > 1:
            runners_up = [s for s in sums if sums[s] == levels[1]]
            for seat in runners_up:
                points[seat] = second // len(runners_up)
            paid.update(runners_up)
    for seat in sums:
        if seat not in paid:
            points[seat] = per_card * cards[seat]
    return points


class Limit(Game):
    INFO = GameInfo(
        slug="limit",
        title="Limit",
        min_players=3,
        max_players=5,
        rules_version="1",
        max_decisions=5000,
        seed_ref="seed 000",
    )
    REVEALS = {
        "limit card turned up": "the seed: each round reveals the next limit card",
    }

    def setup(self) -> None:
        n = self.num_players
        self.rounds = 10 if n == 5 else 12
        self.limit_deck = list(LIMIT_CARDS)
        self.rng.shuffle(self.limit_deck)
        self.total = [0] * n
        self.last_rounds: tuple[FinishedRound, ...] = ()
        self.hands = [set(range(1, 10)) for _ in range(n)]
        self.blocked: list[set[int]] = [set() for _ in range(n)]
        self.round = -1
        self._start_round()

    # ---- round flow ----------------------------------------------------
    def _start_round(self) -> None:
        self.round += 1
        self.limit_card = self.limit_deck.pop()
        self.basket: list[tuple[int, int]] = []
        self.passes = 0
        self.start_player = self.round % self.num_players
        self.to_act = self.start_player
        if self.events is not None:
            self.narrate(
                f"round {self.round + 1}/{self.rounds}: limit {self.limit_card[0]} "
                f"(1st {self.limit_card[1]}, 2nd {self.limit_card[2]}), "
                f"{self.colour(self.start_player)} starts"
            )
        self._skip_players_without_cards()

    def _available(self, seat: int) -> list[int]:
        return sorted(self.hands[seat] - self.blocked[seat])

    def _skip_players_without_cards(self) -> None:
        """Auto-pass players who hold no available card; end the phase if due."""
        n = self.num_players
        while self.passes < n:
            if self.hands[self.to_act] - self.blocked[self.to_act]:
                return
            self.passes += 1
            self.to_act = (self.to_act + 1) % n
        self._end_round()

    def _ends_at_once(self) -> bool:
        """This round had no decision: nobody held an available card (each
        put all nine into the round before, which ended in the same step)."""
        return not self.basket and not any(
            self.hands[s] - self.blocked[s] for s in range(self.num_players))

    def _end_round(self) -> None:
        points = score_basket(self.basket, self.limit_card, self.num_players)
        for seat, gained in enumerate(points):
            self.total[seat] += gained
        # kept whole: a seat's last decision of a round can come before its
        # end (tuples, never changed in place, so clones share them)
        finished = (self.limit_card, tuple(self.basket), tuple(points))
        if self._ends_at_once():  # closed by the same step as the round before
            self.last_rounds += (finished,)
        else:
            self.last_rounds = (finished,)
        played: list[set[int]] = [set() for _ in range(self.num_players)]
        for seat, value in self.basket:
            played[seat].add(value)
        for seat in range(self.num_players):
            # last round's cards come back; this round's stay out for one round
            self.hands[seat] |= self.blocked[seat]
            self.blocked[seat] = played[seat]
        if self.events is not None:
            sums = ", ".join(f"{self.colour(s)} {p}" for s, p in enumerate(points))
            self.narrate(f"scoring: {sums}; totals {self.total}")
        if self.round + 1 < self.rounds:
            self._start_round()
        else:
            self.to_act = -1

    # ---- contract --------------------------------------------------------
    def current_player(self) -> int:
        return self.to_act

    def is_terminal(self) -> bool:
        return self.to_act < 0

    def legal_actions(self) -> list[Action]:
        if self.to_act < 0:
            return []
        return [PASS, *self._available(self.to_act)]

    def _apply(self, action: Action) -> None:
        seat = self.to_act
        if action == PASS:
            self.passes += 1
        else:
            self.hands[seat].discard(action)
            self.basket.append((seat, action))
            self.passes = 0
        self.to_act = (seat + 1) % self.num_players
        self._skip_players_without_cards()

    def observation(self, player: int) -> Observation:
        return {
            "seat": player,
            "num_players": self.num_players,
            "round": self.round,
            "rounds": self.rounds,
            "start_player": self.start_player,
            "current_player": self.to_act,
            "limit": list(self.limit_card),
            "basket": [[s, v] for s, v in self.basket],
            "hands": [sorted(h) for h in self.hands],
            "blocked": [sorted(b) for b in self.blocked],
            "passes": self.passes,
            "scores": list(self.total),
            "last_round": list(self.last_rounds[-1][2]) if self.last_rounds else [0] * self.num_players,
            "last_rounds": list(self.last_rounds),  # tuples pack as arrays
            "unrevealed_limits": sorted(card[0] for card in self.limit_deck),
        }

    def reveals(self, action: Action, player: int) -> tuple | None:
        """Only the limit deck is hidden; a round's end turns its next card up
        (more than one when the next round ends at once)."""
        after = self._peek(action)
        if len(after.limit_deck) == len(self.limit_deck):
            return None
        return ("limit card turned up", tuple(self.limit_deck[len(after.limit_deck):]))

    def scores(self) -> list[float]:
        return list(self.total)

    def clone(self) -> Limit:
        twin = self._shallow_twin()
        twin.limit_deck = list(self.limit_deck)
        twin.total = list(self.total)
        twin.hands = [set(h) for h in self.hands]
        twin.blocked = [set(b) for b in self.blocked]
        twin.basket = list(self.basket)
        return twin

    @classmethod
    def from_observation(cls, obs: Observation, seed: int, decisions: int = 0) -> Limit:
        g, rng = cls._blank_from_observation(obs, seed, decisions)
        g.rounds = obs["rounds"]
        unrevealed = set(obs["unrevealed_limits"])
        g.limit_deck = [card for card in LIMIT_CARDS if card[0] in unrevealed]
        rng.shuffle(g.limit_deck)
        g.total = list(obs["scores"])
        g.hands = [set(h) for h in obs["hands"]]
        g.blocked = [set(b) for b in obs["blocked"]]
        g.round = obs["round"]
        g.limit_card = tuple(obs["limit"])
        g.basket = [(s, v) for s, v in obs["basket"]]
        g.last_rounds = tuple(
            (tuple(card), tuple((s, v) for s, v in basket), tuple(points))
            for card, basket, points in obs["last_rounds"])
        g.passes = obs["passes"]
        g.start_player = obs["start_player"]
        g.to_act = obs["current_player"]
        return g._seed_future(rng)

    def redeal(self, player: int, seed: int) -> Limit:
        state = self._fresh_copy_for_redeal(seed)
        (state.limit_deck,) = reshuffle(state.rng, [state.limit_deck])  # the only hidden thing
        return state

    # ---- people --------------------------------------------------------
    @staticmethod
    def colour(seat: int) -> str:
        return COLOURS[seat]

    def describe_action(self, action: Action) -> str:
        who = self.colour(self.to_act)
        if action == PASS:
            return f"{who} passes"
        running = sum(v for _, v in self.basket) + action
        return f"{who} puts {who} {action} in the basket (basket {running}/{self.limit_card[0]})"
