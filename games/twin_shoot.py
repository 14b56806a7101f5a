"""twin_shoot: a partnership trick-taking game with bid cards (seed 003 §05).

Rules (RULINGS.md, "twin_shoot")
--------------------------------
4 or 6 players in teams of two adjacent seats: (0,1), (2,3), (4,5). Seat 2k is
the team's right-side member, 2k+1 its left-side member (seat s+1 is the left
neighbour of seat s). TENNOS suits; 4 players use ranks 7..K and A (48 cards),
6 players ranks 3..K and A (72 cards). Rank order A > K > Q > ... > 3. Suit
order leaf > cross > club > heart > spade > diamond. Every hand deals 12 cards
to each player.

Bidding. Each player sets two cards aside face down (their *bid cards*). The
suit values of the two cards (leaf 5, cross 4, club 3, heart 2, spade 1,
diamond 0) add up to the number of tricks the player predicts (0..10), e.g.
cross + heart = 6. Once everyone has bid, each player sees their partner's bid
cards. Then, if exactly one team is alone in last place on cumulative score,
its two members are asked whether to bid *open*; the bid is open only if both
say yes (the partner sees the first answer). An open team's bid cards are
turned face up for everyone.

Play. 10 tricks, no trump; the hand's opening leader leads the first trick,
the winner of a trick leads the next. The leader's partner plays second and
play continues in that direction: clockwise (s+1) when the leader is a
right-side member (even seat, partner on the left), counter-clockwise when the
leader is a left-side member (odd seat). While no follow has been made, a
player must play a card of the led suit or of the led rank if they hold one.
The first card of the led suit played fixes *suit follow*; the first card of
the led rank fixes *rank follow*; from then on players must play the led suit
(suit follow) or the led rank (rank follow) if they can, anything otherwise.
A player with neither may play anything and the choice passes to the next
player. Winner: suit follow, the highest rank of the led suit; rank follow,
the strongest suit among cards of the led rank; no follow, the leader.

Scoring per hand, per team: the tricks both members won; +10 per member whose
tricks equal their bid; +10 more if both did; an open bid adds +30 to the open
team if both members made their bids, else +30 to every other team. All bid
cards are revealed at scoring.

Opening leader: hand 1 seat 0; each next hand the lead passes to the next team
clockwise, right-side members during the first cycle of teams, left-side
members during the second, alternating: hand h (0-based) is led by seat
``2 * (h % T) + (h // T) % 2`` with T teams. The game ends after a hand in
which any team reaches 100 points, or after 40 hands. Standings follow the
team totals; tied teams share the rank.

Rulings made here (the seed and RULINGS.md are silent)
------------------------------------------------------
* Bids are asked in seat order (clockwise) from the hand's opening leader,
  each player choosing their two bid cards in two steps (one card per step,
  any card of the hand each time).
* The open-bid question goes first to the member of the last team who comes
  first in seat order from the opening leader, then to the other member.
  The second member is *always* asked, even after a "no" (their answer then
  changes nothing): skipping them would show every other team, through the
  seat to act and the decision counter, what the first member answered,
  which RULINGS lets only the partner see (rules version 2; version 1
  skipped the question).
* Both answers are seen by both members of the asked team. The other teams
  see only the outcome (``open_team``); when it is open they see the open
  team's bid cards (and so their predicted tricks) for the rest of the hand.
* Won tricks lie face down (seed), but every card played is seen when it is
  played, so the completed tricks of the hand stay in every observation
  (``tricks_played``): players may remember them. ``last_hand`` keeps the
  previous hand's tricks whole (added Dec 4, without a rules-version change:
  play, match IDs and replays are as before), since a seat's last card of a
  hand can come before the hand's end, and what followed reached it only as
  points and trick counts.
* Bid cards are shown only where the rules show them: to the partner
  after bidding, to everyone for an open bid and at scoring (declared in
  ``REVEALS``).
* "Reaches 100" means a team total of 100 or more after the hand's scoring.
* A hand always has exactly 10 tricks (12 cards - 2 bid cards).
* Player counts: 4 or 6 (``only_counts=(4, 6)``); 5 is refused.
* ``describe_action`` names a bid card for the log even though the card is
  secret at the table; observations never show it to other players.

Actions
-------
* Bid phase: the card id (``games.tennos`` encoding, suit * 13 + rank - 1) to
  set aside, ascending order; two such steps per player.
* Open-bid question: ``"open"`` (yes) or ``"closed"`` (no), in that order,
  asked of both members of the last team (see above).
* Play phase: the card id to play, ascending order (only legal cards).

Observation layout
------------------
``seat``, ``num_players``, ``team`` (index), ``partner`` (seat),
``hand_number`` (0-based), ``max_hands`` (40), ``phase`` ("bid", "open",
"play", "over"), ``opening_leader``, ``current_player``,
``hand`` (own cards, sorted), ``hand_sizes`` (per seat),
``bid_cards`` (own bid cards, sorted), ``bid_card_counts`` (per seat, public:
the cards lie face down on the table), ``partner_bid_cards`` (sorted, None
until every player has bid), ``bids`` (per seat predicted tricks, None where
not known to this player: own once both cards are set aside, the partner's
after bidding, an open team's members for everyone),
``open_question_team`` (team asked whether to bid open this hand, or None),
``open_answers`` (per seat: True/False/None, shown for the own team only),
``open_team`` (team index whose bid is open, or None),
``open_bid_cards`` (per seat: sorted bid cards of an open team, else None),
``trick`` (list of [seat, card] in play order), ``trick_leader``,
``trick_order`` (seats in playing order for this trick), ``led_card`` (or
None), ``follow_mode`` ("none", "suit" or "rank"), ``tricks_won`` (per seat),
``tricks_played`` (completed tricks of this hand as
[leader, [cards in play order], winner]; the seats follow ``trick_order``
of that leader), ``scores`` (per seat: the team total),
``team_scores`` (per team), ``last_hand`` (None before the first scoring,
then the previous hand revealed: ``bid_cards`` and ``bids`` per seat,
``tricks`` per seat, ``points`` per team, ``open_team``, and its
``tricks_played``, whole).

Redeal: every card not seen by the player (other players' hands, the bid
cards of players other than the player, their partner after bidding, and an
open team) is shuffled among the same slots with the same sizes. Inferences
from play (a player who did not follow holds no card of the led suit/rank) are
not kept. While the second member of the asked team is to answer, the first
member's answer is resampled (yes or no, even odds) for a player of another
team, who cannot see it.

From an observation (``from_observation``): the other hands and every bid card
the seat has not seen are sampled, keeping the voids shown by play
(``twin_shoot_voids``: a player who did not follow what the trick required
holds no card that would have); a first answer of the asked team hidden from
the seat is drawn at even odds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

from games.base import Action, Game, GameInfo, Observation, reshuffle
from games.sampling import Slot, deal_constrained, fit, unseen
from games.tennos import (
    CLUB,
    CROSS,
    DIAMOND,
    HEART,
    LEAF,
    RANK_OF,
    SPADE,
    SUIT_OF,
    card_name,
    deck,
)

# Suit value for bidding; the same numbers order the suits' strength.
SUIT_VALUE = {LEAF: 5, CROSS: 4, CLUB: 3, HEART: 2, SPADE: 1, DIAMOND: 0}
_SUIT_VALUE_BY_INDEX = tuple(SUIT_VALUE[s] for s in range(6))
OPEN = "open"
CLOSED = "closed"
TRICKS_PER_HAND = 10
HAND_SIZE = 12
TARGET = 100
MAX_HANDS = 40


def twin_shoot_teams(num_players: int) -> tuple[tuple[int, ...], ...]:
    """Teams of adjacent seats: (0, 1), (2, 3), (4, 5)."""
    return tuple((2 * k, 2 * k + 1) for k in range(num_players // 2))


def rank_strength(c: int) -> int:
    """A is highest: A=14, K=13, ..., 3=3."""
    r = RANK_OF[c]
    return 14 if r == 1 else r


def suit_strength(c: int) -> int:
    return _SUIT_VALUE_BY_INDEX[SUIT_OF[c]]


def bid_value(cards) -> int:
    """Predicted tricks of a pair of bid cards: the sum of their suit values."""
    return sum(_SUIT_VALUE_BY_INDEX[SUIT_OF[c]] for c in cards)


def deck_for(num_players: int) -> list[int]:
    ranks = [1, *range(7, 14)] if num_players == 4 else [1, *range(3, 14)]
    return deck(ranks=ranks)


def opening_leader(hand_number: int, num_players: int) -> int:
    teams = num_players // 2
    return 2 * (hand_number % teams) + (hand_number // teams) % 2


def direction(leader: int) -> int:
    """+1 (clockwise) when the leader's partner is their left neighbour."""
    return 1 if leader % 2 == 0 else -1


def trick_order(leader: int, num_players: int) -> list[int]:
    d = direction(leader)
    return [(leader + d * i) % num_players for i in range(num_players)]


def legal_cards(hand, led: int | None, mode: str) -> list[int]:
    """Cards of ``hand`` that may be played to a trick (sorted)."""
    if led is None:
        return sorted(hand)
    led_suit, led_rank = SUIT_OF[led], RANK_OF[led]
    if mode == "suit":
        ok = [c for c in hand if SUIT_OF[c] == led_suit]
    elif mode == "rank":
        ok = [c for c in hand if RANK_OF[c] == led_rank]
    else:
        ok = [c for c in hand if SUIT_OF[c] == led_suit or RANK_OF[c] == led_rank]
    return sorted(ok) if ok else sorted(hand)


def follow_of(led: int, c: int) -> str:
    """The follow mode a card fixes when none is fixed yet."""
    if SUIT_OF[c] == SUIT_OF[led]:
        return "suit"
    if RANK_OF[c] == RANK_OF[led]:
        return "rank"
    return "none"


def trick_winner(plays: list[tuple[int, int]], mode: str) -> int:
    """Winner seat of a complete trick (plays in order, the leader first)."""
    leader, led = plays[0]
    if mode == "suit":
        cands = [(rank_strength(c), s) for s, c in plays if SUIT_OF[c] == SUIT_OF[led]]
    elif mode == "rank":
        cands = [(suit_strength(c), s) for s, c in plays if RANK_OF[c] == RANK_OF[led]]
    else:
        return leader
    return max(cands)[1]


def hand_points(
    tricks: list[int], bids: list[int], num_players: int, open_team: int | None
) -> list[int]:
    """Points per team for one hand."""
    teams = num_players // 2
    points = [0] * teams
    both = [False] * teams
    for t in range(teams):
        a, b = 2 * t, 2 * t + 1
        hits = (tricks[a] == bids[a]) + (tricks[b] == bids[b])
        points[t] = tricks[a] + tricks[b] + 10 * hits + (10 if hits == 2 else 0)
        both[t] = hits == 2
    if open_team is not None:
        if both[open_team]:
            points[open_team] += 30
        else:
            for t in range(teams):
                if t != open_team:
                    points[t] += 30
    return points


class TwinShoot(Game):
    INFO = GameInfo(
        slug="twin_shoot",
        title="Twin Shoot",
        min_players=4,
        max_players=6,
        rules_version="2",
        max_decisions=5000,
        teams=twin_shoot_teams,
        seed_ref="seed 003 §05",
        only_counts=(4, 6),
    )
    REVEALS = {
        "partner's bid shown": "RULINGS: once everyone has bid, each player sees "
        "their partner's bid cards",
        "open bid shown": "RULINGS: an open team's bid cards are turned face up",
        "hand scored": "all bid cards are revealed when the hand is scored",
    }

    def setup(self) -> None:
        n = self.num_players
        self.team_total = [0] * (n // 2)
        self.hand_number = 0
        self.last_hand: dict | None = None
        self.over = False
        self._start_hand()

    # ---- hand flow -------------------------------------------------------
    def _start_hand(self) -> None:
        n = self.num_players
        cards = deck_for(n)
        self.rng.shuffle(cards)
        self.hands = [sorted(cards[i * HAND_SIZE:(i + 1) * HAND_SIZE]) for i in range(n)]
        self.bid_cards: list[list[int]] = [[] for _ in range(n)]
        self.leader = opening_leader(self.hand_number, n)
        self.bid_order = [(self.leader + i) % n for i in range(n)]
        self.bid_turn = 0
        self.phase = "bid"
        self.to_act = self.leader
        self.open_question_team: int | None = None
        self.open_answers: list[bool | None] = [None] * n
        self.open_askees: list[int] = []
        self.open_team: int | None = None
        self.tricks_won = [0] * n
        # Completed tricks (leader, cards in play order, winner), immutable.
        self.played_view: tuple = ()
        self.bid_vals: list[int | None] = [None] * n
        self.trick: list[tuple[int, int]] = []
        self.trick_leader = self.leader
        self.order = trick_order(self.leader, n)
        self.mode = "none"
        if self.events is not None:
            self.narrate(
                f"hand {self.hand_number + 1}: 12 cards each, seat {self.leader} leads"
            )

    def _end_bidding(self) -> None:
        totals = self.team_total
        low = min(totals)
        last = [t for t, v in enumerate(totals) if v == low]
        if len(last) == 1:
            t = last[0]
            n = self.num_players
            self.open_question_team = t
            self.open_askees = sorted((2 * t, 2 * t + 1), key=lambda s: (s - self.leader) % n)
            self.phase = "open"
            self.to_act = self.open_askees[0]
        else:
            self._start_play()

    def _start_play(self) -> None:
        self.phase = "play"
        self.trick_leader = self.leader
        self.order = trick_order(self.leader, self.num_players)
        self.trick = []
        self.mode = "none"
        self.to_act = self.leader

    def _end_trick(self) -> None:
        winner = trick_winner(self.trick, self.mode)
        self.tricks_won[winner] += 1
        self.played_view = (
            *self.played_view,
            (self.trick_leader, tuple(c for _, c in self.trick), winner),
        )
        if self.events is not None:
            self.narrate(
                f"trick {len(self.played_view)}: "
                + " ".join(f"{s}:{card_name(c)}" for s, c in self.trick)
                + f" ({self.mode} follow) won by seat {winner}"
            )
        if len(self.played_view) == TRICKS_PER_HAND:
            self._score_hand()
            return
        self.trick_leader = winner
        self.order = trick_order(winner, self.num_players)
        self.trick = []
        self.mode = "none"
        self.to_act = winner

    def _score_hand(self) -> None:
        n = self.num_players
        bids = cast("list[int]", list(self.bid_vals))  # every seat has bid by scoring time
        points = hand_points(self.tricks_won, bids, n, self.open_team)
        for t, p in enumerate(points):
            self.team_total[t] += p
        self.last_hand = {
            "bid_cards": tuple(tuple(b) for b in self.bid_cards),
            "bids": tuple(bids),
            "tricks": tuple(self.tricks_won),
            "points": tuple(points),
            "open_team": self.open_team,
            "tricks_played": self.played_view,  # a tuple of tuples: never mutated
        }
        if self.events is not None:
            self.narrate(
                f"hand {self.hand_number + 1} scored: bids {bids}, tricks {self.tricks_won}, "
                f"points {points}, totals {self.team_total}"
            )
        self.hand_number += 1
        if max(self.team_total) >= TARGET or self.hand_number >= MAX_HANDS:
            self.over = True
            self.phase = "over"
            self.to_act = -1
            self.narrate(f"game over: team totals {self.team_total}")
        else:
            self._start_hand()

    def _position_changed(self, changed: set[str]) -> None:
        """Recompute what a hand derives from the fields a test position set:
        the bid values from the bid cards, the bidding order and (before the
        first trick is won) the trick leader from the leader, and the trick
        order from the trick leader. A derived field set by name is kept."""
        n = self.num_players
        if "bid_cards" in changed and "bid_vals" not in changed:
            self.bid_vals = [bid_value(b) if len(b) == 2 else None for b in self.bid_cards]
        if "leader" in changed:
            if "bid_order" not in changed:
                self.bid_order = [(self.leader + i) % n for i in range(n)]
            if "trick_leader" not in changed and not self.played_view:
                self.trick_leader = self.leader
        if changed & {"leader", "trick_leader"} and "order" not in changed:
            self.order = trick_order(self.trick_leader, n)

    # ---- contract --------------------------------------------------------
    def current_player(self) -> int:
        return self.to_act

    def is_terminal(self) -> bool:
        return self.over

    def legal_actions(self) -> list[Action]:
        if self.over:
            return []
        if self.phase == "bid":
            return list(self.hands[self.to_act])
        if self.phase == "open":
            return [OPEN, CLOSED]
        led = self.trick[0][1] if self.trick else None
        return legal_cards(self.hands[self.to_act], led, self.mode)

    def _apply(self, action: Action) -> None:
        seat = self.to_act
        if self.phase == "bid":
            self.hands[seat].remove(action)
            self.bid_cards[seat].append(action)
            self.bid_cards[seat].sort()
            if len(self.bid_cards[seat]) == 2:
                self.bid_vals[seat] = bid_value(self.bid_cards[seat])
                self.bid_turn += 1
                if self.bid_turn == self.num_players:
                    self._end_bidding()
                else:
                    self.to_act = self.bid_order[self.bid_turn]
            return
        if self.phase == "open":
            self.open_answers[seat] = action == OPEN
            if seat == self.open_askees[0]:
                # always ask the second member: see "Rulings" (rules version 2)
                self.to_act = self.open_askees[1]
                return
            if all(self.open_answers[s] for s in self.open_askees):
                self.open_team = self.open_question_team
                assert self.open_team is not None  # asked in _end_bidding before phase "open"
                self.narrate(f"team {self.open_team} bids open: {self.bid_cards[2 * self.open_team]} "
                             f"{self.bid_cards[2 * self.open_team + 1]}")
            self._start_play()
            return
        # play
        self.hands[seat].remove(action)
        if self.trick:
            if self.mode == "none":
                self.mode = follow_of(self.trick[0][1], action)
        self.trick.append((seat, action))
        if len(self.trick) == self.num_players:
            self._end_trick()
        else:
            self.to_act = self.order[len(self.trick)]

    def observation(self, player: int) -> Observation:
        n = self.num_players
        partner = player ^ 1
        team = player // 2
        done = self.phase != "bid"
        bid_vals = self.bid_vals
        bids: list[int | None] = [None] * n
        bids[player] = bid_vals[player]
        if done:
            bids[partner] = bid_vals[partner]
        open_cards: list[list[int] | None] = [None] * n
        if self.open_team is not None:
            for s in (2 * self.open_team, 2 * self.open_team + 1):
                open_cards[s] = list(self.bid_cards[s])
                bids[s] = bid_vals[s]
        total = self.team_total
        answers: list[bool | None] = [None] * n
        answers[2 * team] = self.open_answers[2 * team]
        answers[2 * team + 1] = self.open_answers[2 * team + 1]
        return {
            "seat": player,
            "num_players": n,
            "team": team,
            "partner": partner,
            "hand_number": self.hand_number,
            "max_hands": MAX_HANDS,
            "phase": self.phase,
            "opening_leader": self.leader,
            "current_player": self.to_act,
            "hand": list(self.hands[player]),
            "hand_sizes": [len(h) for h in self.hands],
            "bid_cards": list(self.bid_cards[player]),
            "bid_card_counts": [len(b) for b in self.bid_cards],
            "partner_bid_cards": list(self.bid_cards[partner]) if done else None,
            "bids": bids,
            "open_question_team": self.open_question_team,
            "open_answers": answers,
            "open_team": self.open_team,
            "open_bid_cards": open_cards,
            "trick": [[s, c] for s, c in self.trick],
            "trick_leader": self.trick_leader,
            "trick_order": list(self.order),
            "led_card": self.trick[0][1] if self.trick else None,
            "follow_mode": self.mode,
            "tricks_won": list(self.tricks_won),
            "tricks_played": self.played_view,
            "scores": [total[s >> 1] for s in range(n)],
            "team_scores": list(self.team_total),
            "last_hand": None if self.last_hand is None else dict(self.last_hand),
        }

    def scores(self) -> list[float]:
        return [self.team_total[s // 2] for s in range(self.num_players)]

    def reveals(self, action: Action, player: int) -> tuple | None:
        """Bid cards shown by the rules: to the partner when bidding ends, to
        everyone for an open bid and at the hand's scoring."""
        after = self._peek(action)
        if after.hand_number != self.hand_number or after.over:
            assert after.last_hand is not None  # set by _score_hand
            return ("hand scored", after.last_hand["bid_cards"])
        if self.phase == "bid" and after.phase != "bid":
            return ("partner's bid shown", tuple(after.bid_cards[player ^ 1]))
        if after.open_team is not None and self.open_team is None:
            team = (2 * after.open_team, 2 * after.open_team + 1)
            return ("open bid shown", tuple(tuple(after.bid_cards[s]) for s in team))
        return None

    def clone(self) -> TwinShoot:
        twin = self._shallow_twin()
        twin.team_total = list(self.team_total)
        twin.hands = [list(h) for h in self.hands]
        twin.bid_cards = [list(b) for b in self.bid_cards]
        twin.open_answers = list(self.open_answers)
        twin.open_askees = list(self.open_askees)
        twin.tricks_won = list(self.tricks_won)
        twin.bid_vals = list(self.bid_vals)
        twin.trick = list(self.trick)
        twin.order = list(self.order)
        return twin

    @classmethod
    def from_observation(cls, obs: Observation, seed: int, decisions: int = 0) -> TwinShoot:
        g, rng = cls._blank_from_observation(obs, seed, decisions)
        n, me = g.num_players, obs["seat"]
        partner = me ^ 1
        g.team_total = list(obs["team_scores"])
        g.hand_number = obs["hand_number"]
        last = obs["last_hand"]
        g.last_hand = None if last is None else {
            "bid_cards": tuple(tuple(b) for b in last["bid_cards"]),
            "bids": tuple(last["bids"]),
            "tricks": tuple(last["tricks"]),
            "points": tuple(last["points"]),
            "open_team": last["open_team"],
            "tricks_played": tuple((leader, tuple(cards), winner)
                                   for leader, cards, winner in last["tricks_played"]),
        }
        g.phase = obs["phase"]
        g.over = g.phase == "over"
        g.leader = obs["opening_leader"]
        g.bid_order = [(g.leader + i) % n for i in range(n)]
        counts = obs["bid_card_counts"]
        g.bid_turn = sum(1 for c in counts if c == 2)
        g.to_act = obs["current_player"]
        g.open_question_team = obs["open_question_team"]
        g.open_team = obs["open_team"]
        g.open_askees = []
        if g.open_question_team is not None:
            t = g.open_question_team
            g.open_askees = sorted((2 * t, 2 * t + 1), key=lambda s: (s - g.leader) % n)
        g.open_answers = list(obs["open_answers"])
        if (g.phase == "open" and g.open_question_team != me // 2
                and g.to_act == g.open_askees[1]):
            # the first member answered; only their team saw how
            g.open_answers[g.open_askees[0]] = rng.random() < 0.5
        g.tricks_won = list(obs["tricks_won"])
        g.played_view = tuple((lead, tuple(cards), won) for lead, cards, won in obs["tricks_played"])
        g.trick = [(s, c) for s, c in obs["trick"]]
        g.trick_leader = obs["trick_leader"]
        g.order = list(obs["trick_order"])
        g.mode = obs["follow_mode"]
        # cards: what this seat saw, the rest sampled
        seen_bids: dict[int, list[int]] = {me: list(obs["bid_cards"])}
        if obs["partner_bid_cards"] is not None:
            seen_bids[partner] = list(obs["partner_bid_cards"])
        for s, cards in enumerate(obs["open_bid_cards"]):
            if cards is not None:
                seen_bids[s] = list(cards)
        played = [c for _, cards, _ in obs["tricks_played"] for c in cards] + [c for _, c in obs["trick"]]
        known = list(obs["hand"]) + played + [c for cards in seen_bids.values() for c in cards]
        pool = unseen(deck_for(n), known, g.over)
        sizes = obs["hand_sizes"]
        voids = twin_shoot_voids(obs)
        slots: list[Slot] = []
        for s in range(n):
            if s != me:
                rules = voids[s]
                # annotated: mypy cannot infer a lambda with a default argument from the tuple
                allowed: Callable[[int], bool] | None = (lambda c, r=rules: allowed_by_voids(c, r)) if rules else None
                slots.append((("hand", s), sizes[s], allowed))
            if s not in seen_bids:
                slots.append((("bid", s), counts[s], None))
        fit(pool, sum(size for _, size, _ in slots), "twin_shoot", g.over)
        dealt = deal_constrained(pool, slots, rng)
        g.hands = [list(obs["hand"]) if s == me else sorted(dealt[("hand", s)]) for s in range(n)]
        g.bid_cards = [sorted(seen_bids[s]) if s in seen_bids else sorted(dealt[("bid", s)])
                       for s in range(n)]
        g.bid_vals = [bid_value(b) if len(b) == 2 else None for b in g.bid_cards]
        if g.over:
            g.hands = [list(h) for h in g.hands]
        return g._seed_future(rng)

    def redeal(self, player: int, seed: int) -> TwinShoot:
        state = self._fresh_copy_for_redeal(seed)
        if state.over:
            return state
        n = state.num_players
        seen_bids = {player}
        if state.phase != "bid":
            seen_bids.add(player ^ 1)
        if state.open_team is not None:
            seen_bids.update((2 * state.open_team, 2 * state.open_team + 1))
        slots: list[tuple[str, int]] = []  # (kind, seat)
        groups: list[list[int]] = []
        for s in range(n):
            if s != player:
                slots.append(("hand", s))
                groups.append(state.hands[s])
            if s not in seen_bids:
                slots.append(("bid", s))
                groups.append(state.bid_cards[s])
        dealt = reshuffle(state.rng, groups)
        state._resample_first_answer(player)
        for (kind, s), cards in zip(slots, dealt):
            part = sorted(cards)
            if kind == "hand":
                state.hands[s] = part
            else:
                state.bid_cards[s] = part
                if len(part) == 2:
                    state.bid_vals[s] = bid_value(part)
        return state

    def _resample_first_answer(self, player: int) -> None:
        """The first answer to the open question is hidden from the other
        teams until the outcome: resample it for such a player."""
        if self.phase != "open" or player // 2 == self.open_question_team:
            return
        first = self.open_askees[0]
        if self.open_answers[first] is not None:
            self.open_answers[first] = self.rng.random() < 0.5

    # ---- people ------------------------------------------------------------
    def describe_action(self, action: Action) -> str:
        seat = self.to_act
        if self.phase == "bid":
            return f"seat {seat} sets {card_name(action)} aside as a bid card"
        if self.phase == "open":
            return f"seat {seat} {'wants to bid open' if action == OPEN else 'keeps the bid closed'}"
        if not self.trick:
            return f"seat {seat} leads {card_name(action)}"
        mode = self.mode if self.mode != "none" else follow_of(self.trick[0][1], action)
        how = {"suit": "suit follow", "rank": "rank follow", "none": "no follow"}[mode]
        return f"seat {seat} plays {card_name(action)} ({how})"


# ---- inferences from the public record (from_observation, search bots) --------
def twin_shoot_voids(obs: Observation) -> list[list[tuple[str, int]]]:
    """Per seat, what play showed they do not hold: ("suit", s) or ("rank", r)
    for a requirement they did not meet, or ("either", led card)."""
    n = obs["num_players"]
    voids: list[list[tuple[str, int]]] = [[] for _ in range(n)]

    def scan(leader: int, cards: Sequence[int]) -> None:
        order = trick_order(leader, n)
        if not cards:
            return
        led = cards[0]
        mode = "none"
        for seat, c in zip(order[1:], cards[1:]):
            if mode == "none":
                if SUIT_OF[c] != SUIT_OF[led] and RANK_OF[c] != RANK_OF[led]:
                    voids[seat].append(("either", led))
                mode = follow_of(led, c)
            elif mode == "suit" and SUIT_OF[c] != SUIT_OF[led]:
                voids[seat].append(("suit", SUIT_OF[led]))
            elif mode == "rank" and RANK_OF[c] != RANK_OF[led]:
                voids[seat].append(("rank", RANK_OF[led]))

    for leader, cards, _ in obs["tricks_played"]:
        scan(leader, cards)
    if obs["trick"]:
        scan(obs["trick_leader"], [c for _, c in obs["trick"]])
    return voids


def allowed_by_voids(card: int, rules: list[tuple[str, int]]) -> bool:
    """Whether a hand with the voids ``rules`` (from :func:`twin_shoot_voids`)
    may hold ``card``."""
    for kind, value in rules:
        if kind == "suit" and SUIT_OF[card] == value:
            return False
        if kind == "rank" and RANK_OF[card] == value:
            return False
        if kind == "either" and (SUIT_OF[card] == SUIT_OF[value] or RANK_OF[card] == RANK_OF[value]):
            return False
    return True
