"""cat_in_the_box: a bidding trick-taking game with a shared colour board (seed 001).

Rules (RULINGS.md, "cat_in_the_box")
------------------------------------
3-4 players. 40 cards, ranks 1..8, five of each; the cards have no colour.
A match is n rounds (n = number of players); round r's start player (first
leader, and first to discard and bid) is seat r mod n.

Each round: shuffle all 40 cards and deal 10 to each player (3 players: the
other 10 are set aside unseen). From the start player in seat order, each
player discards 1 card face down (secret); then, again from the start player
in seat order, each bids 1, 2 or 3 tricks (public; later bidders see the
earlier bids).

Board: 4 colours x ranks 1..8, rows red, blue, yellow, green; red is trump. A
play is a card plus a declared colour; it goes onto the empty space (colour,
card's rank), which the player's chip marks. A space already taken can never
be declared again.

* Leader: the declared colour is the trick's led colour. The leader may not
  declare red while no red space is taken, unless none of their cards has any
  legal non-red declaration (then red is allowed).
* Followers, clockwise from the leader: any card, any colour whose space is
  free and which is not void for them. Declaring a colour other than the led
  colour marks the *led* colour void for that player for the rest of the
  round. Nobody (leader included) may declare a colour void for them.
* Winner: the highest red if any red was played, else the highest card of the
  led colour (spaces are unique, so there are no ties). The winner leads next.
* Dobon: a player who is to act and has no legal play ends the round at once.
  The current trick counts for nobody and its chips leave the board. That
  player scores minus the tricks they won this round; everyone else scores
  normally.
* Otherwise the round ends after 8 tricks (everyone keeps one card unplayed).
  Score = tricks won + (only if tricks won == bid) the size of the largest
  orthogonally connected group of the player's own chips on the board.
* Standings by cumulative score; the seed gives no tie-break, so tied players
  share the rank.

Rulings made here (the seed and RULINGS.md are silent)
------------------------------------------------------
* All players discard first (from the start player, in seat order), then all
  bid (same order), as the seed's set-up lists the two steps one after the
  other. Discards are never revealed, not even at the end of a round; the
  card kept unplayed at the end of a round and the set-aside cards are never
  revealed either.
* Orthogonal adjacency on the board: the same colour row with ranks one apart,
  or the same rank in neighbouring rows in the order red, blue, yellow, green
  (red and green are not neighbours).
* "Dobon" is checked whenever a player becomes the one to act in the play
  phase, the leader of a new trick included (if the leader has no legal play,
  the current trick is empty and no chip leaves the board).
* A player with no chip on the board has a largest group of 0.
* ``scores()`` are the cumulative totals of finished rounds; a round in
  progress adds nothing until it is scored.
* ``describe_action`` does not name the rank of a secret discard.
* Flow: every discard, bid and play is asked, even with a single option, so
  the seat to act and the decision counter never depend on a hidden hand,
  except by dobon, which RULINGS makes a public event (declared in
  ``REVEALS``).
* Every play is public, the last trick's included: ``last_tricks`` keeps the
  previous round's tricks whole (added Dec 4, without a rules-version change:
  play, match IDs and replays are as before), since a seat's last card of a
  round can come before the round's end, and what followed reached it only
  as points. The trick dobon voids is in it, with no winner.

Redeal
------
``redeal(player, seed)`` pools the cards unknown to ``player`` (the other
players' hands, the other players' face-down discards, the set-aside cards)
and deals them back into the same slots with the same sizes. Voids are about
declared colours and cards carry no colour, so voids say nothing about
holdings and need no care. One inference is kept: when another player is to
act in the play phase, the round has not ended in dobon, so that player holds
a card with a legal play; the redeal is redrawn (rejection sampling, with a
constructive fallback after 200 tries, which swaps one playable card into
that hand and is then not exactly the conditional distribution) until that
holds. Not kept: a leader
who declared red before red was broken (the exception) showed that none of
their cards then had a legal non-red declaration; redeal ignores this.

Actions
-------
* ``("discard", rank)``: discard one card of that rank face down; ranks
  ascending.
* ``("bid", b)`` for b in 1, 2, 3.
* ``("play", rank, colour)``: play a card of that rank declared as that
  colour (``"red"``, ``"blue"``, ``"yellow"``, ``"green"``); ordered by rank,
  then colour in board order. At most 32 actions.

Observation layout
------------------
``seat``, ``num_players``, ``round`` (0-based), ``rounds``, ``start_player``
(this round's first leader), ``phase`` ("discard", "bid", "play", "over"),
``current_player``, ``hand`` (own ranks, sorted), ``my_discard`` (own
face-down card's rank or None), ``discarded`` (per seat: has discarded),
``hand_sizes`` (per seat), ``set_aside`` (count of cards set aside: 10 with 3
players, else 0), ``bids`` (per seat, None until made), ``board`` (dict colour
-> list of 8 owners for ranks 1..8, None = empty), ``voids`` (per seat, list
of void colours in board order), ``leader`` (seat leading the current trick),
``led_colour`` (None before the lead), ``trick`` (current trick: list of
[seat, rank, colour]), ``tricks`` (this round's finished tricks: list of
{"leader", "plays", "winner"}), ``trick_number`` (0-based), ``tricks_won``
(per seat, this round), ``scores`` (cumulative), ``last_round`` (points per
seat of the previous round, None before), ``last_dobon`` (seat that caused
dobon in the previous round, or None), ``last_tricks`` (the previous round's
tricks as in ``tricks``, whole, [] before the first; a trick voided by dobon
comes last, with winner None).

From an observation (``from_observation``): the other hands, the other face-
down discards and (3 players) the set-aside cards are sampled from the 40
cards less the own hand, the own discard and every card played this round; the
sampled hands do not keep the voids shown in ``voids``.
"""

from __future__ import annotations

from games.base import Action, Game, GameInfo, Observation
from games.sampling import fit, take, unseen

COLOURS = ("red", "blue", "yellow", "green")
COLOUR_INDEX = {c: i for i, c in enumerate(COLOURS)}
RED = 0
RANKS = range(1, 9)
COPIES = 5
HAND_SIZE = 10
TRICKS_PER_ROUND = 8
BIDS = (1, 2, 3)
EMPTY = -1


def largest_group(board: list[list[int]], seat: int) -> int:
    """Size of the largest orthogonally connected group of ``seat``'s chips.

    ``board[colour][rank - 1]`` holds the owner's seat or -1."""
    seen = [[False] * 8 for _ in range(4)]
    best = 0
    for c in range(4):
        for r in range(8):
            if board[c][r] != seat or seen[c][r]:
                continue
            seen[c][r] = True
            stack = [(c, r)]
            size = 0
            while stack:
                cc, rr = stack.pop()
                size += 1
                for nc, nr in ((cc - 1, rr), (cc + 1, rr), (cc, rr - 1), (cc, rr + 1)):
                    if 0 <= nc < 4 and 0 <= nr < 8 and not seen[nc][nr] and board[nc][nr] == seat:
                        seen[nc][nr] = True
                        stack.append((nc, nr))
            best = max(best, size)
    return best


def round_points(
    board: list[list[int]],
    bids: list[int | None],
    tricks_won: list[int],
    dobon: int | None = None,
) -> list[int]:
    """Points of one round. ``board`` must already exclude a dobon trick."""
    points = []
    for seat, won in enumerate(tricks_won):
        if seat == dobon:
            points.append(-won)
        elif won == bids[seat]:
            points.append(won + largest_group(board, seat))
        else:
            points.append(won)
    return points


def trick_winner(plays: list[tuple[int, int, int]]) -> int:
    """Seat winning a full trick of (seat, rank, colour index) plays."""
    reds = [p for p in plays if p[2] == RED]
    if reds:
        return max(reds, key=lambda p: p[1])[0]
    led = plays[0][2]
    return max((p for p in plays if p[2] == led), key=lambda p: p[1])[0]


def _tricks_view(tricks: list) -> list[dict]:
    """Finished tricks as the observation shows them."""
    return [{"leader": lead, "plays": [[s, r, COLOURS[c]] for s, r, c in plays], "winner": won}
            for lead, plays, won in tricks]


class CatInTheBox(Game):
    INFO = GameInfo(
        slug="cat_in_the_box",
        title="Cat in the Box",
        min_players=3,
        max_players=4,
        rules_version="1",
        max_decisions=2000,
        seed_ref="seed 001",
    )
    REVEALS = {
        "dobon": "RULINGS: a player to act with no legal play ends the round at "
        "once, so everyone learns that their hand has no legal play",
    }
    # Redeal draws at most this many shuffles before its constructive fallback.
    REDEAL_TRIES = 200

    # ---- set-up ------------------------------------------------------------
    def setup(self) -> None:
        n = self.num_players
        self.rounds = n
        self.total = [0] * n
        self.last_round: list[int] | None = None
        self.last_dobon: int | None = None
        # the previous round's tricks, whole (a trick voided by dobon last, winner None)
        self.last_tricks: list[tuple[int, list[tuple[int, int, int]], int | None]] = []
        self.round = -1
        self._start_round()

    def _start_round(self) -> None:
        n = self.num_players
        self.round += 1
        self.start_player = self.round % n
        deck = [r for r in RANKS for _ in range(COPIES)]
        self.rng.shuffle(deck)
        self.hands = [sorted(deck[s * HAND_SIZE:(s + 1) * HAND_SIZE]) for s in range(n)]
        self.set_aside = sorted(deck[n * HAND_SIZE:])
        self.discards: list[int | None] = [None] * n
        self.bids: list[int | None] = [None] * n
        self.board = [[EMPTY] * 8 for _ in range(4)]
        self.voids = [[False] * 4 for _ in range(n)]
        self.trick: list[tuple[int, int, int]] = []
        self.history: list[tuple[int, list[tuple[int, int, int]], int]] = []
        self.tricks_won = [0] * n
        self.leader = self.start_player
        self.phase = "discard"
        self.to_act = self.start_player
        if self.events is not None:
            self.narrate(
                f"round {self.round + 1}/{self.rounds}: 10 cards each"
                + (", 10 set aside" if n == 3 else "")
                + f"; seat {self.start_player} starts"
            )

    # ---- rules helpers -------------------------------------------------------
    def _plays_for(self, seat: int, leading: bool) -> list[tuple[int, int]]:
        """Legal (rank, colour index) plays of ``seat``."""
        voids = self.voids[seat]
        board = self.board
        plays = []
        last = None
        for rank in self.hands[seat]:
            if rank == last:
                continue
            last = rank
            for c in range(4):
                if not voids[c] and board[c][rank - 1] == EMPTY:
                    plays.append((rank, c))
        if leading and plays and not any(board[RED][r] != EMPTY for r in range(8)):
            non_red = [p for p in plays if p[1] != RED]
            if non_red:
                return non_red
        return plays

    def _has_play(self, seat: int, hand: list[int] | None = None) -> bool:
        """Whether ``seat`` has any legal play (the leader's red restriction
        never removes the last option, so this ignores it)."""
        voids = self.voids[seat]
        board = self.board
        for rank in self.hands[seat] if hand is None else hand:
            for c in range(4):
                if not voids[c] and board[c][rank - 1] == EMPTY:
                    return True
        return False

    def _check_dobon(self) -> None:
        if not self._has_play(self.to_act):
            self._end_round(dobon=self.to_act)

    def _end_round(self, dobon: int | None = None) -> None:
        if dobon is not None:
            for _, rank, c in self.trick:
                self.board[c][rank - 1] = EMPTY
            self.narrate(
                f"dobon: seat {dobon} cannot play; the trick is void"
                + (" and its chips leave the board" if self.trick else "")
            )
        points = round_points(self.board, self.bids, self.tricks_won, dobon)
        for seat, gained in enumerate(points):
            self.total[seat] += gained
        self.last_round = points
        self.last_dobon = dobon
        void = [(self.leader, list(self.trick), None)] if dobon is not None and self.trick else []
        self.last_tricks = [*self.history, *void]
        if self.events is not None:
            self.narrate(
                f"round {self.round + 1} scored: "
                + ", ".join(
                    f"seat {s} {p:+d} (bid {self.bids[s]}, won {self.tricks_won[s]})"
                    for s, p in enumerate(points)
                )
                + f"; totals {self.total}"
            )
        if self.round + 1 < self.rounds:
            self._start_round()
        else:
            self.phase = "over"
            self.to_act = -1
            self.narrate(f"game over: scores {self.total}")

    # ---- contract ------------------------------------------------------------
    def current_player(self) -> int:
        return self.to_act

    def is_terminal(self) -> bool:
        return self.to_act < 0

    def legal_actions(self) -> list[Action]:
        seat = self.to_act
        if seat < 0:
            return []
        if self.phase == "discard":
            return [("discard", r) for r in sorted(set(self.hands[seat]))]
        if self.phase == "bid":
            return [("bid", b) for b in BIDS]
        return [
            ("play", rank, COLOURS[c])
            for rank, c in self._plays_for(seat, leading=not self.trick)
        ]

    def _apply(self, action: Action) -> None:
        seat = self.to_act
        n = self.num_players
        kind = action[0]
        if kind == "discard":
            self.hands[seat].remove(action[1])
            self.discards[seat] = action[1]
            self.to_act = (seat + 1) % n
            if self.to_act == self.start_player:
                self.phase = "bid"
            return
        if kind == "bid":
            self.bids[seat] = action[1]
            self.to_act = (seat + 1) % n
            if self.to_act == self.start_player:
                self.phase = "play"
                self.leader = self.start_player
                self._check_dobon()
            return
        _, rank, colour = action
        c = COLOUR_INDEX[colour]
        self.hands[seat].remove(rank)
        self.board[c][rank - 1] = seat
        if self.trick and c != self.trick[0][2]:
            self.voids[seat][self.trick[0][2]] = True
        self.trick.append((seat, rank, c))
        if len(self.trick) < n:
            self.to_act = (seat + 1) % n
            self._check_dobon()
            return
        winner = trick_winner(self.trick)
        self.tricks_won[winner] += 1
        self.history.append((self.leader, self.trick, winner))
        if self.events is not None:
            self.narrate(
                f"trick {len(self.history)}: "
                + ", ".join(f"seat {s} {r} {COLOURS[cc]}" for s, r, cc in self.trick)
                + f"; seat {winner} wins"
            )
        self.trick = []
        if len(self.history) == TRICKS_PER_ROUND:
            self._end_round()
            return
        self.leader = winner
        self.to_act = winner
        self._check_dobon()

    def observation(self, player: int) -> Observation:
        led = COLOURS[self.trick[0][2]] if self.trick else None
        return {
            "seat": player,
            "num_players": self.num_players,
            "round": self.round,
            "rounds": self.rounds,
            "start_player": self.start_player,
            "phase": self.phase,
            "current_player": self.to_act,
            "hand": list(self.hands[player]),
            "my_discard": self.discards[player],
            "discarded": [d is not None for d in self.discards],
            "hand_sizes": [len(h) for h in self.hands],
            "set_aside": len(self.set_aside),
            "bids": list(self.bids),
            "board": {
                COLOURS[c]: [None if o == EMPTY else o for o in self.board[c]]
                for c in range(4)
            },
            "voids": [[COLOURS[c] for c in range(4) if v[c]] for v in self.voids],
            "leader": self.leader,
            "led_colour": led,
            "trick": [[s, r, COLOURS[c]] for s, r, c in self.trick],
            "tricks": _tricks_view(self.history),
            "trick_number": len(self.history),
            "tricks_won": list(self.tricks_won),
            "scores": list(self.total),
            "last_round": None if self.last_round is None else list(self.last_round),
            "last_dobon": self.last_dobon,
            "last_tricks": _tricks_view(self.last_tricks),
        }

    def reveals(self, action: Action, player: int) -> tuple | None:
        """Dobon ends the round in public: the seat that could not play."""
        after = self._peek(action)
        round_ended = after.round != self.round or after.to_act < 0
        if round_ended and after.last_dobon is not None:
            return ("dobon", after.last_dobon)
        return None

    def scores(self) -> list[float]:
        return list(self.total)

    # ---- copies and hidden information ----------------------------------------
    def clone(self) -> CatInTheBox:
        twin = self._shallow_twin()
        twin.total = list(self.total)
        twin.last_round = None if self.last_round is None else list(self.last_round)
        twin.hands = [list(h) for h in self.hands]
        twin.set_aside = list(self.set_aside)
        twin.discards = list(self.discards)
        twin.bids = list(self.bids)
        twin.board = [list(row) for row in self.board]
        twin.voids = [list(v) for v in self.voids]
        twin.trick = list(self.trick)
        twin.history = list(self.history)  # finished tricks are never mutated
        twin.last_tricks = self.last_tricks  # never changed once its round is over
        twin.tricks_won = list(self.tricks_won)
        return twin

    @classmethod
    def from_observation(cls, obs: Observation, seed: int, decisions: int = 0) -> CatInTheBox:
        g, rng = cls._blank_from_observation(obs, seed, decisions)
        n, me = g.num_players, obs["seat"]
        g.rounds = obs["rounds"]
        g.total = list(obs["scores"])
        g.last_round = None if obs["last_round"] is None else list(obs["last_round"])
        g.last_dobon = obs["last_dobon"]
        g.round = obs["round"]
        g.start_player = obs["start_player"]
        g.bids = list(obs["bids"])
        g.board = [[EMPTY if o is None else o for o in obs["board"][c]] for c in COLOURS]
        g.voids = [[c in v for c in COLOURS] for v in obs["voids"]]
        g.trick = [(s, r, COLOUR_INDEX[c]) for s, r, c in obs["trick"]]
        g.history, g.last_tricks = ([
            (t["leader"], [(s, r, COLOUR_INDEX[c]) for s, r, c in t["plays"]], t["winner"])
            for t in obs[key]
        ] for key in ("tricks", "last_tricks"))
        g.tricks_won = list(obs["tricks_won"])
        g.leader = obs["leader"]
        g.phase = obs["phase"]
        g.to_act = obs["current_player"]
        played = [r for _, r, _ in g.trick] + [r for _, plays, _ in g.history for _, r, _ in plays]
        own = list(obs["hand"]) + ([obs["my_discard"]] if obs["my_discard"] is not None else [])
        deck = [r for r in RANKS for _ in range(COPIES)]
        over = g.phase == "over"
        pool = unseen(deck, own + played, over)
        rng.shuffle(pool)
        sizes = obs["hand_sizes"]
        hidden = sum(sizes[s] + obs["discarded"][s] for s in range(n) if s != me) + obs["set_aside"]
        fit(pool, hidden, "cat_in_the_box", over)
        g.hands, g.discards = [], []
        for s in range(n):
            if s == me:
                g.hands.append(list(obs["hand"]))
                g.discards.append(obs["my_discard"])
                continue
            g.hands.append(sorted(take(pool, sizes[s])))
            g.discards.append(take(pool, 1)[0] if obs["discarded"][s] else None)
        g.set_aside = sorted(pool)
        return g._seed_future(rng)

    def redeal(self, player: int, seed: int) -> CatInTheBox:
        state = self._fresh_copy_for_redeal(seed)
        others = [s for s in range(state.num_players) if s != player]
        pool: list[int] = list(state.set_aside)
        for s in others:
            pool.extend(state.hands[s])
            discard = state.discards[s]
            if discard is not None:
                pool.append(discard)
        must_play = (
            state.to_act
            if state.phase == "play" and state.to_act >= 0 and state.to_act != player
            else None
        )
        # Layout of the flat card list: each other seat's hand, then its discard.
        hand_ranges = {}
        pos = 0
        for s in others:
            hand_ranges[s] = (pos, pos + len(state.hands[s]))
            pos = hand_ranges[s][1] + (state.discards[s] is not None)
        rng = state.rng
        cards = sorted(pool)  # where the cards really lay must not matter
        rng.shuffle(cards)
        tries = 1
        while must_play is not None:
            lo, hi = hand_ranges[must_play]
            if state._has_play(must_play, cards[lo:hi]):
                break
            if tries >= self.REDEAL_TRIES:
                # Constructive fallback: swap one playable card into that hand.
                outside = [
                    i for i in range(len(cards))
                    if not lo <= i < hi and state._has_play(must_play, [cards[i]])
                ]
                i, j = outside[rng.randrange(len(outside))], rng.randrange(lo, hi)
                cards[i], cards[j] = cards[j], cards[i]
                break
            rng.shuffle(cards)
            tries += 1
        for s in others:
            lo, hi = hand_ranges[s]
            state.hands[s] = sorted(cards[lo:hi])
            if state.discards[s] is not None:
                state.discards[s] = cards[hi]
        if state.set_aside:
            state.set_aside = sorted(cards[pos:])
        return state

    # ---- people ----------------------------------------------------------------
    def describe_action(self, action: Action) -> str:
        who = f"seat {self.to_act}"
        kind = action[0]
        if kind == "discard":
            return f"{who} discards a card face down"
        if kind == "bid":
            return f"{who} bids {action[1]} trick" + ("s" if action[1] != 1 else "")
        _, rank, colour = action
        text = f"{who} plays {rank} as {colour}"
        if self.trick:
            led = COLOURS[self.trick[0][2]]
            if colour != led and not self.voids[self.to_act][self.trick[0][2]]:
                text += f" (now void in {led})"
        else:
            text += " (leads)"
        return text
