"""grazia: shed your cards onto one pile per suit (seed 003 §09).

Rules (RULINGS.md, "grazia")
----------------------------
3-7 players, the 78 TENNOS cards without jokers. Each player is dealt
floor(78/n) cards; the remainder is laid face up, out of play. Of each
player's cards, floor(half) form that player's face-down draw pile, unseen
even by its owner; the rest is the hand (4 players: 19 each, 9 in the pile,
10 in hand, 2 cards out of play).

The field has one pile per suit, all empty at the start. Seat 0 takes the
first turn, then play goes clockwise. A turn is:

1. play or pass. A play is one card, or several cards of one suit with
   consecutive ranks (no wrap from K to A), onto that suit's pile. An empty
   pile may be started with any card free of penalty. On a pile with a top
   card, a play whose lowest card is not top + 1 costs a 2-point penalty
   (once per play); a card below the top is such a play too. The run's
   highest card becomes the top.
2. draw 1 card from one's own pile if it has cards.

End: when a player passes while their own pile is empty, every other player
takes one more turn (clockwise from the next seat), then the game ends.

Score = -(cards left in hand and pile) - 2 x penalties. Ties: the player
whose first turn came latest wins (seat 0 starts, so the later seat).

Rulings made here (the seed and RULINGS.md are silent)
------------------------------------------------------
* Which cards go to the pile: the deck is shuffled, each seat's cards are
  dealt from it, and the first floor(half) of them form the pile; the rest
  (and the out-of-play remainder) come from the same shuffle.
* "Passes while their own pile is empty" looks at the pile at the moment of
  the pass. Passes during the final turns do not trigger anything again.
* A player with an empty hand can only pass (then draws if the pile has
  cards); this is how a player with an empty hand and empty pile ends it.
* The final turns are full turns: the player still draws (it changes no
  score: cards in hand and pile count the same).
* The game always ends: every turn either plays a card from hand, draws one
  from a pile, or (pile empty, pass) triggers the end, so at most about
  78 + 39 + n turns happen. ``max_decisions`` is only a guard.
* Standings: score, then the tie-break above, which orders every seat, so
  no two players ever share a rank.
* The step after each card of a play ("stop" or the next card) is offered
  whether or not the player holds the next card, so the flow of the game
  reveals nothing about the hand (see Actions).
* Redeal keeps the player's own hand; every card the player has not seen
  (the other hands and every draw pile, the player's own included) is
  reshuffled among the same slots. No inference from history is lost:
  nothing about hidden cards is ever revealed before they are played.
* Flow: every turn asks "pass or a card", and whether a play's next step is
  asked is decided from public facts only (see the run step above); nothing
  the rules reveal changes it (``REVEALS`` is empty).

Actions
-------
A play is split into steps.

* Start of a turn: ``"pass"`` or a card (int, ``games.tennos`` encoding,
  ``suit * 13 + rank - 1``) from hand: the *lowest* card of the play. Order:
  ``"pass"``, then cards ascending.
* While a play is open: ``"stop"``, then the next card of the run (same
  suit, rank + 1) if the player holds it. The step is offered even when the
  player does not hold that card (``"stop"`` is then the only action), so
  that the others cannot tell from the flow of the game whether the player
  holds it. It is skipped (the play ends by itself) only when the run
  cannot go on for a reason everyone sees: after a K, or when the next card
  lies face up (on the field or out of play).

Observation layout
------------------
``seat``, ``num_players``, ``current_player`` (-1 at the end), ``hand``
(own cards, sorted), ``pile_size`` (own draw pile: its size only),
``hand_sizes`` and ``pile_sizes`` (per seat), ``field`` (per suit, the cards
played on that pile in order, oldest first), ``tops`` (per suit, the top card
or -1 when empty), ``out_of_play`` (sorted face-up remainder), ``penalties``
(per seat, count of penalised plays), ``scores`` (per seat, as it stands),
``run`` (cards placed so far in the play being made, in order; [] between
plays), ``log`` (every finished turn, oldest first: [seat, [cards played,
in order]], [] for a pass), ``run_penalised`` (whether that play costs a penalty),
``end_triggered`` (bool), ``trigger_seat`` (-1 until triggered),
``final_turns_left`` (turns still to come once triggered, else -1),
``turn`` (turns completed so far), ``first_turn_order`` (seats in the order
of their first turn: 0, 1, ..., n-1).

From an observation (``from_observation``): the other hands and every draw
pile, the own included, are sampled.
"""

from __future__ import annotations

from games.base import Action, Game, GameInfo, Observation, reshuffle
from games.sampling import fit, take
from games.tennos import NUM_RANKS, card_name, cards_name, deck, rank_of, suit_of

PASS = "pass"
STOP = "stop"
PENALTY = 2


def deal_sizes(num_players: int) -> tuple[int, int, int]:
    """(cards per player, of which in the pile, cards out of play)."""
    per = 78 // num_players
    return per, per // 2, 78 - per * num_players


def play_is_penalised(field_pile: list[int], lowest: int) -> bool:
    """A play starting with ``lowest`` on this suit pile costs a penalty."""
    if not field_pile:
        return False
    return rank_of(lowest) != rank_of(field_pile[-1]) + 1


class Grazia(Game):
    INFO = GameInfo(
        slug="grazia",
        title="grazia",
        min_players=3,
        max_players=7,
        rules_version="2",
        max_decisions=1000,
        seed_ref="seed 003 §09",
    )

    def setup(self) -> None:
        n = self.num_players
        per, in_pile, extra = deal_sizes(n)
        cards = deck()
        self.rng.shuffle(cards)
        self.out_of_play = sorted(cards[per * n:])
        self.hands: list[list[int]] = []
        self.piles: list[list[int]] = []  # draw from the end
        for seat in range(n):
            dealt = cards[seat * per:(seat + 1) * per]
            self.piles.append(dealt[:in_pile])
            self.hands.append(sorted(dealt[in_pile:]))
        self.field: list[list[int]] = [[] for _ in range(6)]
        self.penalties = [0] * n
        self.to_act = 0
        self.turn = 0
        self.run: list[int] = []  # cards of the play in progress
        # every finished turn: (seat, the cards played, in order), () for a pass
        self.log: list[tuple[int, tuple[int, ...]]] = []
        self.run_penalised = False
        self.end_triggered = False
        self.trigger_seat = -1
        self.final_turns_left = -1
        self.narrate(
            f"deal: {per} cards each, {in_pile} of them in each player's pile; "
            f"out of play: {cards_name(self.out_of_play) or 'none'}"
        )

    # ---- contract --------------------------------------------------------
    def current_player(self) -> int:
        return self.to_act

    def is_terminal(self) -> bool:
        return self.to_act < 0

    def legal_actions(self) -> list[Action]:
        if self.to_act < 0:
            return []
        if self.run:
            nxt = self.run[-1] + 1
            return [STOP, nxt] if nxt in self.hands[self.to_act] else [STOP]
        return [PASS, *self.hands[self.to_act]]

    def _run_can_go_on(self, c: int) -> bool:
        """Whether a run ending at ``c`` might go on, judged from public
        information only (never from the player's hand: that would tell the
        others whether the player holds the next card)."""
        if rank_of(c) == NUM_RANKS:
            return False
        nxt = c + 1
        return nxt not in self.field[suit_of(c)] and nxt not in self.out_of_play

    def _apply(self, action: Action) -> None:
        seat = self.to_act
        if action == PASS:
            self.end_turn(seat, ())
            return
        if action == STOP:
            self._finish_play(seat)
            return
        if not self.run:  # first card of a play
            pile = self.field[suit_of(action)]
            self.run_penalised = play_is_penalised(pile, action)
        self.hands[seat].remove(action)
        self.field[suit_of(action)].append(action)
        self.run.append(action)
        if not self._run_can_go_on(action):
            self._finish_play(seat)

    def _finish_play(self, seat: int) -> None:
        if self.run_penalised:
            self.penalties[seat] += 1
        if self.events is not None:
            self.narrate(
                f"seat {seat} plays {cards_name(self.run)}"
                + (" (penalty 2)" if self.run_penalised else "")
            )
        played = tuple(self.run)
        self.run = []
        self.run_penalised = False
        self.end_turn(seat, played)

    def end_turn(self, seat: int, played: tuple[int, ...]) -> None:
        """Ends ``seat``'s turn: logs ``played`` (the turn's cards, () for a
        pass), draws from the seat's pile, counts the end down and passes the
        turn on; it counts no decision. Public for fast playouts
        (``bots.search.games.grazia``), which lay a whole turn's cards on the
        fields themselves and end the turn here, as ``apply`` does after a
        pass or a finished play."""
        n = self.num_players
        self.log.append((seat, played))
        passed = not played
        pile_was_empty = not self.piles[seat]
        if not pile_was_empty:
            self.hands[seat].append(self.piles[seat].pop())
            self.hands[seat].sort()
        self.turn += 1
        if self.end_triggered:
            self.final_turns_left -= 1
        elif passed and pile_was_empty:
            self.end_triggered = True
            self.trigger_seat = seat
            self.final_turns_left = n - 1
            self.narrate(f"seat {seat} passes with an empty pile: one more turn each")
        if self.end_triggered and self.final_turns_left == 0:
            self.to_act = -1
            self.narrate(f"game over: scores {self.scores()}")
            return
        self.to_act = (seat + 1) % n

    def observation(self, player: int) -> Observation:
        return {
            "seat": player,
            "num_players": self.num_players,
            "current_player": self.to_act,
            "hand": list(self.hands[player]),
            "pile_size": len(self.piles[player]),
            "hand_sizes": [len(h) for h in self.hands],
            "pile_sizes": [len(p) for p in self.piles],
            "field": [list(p) for p in self.field],
            "tops": [p[-1] if p else -1 for p in self.field],
            "out_of_play": list(self.out_of_play),
            "penalties": list(self.penalties),
            "scores": self.scores(),
            "run": list(self.run),
            "log": list(self.log),  # tuples pack as arrays; copied, not rebuilt
            "run_penalised": self.run_penalised,
            "end_triggered": self.end_triggered,
            "trigger_seat": self.trigger_seat,
            "final_turns_left": self.final_turns_left,
            "turn": self.turn,
            "first_turn_order": list(range(self.num_players)),
        }

    def scores(self) -> list[float]:
        return [
            -(len(self.hands[s]) + len(self.piles[s])) - PENALTY * self.penalties[s]
            for s in range(self.num_players)
        ]

    def rank_keys(self) -> list:
        # seat 0 takes the first turn, so a later seat had its first turn later
        return [(score, seat) for seat, score in enumerate(self.scores())]

    def clone(self) -> Grazia:
        twin = self._shallow_twin()
        twin.hands = [list(h) for h in self.hands]
        twin.piles = [list(p) for p in self.piles]
        twin.field = [list(p) for p in self.field]
        twin.out_of_play = list(self.out_of_play)
        twin.penalties = list(self.penalties)
        twin.run = list(self.run)
        twin.log = list(self.log)  # entries are tuples, never mutated
        return twin

    @classmethod
    def from_observation(cls, obs: Observation, seed: int, decisions: int = 0) -> Grazia:
        g, rng = cls._blank_from_observation(obs, seed, decisions)
        n, me = g.num_players, obs["seat"]
        g.out_of_play = list(obs["out_of_play"])
        g.field = [list(p) for p in obs["field"]]
        # every card once: the unseen cards, ascending (as _minus gives them)
        seen = set(obs["hand"]).union(g.out_of_play, *g.field)
        pool = [c for c in range(78) if c not in seen]
        rng.shuffle(pool)
        sizes, piles = obs["hand_sizes"], obs["pile_sizes"]
        fit(pool, sum(sizes[s] for s in range(n) if s != me) + sum(piles), "grazia",
             obs["current_player"] < 0)
        g.hands, g.piles = [], []
        for s in range(n):
            g.hands.append(list(obs["hand"]) if s == me else sorted(take(pool, sizes[s])))
            g.piles.append(take(pool, piles[s]))
        g.penalties = list(obs["penalties"])
        g.to_act = obs["current_player"]
        g.turn = obs["turn"]
        g.run = list(obs["run"])
        g.log = [(seat, tuple(cards)) for seat, cards in obs["log"]]
        g.run_penalised = obs["run_penalised"]
        g.end_triggered = obs["end_triggered"]
        g.trigger_seat = obs["trigger_seat"]
        g.final_turns_left = obs["final_turns_left"]
        return g._seed_future(rng)

    def redeal(self, player: int, seed: int) -> Grazia:
        state = self._fresh_copy_for_redeal(seed)
        others = [seat for seat in range(state.num_players) if seat != player]
        groups = [state.hands[seat] for seat in others] + state.piles
        dealt = reshuffle(state.rng, groups)
        for seat, hand in zip(others, dealt):
            state.hands[seat] = sorted(hand)
        state.piles = dealt[len(others):]
        return state

    # ---- people --------------------------------------------------------
    def describe_action(self, action: Action) -> str:
        seat = self.to_act
        if action == PASS:
            if not self.piles[seat] and not self.end_triggered:
                return f"seat {seat} passes with an empty pile (the game ends after one more turn each)"
            return f"seat {seat} passes"
        if action == STOP:
            return f"seat {seat} stops the run at {card_name(self.run[-1])}"
        if self.run:
            return f"seat {seat} adds {card_name(action)} to the run"
        pile = self.field[suit_of(action)]
        onto = f"onto {card_name(pile[-1])}" if pile else "on the empty pile"
        cost = " (penalty 2)" if play_is_penalised(pile, action) else ""
        return f"seat {seat} plays {card_name(action)} {onto}{cost}"
