"""tenos_square: lay a face-down row face up in ascending order (seed 003 §06).

Rules (RULINGS.md, "tenos_square")
----------------------------------
3 or 4 players; 60 TENNOS cards (6 suits x A..10; A < 2 < ... < 10, suits
have no order). With 4 players partners sit opposite (seats 0+2, 1+3) and
add their scores; with 3 players everyone plays alone.

A game is n deals. Deal d (0-based) is dealt by seat d mod n (the first
dealer is seat 0, then the deal passes to the left). The dealer shuffles and
deals each player a row of 9 cards (3 players: 8) face down, unseen even by
the row's owner, then 3 more cards each. Each player keeps 2 as the hand and
puts 1 face down in the centre (a secret choice, asked one player at a time in
seat order from the start player). Then the centre cards are turned face up;
they and the deck's top card (unseen) are the exchange candidates.

Start player: deal 1, the dealer's left neighbour; later deals, the player
with the lowest cumulative individual score (ties: the first of them counting
clockwise from the dealer's left neighbour).

A turn: (1) optionally exchange: put 2 hand cards face up in the centre, then
take 1 candidate (any face-up centre card, the two just put included, or the
deck's top card, blind); (2) play a hand card face up onto a face-down place
of one's own row; (3) take that place's card into hand.

Next player by the place played. 4 players, places 0..8 left to right: 0-2
left neighbour (seat + 1), 6-8 right neighbour (seat - 1), 3 or 5 the partner
(seat + 2), 4 the same player again. 3 players, places 0..7 laid 3-2-3: 0-2
left, 5-7 right, 3-4 the same player again.

The deal ends at once when a row is all face up; its owner scores 5 x n.
Every player then scores their row: face-down places are ignored; the
face-up cards, left to right, split into maximal non-decreasing runs (equal
ranks continue a run); the row scores the sum of the squares of the run
lengths (A,2,5,6,6,7,6,10,3 -> 36 + 4 + 1 = 41).

Winner: the highest score (4 players: the team total). 4 players, tied teams:
the team whose member went out in the last deal wins. 3 players: tied players
share the rank.

Rulings made here (the seed and RULINGS.md are silent)
------------------------------------------------------
* The first dealer is seat 0 (RULINGS "any method"); cards are dealt one at
  a time from the dealer's left, and a row's places are filled in deal order
  (the owner may order them "as they like", but cannot see them, so the
  order is random either way). The 3-3-3 / 3-2-3 grouping only fixes which
  places hand the turn to whom.
* The seed's optional variants (a points target as the end, the 3-player
  split partnership) are not used.
* The hand never grows: a turn plays one card and takes one back, and an
  exchange puts 2 and takes 1. So a player holds 2 cards until they exchange
  and 1 card for the rest of the deal; an exchange is offered only while the
  hand holds at least 2 cards (at most once per deal in practice).
* Forced steps are not asked: when the cards still to be put in an exchange
  are the whole hand (always the case with a 2-card hand) they are put
  without a decision, and with a 1-card hand the card to play is chosen
  automatically. A step with a real choice is always asked.
* The card chosen to play (step "play") is public from that moment: it is on
  its way face up to the row.
* The centre cards are revealed together, sorted by card id: nobody learns
  who put which (each player still knows their own).
* After an exchange the hand holds exactly the one card taken, so that card
  is always the one played in the same turn (a card taken from the face-up
  centre never hides in a hand).
* The deck's top card is a candidate only while the deck has cards (with
  12 or more cards left after the deal and at most one exchange per player
  per deal, it never runs out).
* Deal points are added only when a deal ends; ``scores()`` between deals (or
  in a capped match) counts the finished deals only.
* Tie-break "went out in the last deal" reads, while the game is running, as
  the most recent finished deal; before any deal has finished there is none.
* Face-down cards left at the end of a deal are not revealed.
* Who exchanged which cards, what they took (a centre card, or the deck's
  top card blind), and which card they laid on which place, in order, are
  public: ``log`` keeps them for the deal in progress (the centre and the
  rows alone do not say who put which card or in what order). Added
  without a rules-version change: play, match IDs and replays are as
  before. ``previous_log`` keeps the deal before, whole (added Dec 4): a
  seat's last decision of a deal can come before its end, and what
  followed reached it only as points.
* Flow: the steps not asked (the forced puts, the play from a one-card
  hand, the exchange with fewer than 2 cards) depend only on hand sizes,
  which are public; the cards they turn face up are shown by the rules and
  declared in ``REVEALS``. Every step with a real choice is asked.

Redeal: every card the player has not seen (the deck, every face-down row
card including their own, other players' hands, other players' secret
centre cards before the reveal) is reshuffled among the same slots; after
the reveal, which of the other players put which centre card is reassigned
at random (the player knows only their own). Hand sizes and everything face
up (the card being played included) stay. Nothing a player sees can become
hidden again, so nothing else has to be kept.

Actions
-------
* ``("centre", card)``: setup, put that card face down in the centre.
* ``"no_exchange"`` / ``"exchange"``: step (1), offered in that order.
* ``("put", card)``: put that hand card face up in the centre (only asked
  when the choice is not forced).
* ``("take", card)``: take that face-up centre card; ``"deck"``: take the
  deck's top card blind. Order: centre cards ascending, then ``"deck"``.
* ``("play", card)``: play that hand card (only asked with 2+ cards).
* ``("place", i)``: lay the played card on face-down place i (0-based, left
  to right) and take the card that was there into hand.
Cards are TENNOS ids (``games.tennos``): ``suit * 13 + rank - 1``.

Observation layout
------------------
``seat``, ``num_players``, ``current_player`` (-1 when over), ``phase``
("centre", "exchange", "put", "take", "play", "place" or "over"), ``deal``
(0-based), ``deals``, ``dealer``, ``start_player``, ``partner`` (seat, or
None with 3 players), ``hand`` (own cards, sorted), ``hand_sizes`` (per
seat), ``rows`` (per seat, per place: the card if face up, None if face
down; the same for one's own row: its owner does not know it),
``row_scores`` (per seat, the row's score as it stands), ``centre`` (sorted
face-up centre cards), ``centre_put`` (per seat, whether they have put
their secret centre card this deal), ``my_centre_card`` (own secret centre
card this deal, or None), ``exchange_put`` (cards put so far in the exchange
in progress), ``playing`` (the card being played, or None), ``log`` (this
deal's public steps since the reveal, oldest first: ``[seat, "exchange",
[the 2 cards put], card taken or "deck"]`` and ``[seat, "place", card,
place]``), ``previous_log`` (the previous deal's ``log``, whole; [] in the
first), ``deck_size``,
``scores`` (per seat; team totals with 4 players), ``totals`` (per seat,
individual cumulative scores), ``last_deal_points`` (per seat points of the
last finished deal, or None), ``went_out`` (seat that went out in each
finished deal).

From an observation (``from_observation``): the deck, every face-down row
card, the other hands and, before the centre is turned up, the others' secret
centre cards are sampled.
"""

from __future__ import annotations

from typing import cast

from games.base import Action, Game, GameInfo, Observation, reshuffle
from games.sampling import fit, take, unseen
from games.tennos import RANK_OF, card_name, cards_name, deck

CENTRE = "centre"
EXCHANGE = "exchange"
NO_EXCHANGE = "no_exchange"
PUT = "put"
TAKE = "take"
DECK = "deck"
PLAY = "play"
PLACE = "place"
OVER = "over"

LEFT, RIGHT, PARTNER, SAME = "left", "right", "partner", "same"


def tenos_square_teams(num_players: int) -> tuple[tuple[int, ...], ...] | None:
    """Partners sit opposite with 4 players; 3 players play alone."""
    return ((0, 2), (1, 3)) if num_players == 4 else None


def row_score(row: list[int | None]) -> int:
    """Score of a row given as cards (face up) or None (face down, ignored):
    the sum of squares of the lengths of maximal non-decreasing runs."""
    total = 0
    run = 0
    previous = 0
    for card in row:
        if card is None:
            continue
        value = RANK_OF[card]
        if run and value >= previous:
            run += 1
        else:
            total += run * run
            run = 1
        previous = value
    return total + run * run


def row_length(num_players: int) -> int:
    return 9 if num_players == 4 else 8


def next_direction(num_players: int, place: int) -> str:
    """Which player moves after a card is laid on ``place``."""
    if num_players == 4:
        if place <= 2:
            return LEFT
        if place >= 6:
            return RIGHT
        return SAME if place == 4 else PARTNER
    if place <= 2:
        return LEFT
    if place >= 5:
        return RIGHT
    return SAME


def next_player(num_players: int, seat: int, place: int) -> int:
    direction = next_direction(num_players, place)
    if direction == LEFT:
        return (seat + 1) % num_players
    if direction == RIGHT:
        return (seat - 1) % num_players
    if direction == PARTNER:
        return (seat + 2) % num_players
    return seat


class TenosSquare(Game):
    INFO = GameInfo(
        slug="tenos_square",
        title="Tenos Square",
        min_players=3,
        max_players=4,
        rules_version="1",
        max_decisions=3000,
        teams=tenos_square_teams,
        seed_ref="seed 003 §06",
    )
    REVEALS = {
        "cards turned face up": "the seed: the centre cards are turned face up, "
        "exchanged cards are put face up, and a card played goes face up (with one "
        "card in hand it is the card played, without a choice)",
    }

    def setup(self) -> None:
        n = self.num_players
        self.row_len = row_length(n)
        self.deals = n
        self.deal = -1
        self.totals = [0] * n
        self.went_out: list[int] = []
        self.deal_points: list[int] | None = None
        self.log: list[tuple] = []  # the deal in progress's, from its start
        self._start_deal()

    # ---- deal flow -------------------------------------------------------
    def _start_deal(self) -> None:
        n = self.num_players
        self.deal += 1
        self.dealer = self.deal % n
        order = [(self.dealer + 1 + k) % n for k in range(n)]
        if self.deal == 0:
            self.start_player = order[0]
        else:
            low = min(self.totals)
            self.start_player = next(s for s in order if self.totals[s] == low)
        cards = deck(ranks=range(1, 11))
        self.rng.shuffle(cards)
        self.rows: list[list[int]] = [[0] * self.row_len for _ in range(n)]
        self.up: list[list[bool]] = [[False] * self.row_len for _ in range(n)]
        for place in range(self.row_len):
            for seat in order:
                self.rows[seat][place] = cards.pop()
        self.hands: list[list[int]] = [[] for _ in range(n)]
        for _ in range(3):
            for seat in order:
                self.hands[seat].append(cards.pop())
        for hand in self.hands:
            hand.sort()
        self.deck = cards  # top = last
        self.secret: list[int | None] = [None] * n
        self.centre: list[int] = []
        self.exchange_put: list[int] = []
        self.playing: int | None = None
        # the deal before's log, whole: a seat's last decision can come before its end
        self.previous_log = self.log
        # this deal's public steps after the reveal, in order:
        # (seat, "exchange", (put, put), card taken or "deck"), (seat, "place", card, place)
        self.log = []
        self.phase = CENTRE
        self.to_act = self.start_player
        if self.events is not None:
            self.narrate(
                f"deal {self.deal + 1}/{self.deals}: seat {self.dealer} deals, "
                f"seat {self.start_player} starts"
            )

    def _reveal_centre(self) -> None:
        self.centre = sorted(c for c in self.secret if c is not None)
        if self.events is not None:
            self.narrate(f"centre turned face up: {cards_name(self.centre)}")
        self.to_act = self.start_player
        self._begin_turn()

    def _begin_turn(self) -> None:
        if len(self.hands[self.to_act]) >= 2:
            self.phase = EXCHANGE
        else:
            self._to_play_step()

    def _continue_put(self) -> None:
        hand = self.hands[self.to_act]
        to_put = 2 - len(self.exchange_put)
        if to_put and len(hand) == to_put:  # forced: the whole hand goes
            for card in list(hand):
                self._put(card)
            to_put = 0
        self.phase = TAKE if to_put == 0 else PUT

    def _put(self, card: int) -> None:
        seat = self.to_act
        self.hands[seat].remove(card)
        self.exchange_put.append(card)
        self.centre.append(card)
        self.centre.sort()

    def _to_play_step(self) -> None:
        hand = self.hands[self.to_act]
        if len(hand) == 1:
            self._choose_play(hand[0])
        else:
            self.phase = PLAY

    def _choose_play(self, card: int) -> None:
        seat = self.to_act
        self.hands[seat].remove(card)
        self.playing = card
        self.phase = PLACE

    def _end_deal(self, out: int) -> None:
        n = self.num_players
        points = [row_score(self.visible_row(s)) for s in range(n)]
        points[out] += 5 * n
        for seat in range(n):
            self.totals[seat] += points[seat]
        self.deal_points = points
        self.went_out.append(out)
        if self.events is not None:
            self.narrate(
                f"seat {out} goes out (+{5 * n}); deal points {points}; totals {self.totals}"
            )
        if self.deal + 1 < self.deals:
            self._start_deal()
        else:
            self.phase = OVER
            self.to_act = -1
            self.narrate(f"game over: scores {self.scores()}, standings {self.standings()}")

    def visible_row(self, seat: int) -> list[int | None]:
        """``seat``'s row as the table sees it: its face-up cards, None for a
        face-down one. Public: the search's rollout policy reads it
        (``bots.search.games.tenos_square``)."""
        return [c if u else None for c, u in zip(self.rows[seat], self.up[seat])]

    # ---- contract --------------------------------------------------------
    def current_player(self) -> int:
        return self.to_act

    def is_terminal(self) -> bool:
        return self.to_act < 0

    def legal_actions(self) -> list[Action]:
        if self.to_act < 0:
            return []
        seat = self.to_act
        phase = self.phase
        if phase == CENTRE:
            return [(CENTRE, c) for c in self.hands[seat]]
        if phase == EXCHANGE:
            return [NO_EXCHANGE, EXCHANGE]
        if phase == PUT:
            return [(PUT, c) for c in self.hands[seat]]
        if phase == TAKE:
            return [(TAKE, c) for c in self.centre] + ([DECK] if self.deck else [])
        if phase == PLAY:
            return [(PLAY, c) for c in self.hands[seat]]
        up = self.up[seat]
        return [(PLACE, i) for i in range(self.row_len) if not up[i]]

    def _apply(self, action: Action) -> None:
        seat = self.to_act
        phase = self.phase
        if phase == CENTRE:
            card = action[1]
            self.hands[seat].remove(card)
            self.secret[seat] = card
            following = (seat + 1) % self.num_players
            if following == self.start_player:
                self._reveal_centre()
            else:
                self.to_act = following
        elif phase == EXCHANGE:
            if action == EXCHANGE:
                self.exchange_put = []
                self._continue_put()
            else:
                self._to_play_step()
        elif phase == PUT:
            self._put(action[1])
            self._continue_put()
        elif phase == TAKE:
            if action == DECK:
                card = self.deck.pop()
            else:
                card = action[1]
                self.centre.remove(card)
            self.hands[seat].append(card)
            self.hands[seat].sort()
            self.log.append((seat, EXCHANGE, tuple(self.exchange_put), action if action == DECK else card))
            self.exchange_put = []
            self._to_play_step()
        elif phase == PLAY:
            self._choose_play(action[1])
        else:  # PLACE
            place = action[1]
            taken = self.rows[seat][place]
            assert self.playing is not None  # set by _choose_play before phase PLACE
            self.rows[seat][place] = self.playing
            self.up[seat][place] = True
            self.log.append((seat, PLACE, self.playing, place))
            self.playing = None
            self.hands[seat].append(taken)
            self.hands[seat].sort()
            if all(self.up[seat]):
                self._end_deal(seat)
            else:
                self.to_act = next_player(self.num_players, seat, place)
                self._begin_turn()

    def observation(self, player: int) -> Observation:
        n = self.num_players
        rows = [self.visible_row(s) for s in range(n)]
        return {
            "seat": player,
            "num_players": n,
            "current_player": self.to_act,
            "phase": self.phase,
            "deal": self.deal,
            "deals": self.deals,
            "dealer": self.dealer,
            "start_player": self.start_player,
            "partner": (player + 2) % 4 if n == 4 else None,
            "hand": sorted(self.hands[player]),
            "hand_sizes": [len(h) for h in self.hands],
            "rows": rows,
            "row_scores": [row_score(r) for r in rows],
            "centre": sorted(self.centre),
            "centre_put": [c is not None for c in self.secret],
            "my_centre_card": self.secret[player],
            "exchange_put": list(self.exchange_put),
            "playing": self.playing,
            "log": list(self.log),  # tuples pack as arrays; copied, not rebuilt
            "previous_log": list(self.previous_log),
            "deck_size": len(self.deck),
            "scores": self.scores(),
            "totals": list(self.totals),
            "last_deal_points": None if self.deal_points is None else list(self.deal_points),
            "went_out": list(self.went_out),
        }

    def reveals(self, action: Action, player: int) -> tuple | None:
        """Cards that come face up by the rules: the centre when everyone has
        put, a whole hand put in an exchange, the only card of a hand played."""
        after = self._peek(action)
        shown = (tuple(after.centre), after.playing, tuple(after.exchange_put))
        if shown == (tuple(self.centre), self.playing, tuple(self.exchange_put)):
            return None
        return ("cards turned face up", *shown)

    def scores(self) -> list[float]:
        if self.num_players == 4:
            t = self.totals
            return [t[s] + t[(s + 2) % 4] for s in range(4)]
        return list(self.totals)

    def rank_keys(self) -> list:
        scores = self.scores()
        if self.num_players != 4:
            return scores
        last = self.went_out[-1] if self.went_out else None
        return [
            (scores[s], 1 if last is not None and s % 2 == last % 2 else 0)
            for s in range(4)
        ]

    # ---- copies and hidden information ----------------------------------
    def clone(self) -> TenosSquare:
        twin = self._shallow_twin()
        twin.totals = list(self.totals)
        twin.went_out = list(self.went_out)
        twin.deal_points = None if self.deal_points is None else list(self.deal_points)
        twin.rows = [list(r) for r in self.rows]
        twin.up = [list(u) for u in self.up]
        twin.hands = [list(h) for h in self.hands]
        twin.deck = list(self.deck)
        twin.secret = list(self.secret)
        twin.centre = list(self.centre)
        twin.exchange_put = list(self.exchange_put)
        twin.log = list(self.log)  # entries are tuples, never mutated
        twin.previous_log = self.previous_log  # never changed once its deal is over
        return twin

    @classmethod
    def from_observation(cls, obs: Observation, seed: int, decisions: int = 0) -> TenosSquare:
        g, rng = cls._blank_from_observation(obs, seed, decisions)
        n, me = g.num_players, obs["seat"]
        g.row_len = row_length(n)
        g.deals = obs["deals"]
        g.deal = obs["deal"]
        g.totals = list(obs["totals"])
        g.went_out = list(obs["went_out"])
        g.deal_points = None if obs["last_deal_points"] is None else list(obs["last_deal_points"])
        g.dealer = obs["dealer"]
        g.start_player = obs["start_player"]
        g.phase = obs["phase"]
        g.to_act = obs["current_player"]
        g.centre = list(obs["centre"])
        g.exchange_put = list(obs["exchange_put"])
        g.playing = obs["playing"]
        g.log, g.previous_log = ([(s, kind, tuple(what) if kind == "exchange" else what, taken)
                                  for s, kind, what, taken in obs[key]]
                                 for key in ("log", "previous_log"))
        revealed = g.phase != CENTRE
        face_up = [c for row in obs["rows"] for c in row if c is not None]
        own_secret = obs["my_centre_card"]
        known = list(obs["hand"]) + face_up + g.centre + ([g.playing] if g.playing is not None else [])
        if not revealed and own_secret is not None:
            known.append(own_secret)
        over = g.to_act < 0
        pool = unseen(deck(ranks=range(1, 11)), known, over)
        rng.shuffle(pool)
        sizes = obs["hand_sizes"]
        secret_slots = [
            s for s in range(n) if s != me and obs["centre_put"][s] and not revealed
        ]
        face_down = sum(1 for row in obs["rows"] for c in row if c is None)
        hidden = obs["deck_size"] + face_down + sum(sizes[s] for s in range(n) if s != me) + len(secret_slots)
        fit(pool, hidden, "tenos_square", over)
        g.deck = take(pool, obs["deck_size"])
        g.rows, g.up = [], []
        for row in obs["rows"]:
            g.up.append([c is not None for c in row])
            g.rows.append([c if c is not None else (pool.pop() if pool else 0) for c in row])
        g.hands = [list(obs["hand"]) if s == me else sorted(take(pool, sizes[s])) for s in range(n)]
        g.secret = [None] * n
        # After the reveal nobody but the owner knows who put which centre card;
        # the others' secret cards only show in their own views: any card will do.
        stand_in = g.centre or face_up or [0]
        for s in range(n):
            if s == me:
                g.secret[s] = own_secret
            elif obs["centre_put"][s]:
                g.secret[s] = pool.pop() if not revealed else stand_in[s % len(stand_in)]
        return g._seed_future(rng)

    def redeal(self, player: int, seed: int) -> TenosSquare:
        state = self._fresh_copy_for_redeal(seed)
        if state.is_terminal():
            return state
        n = state.num_players
        revealed = state.phase != CENTRE
        others = [seat for seat in range(n) if seat != player]
        face_down = [[place for place in range(state.row_len) if not state.up[seat][place]]
                     for seat in range(n)]
        hidden_secrets = [seat for seat in others
                          if not revealed and state.secret[seat] is not None]
        groups = [state.deck]
        groups += [[state.rows[seat][place] for place in face_down[seat]] for seat in range(n)]
        groups += [state.hands[seat] for seat in others]
        groups += [cast("list[int]", [state.secret[seat] for seat in hidden_secrets])]  # not None: filtered above
        dealt = reshuffle(state.rng, groups)
        state.deck = dealt[0]
        for seat in range(n):
            for place, c in zip(face_down[seat], dealt[1 + seat]):
                state.rows[seat][place] = c
        for seat, hand in zip(others, dealt[1 + n:]):
            state.hands[seat] = sorted(hand)
        for seat, c in zip(hidden_secrets, dealt[-1]):
            state.secret[seat] = c
        if revealed:
            # The centre cards are public, but not who put which: hand the
            # other players' secret cards out again among those players.
            holders = [seat for seat in others if state.secret[seat] is not None]
            secrets = reshuffle(state.rng, [[state.secret[seat]] for seat in holders])
            for seat, (secret,) in zip(holders, secrets):
                state.secret[seat] = secret
        return state

    # ---- people --------------------------------------------------------
    def describe_action(self, action: Action) -> str:
        who = f"seat {self.to_act}"
        if action == EXCHANGE:
            return f"{who} exchanges"
        if action == NO_EXCHANGE:
            return f"{who} does not exchange"
        if action == DECK:
            return f"{who} takes the deck's top card blind"
        kind, value = action
        if kind == CENTRE:
            return f"{who} puts {card_name(value)} face down in the centre (secret)"
        if kind == PUT:
            return f"{who} puts {card_name(value)} face up in the centre"
        if kind == TAKE:
            return f"{who} takes {card_name(value)} from the centre"
        if kind == PLAY:
            return f"{who} plays {card_name(value)}"
        direction = next_direction(self.num_players, value)
        then = {
            LEFT: "the left neighbour moves next",
            RIGHT: "the right neighbour moves next",
            PARTNER: "the partner moves next",
            SAME: "plays again",
        }[direction]
        card = "" if self.playing is None else f"{card_name(self.playing)} "
        return f"{who} lays {card}on place {value} and takes its card ({then})"
