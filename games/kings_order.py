"""kings_order: King's Order (キングスオーダー), seed 003 §04: guess the ends of other hands.

Rules (RULINGS.md, "kings_order")
---------------------------------
3-6 players; the 78 TENNOS cards without jokers. Each round the cards are
shuffled and 13 are dealt to each player; the rest are set aside unseen.
Hands are kept sorted by rank, lowest at the left end (suits play no part).
From the round's start player, clockwise, each player who still holds cards
takes a turn:

1. Play one card from hand (it goes to the public discard pile).
2. If it was not at either end of the hand, discard, face up, either all the
   cards to its left or all the cards to its right (the player's choice).
3. Name another player who still holds cards. If the card at their left end
   or at their right end has the played card's rank, they hand over every
   card of that rank at that end, face up, to the player as score cards.

Played and discarded cards are public. The round ends when at most one player
holds cards. Score: A-10 score cards at face value (A = 1); for each of J, Q
and K, every player holding the most score cards of that rank (at least one)
scores 11, 12 or 13. A match is 3 rounds; round r's start player is seat
r mod n (the start player moves left). The cumulative score decides.

Rulings made here (the seed and RULINGS.md are silent)
------------------------------------------------------
* Equal ranks: a hand is ordered by rank, and equal ranks by suit (spade,
  heart, diamond, club, leaf, cross) only so that every card has a position.
  Suits play no part, so choosing which card of a rank to play is choosing
  which copy: a player holding 4 4 4 may play the leftmost, middle or
  rightmost 4, and the copies left or right of it follow the discard rule
  like any other card. Playing a copy at an end never forces a discard.
* The position of the played card (how many cards lay to its left and
  right) and which side was discarded are public, like the cards themselves.
* A hand of one card: that card is at both ends; no discard.
* Handover: the cards of the played rank at the named player's end form one
  block (the hand is sorted); all of them are handed over. If both ends have
  that rank the whole hand is that rank and all of it is handed over.
* Score cards are public: they are handed over face up (seed and
  RULINGS.md), so everyone has seen them even though the seed then stacks
  them face down ("裏向き"); everyone's score cards and the provisional round
  points are in every observation.
* The turn is always completed (play, discard, name) even if the player's
  own hand became empty; the end of the round is checked when a turn ends.
  At the naming step another player always holds cards (two players held
  cards when the turn began). Players with no cards are skipped.
* The last player's remaining hand is not scored.
* ``previous_log`` keeps the round before, whole (added Dec 4, without a
  rules-version change): a seat's last decision of a round can come before
  its end, and what followed reached it only as points.
* ``scores()`` and the observation's ``scores`` are the completed rounds'
  total plus the current round's points as they stand (all public).
* Standings: by total score; there is no tie-break (the seed: every player
  tied for the most points wins).
* ``redeal`` reshuffles every card unseen by the player (the other hands and
  the set-aside cards), keeping hand sizes. It does *not* keep inferences
  from history (e.g. "they discarded the left side of a 5, so they hold no
  card below 5", or "they had no 9 at either end").
* Flow: the discard step is asked exactly when the played card lay in the
  middle of the hand, which is public (above); the naming step is always
  asked, even with a single candidate. What each step shows of a hand is
  declared in ``REVEALS``.

Actions
-------
Three steps per turn, each a short list:

* play: the card (``games.tennos`` id) to play, in hand order (by rank, then
  suit);
* discard (only after a middle card): ``"discard_left"`` or
  ``"discard_right"``, which cards go (the others stay in hand);
* name: ``("name", seat)`` for every other seat still holding cards, ascending.

Observation layout
------------------
``seat``, ``num_players``, ``round`` (0-based), ``rounds``, ``start_player``,
``current_player`` (-1 when over), ``phase`` (``"play"``, ``"discard"``,
``"name"`` or ``"over"``), ``hand`` (own cards, by rank then suit),
``hand_sizes`` (per seat), ``pending`` (the current turn so far, or None:
``{"seat", "card", "left", "right", "discard"}`` with ``left``/``right`` the
number of cards that lay left/right of the played card and ``discard``
``"left"``, ``"right"`` or None), ``discard_pile`` (every played and discarded
card this round, in order), ``log`` (this round's finished turns, each
``[seat, card, left, right, discarded side or None, discarded cards, named
seat, handed cards, end handed from ("left"/"right") or None]``),
``previous_log`` (the previous round's ``log``, whole; [] in the first),
``score_cards`` (per seat, sorted), ``set_aside`` (count of unseen set-aside
cards), ``round_points`` (per seat, this round as it stands), ``scores``
(per seat, total as it stands), ``last_round`` (per seat, points of the
previous round).

From an observation (``from_observation``): the other hands and the set-aside
cards are sampled, keeping the rank bounds shown by play
(``kings_order_bounds``: a player who played their left end holds nothing
lower, one who kept the right side of a card holds nothing below it, one who
handed over their left-end block holds nothing that low...).
"""

from __future__ import annotations

from typing import Any

from games.base import Action, Game, GameInfo, Observation, reshuffle
from games.sampling import Slot, deal_constrained, fit, unseen
from games.tennos import card_name, cards_name, deck, rank_name, rank_of, suit_of

HAND_SIZE = 13
ROUNDS = 3
DISCARD_LEFT = "discard_left"
DISCARD_RIGHT = "discard_right"
ALL_CARDS: tuple[int, ...] = tuple(deck())


def hand_key(c: int) -> tuple[int, int]:
    return (rank_of(c), suit_of(c))


def sort_hand(cards: list[int]) -> list[int]:
    return sorted(cards, key=hand_key)


def score_round(score_cards: list[list[int]]) -> list[int]:
    """Points per seat from each seat's score cards."""
    points = []
    faces = []
    for cards in score_cards:
        total = 0
        face = [0, 0, 0]
        for c in cards:
            rank = rank_of(c)
            if rank <= 10:
                total += rank
            else:
                face[rank - 11] += 1
        points.append(total)
        faces.append(face)
    for i, rank in enumerate((11, 12, 13)):
        most = max(face[i] for face in faces)
        if most >= 1:
            for seat, face in enumerate(faces):
                if face[i] == most:
                    points[seat] += rank
    return points


def handover(hand: list[int], rank: int) -> tuple[list[int], list[int], str | None]:
    """(remaining hand, handed cards, end) when asked for ``rank``."""
    if not hand:
        return hand, [], None
    if rank_of(hand[0]) == rank:
        k = 0
        while k < len(hand) and rank_of(hand[k]) == rank:
            k += 1
        return hand[k:], hand[:k], "left"
    if rank_of(hand[-1]) == rank:
        k = len(hand)
        while k > 0 and rank_of(hand[k - 1]) == rank:
            k -= 1
        return hand[:k], hand[k:], "right"
    return hand, [], None


class KingsOrder(Game):
    INFO = GameInfo(
        slug="kings_order",
        title="King's Order",
        min_players=3,
        max_players=6,
        rules_version="1",
        max_decisions=3000,
        seed_ref="seed 003 §04",
    )
    REVEALS = {
        "position in hand": "ruling: where the played card lay in the sorted hand "
        "is public (it decides the discard)",
        "cards discarded": "the seed: the discarded side goes face up to the pile",
        "cards handed over": "the seed: the named player hands the cards over face up",
    }

    def setup(self) -> None:
        n = self.num_players
        self.rounds = ROUNDS
        self.total = [0] * n
        self.last_round_points = [0] * n
        self.round = -1
        self.over = False
        self.log: list[tuple] = []  # the round in progress's, from its start
        self._start_round()

    # ---- round flow ----------------------------------------------------
    def _start_round(self) -> None:
        n = self.num_players
        self.round += 1
        cards = list(ALL_CARDS)
        self.rng.shuffle(cards)
        self.hands = [sort_hand(cards[s * HAND_SIZE:(s + 1) * HAND_SIZE]) for s in range(n)]
        self.set_aside = cards[n * HAND_SIZE:]
        self.score_cards: list[list[int]] = [[] for _ in range(n)]
        self.discard_pile: list[int] = []
        # the round before's log, whole: a seat's last decision can come before its end
        self.previous_log = self.log
        self.log = []
        self.round_pts = [0] * n
        self.phase = "play"
        self.pending: dict | None = None
        self.start_player = self.round % n
        self.to_act = self.start_player
        self.narrate(f"round {self.round + 1}/{self.rounds}: P{self.start_player} starts")

    def _end_turn(self) -> None:
        n = self.num_players
        holders = [s for s in range(n) if self.hands[s]]
        if len(holders) <= 1:
            self._end_round()
            return
        seat = (self.to_act + 1) % n
        while not self.hands[seat]:
            seat = (seat + 1) % n
        self.to_act = seat
        self.phase = "play"
        self.pending = None

    def _end_round(self) -> None:
        points = list(self.round_pts)
        for seat, gained in enumerate(points):
            self.total[seat] += gained
        self.last_round_points = points
        if self.events is not None:
            self.narrate(
                f"round {self.round + 1} ends: "
                + ", ".join(f"P{s} {p}" for s, p in enumerate(points))
                + f"; totals {self.total}"
            )
        if self.round + 1 < self.rounds:
            self._start_round()
        else:
            self.over = True
            self.to_act = -1
            self.phase = "over"
            self.pending = None
            self.narrate(f"game over: {self.total}")

    # ---- contract --------------------------------------------------------
    def current_player(self) -> int:
        return self.to_act

    def is_terminal(self) -> bool:
        return self.over

    def legal_actions(self) -> list[Action]:
        if self.over:
            return []
        if self.phase == "play":
            return list(self.hands[self.to_act])
        if self.phase == "discard":
            return [DISCARD_LEFT, DISCARD_RIGHT]
        seat = self.to_act
        return [("name", s) for s in range(self.num_players) if s != seat and self.hands[s]]

    def _apply(self, action: Action) -> None:
        seat = self.to_act
        hand = self.hands[seat]
        if self.phase == "play":
            index = hand.index(action)
            left, right = index, len(hand) - index - 1
            del hand[index]
            self.discard_pile.append(action)
            self.pending = {
                "seat": seat, "card": action, "left": left, "right": right,
                "discard": None, "discarded": [],
            }
            self.phase = "discard" if left and right else "name"
            return
        pending = self.pending
        assert pending is not None
        if self.phase == "discard":
            cut = pending["left"]
            if action == DISCARD_LEFT:
                gone, self.hands[seat] = hand[:cut], hand[cut:]
                pending["discard"] = "left"
            else:
                gone, self.hands[seat] = hand[cut:], hand[:cut]
                pending["discard"] = "right"
            pending["discarded"] = gone
            self.discard_pile.extend(gone)
            self.phase = "name"
            return
        named = action[1]
        rank = rank_of(pending["card"])
        self.hands[named], handed, end = handover(self.hands[named], rank)
        if handed:
            self.score_cards[seat] = sort_hand(self.score_cards[seat] + handed)
            self.round_pts = score_round(self.score_cards)
        self.log.append((
            seat, pending["card"], pending["left"], pending["right"], pending["discard"],
            tuple(pending["discarded"]), named, tuple(handed), end,
        ))
        if self.events is not None:
            text = f"P{seat} played {card_name(pending['card'])}"
            if pending["discard"]:
                text += f", discarded {cards_name(pending['discarded'])}"
            text += f", named P{named}: "
            text += f"got {cards_name(handed)} from the {end} end" if handed else "nothing"
            self.narrate(text)
        self._end_turn()

    def _pending_view(self) -> dict | None:
        if self.pending is None:
            return None
        p = self.pending
        return {"seat": p["seat"], "card": p["card"], "left": p["left"],
                "right": p["right"], "discard": p["discard"]}

    def observation(self, player: int) -> Observation:
        return {
            "seat": player,
            "num_players": self.num_players,
            "round": self.round,
            "rounds": self.rounds,
            "start_player": self.start_player,
            "current_player": self.to_act,
            "phase": self.phase,
            "hand": list(self.hands[player]),
            "hand_sizes": [len(h) for h in self.hands],
            "pending": self._pending_view(),
            "discard_pile": list(self.discard_pile),
            "log": list(self.log),  # tuples: never mutated
            "previous_log": list(self.previous_log),
            "score_cards": [list(c) for c in self.score_cards],
            "set_aside": len(self.set_aside),
            "round_points": self._round_points(),
            "scores": self.scores(),
            "last_round": list(self.last_round_points),
        }

    def _round_points(self) -> list[int]:
        if self.over:
            return [0] * self.num_players
        return list(self.round_pts)

    def reveals(self, action: Action, player: int) -> tuple | None:
        """Each step of a turn shows something of a hand (see REVEALS)."""
        if self.phase == "name":
            assert self.pending is not None  # set by the play step, kept until the turn ends
            rank = rank_of(self.pending["card"])
            _, handed, end = handover(self.hands[action[1]], rank)
            return ("cards handed over", tuple(handed), end)
        after = self._peek(action)
        assert after.pending is not None  # a play or a discard leaves the turn pending
        if self.phase == "play":
            return ("position in hand", after.pending["left"], after.pending["right"])
        return ("cards discarded", tuple(after.pending["discarded"]))

    def scores(self) -> list[float]:
        if self.over:
            return list(self.total)
        return [t + p for t, p in zip(self.total, self.round_pts)]

    def clone(self) -> KingsOrder:
        twin = self._shallow_twin()
        twin.total = list(self.total)
        twin.last_round_points = list(self.last_round_points)
        twin.hands = [list(h) for h in self.hands]
        twin.set_aside = list(self.set_aside)
        twin.score_cards = [list(c) for c in self.score_cards]
        twin.discard_pile = list(self.discard_pile)
        twin.log = list(self.log)  # entries are tuples
        twin.previous_log = self.previous_log  # never changed once its round is over
        twin.round_pts = list(self.round_pts)
        if self.pending is not None:
            twin.pending = dict(self.pending)
        return twin

    @classmethod
    def from_observation(cls, obs: Observation, seed: int, decisions: int = 0) -> KingsOrder:
        g, rng = cls._blank_from_observation(obs, seed, decisions)
        n, me = g.num_players, obs["seat"]
        g.rounds = obs["rounds"]
        g.round = obs["round"]
        g.over = obs["phase"] == "over"
        g.round_pts = list(obs["round_points"])
        g.total = list(obs["scores"]) if g.over else [s - p for s, p in zip(obs["scores"], g.round_pts)]
        g.last_round_points = list(obs["last_round"])
        g.score_cards = [list(c) for c in obs["score_cards"]]
        g.discard_pile = list(obs["discard_pile"])
        g.log, g.previous_log = ([
            (s, c, left, right, side, tuple(disc), named, tuple(handed), end)
            for s, c, left, right, side, disc, named, handed, end in obs[key]
        ] for key in ("log", "previous_log"))
        g.phase = obs["phase"]
        g.start_player = obs["start_player"]
        g.to_act = obs["current_player"]
        pending = obs["pending"]
        if pending is None:
            g.pending = None
        else:
            side = pending["discard"]
            k = pending["left"] if side == "left" else pending["right"] if side == "right" else 0
            g.pending = {
                "seat": pending["seat"], "card": pending["card"], "left": pending["left"],
                "right": pending["right"], "discard": side,
                "discarded": g.discard_pile[len(g.discard_pile) - k:] if k else [],
            }
        sizes = obs["hand_sizes"]
        known = list(obs["hand"]) + g.discard_pile + [c for cards in g.score_cards for c in cards]
        pool = unseen(ALL_CARDS, known, g.over)
        lo, hi = kings_order_bounds(obs)
        slots: list[Slot] = []
        for s in range(n):
            if s == me:
                continue
            if lo[s] > 1 or hi[s] < 13:
                # a def, not a lambda: mypy cannot infer a lambda with default arguments
                def in_bounds(c: int, a: int = lo[s], b: int = hi[s]) -> bool:
                    return a <= rank_of(c) <= b
                slots.append((s, sizes[s], in_bounds))
            else:
                slots.append((s, sizes[s], None))
        slots.append(("aside", obs["set_aside"], None))
        fit(pool, sum(size for _, size, _ in slots), "kings_order", g.over)
        dealt = deal_constrained(pool, slots, rng)
        g.hands = [list(obs["hand"]) if s == me else sort_hand(dealt[s]) for s in range(n)]
        g.set_aside = dealt["aside"]
        return g._seed_future(rng)

    def redeal(self, player: int, seed: int) -> KingsOrder:
        state = self._fresh_copy_for_redeal(seed)
        if state.over:
            return state
        others = [s for s in range(state.num_players) if s != player]
        *hands, state.set_aside = reshuffle(state.rng, [state.hands[s] for s in others] + [state.set_aside])
        for s, hand in zip(others, hands):
            state.hands[s] = sort_hand(hand)
        return state

    # ---- people --------------------------------------------------------
    def describe_action(self, action: Action) -> str:
        who = f"P{self.to_act}"
        if self.phase == "play":
            hand = self.hands[self.to_act]
            index = hand.index(action)
            left, right = index, len(hand) - index - 1
            if left and right:
                where = f"from the middle ({left} left, {right} right)"
            elif left:
                where = "from the right end"
            elif right:
                where = "from the left end"
            else:
                where = "(last card)"
            return f"{who} plays {card_name(action)} {where}"
        pending = self.pending
        assert pending is not None
        if self.phase == "discard":
            hand = self.hands[self.to_act]
            cut = pending["left"]
            if action == DISCARD_LEFT:
                return f"{who} discards the left side: {cards_name(hand[:cut]) or 'nothing'}"
            return f"{who} discards the right side: {cards_name(hand[cut:]) or 'nothing'}"
        rank = rank_name(rank_of(pending["card"]))
        return f"{who} names P{action[1]}: any {rank} at an end?"


# ---- inferences from the public record (from_observation, search bots) --------
def narrow_rank_bounds(lo: list[int], hi: list[int], entry: Any, rank: int) -> None:
    """One log entry (``rank`` is its card's) narrows the lowest and highest
    rank each hand can still hold (hands are sorted by rank)."""
    seat, _card, left, right, side, _discarded, named, _handed, end = entry
    if side == "left" or (side is None and left == 0 and right > 0):
        lo[seat] = max(lo[seat], rank)
    elif side == "right" or (side is None and right == 0 and left > 0):
        hi[seat] = min(hi[seat], rank)
    if end == "left":
        lo[named] = max(lo[named], rank + 1)
    elif end == "right":
        hi[named] = min(hi[named], rank - 1)
    else:
        # nothing handed: neither end has this rank; where the hand's lowest
        # (highest) possible rank is it, it holds none of it at all
        if lo[named] == rank:
            lo[named] = rank + 1
        if hi[named] == rank:
            hi[named] = rank - 1


def kings_order_log_bounds(num_players: int, log: Any) -> tuple[list[int], list[int]]:
    """Per seat, the rank bounds that this round's public record implies."""
    lo, hi = [1] * num_players, [13] * num_players
    for entry in log:
        narrow_rank_bounds(lo, hi, entry, rank_of(entry[1]))
    return lo, hi


def kings_order_bounds(obs: Observation) -> tuple[list[int], list[int]]:
    """Per seat, the lowest and highest rank their hand can still hold, from
    the public record of this round and the card being played now."""
    lo, hi = kings_order_log_bounds(obs["num_players"], obs["log"])
    pending = obs["pending"]
    if pending is not None:
        seat, r = pending["seat"], rank_of(pending["card"])
        left, right, side = pending["left"], pending["right"], pending["discard"]
        if side == "left" or (left == 0 and right > 0):
            lo[seat] = max(lo[seat], r)
        elif side == "right" or (right == 0 and left > 0):
            hi[seat] = min(hi[seat], r)
    return lo, hi
