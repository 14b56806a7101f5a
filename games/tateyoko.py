"""tateyoko: grow a grid of TENNOS cards, up by rank and across by suit (seed 003 §03).

Rules (RULINGS.md, "tateyoko")
------------------------------
3-7 players, the 78 TENNOS suit cards (no jokers). Each game: shuffle, deal
15/12/10/8/8 cards each for 3/4/5/6/7 players; the rest is the face-down
deck, whose top card is turned face up as the grid's first card, at (0, 0).

From the start player clockwise, a turn is one of:

* **Play:** place one or more cards from hand on the grid. Each card goes on
  an empty cell orthogonally next to at least one card. Vertical neighbours
  must have the same rank; horizontal neighbours the same suit and ranks one
  apart, K and A being one apart (A-2-...-Q-K-A). Every neighbour of the new
  card must fit. Each card after the first must be next to the card placed
  just before it, and all the turn's cards lie in one straight line.
* **Pass:** draw 1 card if the deck has cards (nothing otherwise).

A game ends at once when a player's hand is empty, or after n passes in a
row. Score: empty hand +5; every other player loses (cards of their largest
suit in hand x number of suits in hand). A match is n games; the start player
of game g (0-based) is seat g mod n (seat 0 first, then moving left). The
cumulative score decides the standings.

Rulings made here (the seed and RULINGS.md are silent)
------------------------------------------------------
* Grid coordinates: the first card is at (0, 0); x grows to the right, y
  grows *upwards* (the seed's "above" is y + 1, "below" y - 1). The grid is
  unbounded.
* The straight line: the second card of a turn fixes the direction (any of
  the four neighbours of the first card); every later card continues in that
  direction, next to the previous one.
* A turn ends when the player stops, when their hand is empty (the game
  ends), or by itself when *no card that is not already on the grid* fits
  the next cell(s) allowed by the line rule: a fact everyone can see.
  Otherwise the next step ("stop", or another card) is always offered, even
  when the player holds no card that fits, in which case "stop" is the only
  action. The rules let a player stop whenever they like, so at the table
  nobody learns from the end of a turn whether the player could have gone
  on; ending the turn by itself when the *hand* held no fitting card would
  tell everyone so through the seat to act and the decision counter
  (rules version 2; version 1 did that).
* "Pass" resets nothing; any placement resets the passes-in-a-row count. A
  player may pass even when they could play. Pass is offered only as the
  first step of a turn.
* Scores "as they stand" are the totals of the finished games only.
* Nothing hidden is ever shown but each hand's penalty when a game is
  scored (declared in ``REVEALS``).
* Who placed which card, in what order, and who passed are public: everyone
  at the table sees each turn. ``log`` carries them for the game in
  progress (a seat is asked only at its own turns, and the grid alone does
  not say who laid what). Added without a rules-version change: play,
  match IDs and replays are as before; only the observation gained a
  field. ``previous_log`` keeps the game before, whole (added Dec 4): a
  seat's last decision of a game can come before its end, and what
  followed reached it only as points.
* Standings: by total score; there is no tie-break (tied players share a rank).
* The seed's optional early stop (a penalty threshold such as -20) is not
  used: the match is always n games (RULINGS.md).
* Redeal resamples the other hands and the deck together (sizes kept). It
  does not keep inferences from history such as "they passed, so they held
  no fitting card" (a player may pass at will anyway).

Actions
-------
* ``"pass"``: first step of a turn only (draws a card if the deck has any).
* ``"stop"``: end the turn after at least one card was placed (offered
  whenever a card not on the grid could still fit the line, see above).
* ``(card, x, y)``: place ``card`` (TENNOS int, ``suit * 13 + rank - 1``) on
  cell (x, y). At the first step: any legal cell; later: the next cell(s)
  allowed by the line rule.

Order: ``"pass"`` or ``"stop"`` first, then placements sorted by
(card, x, y).

Observation layout
------------------
``seat``, ``num_players``, ``current_player``, ``game`` (0-based index of the
current game), ``games`` (n), ``start_player`` (of this game), ``hand``
(sorted own cards), ``hand_sizes`` (per seat), ``deck_size``, ``grid`` (list
of [x, y, card], sorted by x then y), ``turn`` (list of [x, y, card] placed
so far in the current turn, in order; empty between turns), ``log``
(this game's finished turns, oldest first, each [seat, [cards in the
order placed]], [] for a pass; where each card lies is in ``grid``),
``previous_log`` (the previous game's ``log``, whole; [] in the first), ``passes``
(passes in a row), ``scores`` (cumulative totals of finished games),
``last_game`` (per-seat points of the previous game; zeros before),
``game_over`` (bool: the match has ended).

Implementation note: the open cells and the grid view are cached, keyed on
the identity and size of ``self.grid``; tests building positions assign a
new dict to ``grid`` (the grid only grows in play, so this is safe).

From an observation (``from_observation``): the other hands and the deck are
sampled.
"""

from __future__ import annotations

from typing import cast

from games.base import Action, Game, GameInfo, Observation, reshuffle
from games.sampling import fit, minus, take
from games.tennos import NUM_RANKS, card_name, deck

PASS = "pass"
STOP = "stop"
HAND_SIZES = {3: 15, 4: 12, 5: 10, 6: 8, 7: 8}
NEIGHBOURS = ((0, 1), (0, -1), (1, 0), (-1, 0))


def ranks_adjacent(a: int, b: int) -> bool:
    """Ranks of cards a and b are one apart, K and A included."""
    return (a % NUM_RANKS - b % NUM_RANKS) % NUM_RANKS in (1, NUM_RANKS - 1)


def fits(grid: dict[tuple[int, int], int], c: int, x: int, y: int) -> bool:
    """May card c go on cell (x, y)? (empty, next to a card, every neighbour fits)"""
    if (x, y) in grid:
        return False
    touching = False
    rank = c % NUM_RANKS
    for dy in (1, -1):
        other = grid.get((x, y + dy))
        if other is not None:
            touching = True
            if other % NUM_RANKS != rank:
                return False
    suit = c // NUM_RANKS
    for dx in (1, -1):
        other = grid.get((x + dx, y))
        if other is not None:
            touching = True
            if other // NUM_RANKS != suit or not ranks_adjacent(c, other):
                return False
    return touching


def cell_candidates(grid: dict[tuple[int, int], int], x: int, y: int) -> list[int]:
    """Every card (of the 78) that fits the empty cell (x, y), ascending."""
    if (x, y) in grid:
        return []
    vertical = [grid[p] for p in ((x, y + 1), (x, y - 1)) if p in grid]
    horizontal = [grid[p] for p in ((x + 1, y), (x - 1, y)) if p in grid]
    if vertical:
        rank = vertical[0] % NUM_RANKS
        if any(v % NUM_RANKS != rank for v in vertical):
            return []
        options = [s * NUM_RANKS + rank for s in range(6)]
    elif horizontal:
        h = horizontal[0]
        suit = h // NUM_RANKS
        options = [
            suit * NUM_RANKS + (h % NUM_RANKS + d) % NUM_RANKS for d in (-1, 1)
        ]
    else:
        return []
    return sorted(
        c
        for c in set(options)
        if all(h // NUM_RANKS == c // NUM_RANKS and ranks_adjacent(c, h) for h in horizontal)
    )


def frontier(grid: dict[tuple[int, int], int]) -> list[tuple[int, int]]:
    """Empty cells orthogonally next to a card, sorted."""
    cells = set()
    for x, y in grid:
        for dx, dy in NEIGHBOURS:
            cell = (x + dx, y + dy)
            if cell not in grid:
                cells.add(cell)
    return sorted(cells)


# cell_options by the cell's four neighbours (up, down, right, left; None for
# an empty cell), filled as they are asked for. Public: a fast playout looks a
# neighbourhood up here first (``bots.search.games.tateyoko.whole_game``).
CELL_OPTIONS: dict[tuple, tuple[int, ...]] = {}


def cell_options(grid: dict[tuple[int, int], int], x: int, y: int) -> tuple[int, ...]:
    """Every card (of the 78) that fits the cell (x, y), ascending; () if none."""
    if (x, y) in grid:
        return ()
    get = grid.get
    key = (get((x, y + 1)), get((x, y - 1)), get((x + 1, y)), get((x - 1, y)))
    found = CELL_OPTIONS.get(key)
    if found is None:
        # a pure function of the four neighbours: computed once per neighbourhood
        found = CELL_OPTIONS[key] = _options_between(*key)
    return found


def _options_between(up: int | None, down: int | None, right: int | None,
                     left: int | None) -> tuple[int, ...]:
    if up is not None or down is not None:
        rank = cast(int, up if up is not None else down) % NUM_RANKS  # one is not None
        if up is not None and down is not None and down % NUM_RANKS != rank:
            return ()
        options = [s * NUM_RANKS + rank for s in range(6)]
    elif right is not None or left is not None:
        h = cast(int, right if right is not None else left)  # one is not None
        base = h - h % NUM_RANKS
        r = h % NUM_RANKS
        options = sorted({base + (r - 1) % NUM_RANKS, base + (r + 1) % NUM_RANKS})
    else:
        return ()
    found = []
    for c in options:
        if right is not None and (
            right // NUM_RANKS != c // NUM_RANKS or not ranks_adjacent(c, right)
        ):
            continue
        if left is not None and (
            left // NUM_RANKS != c // NUM_RANKS or not ranks_adjacent(c, left)
        ):
            continue
        found.append(c)
    return tuple(found)


def placements(
    grid: dict[tuple[int, int], int], hand, cells
) -> list[tuple[int, int, int]]:
    """Legal (card, x, y) for the cards of hand on the given cells, sorted."""
    held = set(hand)
    found = [(c, x, y) for x, y in cells for c in cell_options(grid, x, y) if c in held]
    found.sort()
    return found


def open_cells(grid: dict[tuple[int, int], int]) -> dict[tuple[int, int], tuple[int, ...]]:
    """Every empty cell some card fits, with the cards that fit it."""
    table = {}
    for cell in frontier(grid):
        options = cell_options(grid, *cell)
        if options:
            table[cell] = options
    return table


def next_cells(turn: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Cells where the next card of a turn may go (before emptiness checks)."""
    if not turn:
        return []
    x, y = turn[-1]
    if len(turn) == 1:
        return [(x + dx, y + dy) for dx, dy in NEIGHBOURS]
    px, py = turn[-2]
    return [(2 * x - px, 2 * y - py)]


def penalty(hand) -> int:
    """Points of a hand at the end of a game: +5 if empty, else -(largest suit x suits)."""
    if not hand:
        return 5
    counts: dict[int, int] = {}
    for c in hand:
        counts[c // NUM_RANKS] = counts.get(c // NUM_RANKS, 0) + 1
    return -max(counts.values()) * len(counts)


class Tateyoko(Game):
    INFO = GameInfo(
        slug="tateyoko",
        title="Tateyoko",
        min_players=3,
        max_players=7,
        rules_version="2",
        max_decisions=20000,
        seed_ref="seed 003 §03",
    )
    REVEALS = {
        "game scored": "RULINGS: at the end of a game every hand is scored, so its "
        "penalty (largest suit x suits) becomes public",
    }

    def setup(self) -> None:
        n = self.num_players
        self.games = n
        self.game_index = -1
        self.total = [0] * n
        self.last_game_points = [0] * n
        self.to_act = 0
        self.log: list[tuple[int, tuple[int, ...]]] = []  # the game in progress's, from its start
        self._start_game()

    # ---- game flow -------------------------------------------------------
    def _start_game(self) -> None:
        n = self.num_players
        self.game_index += 1
        self.start_player = self.game_index % n
        cards = deck()
        self.rng.shuffle(cards)
        size = HAND_SIZES[n]
        self.hands = [cards[i * size:(i + 1) * size] for i in range(n)]
        self.deck = cards[n * size:]  # top of the deck = last element
        first = self.deck.pop()
        self.grid: dict[tuple[int, int], int] = {(0, 0): first}
        # the grid each cache was built from (compared by identity), or None
        self._open_grid: dict[tuple[int, int], int] | None = None
        self._open_len = 0
        self._view_grid: dict[tuple[int, int], int] | None = None
        self._view_len = 0
        self._view: tuple[tuple[int, int, int], ...] = ()
        self._open_table: dict[tuple[int, int], tuple[int, ...]] = {}
        self._by_card: dict[int, tuple[tuple[int, int], ...]] = {}
        self.turn: list[tuple[int, int]] = []
        # the game before's log, whole: a seat's last decision can come before its end
        self.previous_log = self.log
        # this game's finished turns: (seat, the cards placed in order), () for a
        # pass; each card lies on the grid once, so the grid says where
        self.log = []
        self.passes = 0
        self.to_act = self.start_player
        if self.events is not None:
            self.narrate(
                f"game {self.game_index + 1}/{self.games}: {size} cards each, "
                f"{card_name(first)} starts the grid, seat {self.start_player} starts"
            )

    def end_game(self) -> None:
        """The current game is over: every hand's penalty is added to the
        totals, then the next game is dealt or the match ends. Public for
        fast playouts (``bots.search.games.tateyoko.whole_game``); it counts no
        decision."""
        points = [penalty(h) for h in self.hands]
        for seat, p in enumerate(points):
            self.total[seat] += p
        self.last_game_points = points
        if self.events is not None:
            self.narrate(f"game {self.game_index + 1} scoring: {points}; totals {self.total}")
        self.turn = []
        if self.game_index + 1 < self.games:
            self._start_game()
        else:
            self.to_act = -1
            self.narrate(f"match over: totals {self.total}")

    def _end_turn(self) -> None:
        self.turn = []
        self.to_act = (self.to_act + 1) % self.num_players

    def open_table(self) -> dict[tuple[int, int], tuple[int, ...]]:
        """Cached open_cells(self.grid), rebuilt if the grid was replaced or
        has grown, with its index by card (``_by_card``: card -> the open
        cells it fits). Public for fast playouts
        (``bots.search.games.tateyoko.whole_game``): one may edit the table in
        place while it lays cards on the grid; the grown grid marks the cache
        stale, and the engine rebuilds both on next use."""
        if self._open_grid is not self.grid or self._open_len != len(self.grid):
            self._open_table = open_cells(self.grid)
            by_card: dict[int, tuple[tuple[int, int], ...]] = {}
            for cell, options in self._open_table.items():
                for c in options:
                    by_card[c] = by_card.get(c, ()) + (cell,)
            self._by_card = by_card
            self._open_grid = self.grid
            self._open_len = len(self.grid)
        return self._open_table

    def _position_changed(self, changed: set[str]) -> None:
        """A grid set by ``set_position`` drops the open-cell and view caches
        (they are keyed on the grid object, which a caller may have edited)."""
        if "grid" in changed:
            self._open_grid = None
            self._view_grid = None

    def _grid_view(self) -> tuple[tuple[int, int, int], ...]:
        """Cached sorted (x, y, card) of the grid, rebuilt if the grid changed."""
        if self._view_grid is not self.grid or self._view_len != len(self.grid):
            self._view = tuple((x, y, c) for (x, y), c in sorted(self.grid.items()))
            self._view_grid = self.grid
            self._view_len = len(self.grid)
        return self._view

    def _place(self, c: int, x: int, y: int) -> None:
        table = self.open_table()
        by_card = self._by_card
        self.grid[(x, y)] = c
        self._unindex((x, y), table.pop((x, y), ()))
        for dx, dy in NEIGHBOURS:
            cell = (x + dx, y + dy)
            if cell not in self.grid:
                before = table.get(cell, ())
                options = cell_options(self.grid, *cell)
                if options:
                    table[cell] = options
                else:
                    table.pop(cell, None)
                if options != before:
                    self._unindex(cell, before)
                    for card in options:
                        by_card[card] = by_card.get(card, ()) + (cell,)
        self._open_len = len(self.grid)

    def _unindex(self, cell: tuple[int, int], options: tuple[int, ...]) -> None:
        by_card = self._by_card
        for card in options:
            cells = tuple(other for other in by_card[card] if other != cell)
            if cells:
                by_card[card] = cells
            else:
                del by_card[card]

    def _line_can_go_on(self) -> bool:
        """Whether a card not yet on the grid fits a next cell of the line.
        Judged from public information only, never from the hand: that would
        tell the others whether the player holds such a card."""
        table = self.open_table()
        on_grid = set(self.grid.values())
        return any(
            c not in on_grid for cell in next_cells(self.turn) for c in table.get(cell, ())
        )

    def _continuations(self) -> list[tuple[int, int, int]]:
        table = self.open_table()
        held = set(self.hands[self.to_act])
        found = [
            (c, x, y)
            for x, y in next_cells(self.turn)
            for c in table.get((x, y), ())
            if c in held
        ]
        found.sort()
        return found

    # ---- contract --------------------------------------------------------
    def current_player(self) -> int:
        return self.to_act

    def is_terminal(self) -> bool:
        return self.to_act < 0

    def legal_actions(self) -> list[Action]:
        if self.to_act < 0:
            return []
        if not self.turn:
            self.open_table()
            by_card = self._by_card
            found = [
                (c, x, y)
                for c in self.hands[self.to_act]
                for x, y in by_card.get(c, ())
            ]
            found.sort()
            return [PASS, *found]
        return [STOP, *self._continuations()]

    def _apply(self, action: Action) -> None:
        seat = self.to_act
        if action == PASS:
            self.log.append((seat, ()))
            self.passes += 1
            if self.deck:
                self.hands[seat].append(self.deck.pop())
            if self.passes >= self.num_players:
                self.end_game()
            else:
                self._end_turn()
            return
        if action == STOP:
            self._log_turn(seat)
            self._end_turn()
            return
        c, x, y = action
        self.hands[seat].remove(c)
        self._place(c, x, y)
        self.turn.append((x, y))
        self.passes = 0
        if not self.hands[seat]:
            self._log_turn(seat)
            self.end_game()
        elif not self._line_can_go_on():
            self._log_turn(seat)
            self._end_turn()

    def _log_turn(self, seat: int) -> None:
        grid = self.grid
        self.log.append((seat, tuple([grid[cell] for cell in self.turn])))

    def observation(self, player: int) -> Observation:
        return {
            "seat": player,
            "num_players": self.num_players,
            "current_player": self.to_act,
            "game": self.game_index,
            "games": self.games,
            "start_player": self.start_player,
            "hand": sorted(self.hands[player]),
            "hand_sizes": [len(h) for h in self.hands],
            "deck_size": len(self.deck),
            "grid": self._grid_view(),
            "turn": [[x, y, self.grid[(x, y)]] for x, y in self.turn],
            "log": list(self.log),  # tuples pack as arrays; copied, not rebuilt
            "previous_log": list(self.previous_log),
            "passes": self.passes,
            "scores": list(self.total),
            "last_game": list(self.last_game_points),
            "game_over": self.to_act < 0,
        }

    def scores(self) -> list[float]:
        return list(self.total)

    def reveals(self, action: Action, player: int) -> tuple | None:
        """The only step that shows hidden cards is the one ending a game."""
        after = self._peek(action)
        if after.game_index != self.game_index or after.to_act < 0:
            return ("game scored", tuple(after.last_game_points))
        return None

    def clone(self) -> Tateyoko:
        twin = self._shallow_twin()
        twin.total = list(self.total)
        twin.last_game_points = list(self.last_game_points)
        twin.hands = [list(h) for h in self.hands]
        twin.deck = list(self.deck)
        twin.grid = dict(self.grid)
        if self._open_grid is self.grid and self._open_len == len(self.grid):
            twin._open_table = dict(self._open_table)
            twin._by_card = dict(self._by_card)
            twin._open_grid = twin.grid
        else:
            twin._open_grid = None
        if self._view_grid is self.grid:
            twin._view_grid = twin.grid
        else:
            twin._view_grid = None
        twin.turn = list(self.turn)
        twin.log = list(self.log)  # entries are tuples, never mutated
        twin.previous_log = self.previous_log  # never changed once its game is over
        return twin

    @classmethod
    def from_observation(cls, obs: Observation, seed: int, decisions: int = 0) -> Tateyoko:
        g, rng = cls._blank_from_observation(obs, seed, decisions)
        n, me = g.num_players, obs["seat"]
        g.games = obs["games"]
        g.game_index = obs["game"]
        g.total = list(obs["scores"])
        g.last_game_points = list(obs["last_game"])
        g.to_act = obs["current_player"]
        g.start_player = obs["start_player"]
        g.grid = {(x, y): c for x, y, c in obs["grid"]}
        g._open_grid = None
        g._open_len = 0
        g._view_grid = None
        g._view_len = 0
        g._view = ()
        g._open_table = {}
        g._by_card = {}
        g.turn = [(x, y) for x, y, _ in obs["turn"]]
        g.log, g.previous_log = ([(seat, tuple(cards)) for seat, cards in obs[key]]
                                 for key in ("log", "previous_log"))
        g.passes = obs["passes"]
        sizes = obs["hand_sizes"]
        pool = minus(deck(), obs["hand"], list(g.grid.values()))
        rng.shuffle(pool)
        fit(pool, sum(sizes[s] for s in range(n) if s != me) + obs["deck_size"], "tateyoko",
             g.to_act < 0)
        g.hands = [list(obs["hand"]) if s == me else take(pool, sizes[s]) for s in range(n)]
        g.deck = pool[len(pool) - obs["deck_size"]:] if obs["deck_size"] else []
        return g._seed_future(rng)

    def redeal(self, player: int, seed: int) -> Tateyoko:
        state = self._fresh_copy_for_redeal(seed)
        others = [seat for seat in range(state.num_players) if seat != player]
        *hands, state.deck = reshuffle(state.rng, [state.hands[s] for s in others] + [state.deck])
        for seat, hand in zip(others, hands):
            state.hands[seat] = hand
        return state

    # ---- people ----------------------------------------------------------
    def describe_action(self, action: Action) -> str:
        who = f"seat {self.to_act}"
        if action == PASS:
            return f"{who} passes" + (" and draws a card" if self.deck else "")
        if action == STOP:
            return f"{who} stops"
        c, x, y = action
        return f"{who} places {card_name(c)} at ({x},{y})"
