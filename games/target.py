"""target (Target / 目標！): win the target card of each round (seed 003 §08).

Rules (RULINGS.md, "target")
----------------------------
2-6 players, the 78 TENNOS cards without jokers. Deal 5 cards each; the rest
is the face-down deck. Seat 0 is the first start player (SP).

Each round:

1. The SP reveals 3 cards from the deck and chooses one as the target; the
   other 2 go face up to the discard pile.
2. From the SP clockwise, each player plays one card face up.
3. If any played card has the target's suit: among those cards, the one
   whose rank is farthest from the target's rank wins; ties: the one played
   earlier wins. Otherwise the card whose rank is closest to the target's
   rank wins; ties: the one played later wins.
4. The winner keeps the target. The played cards go face up to the discard
   pile. From the SP clockwise, each player may discard 0-2 cards from hand
   face down (others see only how many), then draws back to 5 cards. An
   empty deck is refilled by shuffling the discard pile.
5. The winner becomes the SP of the next round.

The first player to hold 5 targets wins ("専守" read as "先取"); the game
ends at once. The others rank by the number of targets they hold.

Rulings made here (the seed and RULINGS.md are silent)
------------------------------------------------------
* Refill timing: the discard pile is shuffled (with ``self.rng``) into a new
  deck at the moment a card must be taken from an empty deck (a reveal or a
  draw), not earlier; cards discarded up to that moment go into it. After a
  refill the discard pile is empty and nobody knows the new deck's order.
* If deck and discard pile are both empty when a card is needed, no card is
  taken (the hand stays short / fewer cards are revealed). This cannot
  happen in practice: hands hold at most 30 cards and targets at most
  4 per player plus the winning one, so at least 24 cards remain in deck and
  discard pile together.
* The round's discards and refills happen only when the game goes on: once
  a player holds 5 targets the game ends immediately.
* Drawing back to 5 happens right after each player's own discards, player
  by player from the SP (so a later player may draw a card an earlier player
  discarded if the deck was refilled in between).
* How many cards each player discarded face down is public (others see
  only how many); ``discarded`` shows the round in progress and
  ``last_round`` keeps the previous round's counts, which the next round
  would otherwise reset before the players who discarded early are asked
  again. Added without a rules-version change: play, match IDs and replays
  are as before.
* Targets held are public (kept face up); the round's plays and the 2
  unchosen revealed cards are public while in the discard pile; face-down
  discards are known only to the player who discarded them.
* The game cannot loop: every round gives one target away, so after at most
  4n + 1 rounds someone holds 5. ``max_decisions`` is only a guard; a capped
  match is scored by targets held.
* Standings: number of targets held; players with equal counts share a rank
  (the seed gives no tie-break among the others).
* Redeal pools every card whose place the player does not know (other
  players' hands, the deck, other players' face-down discards still in the
  discard pile) and deals it back into the same slots. It ignores one kind
  of inference from history: which public or own cards went into the deck
  at the last refill (those may be dealt back elsewhere in unknown slots);
  the observation does not track that either.
* Flow: the discard step is asked until the player stops, has discarded 2
  cards or has no card left (all public); choosing the target and playing
  are always asked. A round's 3 revealed cards are declared in ``REVEALS``.

Actions
-------
* Choose the target (SP): the card (int, ``games.tennos`` encoding
  ``suit * 13 + rank - 1``) among the 3 revealed, ascending.
* Play: a card from hand, ascending.
* Discard (up to 2 steps per player): ``"stop"`` or a card from hand to
  discard face down. After the second discard the player stops by itself
  and draws.

Observation layout
------------------
``seat``, ``num_players``, ``current_player`` (-1 at the end), ``phase``
(``"choose"``, ``"play"``, ``"discard"``, ``"over"``), ``start_player``,
``round`` (0-based), ``revealed`` (the 3 revealed cards while the SP
chooses, else []), ``target`` (this round's target card or -1), ``plays``
(this round's [seat, card] in play order), ``hand`` (own cards, sorted),
``hand_sizes`` (per seat), ``targets`` (per seat, sorted target cards held),
``scores`` (per seat, targets held), ``deck_size``, ``discard_size``,
``discard_face_up`` (sorted face-up cards in the discard pile),
``my_face_down`` (sorted cards this player discarded face down that are
still in the discard pile), ``discarded`` (per seat, how many cards that
player discarded face down this round), ``refills`` (how many times the
deck was rebuilt), ``last_round`` (the previous round as
{"target", "plays", "winner", "discarded"}, or None; ``discarded`` is the
per-seat count of face-down discards after that round, None while they are
being made).

From an observation (``from_observation``): the other hands, the deck and the
others' face-down discards are sampled (older face-down discards, whose owners
only their own views show, are credited to the other seats in turn).
"""

from __future__ import annotations

from games.base import Action, Game, GameInfo, Observation, reshuffle
from games.sampling import fit, take
from games.tennos import card_name, cards_name, deck, rank_of, suit_of

STOP = "stop"
HAND_SIZE = 5
TARGETS_TO_WIN = 5
MAX_DISCARD = 2
FACE_UP = -1  # owner tag of a face-up card in the discard pile


def round_winner(target: int, plays: list[tuple[int, int]]) -> int:
    """Seat winning ``target`` given the plays (seat, card) in play order."""
    suit, rank = suit_of(target), rank_of(target)
    same = [(seat, c) for seat, c in plays if suit_of(c) == suit]
    if same:
        best_seat, best = -1, -1
        for seat, c in same:  # farthest; strictly farther needed: earlier wins ties
            distance = abs(rank_of(c) - rank)
            if distance > best:
                best_seat, best = seat, distance
        return best_seat
    best_seat, best = -1, 99
    for seat, c in plays:  # closest; later wins ties
        distance = abs(rank_of(c) - rank)
        if distance <= best:
            best_seat, best = seat, distance
    return best_seat


class Target(Game):
    INFO = GameInfo(
        slug="target",
        title="Target",
        min_players=2,
        max_players=6,
        rules_version="1",
        max_decisions=4000,
        seed_ref="seed 003 §08",
    )
    REVEALS = {
        "cards turned up": "RULINGS: each round the start player reveals 3 cards "
        "from the deck",
    }

    def setup(self) -> None:
        n = self.num_players
        cards = deck()
        self.rng.shuffle(cards)
        self.hands: list[list[int]] = [sorted(cards[s * HAND_SIZE:(s + 1) * HAND_SIZE]) for s in range(n)]
        self.deck: list[int] = cards[n * HAND_SIZE:]  # draw from the end
        # discard pile: (card, owner), owner FACE_UP for face-up cards
        self.discard: list[tuple[int, int]] = []
        self.targets: list[list[int]] = [[] for _ in range(n)]
        self.sp = 0
        self.round = -1
        self.refills = 0
        self.last_round: dict | None = None
        self.winner = -1
        self.phase = "choose"
        self.revealed: list[int] = []
        self.target = -1
        self.plays: list[tuple[int, int]] = []
        self.discarded = [0] * n
        self.to_act = 0
        self._start_round()

    # ---- deck ----------------------------------------------------------------
    def _take(self) -> int | None:
        if not self.deck:
            if not self.discard:
                return None
            self.deck = sorted(c for c, _ in self.discard)
            self.discard = []
            self.rng.shuffle(self.deck)
            self.refills += 1
            if self.events is not None:
                self.narrate(f"the deck is empty: the discard pile is shuffled into a new deck of {len(self.deck)}")
        return self.deck.pop()

    # ---- round flow ----------------------------------------------------------
    def _start_round(self) -> None:
        self.round += 1
        self.phase = "choose"
        self.revealed = []
        for _ in range(3):
            c = self._take()
            if c is not None:
                self.revealed.append(c)
        self.revealed.sort()
        self.target = -1
        self.plays = []
        self.discarded = [0] * self.num_players
        self.to_act = self.sp
        if self.events is not None:
            self.narrate(f"round {self.round + 1}: seat {self.sp} reveals {cards_name(self.revealed)}")

    def judge_round(self) -> None:
        """Every seat has played: the round's winner takes the target, the
        plays go face up to the discard pile, and the match ends or the
        discard steps begin. Public for fast playouts
        (``bots.search.games.target``), which play the cards on the fields
        themselves; it counts no decision."""
        winner = round_winner(self.target, self.plays)
        self.targets[winner].append(self.target)
        self.targets[winner].sort()
        for _, c in self.plays:
            self.discard.append((c, FACE_UP))
        self.last_round = {
            "target": self.target,
            "plays": [[s, c] for s, c in self.plays],
            "winner": winner,
            "discarded": None,  # set once the round's discards are made
        }
        if self.events is not None:
            self.narrate(
                f"seat {winner} wins {card_name(self.target)} "
                f"(plays: {', '.join(f'{s}:{card_name(c)}' for s, c in self.plays)}); "
                f"targets {[len(t) for t in self.targets]}"
            )
        self.winner = winner
        if len(self.targets[winner]) >= TARGETS_TO_WIN:
            self.phase = "over"
            self.to_act = -1
            self.narrate(f"seat {winner} holds {TARGETS_TO_WIN} targets and wins")
            return
        self.phase = "discard"
        self.to_act = self.sp

    def end_discards(self, seat: int) -> None:
        """``seat``'s discard step is over: its hand is refilled, and the next
        seat discards or, after the last, the next round starts. Public for
        fast playouts (``bots.search.games.target``); it counts no decision."""
        hand = self.hands[seat]
        while len(hand) < HAND_SIZE:
            c = self._take()
            if c is None:
                break
            hand.append(c)
        hand.sort()
        nxt = (seat + 1) % self.num_players
        if nxt == self.sp:
            assert self.last_round is not None  # set by judge_round
            self.last_round = {**self.last_round, "discarded": list(self.discarded)}
            self.sp = self.winner
            self._start_round()
        else:
            self.to_act = nxt

    # ---- contract --------------------------------------------------------
    def current_player(self) -> int:
        return self.to_act

    def is_terminal(self) -> bool:
        return self.to_act < 0

    def legal_actions(self) -> list[Action]:
        if self.to_act < 0:
            return []
        if self.phase == "choose":
            return list(self.revealed)
        if self.phase == "play":
            return list(self.hands[self.to_act])
        return [STOP, *self.hands[self.to_act]]

    def _apply(self, action: Action) -> None:
        seat = self.to_act
        if self.phase == "choose":
            self.target = action
            for c in self.revealed:
                if c != action:
                    self.discard.append((c, FACE_UP))
            self.revealed = []
            self.phase = "play"
            if self.events is not None:
                self.narrate(f"seat {seat} chooses the target {card_name(action)}")
            return
        if self.phase == "play":
            self.hands[seat].remove(action)
            self.plays.append((seat, action))
            nxt = (seat + 1) % self.num_players
            if nxt == self.sp:
                self.judge_round()
            else:
                self.to_act = nxt
            return
        # discard phase
        if action == STOP:
            self.end_discards(seat)
            return
        self.hands[seat].remove(action)
        self.discard.append((action, seat))
        self.discarded[seat] += 1
        if self.discarded[seat] >= MAX_DISCARD or not self.hands[seat]:
            self.end_discards(seat)

    def observation(self, player: int) -> Observation:
        return {
            "seat": player,
            "num_players": self.num_players,
            "current_player": self.to_act,
            "phase": self.phase,
            "start_player": self.sp,
            "round": self.round,
            "revealed": list(self.revealed),
            "target": self.target,
            "plays": [[s, c] for s, c in self.plays],
            "hand": list(self.hands[player]),
            "hand_sizes": [len(h) for h in self.hands],
            "targets": [list(t) for t in self.targets],
            "scores": self.scores(),
            "deck_size": len(self.deck),
            "discard_size": len(self.discard),
            "discard_face_up": sorted(c for c, owner in self.discard if owner == FACE_UP),
            "my_face_down": sorted(c for c, owner in self.discard if owner == player),
            "discarded": list(self.discarded),
            "refills": self.refills,
            "last_round": None if self.last_round is None else {
                "target": self.last_round["target"],
                "plays": [list(p) for p in self.last_round["plays"]],
                "winner": self.last_round["winner"],
                "discarded": self.last_round["discarded"],
            },
        }

    def reveals(self, action: Action, player: int) -> tuple | None:
        """A new round turns the deck's 3 top cards face up."""
        after = self._peek(action)
        if after.round != self.round and after.to_act >= 0:
            return ("cards turned up", tuple(after.revealed))
        return None

    def scores(self) -> list[float]:
        return [len(t) for t in self.targets]

    def clone(self) -> Target:
        twin = self._shallow_twin()
        twin.hands = [list(h) for h in self.hands]
        twin.deck = list(self.deck)
        twin.discard = list(self.discard)
        twin.targets = [list(t) for t in self.targets]
        twin.revealed = list(self.revealed)
        twin.plays = list(self.plays)
        twin.discarded = list(self.discarded)
        return twin  # last_round is never mutated in place, sharing it is safe

    @classmethod
    def from_observation(cls, obs: Observation, seed: int, decisions: int = 0) -> Target:
        g, rng = cls._blank_from_observation(obs, seed, decisions)
        n, me = g.num_players, obs["seat"]
        face_up = list(obs["discard_face_up"])
        mine = list(obs["my_face_down"])
        known = set(obs["hand"]) | set(face_up) | set(mine) | set(obs["revealed"])
        for t in obs["targets"]:
            known.update(t)
        if obs["phase"] == "play":
            # judged plays go to the discard pile, and may be in the deck since
            known.update(c for _, c in obs["plays"])
            known.add(obs["target"])
        pool = [c for c in deck() if c not in known]
        rng.shuffle(pool)
        unknown_discards = obs["discard_size"] - len(face_up) - len(mine)
        sizes = obs["hand_sizes"]
        hidden = sum(sizes[s] for s in range(n) if s != me) + obs["deck_size"] + unknown_discards
        fit(pool, hidden, "target", obs["current_player"] < 0)
        g.hands = [list(obs["hand"]) if s == me else sorted(take(pool, sizes[s])) for s in range(n)]
        g.deck = take(pool, obs["deck_size"])
        # face-down discards of others: this round's counts are public, older
        # ones are credited to some other seat (only their owner's view shows them)
        owners: list[int] = []
        for s in range(n):
            if s != me:
                owners.extend([s] * obs["discarded"][s])
        others = [s for s in range(n) if s != me] or [me]
        while len(owners) < unknown_discards:
            owners.append(others[len(owners) % len(others)])
        g.discard = (
            [(c, FACE_UP) for c in face_up]
            + [(c, me) for c in mine]
            + [(c, owner) for c, owner in zip(pool, owners[:unknown_discards])]
        )
        g.targets = [list(t) for t in obs["targets"]]
        g.sp = obs["start_player"]
        g.round = obs["round"]
        g.refills = obs["refills"]
        last = obs["last_round"]
        g.last_round = None if last is None else {
            "target": last["target"], "plays": [list(p) for p in last["plays"]], "winner": last["winner"],
            "discarded": last["discarded"] and list(last["discarded"]),
        }
        g.winner = -1 if last is None else last["winner"]
        g.phase = obs["phase"]
        g.revealed = list(obs["revealed"])
        g.target = obs["target"]
        g.plays = [(s, c) for s, c in obs["plays"]]
        g.discarded = list(obs["discarded"])
        g.to_act = obs["current_player"]
        return g._seed_future(rng)

    def redeal(self, player: int, seed: int) -> Target:
        state = self._fresh_copy_for_redeal(seed)
        others = [seat for seat in range(state.num_players) if seat != player]
        hidden_slots = [i for i, (_, owner) in enumerate(state.discard) if owner not in (FACE_UP, player)]
        groups = [state.hands[seat] for seat in others]
        groups += [state.deck, [state.discard[i][0] for i in hidden_slots]]
        *hands, state.deck, discards = reshuffle(state.rng, groups)
        for seat, hand in zip(others, hands):
            state.hands[seat] = sorted(hand)
        for i, c in zip(hidden_slots, discards):
            state.discard[i] = (c, state.discard[i][1])
        return state

    # ---- people --------------------------------------------------------
    def describe_action(self, action: Action) -> str:
        seat = self.to_act
        if self.phase == "choose":
            return f"seat {seat} chooses {card_name(action)} as the target"
        if self.phase == "play":
            return f"seat {seat} plays {card_name(action)} (target {card_name(self.target)})"
        if action == STOP:
            return f"seat {seat} stops discarding and draws back to {HAND_SIZE}"
        return f"seat {seat} discards {card_name(action)} face down"
