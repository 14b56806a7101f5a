"""all_aboard: All Aboard! (出発進行！), seed 003 §07: run black wagons past red signals.

Rules (RULINGS.md, "all_aboard")
--------------------------------
2-6 players, all 82 TENNOS cards (jokers included). Each round the cards are
shuffled, 8 are dealt to each player and the deck's top card is turned face
up as the field card. Round r's start player is seat r mod n; turns go
clockwise. Red = heart, diamond, cross; black = spade, club, leaf. **Jokers
are wild black cards**: playable on any field card, they count as black (they
clear a red signal and earn a certificate) and any card may be played on a
joker.

A turn:

1. Draw from the deck until the hand holds 8 cards.
2. Play:
   * Field red: either (i) play *every* card of one red suit from hand (at
     least one); the last one played becomes the field card and the turn
     ends, no certificates; or (ii) play a black card of the field card's
     rank (or a joker), which clears the signal and earns no certificate;
     then go on as on a black field.
   * Field black (or joker): play cards one at a time, each of the field
     card's suit or rank (or a joker; anything on a joker). Each black card
     or joker played earns one certificate: the deck's top card, taken face
     down, worth 1 point. A player holding a red card of the field card's
     rank must play it: it earns nothing, the field turns red and the turn
     ends. The player keeps playing while they can; the turn ends when no
     card can be played.
   * No legal card at the start of the turn: the player passes.

The round ends as soon as the deck is empty (even in the middle of a refill
or of a turn), or when every player has passed in a row (n passes). Round
score: +1 per certificate, -2 per red card in hand, +20 if the hand is empty
or holds only red cards (a joker in hand is black: no -2 and no bonus). A
match is n rounds; the cumulative score decides.

Rulings made here (the seed and RULINGS.md are silent)
------------------------------------------------------
* Option (i) on a red field may use *any* red suit the player holds (the
  seed and RULINGS say "one red suit", not "the field's suit"); the player
  chooses which card of that suit is played last (it becomes the field card),
  the others go under it in ascending order.
* A joker played on a red field clears the signal like a black card of the
  field's rank and, like it, earns no certificate; on a black field a joker
  earns a certificate.
* The forced red play is immediate: while the field is black (not a joker)
  and the player holds a red card of the field card's rank, the only legal
  plays are those red cards. A joker has no rank, so nothing is forced on a
  joker field; a red card played on a joker (allowed: anything goes on a
  joker) also turns the field red, earns nothing and ends the turn.
* Passing and ending a chain are automatic (they are never a choice): a
  player with no legal card at the start of their turn (after drawing) is
  skipped as a pass; a turn in which at least one card was played is not a
  pass and resets the count of passes in a row.
* A player whose refill empties the deck ends the round before playing; the
  cards drawn so far stay in hand and are scored.
* Certificates are face down and unseen by everyone, their owner included
  (their values never matter: each is worth 1); observations only count them.
* The cards played onto the field this round are public (``played``), and so
  is who laid them and who passed: ``log`` keeps this round's finished
  turns (a seat with no legal card is skipped without being asked, so
  without it another seat's two turns could not be told apart). Added
  without a rules-version change: play, match IDs and replays are as
  before. ``previous_log`` keeps the round before, whole (added Dec 4): a
  seat's last decision of a round can come before its end, and what
  followed reached it only as points.
* Jokers are interchangeable: when a player may play a joker only the lowest
  joker id in hand is offered.
* ``scores()`` is the completed rounds' total plus, while the match is still
  running, the current round as it would score now (a capped match is scored
  as it stands). The observation's ``scores`` holds the completed rounds only,
  since the current round's points depend on hidden hands.
* Standings: by total score; there is no tie-break.
* ``redeal`` pools the other hands, the deck and every certificate card and
  deals them back into the same slots (sizes kept). It keeps one inference:
  the player on turn can play (resampling until their hand has a legal card,
  a swap as a last resort). Other inferences from history are not kept
  (e.g. "they passed, so they held no playable card", "they drew this card
  last turn").
* Flow: passes and the end of a chain follow from the hands, but RULINGS
  makes them compulsory (play while you can, pass only without a legal
  card, lay every card of a red suit), so at the table they show just as
  much; they are declared in ``REVEALS``. A player with a single legal
  card is still asked.

Actions
-------
An int: the card (``games.tennos`` id, jokers 78..81) to play now, in
ascending order. On a red field a red card means option (i): play every card
of that card's suit, this card last. Any other card is a single play.

Observation layout
------------------
``seat``, ``num_players``, ``round`` (0-based), ``rounds``, ``start_player``,
``current_player`` (-1 when over), ``field`` (the field card), ``field_red``
(bool), ``hand`` (own cards, sorted), ``hand_sizes`` (per seat),
``certificates`` (count per seat, this round), ``deck_size``, ``passes``
(passes in a row), ``turn_plays`` (how many cards the current player has
played this turn so far), ``played`` (cards played onto the field this
round, in order, the starting card first), ``log`` (this round's finished
turns, oldest first: [seat, [cards laid, in order]], [] for a pass),
``previous_log`` (the previous round's ``log``, whole; [] in the first),
``scores`` (per seat, completed
rounds), ``last_round`` (per seat, points of the previous round).

From an observation (``from_observation``): the other hands, the deck and the
(unseen) certificates are sampled.
"""

from __future__ import annotations

from games.base import Action, Game, GameInfo, Observation
from games.sampling import fit, take, unseen
from games.tennos import (
    SUITS,
    card_name,
    cards_name,
    deck,
    is_black,
    is_joker,
    is_red,
    rank_of,
    suit_of,
)

HAND_SIZE = 8
REDEAL_TRIES = 200
ALL_CARDS: tuple[int, ...] = tuple(deck(jokers=True))


# Per card id (jokers included): red, black, rank (0 for a joker), suit (-1).
# Public lookup tables: the heuristic's planners read them too
# (``bots.search.games.all_aboard``).
RED = tuple(is_red(c) for c in ALL_CARDS)
BLACK = tuple(is_black(c) for c in ALL_CARDS)
RANK = tuple(rank_of(c) for c in ALL_CARDS)
SUIT = tuple(suit_of(c) for c in ALL_CARDS)


def legal_plays(hand: list[int], field: int) -> list[int]:
    """Cards of ``hand`` that may be played now on ``field`` (sorted)."""
    joker = next((c for c in hand if c >= 78), None)
    red, rank_of_, suit_of_ = RED, RANK, SUIT
    if red[field]:
        rank = rank_of_[field]
        out = [c for c in hand if c < 78 and (red[c] or rank_of_[c] == rank)]
    elif field >= 78:
        out = [c for c in hand if c < 78]
    else:
        rank, suit = rank_of_[field], suit_of_[field]
        forced = [c for c in hand if red[c] and rank_of_[c] == rank]
        if forced:
            return forced
        black = BLACK
        out = [c for c in hand if black[c] and (rank_of_[c] == rank or suit_of_[c] == suit)]
    if joker is not None:
        out.append(joker)
    return out


def round_points(hand: list[int], certificates: int) -> int:
    reds = sum(1 for c in hand if is_red(c))
    bonus = 20 if reds == len(hand) else 0
    return certificates - 2 * reds + bonus


class AllAboard(Game):
    INFO = GameInfo(
        slug="all_aboard",
        title="All Aboard!",
        min_players=2,
        max_players=6,
        rules_version="1",
        max_decisions=2000,
        seed_ref="seed 003 §07",
    )
    REVEALS = {
        "forced play": "RULINGS: a player plays on while they can, passes only "
        "with no legal card and a red-suit play lays every card of that suit; so "
        "who plays next, the passes and the cards laid show what the hands can play "
        "(and a player sees the cards they draw when their turn comes)",
        "round scored": "the round's score counts every hand's red cards",
    }

    def setup(self) -> None:
        n = self.num_players
        self.rounds = n
        self.total = [0] * n
        self.last_round_points = [0] * n
        self.round = -1
        self.over = False
        self.log: list[tuple[int, tuple[int, ...]]] = []  # the round in progress's, from its start
        self._start_round()

    # ---- round flow ----------------------------------------------------
    def _start_round(self) -> None:
        n = self.num_players
        self.round += 1
        cards = list(ALL_CARDS)
        self.rng.shuffle(cards)
        self.deck = cards  # the top is the end of the list
        self.hands = []
        for _ in range(n):
            hand = [self.deck.pop() for _ in range(HAND_SIZE)]
            hand.sort()
            self.hands.append(hand)
        self.field = self.deck.pop()
        self.played = [self.field]
        # the round before's log, whole: a seat's last decision can come before its end
        self.previous_log = self.log
        # this round's finished turns: (seat, cards laid in order), () for a pass
        self.log = []
        self.certs: list[list[int]] = [[] for _ in range(n)]
        self.passes = 0
        self.turn_plays = 0
        self.start_player = self.round % n
        self.to_act = self.start_player
        if self.events is not None:
            self.narrate(
                f"round {self.round + 1}/{self.rounds}: field {card_name(self.field)}, "
                f"P{self.start_player} starts"
            )
        self._begin_turn(self.start_player)

    def _begin_turn(self, seat: int) -> None:
        """Refill, then wait for a play or pass automatically; may end the round."""
        n = self.num_players
        while True:
            self.to_act = seat
            self.turn_plays = 0
            hand = self.hands[seat]
            drawn = False
            while len(hand) < HAND_SIZE:
                hand.append(self.deck.pop())
                drawn = True
                if not self.deck:
                    hand.sort()
                    self.narrate(f"P{seat} draws the last card of the deck")
                    self._end_round()
                    return
            if drawn:
                hand.sort()
            if legal_plays(hand, self.field):
                return
            self.log.append((seat, ()))
            self.passes += 1
            if self.events is not None:
                self.narrate(f"P{seat} passes")
            if self.passes >= n:
                self._end_round()
                return
            seat = (seat + 1) % n

    def _end_turn(self) -> None:
        self._log_turn()
        self._begin_turn((self.to_act + 1) % self.num_players)

    def _log_turn(self) -> None:
        self.log.append((self.to_act, tuple(self.played[len(self.played) - self.turn_plays:])))

    def _points_now(self) -> list[int]:
        return [round_points(self.hands[s], len(self.certs[s])) for s in range(self.num_players)]

    def _end_round(self) -> None:
        points = self._points_now()
        for seat, gained in enumerate(points):
            self.total[seat] += gained
        self.last_round_points = points
        why = "the deck is empty" if not self.deck else "everyone passed"
        if self.events is not None:
            self.narrate(
                f"round {self.round + 1} ends ({why}): "
                + ", ".join(f"P{s} {p:+d}" for s, p in enumerate(points))
                + f"; totals {self.total}"
            )
        if self.round + 1 < self.rounds:
            self._start_round()
        else:
            self.over = True
            self.to_act = -1
            self.narrate(f"game over: {self.total}")

    # ---- contract --------------------------------------------------------
    def current_player(self) -> int:
        return self.to_act

    def is_terminal(self) -> bool:
        return self.over

    def legal_actions(self) -> list[Action]:
        if self.over:
            return []
        return legal_plays(self.hands[self.to_act], self.field)

    def _apply(self, action: Action) -> None:
        seat = self.to_act
        hand = self.hands[seat]
        self.passes = 0
        if is_red(self.field):
            if is_red(action):
                suit = suit_of(action)
                run = [c for c in hand if c != action and suit_of(c) == suit] + [action]
                for c in run:
                    hand.remove(c)
                self.played.extend(run)
                self.field = action
                self.turn_plays += len(run)
                if self.events is not None:
                    self.narrate(f"P{seat} plays every {SUITS[suit]} card: {cards_name(run)}")
                self._end_turn()
                return
            # clearing the signal: no certificate
            hand.remove(action)
            self.played.append(action)
            self.field = action
            self.turn_plays += 1
        else:
            hand.remove(action)
            self.played.append(action)
            self.field = action
            self.turn_plays += 1
            if is_red(action):
                self._end_turn()
                return
            self.certs[seat].append(self.deck.pop())
            if not self.deck:
                self._log_turn()
                self._end_round()
                return
        if not legal_plays(hand, self.field):
            self._end_turn()

    def observation(self, player: int) -> Observation:
        return {
            "seat": player,
            "num_players": self.num_players,
            "round": self.round,
            "rounds": self.rounds,
            "start_player": self.start_player,
            "current_player": self.to_act,
            "field": self.field,
            "field_red": is_red(self.field),
            "hand": sorted(self.hands[player]),
            "hand_sizes": [len(h) for h in self.hands],
            "certificates": [len(c) for c in self.certs],
            "deck_size": len(self.deck),
            "passes": self.passes,
            "turn_plays": self.turn_plays,
            "played": list(self.played),
            "log": list(self.log),  # tuples pack as arrays; copied, not rebuilt
            "previous_log": list(self.previous_log),
            "scores": list(self.total),
            "last_round": list(self.last_round_points),
        }

    def reveals(self, action: Action, player: int) -> tuple | None:
        """The rules force the flow here (see REVEALS): who acts next, the
        passes and the cards laid follow from the hands, as at the table."""
        after = self._peek(action)
        if after.round != self.round or after.over:
            return ("round scored", tuple(after.last_round_points))
        drawn = after.hands[player] if after.hands[player] != self.hands[player] else None
        laid = tuple(after.played[len(self.played):])
        return ("forced play", after.to_act, after.passes, laid, drawn and tuple(drawn))

    def scores(self) -> list[float]:
        if self.over:
            return list(self.total)
        return [t + p for t, p in zip(self.total, self._points_now())]

    def clone(self) -> AllAboard:
        twin = self._shallow_twin()
        twin.total = list(self.total)
        twin.last_round_points = list(self.last_round_points)
        twin.deck = list(self.deck)
        twin.hands = [list(h) for h in self.hands]
        twin.played = list(self.played)
        twin.log = list(self.log)  # entries are tuples, never mutated
        twin.previous_log = self.previous_log  # never changed once its round is over
        twin.certs = [list(c) for c in self.certs]
        return twin

    @classmethod
    def from_observation(cls, obs: Observation, seed: int, decisions: int = 0) -> AllAboard:
        g, rng = cls._blank_from_observation(obs, seed, decisions)
        n, me = g.num_players, obs["seat"]
        g.rounds = obs["rounds"]
        g.total = list(obs["scores"])
        g.last_round_points = list(obs["last_round"])
        g.round = obs["round"]
        g.over = obs["current_player"] < 0
        g.field = obs["field"]
        g.played = list(obs["played"])
        g.log, g.previous_log = ([(seat, tuple(cards)) for seat, cards in obs[key]]
                                 for key in ("log", "previous_log"))
        g.passes = obs["passes"]
        g.turn_plays = obs["turn_plays"]
        g.start_player = obs["start_player"]
        g.to_act = obs["current_player"]
        sizes, certs = obs["hand_sizes"], obs["certificates"]
        pool = unseen(ALL_CARDS, list(obs["hand"]) + g.played, g.over)
        rng.shuffle(pool)
        hidden = sum(sizes[s] for s in range(n) if s != me) + sum(certs) + obs["deck_size"]
        fit(pool, hidden, "all_aboard", g.over)
        g.hands = [list(obs["hand"]) if s == me else sorted(take(pool, sizes[s])) for s in range(n)]
        g.certs = [take(pool, certs[s]) for s in range(n)]
        g.deck = pool[len(pool) - obs["deck_size"]:] if obs["deck_size"] else []
        return g._seed_future(rng)

    def redeal(self, player: int, seed: int) -> AllAboard:
        state = self._fresh_copy_for_redeal(seed)
        if state.over:
            return state
        n = state.num_players
        others = [s for s in range(n) if s != player]
        pool = list(state.deck)
        for s in others:
            pool.extend(state.hands[s])
        for s in range(n):
            pool.extend(state.certs[s])
        pool.sort()  # where the cards really lay must not matter
        actor = state.to_act
        hand_sizes = [len(state.hands[s]) for s in others]
        # The actor is on turn, so they can play: keep that (rejection sampling,
        # then a swap as a last resort; the actual hand is in the pool).
        for _ in range(REDEAL_TRIES):
            state.rng.shuffle(pool)
            if actor == player or self._actor_can_play(state, pool, others, hand_sizes):
                break
        else:
            self._swap_in_a_playable_card(state, pool, others, hand_sizes)
        for s, size in zip(others, hand_sizes):
            state.hands[s] = sorted(pool[:size])
            del pool[:size]
        for s in range(n):
            size = len(state.certs[s])
            state.certs[s] = pool[:size]
            del pool[:size]
        state.deck = pool
        return state

    @staticmethod
    def _actor_slice(state: AllAboard, others: list[int], hand_sizes: list[int]) -> slice:
        start = 0
        for s, size in zip(others, hand_sizes):
            if s == state.to_act:
                return slice(start, start + size)
            start += size
        raise AssertionError("the actor is the viewer")

    def _actor_can_play(self, state, pool, others, hand_sizes) -> bool:
        return bool(legal_plays(pool[self._actor_slice(state, others, hand_sizes)], state.field))

    def _swap_in_a_playable_card(self, state, pool, others, hand_sizes) -> None:
        where = self._actor_slice(state, others, hand_sizes)
        inside = range(where.start, where.stop)
        candidates = [
            i for i in range(len(pool)) if i not in inside and legal_plays([pool[i]], state.field)
        ]
        i = state.rng.choice(candidates)
        j = state.rng.choice(list(inside))
        pool[i], pool[j] = pool[j], pool[i]

    # ---- people --------------------------------------------------------
    def describe_action(self, action: Action) -> str:
        who = f"P{self.to_act}"
        if is_red(self.field):
            if is_red(action):
                suit = suit_of(action)
                run = [c for c in self.hands[self.to_act] if c != action and suit_of(c) == suit]
                run.append(action)
                return f"{who} plays every {SUITS[suit]} card in hand ({cards_name(run)}), {card_name(action)} last: the signal stays red"
            return f"{who} clears the red signal with {card_name(action)}"
        if is_red(action):
            if is_joker(self.field):
                return f"{who} plays {card_name(action)} on the joker: red signal, turn over"
            return f"{who} must play {card_name(action)}: red signal, turn over"
        return f"{who} plays {card_name(action)} and takes a certificate"


__all__ = ["AllAboard", "legal_plays", "round_points"]
