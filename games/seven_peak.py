"""seven_peak: 7 Peak, draft 8 (seed 004), read as RULINGS.md "seven_peak" says.

Rules (RULINGS.md, "seven_peak")
--------------------------------
3-5 players. 78 number cards: spade, diamond, club and heart with ranks 1..6,
three copies each (72), plus a joker suit with ranks 1..6, one each (6).
(The seed's "65 cards" contradicts its own composition; the composition wins.
The seed's "問題点" section is the designer's notes, not rules.)

The area: for each rank x (1..6) it holds a pile of cards; c[x] is the pile's
size. A card of printed rank x may be used as any value from x to x + c[x].

Setup: the deck is shuffled and 5 cards are put face up into the area one by
one, each onto the pile of its printed rank, except that a card whose
placement would take its pile's range above 7 (x + c[x] >= 8 after placing)
goes onto the pile of rank 1 instead ("counts as a 1"; it keeps its printed
rank and suit if it is later taken into a hand). Then 12 cards are dealt to
each player; the rest are set aside unseen for the whole game. Seat 0 starts;
play goes clockwise (seat order).

A turn is one of:

* **Pass:** put 1 hand card into the area (onto its printed rank's pile), or
  put 2 hand cards and then take any 1 area card into hand. At the end of the
  whole action, every rank whose range now reaches above 7 (x + c[x] >= 8) is
  scored by this player: all cards in that pile are theirs, 1 VP each, and the
  pile is emptied (its count returns to 0).
* **Play:** choose a value N and put N hand cards that can each be used as N
  in front of oneself as a set (face up, public). N must not be smaller than
  the player's previous set's size (equal is allowed).

End: when a player's hand is empty after their turn, the current round is
finished up to seat n-1 (the seat before the start player), then the game
ends.

Scoring: per set, N x (the most cards of one suit in it, jokers joining the
largest suit); if every card in the set has a different suit (the joker suit
counting as a suit of its own), N x N instead. If no set of the player holds a
joker, + 2 x the size of their largest set. Plus 1 VP per area card scored.
Highest total wins; ties: the earlier seat in turn order wins (rank keys are
``(score, -seat)``, so nobody shares a rank).

Rulings made here (the seed and RULINGS.md are silent)
------------------------------------------------------
* "All different" compares suits with the joker as a fifth suit: two jokers in
  one set are the same suit (such a set scores by the most-of-one-suit rule,
  the jokers joining the largest suit). A set of 1 scores 1.
* A player with no set gets no "no joker" bonus (there is no largest set).
* In "put 2 then take 1" the taken card may be any area card, one of the two
  just put included, from any pile (the rank-1 pile's "counts as 1" cards
  included). Taking happens before the end-of-action scoring, so it can keep a
  pile below the peak (the seed's third example).
* The taken card goes into hand with its printed rank and suit. A card put
  into the area during play always goes onto its printed rank's pile (the
  "counts as 1" rule is for setup only).
* Scored cards leave the game (they are only VP now), but which cards each
  player scored stays public: everyone saw them in the area (``scored``).
* A hand is checked for emptiness at the end of the turn: putting one's last
  2 cards and taking 1 back leaves 1 card and does not trigger the end.
* "Play" is offered only when some set can be completed, so no step of a
  turn dead-ends; "pass" is always possible (the actor always holds a card).
* Two cards of the same kind may be put in one pass.
* The seed's vertical layout of range cards is only bookkeeping: the area is
  one pile per rank; only the piles' sizes and contents matter.
* There is a single game (no rounds of deals); seat 0 starts.
* Since every turn lowers the actor's hand by at least one card, the game
  always ends (at most 12 rounds).
* A player's own in-progress play (the value N and the cards chosen so far) is
  private until the set is complete: other players' observations show the
  step as "turn" meanwhile. Cards put into the area during a pass are public
  as soon as they are put.
* Who put which card into the area, who took which, and who played which
  set, in order, are public: ``log`` keeps every such step (the area's piles
  alone do not say who put what, and between two of a seat's turns several
  others put cards). A play's value and cards chosen before the set is
  complete stay private, as above. Added without a rules-version change:
  play, match IDs and replays are as before.
* Cards taken from the area are public: every observation lists, per seat, the
  cards known to be in that hand ("known"), kept until that seat puts or plays
  a card of the same kind.
* Flow: the "turn" step is asked even when only "pass" is possible, so the
  others cannot tell whether the hand could play a set; every step of a
  play is asked, and their number (N + 2) is public once the set is shown.
  Nothing the rules reveal changes the flow (``REVEALS`` is empty).

Action encoding
---------------
A card is an int ``suit * 6 + (rank - 1)`` with suits 0 spade, 1 diamond,
2 club, 3 heart, 4 joker (so 0..23 are the four suits, 24..29 the jokers).
The three copies of a suited card share one code: hands are sorted lists with
repeats. ``suit = card // 6``, ``rank = card % 6 + 1``.

Steps of a turn and their actions (each list sorted, deterministic):

* ``"turn"``: ``"pass"``, then ``"play"`` if any set can be played now.
* pass, ``"put"``: ``("put", card)`` for each kind of card in hand.
* pass, ``"more"``: ``"stop"`` (end the pass with one card), then
  ``("put", card)`` to put a second card.
* pass, ``"take"`` (after a second card): ``("take", pile, card)`` where
  ``pile`` is the area pile's rank 1..6 and ``card`` a card kind in it.
* play, ``"value"``: ``("value", N)`` for every N >= the previous set's size
  for which the hand holds N cards usable as N.
* play, ``"cards"``: ``("card", card)`` for each kind of hand card usable as N
  and not yet chosen; the N-th card completes the set and ends the turn.

Every offered action can be finished legally (no dead ends).

Observation layout
------------------
``seat``, ``num_players``, ``start_player`` (0), ``current_player`` (-1 when
over), ``step`` (the actor's step; others see ``"turn"`` while the actor is in
``"value"``/``"cards"``), ``hand`` (own cards, sorted; during one's own play
step without the cards already chosen for the set), ``selecting`` (own
observation only, during one's play: ``{"value": N or None, "cards": [...]}``,
else None), ``hand_sizes`` (per seat, chosen-but-unplayed cards included),
``known`` (per seat, sorted cards publicly known to be in that hand),
``sets`` (per seat, list of ``[N, [cards]]`` in play order), ``last_set``
(per seat, the previous set's size, 0 if none), ``area`` (6 sorted card lists,
pile of rank 1..6), ``counts`` (c[1..6]), ``reach`` (x + c[x] per rank 1..6:
the highest value rank x can be used as), ``vp`` (area VP per seat),
``scored`` (per seat, the sorted cards won from the area, one VP each),
``log`` (every public step of the game so far, oldest first: ``[seat,
"put", card]``, ``[seat, "take", pile, card]``, ``[seat, "set", [cards]]``),
``scores`` (per seat, total as it stands), ``ending`` (a hand has emptied: the
round in progress is the last), ``set_aside`` (number of unseen cards),
``round`` (0-based round number).

From an observation (``from_observation``): the other hands (less the cards
publicly known to be in them) and the set-aside cards are sampled.
"""

from __future__ import annotations

from games.base import Action, Game, GameInfo, Observation, reshuffle
from games.sampling import fit, take, unseen

SUIT_NAMES = ("spade", "diamond", "club", "heart", "joker")
SUIT_SYMBOLS = ("♠", "♦", "♣", "♥", "joker")
JOKER = 4
NUM_RANKS = 6
PEAK = 8  # a pile is scored when x + c[x] >= PEAK ("above 7")
SETUP_AREA = 5
HAND_SIZE = 12

DECK: tuple[int, ...] = tuple(
    [s * 6 + r for s in range(4) for r in range(6) for _ in range(3)]
    + [JOKER * 6 + r for r in range(6)]
)


def suit_of(card: int) -> int:
    return card // 6


def rank_of(card: int) -> int:
    return card % 6 + 1


def card_code(suit: int, rank: int) -> int:
    return suit * 6 + rank - 1


def card_name(card: int) -> str:
    suit = card // 6
    return f"{SUIT_SYMBOLS[suit]}{card % 6 + 1}"


def cards_name(cards) -> str:
    return " ".join(card_name(c) for c in cards)


def usable_as(card: int, value: int, counts) -> bool:
    """Can this card be used as ``value`` with the area counts c[1..6]?"""
    x = card % 6 + 1
    return x <= value <= x + counts[x - 1]


def set_score(cards) -> int:
    """N x most-of-one-suit (jokers join the largest suit); N x N if all suits differ."""
    n = len(cards)
    suits = [c // 6 for c in cards]
    if len(set(suits)) == n:
        return n * n
    jokers = suits.count(JOKER)
    best = 0
    for s in range(4):
        k = suits.count(s)
        if k > best:
            best = k
    return n * (best + jokers)


def player_score(sets, vp: int) -> int:
    """Total as it stands: area VP + sets + the no-joker bonus."""
    total = vp
    largest = 0
    joker = False
    for n, cards in sets:
        total += set_score(cards)
        largest = max(largest, n)
        if any(c // 6 == JOKER for c in cards):
            joker = True
    if sets and not joker:
        total += 2 * largest
    return total


def feasible_values(hand, counts, minimum: int) -> list[int]:
    """Values N >= minimum (and >= 1) with N hand cards usable as N."""
    out = []
    for n in range(max(1, minimum), 8):
        if sum(1 for c in hand if usable_as(c, n, counts)) >= n:
            out.append(n)
    return out


def _remove(lst: list, card: int) -> None:
    lst.remove(card)


def _insert(lst: list, card: int) -> None:
    lst.append(card)
    lst.sort()


class SevenPeak(Game):
    INFO = GameInfo(
        slug="seven_peak",
        title="7 Peak",
        min_players=3,
        max_players=5,
        rules_version="1",
        max_decisions=2000,
        seed_ref="seed 004 (draft 8)",
    )

    # ---- setup -----------------------------------------------------------
    def setup(self) -> None:
        n = self.num_players
        deck = list(DECK)
        self.rng.shuffle(deck)
        self.area: list[list[int]] = [[] for _ in range(NUM_RANKS)]
        for card in deck[:SETUP_AREA]:
            self._setup_place(card)
        deck = deck[SETUP_AREA:]
        self.hands: list[list[int]] = []
        for seat in range(n):
            self.hands.append(sorted(deck[seat * HAND_SIZE:(seat + 1) * HAND_SIZE]))
        self.set_aside: list[int] = sorted(deck[n * HAND_SIZE:])
        self.known: list[list[int]] = [[] for _ in range(n)]
        self.sets: list[list[tuple[int, tuple[int, ...]]]] = [[] for _ in range(n)]
        self.last_set = [0] * n
        self.vp = [0] * n
        self.scored: list[list[int]] = [[] for _ in range(n)]
        # every public step, in order: (seat, "put", card), (seat, "take",
        # pile, card), (seat, "set", cards); a play's choices stay private
        self.log: list[tuple] = []
        self.start_player = 0
        self.to_act = 0
        self.round = 0
        self.step = "turn"
        self.pending_value = 0
        self.pending_cards: list[int] = []
        self.ending = False
        self.narrate(
            "setup: area "
            + "; ".join(
                f"{x}s: {cards_name(p)}" for x, p in enumerate(self.area, 1) if p
            )
            + f"; {HAND_SIZE} cards each, {len(self.set_aside)} set aside"
        )

    def _setup_place(self, card: int) -> int:
        """Put a setup card into the area; returns the pile (rank) it went to."""
        x = rank_of(card)
        if x + len(self.area[x - 1]) + 1 >= PEAK:
            x = 1  # would pass the peak: counts as a 1
        _insert(self.area[x - 1], card)
        return x

    # ---- helpers ---------------------------------------------------------
    def counts(self) -> list[int]:
        return [len(p) for p in self.area]

    def free_hand(self) -> list[int]:
        """The actor's hand without the cards already chosen for a set (a
        new list). Public: the search's rollout policy reads it
        (``bots.search.games.seven_peak``)."""
        hand = list(self.hands[self.to_act])
        for c in self.pending_cards:
            hand.remove(c)
        return hand

    def _lose_card(self, seat: int, card: int) -> None:
        _remove(self.hands[seat], card)
        if card in self.known[seat]:
            self.known[seat].remove(card)

    def _score_peaks(self, seat: int) -> None:
        for x in range(1, NUM_RANKS + 1):
            pile = self.area[x - 1]
            if pile and x + len(pile) >= PEAK:
                self.vp[seat] += len(pile)
                self.scored[seat] = sorted(self.scored[seat] + pile)
                if self.events is not None:
                    self.narrate(
                        f"seat {seat} scores the {x}s pile ({cards_name(pile)}): "
                        f"+{len(pile)} VP"
                    )
                self.area[x - 1] = []

    def _end_turn(self) -> None:
        seat = self.to_act
        self.step = "turn"
        self.pending_value = 0
        self.pending_cards = []
        if not self.hands[seat] and not self.ending:
            self.ending = True
            self.narrate(f"seat {seat} has emptied their hand: last round")
        nxt = (seat + 1) % self.num_players
        if nxt == self.start_player:
            if self.ending:
                self.to_act = -1
                self.narrate(
                    "game over: scores "
                    + ", ".join(f"seat {s} {v}" for s, v in enumerate(self.scores()))
                )
                return
            self.round += 1
        self.to_act = nxt

    # ---- contract --------------------------------------------------------
    def current_player(self) -> int:
        return self.to_act

    def is_terminal(self) -> bool:
        return self.to_act < 0

    def legal_actions(self) -> list[Action]:
        seat = self.to_act
        if seat < 0:
            return []
        step = self.step
        hand = self.hands[seat]
        if step == "turn":
            if feasible_values(hand, self.counts(), self.last_set[seat]):
                return ["pass", "play"]
            return ["pass"]
        if step == "put":
            return [("put", c) for c in sorted(set(hand))]
        if step == "more":
            return ["stop"] + [("put", c) for c in sorted(set(hand))]
        if step == "take":
            return [
                ("take", x, c)
                for x, pile in enumerate(self.area, 1)
                for c in sorted(set(pile))
            ]
        if step == "value":
            return [
                ("value", n)
                for n in feasible_values(hand, self.counts(), self.last_set[seat])
            ]
        # step == "cards"
        counts = self.counts()
        n = self.pending_value
        return [
            ("card", c)
            for c in sorted(set(self.free_hand()))
            if usable_as(c, n, counts)
        ]

    def _apply(self, action: Action) -> None:
        seat = self.to_act
        step = self.step
        if step == "turn":
            self.step = "put" if action == "pass" else "value"
            return
        if step == "put" or step == "more":
            if action == "stop":
                self._score_peaks(seat)
                self._end_turn()
                return
            card = action[1]
            self._lose_card(seat, card)
            _insert(self.area[rank_of(card) - 1], card)
            self.log.append((seat, "put", card))
            self.step = "more" if step == "put" else "take"
            return
        if step == "take":
            _, x, card = action
            _remove(self.area[x - 1], card)
            _insert(self.hands[seat], card)
            _insert(self.known[seat], card)
            self.log.append((seat, "take", x, card))
            self._score_peaks(seat)
            self._end_turn()
            return
        if step == "value":
            self.pending_value = action[1]
            self.pending_cards = []
            self.step = "cards"
            return
        # step == "cards"
        self.pending_cards.append(action[1])
        n = self.pending_value
        if len(self.pending_cards) == n:
            cards = tuple(sorted(self.pending_cards))
            for c in cards:
                self._lose_card(seat, c)
            self.sets[seat].append((n, cards))
            self.last_set[seat] = n
            self.log.append((seat, "set", cards))
            if self.events is not None:
                self.narrate(
                    f"seat {seat} plays a set of {n} as {n}s: {cards_name(cards)} "
                    f"({set_score(cards)} points)"
                )
            self._end_turn()

    def observation(self, player: int) -> Observation:
        actor = self.to_act
        own = player == actor and actor >= 0
        step = self.step
        if not own and step in ("value", "cards"):
            step = "turn"
        if own and self.step in ("value", "cards"):
            hand = self.free_hand()
            selecting = {
                "value": self.pending_value if self.step == "cards" else None,
                "cards": sorted(self.pending_cards),
            }
        else:
            hand = list(self.hands[player])
            selecting = None
        counts = self.counts()
        return {
            "seat": player,
            "num_players": self.num_players,
            "start_player": self.start_player,
            "current_player": actor,
            "round": self.round,
            "step": step if actor >= 0 else "over",
            "hand": hand,
            "selecting": selecting,
            "hand_sizes": [len(h) for h in self.hands],
            "known": [list(k) for k in self.known],
            "sets": [[[n, list(cards)] for n, cards in s] for s in self.sets],
            "last_set": list(self.last_set),
            "area": [list(p) for p in self.area],
            "counts": counts,
            "reach": [x + c for x, c in enumerate(counts, 1)],
            "vp": list(self.vp),
            "scored": [list(c) for c in self.scored],
            "log": list(self.log),  # tuples pack as arrays; copied, not rebuilt
            "scores": self.scores(),
            "ending": self.ending,
            "set_aside": len(self.set_aside),
        }

    def scores(self) -> list[float]:
        return [player_score(self.sets[s], self.vp[s]) for s in range(self.num_players)]

    def rank_keys(self) -> list:
        return [(score, -seat) for seat, score in enumerate(self.scores())]

    # ---- copies and hidden information ----------------------------------
    def clone(self) -> SevenPeak:
        twin = self._shallow_twin()
        twin.area = [list(p) for p in self.area]
        twin.hands = [list(h) for h in self.hands]
        twin.set_aside = list(self.set_aside)
        twin.known = [list(k) for k in self.known]
        twin.sets = [list(s) for s in self.sets]
        twin.last_set = list(self.last_set)
        twin.vp = list(self.vp)
        twin.scored = [list(c) for c in self.scored]
        twin.pending_cards = list(self.pending_cards)
        twin.log = list(self.log)  # entries are tuples, never mutated
        return twin

    @classmethod
    def from_observation(cls, obs: Observation, seed: int, decisions: int = 0) -> SevenPeak:
        g, rng = cls._blank_from_observation(obs, seed, decisions)
        n, me = g.num_players, obs["seat"]
        g.area = [list(p) for p in obs["area"]]
        g.known = [list(k) for k in obs["known"]]
        g.sets = [[(size, tuple(cards)) for size, cards in s] for s in obs["sets"]]
        g.last_set = list(obs["last_set"])
        g.vp = list(obs["vp"])
        g.scored = [list(c) for c in obs["scored"]]
        g.log = [(s, "set", tuple(rest[0])) if kind == "set" else (s, kind, *rest)
                 for s, kind, *rest in obs["log"]]
        g.start_player = obs["start_player"]
        g.to_act = obs["current_player"]
        g.round = obs["round"]
        g.ending = obs["ending"]
        selecting = obs["selecting"]
        own = list(obs["hand"])
        g.step = obs["step"] if obs["step"] != "over" else "turn"
        g.pending_value = 0
        g.pending_cards = []
        if selecting is not None:
            own = sorted(own + list(selecting["cards"]))
            g.step = "value" if selecting["value"] is None else "cards"
            g.pending_value = selecting["value"] or 0
            g.pending_cards = list(selecting["cards"])
        over = obs["current_player"] < 0
        known = (
            own
            + [c for p in g.area for c in p]
            + [c for s in g.sets for _, cards in s for c in cards]
            + [c for cards in g.scored for c in cards]
            + [c for s in range(n) if s != me for c in g.known[s]]
        )
        pool = unseen(DECK, known, over)
        rng.shuffle(pool)
        sizes = obs["hand_sizes"]
        hidden = [sizes[s] - len(g.known[s]) if s != me else 0 for s in range(n)]
        fit(pool, sum(hidden) + obs["set_aside"], "seven_peak", over)
        g.hands = [own if s == me else sorted(g.known[s] + take(pool, hidden[s])) for s in range(n)]
        g.set_aside = sorted(pool)
        return g._seed_future(rng)

    def redeal(self, player: int, seed: int) -> SevenPeak:
        """Reshuffle the unknown cards of other hands and the set-aside cards.

        Cards publicly taken from the area stay in their hands. Another
        player's in-progress play (hidden from ``player``) is taken back to
        the start of their turn. Inferences from choices (e.g. "they passed,
        so they could not play a set") are not kept.
        """
        state = self._fresh_copy_for_redeal(seed)
        if state.to_act >= 0 and state.to_act != player and state.step in ("value", "cards"):
            state.step = "turn"
            state.pending_value = 0
            state.pending_cards = []
        others = [seat for seat in range(state.num_players) if seat != player]
        unknown = []
        for seat in others:
            rest = list(state.hands[seat])
            for c in state.known[seat]:
                rest.remove(c)
            unknown.append(rest)
        *dealt, set_aside = reshuffle(state.rng, unknown + [state.set_aside])
        for seat, cards in zip(others, dealt):
            state.hands[seat] = sorted(list(state.known[seat]) + cards)
        state.set_aside = sorted(set_aside)
        return state

    # ---- people ----------------------------------------------------------
    def describe_action(self, action: Action) -> str:
        who = f"seat {self.to_act}"
        step = self.step
        if action == "pass":
            return f"{who} passes (puts cards into the area)"
        if action == "play":
            return f"{who} plays a set"
        if action == "stop":
            return f"{who} stops after one card"
        kind = action[0]
        if kind == "put":
            card = action[1]
            x = rank_of(card)
            reach = x + len(self.area[x - 1]) + 1
            peak = " (peak!)" if reach >= PEAK else ""
            second = " as a second card" if step == "more" else ""
            return (
                f"{who} puts {card_name(card)} into the area{second}: "
                f"{x}s reach {reach}{peak}"
            )
        if kind == "take":
            return f"{who} takes {card_name(action[2])} from the {action[1]}s pile"
        if kind == "value":
            n = action[1]
            return f"{who} will play a set of {n} as {n}s"
        if kind == "card":
            n = self.pending_value
            chosen = sorted(self.pending_cards + [action[1]])
            if len(chosen) == n:
                return f"{who} plays a set of {n} as {n}s: {cards_name(chosen)}"
            return f"{who} adds {card_name(action[1])} to a set of {n} ({len(chosen)}/{n})"
        return repr(action)
