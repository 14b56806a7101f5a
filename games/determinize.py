"""Full game states built from one seat's observation (determinizations).

A search bot knows only what the harness sends it: the ``start`` message and,
at each decision, its ``obs`` (as it arrives over the wire: msgpack, so
tuples are lists) and ``legal``. :func:`from_observation` builds a complete
engine state that this seat cannot tell from the real one: its
``observation(seat)`` equals ``obs`` and, when the seat is to act, its
``legal_actions()`` equal ``legal``. Everything hidden from the seat (other
hands, draw piles, set-aside cards, face-down cards, the order of a deck) is
sampled from the seed, and the state's ``rng`` is seeded from it too, so future
chance is fresh. Nothing hidden ever enters: the builders read the
observation only.

What each game samples, and which inferences from the public record it keeps
(beyond the engines' ``redeal``, which keeps none of these):

* limit: the limit deck's order.
* cat_in_the_box: the other hands, the other face-down discards and (3
  players) the set-aside cards, from the 40 cards less the own hand, the own
  discard and every card played this round.
* tile_hunt: the face-down tiles' order.
* grazia: the other hands and every draw pile, the own included.
* target: the other hands, the deck and the face-down discards of others.
* all_aboard: the other hands, the deck and the (unseen) certificates.
* tenos_square: the deck, every face-down row card, the other hands and,
  before the centre is turned up, the others' secret centre cards.
* twin_shoot: the other hands and every bid card the seat has not seen;
  keeps the voids shown by play (a player who did not follow what the trick
  required holds no card that would have).
* tateyoko: the other hands and the deck.
* kings_order: the other hands and the set-aside cards; keeps the rank
  bounds shown by play (a player who played their left end holds nothing
  lower, one who kept the right side of a card holds nothing below it, one
  who handed over their left-end block holds nothing that low...).
* seven_peak: the other hands (less the cards publicly known to be in them)
  and the set-aside cards.

The constrained samplers (twin_shoot, kings_order) deal the most constrained
hands first, at random among the cards each may hold; where the constraints
cannot all be met (they never should) they are dropped rather than fail.

    state = from_observation("limit", obs, seed=7)
    state.observation(obs["seat"]) == obs   # on the wire
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from games.base import Game
from games.registry import get_game

Builder = Callable[[dict, random.Random, int], Game]
_BUILDERS: dict[str, Builder] = {}


def builder(slug: str) -> Callable[[Builder], Builder]:
    def register(fn: Builder) -> Builder:
        _BUILDERS[slug] = fn
        return fn
    return register


def from_observation(slug: str, obs: dict, seed: int, decisions: int = 0) -> Game:
    """A full state of ``slug`` consistent with ``obs`` (one seat's view, wire
    form), hidden parts sampled from ``seed``. ``decisions`` sets the state's
    decision counter (the harness sends it with every ``act``), which only
    matters for the game's cap on decisions."""
    try:
        build = _BUILDERS[slug]
    except KeyError:
        raise KeyError(f"no determinization for game {slug!r}") from None
    rng = random.Random(seed)
    state = build(obs, rng, decisions)
    state.rng = random.Random(rng.getrandbits(64))
    return state


def supported() -> list[str]:
    return sorted(_BUILDERS)


def _blank(slug: str, obs: dict, decisions: int) -> Any:
    cls = get_game(slug)
    game = cls.__new__(cls)
    game.num_players = obs["num_players"]
    game.rng = random.Random(0)
    game.decisions = decisions
    game.events = None
    return game


def _take(pool: list, k: int) -> list:
    """The last ``k`` cards of ``pool`` (removed)."""
    if k == 0:
        return []
    part = pool[-k:]
    del pool[-k:]
    return part


def _minus(universe: Sequence[int], *known: Sequence[int]) -> list[int]:
    """``universe`` less every card in ``known`` (multisets)."""
    left = Counter(universe)
    for cards in known:
        left.subtract(cards)
    if any(v < 0 for v in left.values()):
        raise ValueError("the observation shows a card more often than the deck holds it")
    return sorted(left.elements())


def _fit(pool: list, needed: int, slug: str, over: bool = False) -> None:
    """Check that the unseen cards fill the hidden places exactly. Once the
    match is over the hidden places no longer matter (a finished round keeps
    no record of where its cards went): pad or cut with stand-ins."""
    if len(pool) == needed:
        return
    if not over:
        raise ValueError(f"{slug}: {len(pool)} unseen cards for {needed} hidden places")
    filler = pool[0] if pool else 0
    del pool[needed:]
    pool.extend([filler] * (needed - len(pool)))


def _unseen(universe: Sequence[int], known: Sequence[int], over: bool) -> list[int]:
    try:
        return _minus(universe, known)
    except ValueError:
        if over:
            return []
        raise


# ---- limit ---------------------------------------------------------------
@builder("limit")
def _limit(obs: dict, rng: random.Random, decisions: int) -> Game:
    from games.limit import LIMIT_CARDS

    g = _blank("limit", obs, decisions)
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
    return g


# ---- cat_in_the_box ------------------------------------------------------
@builder("cat_in_the_box")
def _cat(obs: dict, rng: random.Random, decisions: int) -> Game:
    from games.cat_in_the_box import COLOUR_INDEX, COLOURS, COPIES, EMPTY, RANKS

    g = _blank("cat_in_the_box", obs, decisions)
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
    pool = _unseen(deck, own + played, over)
    rng.shuffle(pool)
    sizes = obs["hand_sizes"]
    hidden = sum(sizes[s] + obs["discarded"][s] for s in range(n) if s != me) + obs["set_aside"]
    _fit(pool, hidden, "cat_in_the_box", over)
    g.hands, g.discards = [], []
    for s in range(n):
        if s == me:
            g.hands.append(list(obs["hand"]))
            g.discards.append(obs["my_discard"])
            continue
        g.hands.append(sorted(_take(pool, sizes[s])))
        g.discards.append(_take(pool, 1)[0] if obs["discarded"][s] else None)
    g.set_aside = sorted(pool)
    return g


# ---- tile_hunt -----------------------------------------------------------
@builder("tile_hunt")
def _tile_hunt(obs: dict, rng: random.Random, decisions: int) -> Game:
    from games.tile_hunt import NORMAL_TILES

    g = _blank("tile_hunt", obs, decisions)
    g.rounds_per_phase = obs["rounds_per_phase"]
    g.total_rounds = obs["total_rounds"]
    g.face_up = [t["name"] for t in obs["tiles"]]
    g.owner = {t["name"]: t["owner"] for t in obs["tiles"]}
    g.face_down = [name for name in NORMAL_TILES if name not in g.owner]
    _fit(g.face_down, obs["face_down"], "tile_hunt")
    rng.shuffle(g.face_down)
    g.chips = list(obs["chips"])
    g.supply = obs["chip_supply"]
    g.reversal = obs["reversal"]
    g.winner = obs["winner"]
    g.order = list(obs["order"])
    g.previous_order = list(obs["previous_order"])
    g.pos = obs["turn_position"]
    g.dice = list(obs["dice"])
    g.rerolls_left = obs["rerolls_left"]
    g.step = obs["step"]
    g.round = obs["round"]
    g.turn_rolls = [tuple(dice) for dice in obs["turn_rolls"]]
    g.log = [(seat, tuple(dice), taken if isinstance(taken, str) else tuple(taken),
              tuple(tuple(roll) for roll in rolls))
             for seat, dice, taken, rolls in obs["log"]]
    return g


# ---- grazia ----------------------------------------------------------------
@builder("grazia")
def _grazia(obs: dict, rng: random.Random, decisions: int) -> Game:
    g = _blank("grazia", obs, decisions)
    n, me = g.num_players, obs["seat"]
    g.out_of_play = list(obs["out_of_play"])
    g.field = [list(p) for p in obs["field"]]
    # every card once: the unseen cards, ascending (as _minus gives them)
    seen = set(obs["hand"]).union(g.out_of_play, *g.field)
    pool = [c for c in range(78) if c not in seen]
    rng.shuffle(pool)
    sizes, piles = obs["hand_sizes"], obs["pile_sizes"]
    _fit(pool, sum(sizes[s] for s in range(n) if s != me) + sum(piles), "grazia",
         obs["current_player"] < 0)
    g.hands, g.piles = [], []
    for s in range(n):
        g.hands.append(list(obs["hand"]) if s == me else sorted(_take(pool, sizes[s])))
        g.piles.append(_take(pool, piles[s]))
    g.penalties = list(obs["penalties"])
    g.to_act = obs["current_player"]
    g.turn = obs["turn"]
    g.run = list(obs["run"])
    g.log = [(seat, tuple(cards)) for seat, cards in obs["log"]]
    g.run_penalised = obs["run_penalised"]
    g.end_triggered = obs["end_triggered"]
    g.trigger_seat = obs["trigger_seat"]
    g.final_turns_left = obs["final_turns_left"]
    return g


# ---- target ----------------------------------------------------------------
@builder("target")
def _target(obs: dict, rng: random.Random, decisions: int) -> Game:
    from games.target import FACE_UP
    from games.tennos import deck

    g = _blank("target", obs, decisions)
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
    _fit(pool, hidden, "target", obs["current_player"] < 0)
    g.hands = [list(obs["hand"]) if s == me else sorted(_take(pool, sizes[s])) for s in range(n)]
    g.deck = _take(pool, obs["deck_size"])
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
    return g


# ---- all_aboard --------------------------------------------------------------
@builder("all_aboard")
def _all_aboard(obs: dict, rng: random.Random, decisions: int) -> Game:
    from games.all_aboard import ALL_CARDS

    g = _blank("all_aboard", obs, decisions)
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
    pool = _unseen(ALL_CARDS, list(obs["hand"]) + g.played, g.over)
    rng.shuffle(pool)
    hidden = sum(sizes[s] for s in range(n) if s != me) + sum(certs) + obs["deck_size"]
    _fit(pool, hidden, "all_aboard", g.over)
    g.hands = [list(obs["hand"]) if s == me else sorted(_take(pool, sizes[s])) for s in range(n)]
    g.certs = [_take(pool, certs[s]) for s in range(n)]
    g.deck = pool[len(pool) - obs["deck_size"]:] if obs["deck_size"] else []
    return g


# ---- tenos_square ------------------------------------------------------------
@builder("tenos_square")
def _tenos_square(obs: dict, rng: random.Random, decisions: int) -> Game:
    from games.tennos import deck
    from games.tenos_square import CENTRE, row_length

    g = _blank("tenos_square", obs, decisions)
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
    pool = _unseen(deck(ranks=range(1, 11)), known, over)
    rng.shuffle(pool)
    sizes = obs["hand_sizes"]
    secret_slots = [
        s for s in range(n) if s != me and obs["centre_put"][s] and not revealed
    ]
    face_down = sum(1 for row in obs["rows"] for c in row if c is None)
    hidden = obs["deck_size"] + face_down + sum(sizes[s] for s in range(n) if s != me) + len(secret_slots)
    _fit(pool, hidden, "tenos_square", over)
    g.deck = _take(pool, obs["deck_size"])
    g.rows, g.up = [], []
    for row in obs["rows"]:
        g.up.append([c is not None for c in row])
        g.rows.append([c if c is not None else (pool.pop() if pool else 0) for c in row])
    g.hands = [list(obs["hand"]) if s == me else sorted(_take(pool, sizes[s])) for s in range(n)]
    g.secret = [None] * n
    # After the reveal nobody but the owner knows who put which centre card;
    # the others' secret cards only show in their own views: any card will do.
    stand_in = g.centre or face_up or [0]
    for s in range(n):
        if s == me:
            g.secret[s] = own_secret
        elif obs["centre_put"][s]:
            g.secret[s] = pool.pop() if not revealed else stand_in[s % len(stand_in)]
    return g


# ---- twin_shoot --------------------------------------------------------------
def twin_shoot_voids(obs: dict) -> list[list[tuple[str, int]]]:
    """Per seat, what play showed they do not hold: ("suit", s) or ("rank", r)
    for a requirement they did not meet, or ("either", led card)."""
    from games.tennos import RANK_OF, SUIT_OF
    from games.twin_shoot import follow_of, trick_order

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


def _allowed(card: int, rules: list[tuple[str, int]]) -> bool:
    from games.tennos import RANK_OF, SUIT_OF

    for kind, value in rules:
        if kind == "suit" and SUIT_OF[card] == value:
            return False
        if kind == "rank" and RANK_OF[card] == value:
            return False
        if kind == "either" and (SUIT_OF[card] == SUIT_OF[value] or RANK_OF[card] == RANK_OF[value]):
            return False
    return True


def deal_constrained(
    pool: list[int], slots: list[tuple[Any, int, Callable[[int], bool] | None]], rng: random.Random
) -> dict[Any, list[int]]:
    """Deal ``pool`` (shuffled) into slots (key, size, accepts card or None),
    the most constrained first, each at random among the cards it accepts;
    a slot that cannot be filled takes any cards (its constraint dropped)."""
    left = list(pool)
    rng.shuffle(left)

    def room(slot):
        key, size, accepts = slot
        if accepts is None:
            return float("inf")
        return sum(1 for c in left if accepts(c)) - size

    result: dict[Any, list[int]] = {}
    pending = list(slots)
    while pending:
        pending.sort(key=room)
        key, size, accepts = pending.pop(0)
        if accepts is not None:
            fit = [i for i, c in enumerate(left) if accepts(c)]
            if len(fit) < size:
                fit = list(range(len(left)))
        else:
            fit = list(range(len(left)))
        chosen = set(rng.sample(fit, size)) if size else set()
        result[key] = [left[i] for i in sorted(chosen)]
        left = [c for i, c in enumerate(left) if i not in chosen]
    return result


@builder("twin_shoot")
def _twin_shoot(obs: dict, rng: random.Random, decisions: int) -> Game:
    from games.twin_shoot import bid_value, deck_for

    g = _blank("twin_shoot", obs, decisions)
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
    pool = _unseen(deck_for(n), known, g.over)
    sizes = obs["hand_sizes"]
    voids = twin_shoot_voids(obs)
    slots: list[tuple[Any, int, Callable[[int], bool] | None]] = []
    for s in range(n):
        if s != me:
            rules = voids[s]
            # annotated: mypy cannot infer a lambda with a default argument from the tuple
            allowed: Callable[[int], bool] | None = (lambda c, r=rules: _allowed(c, r)) if rules else None
            slots.append((("hand", s), sizes[s], allowed))
        if s not in seen_bids:
            slots.append((("bid", s), counts[s], None))
    _fit(pool, sum(size for _, size, _ in slots), "twin_shoot", g.over)
    dealt = deal_constrained(pool, slots, rng)
    g.hands = [list(obs["hand"]) if s == me else sorted(dealt[("hand", s)]) for s in range(n)]
    g.bid_cards = [sorted(seen_bids[s]) if s in seen_bids else sorted(dealt[("bid", s)])
                   for s in range(n)]
    g.bid_vals = [bid_value(b) if len(b) == 2 else None for b in g.bid_cards]
    if g.over:
        g.hands = [list(h) for h in g.hands]
    return g


# ---- tateyoko ----------------------------------------------------------------
@builder("tateyoko")
def _tateyoko(obs: dict, rng: random.Random, decisions: int) -> Game:
    from games.tennos import deck

    g = _blank("tateyoko", obs, decisions)
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
    pool = _minus(deck(), obs["hand"], list(g.grid.values()))
    rng.shuffle(pool)
    _fit(pool, sum(sizes[s] for s in range(n) if s != me) + obs["deck_size"], "tateyoko",
         g.to_act < 0)
    g.hands = [list(obs["hand"]) if s == me else _take(pool, sizes[s]) for s in range(n)]
    g.deck = pool[len(pool) - obs["deck_size"]:] if obs["deck_size"] else []
    return g


# ---- kings_order -------------------------------------------------------------
def narrow_rank_bounds(lo: list[int], hi: list[int], entry: Any, rank: int) -> None:
    """One kings_order log entry (``rank`` is its card's) narrows the lowest
    and highest rank each hand can still hold (hands are sorted by rank)."""
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
    from games.tennos import rank_of

    lo, hi = [1] * num_players, [13] * num_players
    for entry in log:
        narrow_rank_bounds(lo, hi, entry, rank_of(entry[1]))
    return lo, hi


def kings_order_bounds(obs: dict) -> tuple[list[int], list[int]]:
    """Per seat, the lowest and highest rank their hand can still hold, from
    the public record of this round and the card being played now."""
    from games.tennos import rank_of

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


@builder("kings_order")
def _kings_order(obs: dict, rng: random.Random, decisions: int) -> Game:
    from games.kings_order import ALL_CARDS, sort_hand
    from games.tennos import rank_of

    g = _blank("kings_order", obs, decisions)
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
    pool = _unseen(ALL_CARDS, known, g.over)
    lo, hi = kings_order_bounds(obs)
    slots: list[tuple[Any, int, Callable[[int], bool] | None]] = []
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
    _fit(pool, sum(size for _, size, _ in slots), "kings_order", g.over)
    dealt = deal_constrained(pool, slots, rng)
    g.hands = [list(obs["hand"]) if s == me else sort_hand(dealt[s]) for s in range(n)]
    g.set_aside = dealt["aside"]
    return g


# ---- seven_peak ----------------------------------------------------------------
@builder("seven_peak")
def _seven_peak(obs: dict, rng: random.Random, decisions: int) -> Game:
    from games.seven_peak import DECK

    g = _blank("seven_peak", obs, decisions)
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
    pool = _unseen(DECK, known, over)
    rng.shuffle(pool)
    sizes = obs["hand_sizes"]
    hidden = [sizes[s] - len(g.known[s]) if s != me else 0 for s in range(n)]
    _fit(pool, sum(hidden) + obs["set_aside"], "seven_peak", over)
    g.hands = [own if s == me else sorted(g.known[s] + _take(pool, hidden[s])) for s in range(n)]
    g.set_aside = sorted(pool)
    return g


def legal_on_wire(state: Game) -> list:
    """The state's legal actions as the harness sends them (lists for tuples)."""
    import msgpack

    return msgpack.unpackb(msgpack.packb(state.legal_actions()), raw=False)


def check(slug: str, obs: dict, legal: list | None, seed: int = 0) -> Game:
    """Build a determinization and verify it (observation and legal actions
    on the wire); raises AssertionError naming the first difference."""
    import msgpack

    state = from_observation(slug, obs, seed)
    seat = obs["seat"]
    again = msgpack.unpackb(msgpack.packb(state.observation(seat)), raw=False, strict_map_key=False)
    want = msgpack.unpackb(msgpack.packb(obs), raw=False, strict_map_key=False)
    if again != want:
        keys = [k for k in want if again.get(k) != want[k]]
        raise AssertionError(f"{slug}: observation differs in {keys}: "
                             f"{[(again.get(k), want[k]) for k in keys[:2]]}")
    if legal is not None:
        mine = legal_on_wire(state)
        if mine != legal:
            raise AssertionError(f"{slug}: legal actions differ: {mine[:8]} vs {legal[:8]}")
    return state


__all__ = ["from_observation", "supported", "check", "twin_shoot_voids", "kings_order_bounds",
           "deal_constrained"]
