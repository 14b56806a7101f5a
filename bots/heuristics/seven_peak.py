"""seven_peak heuristic.

* Sets: for each allowed size N, build the best set from the cards usable as
  N (all different suits, or one suit topped up with jokers), valued by the
  game's scoring with a penalty for the first joker (it costs the no-joker
  bonus). Play when the set is efficient enough (points per card), lowering
  the bar as the end nears (others' hand sizes, the "ending" flag).
* Passes: put the card whose loss hurts the hand's best set least, take a
  peak (x + c[x] >= 8) whenever one is in reach, and put a second card only
  when an area card improves the hand (or the pair makes a peak).
"""

from __future__ import annotations

import random

from games.seven_peak import JOKER, PEAK, set_score

SHED_PER_TURN = 1.7  # cards a random opponent gets rid of per turn, roughly


def _reach(card: int, counts) -> int:
    x = card % 6 + 1
    return x + counts[x - 1]


def _usable(card: int, n: int, counts) -> bool:
    x = card % 6 + 1
    return x <= n <= x + counts[x - 1]


def _joker_penalty(cards, n: int, ctx) -> float:
    if ctx["joker_used"] or not any(c // 6 == JOKER for c in cards):
        return 0.0
    return 2.0 * max(n, ctx["max_set"], 4)


def best_set(pool, n: int, counts, ctx, fixed=()):
    """(value, cards) of the best set of ``n`` cards: ``fixed`` plus cards of
    ``pool`` usable as ``n``; None if impossible."""
    usable = [c for c in pool if _usable(c, n, counts)]
    need = n - len(fixed)
    if need < 0 or len(usable) < need:
        return None
    # cheapest cards first: low reach (least useful later), then low code
    usable.sort(key=lambda c: (_reach(c, counts), c))
    candidates = []
    # all different suits
    have = {c // 6 for c in fixed}
    if len(have) == len(fixed):
        pick = list(fixed)
        suits = set(have)
        for c in sorted(usable, key=lambda c: (c // 6 == JOKER, _reach(c, counts), c)):
            if len(pick) == n:
                break
            if c // 6 not in suits:
                suits.add(c // 6)
                pick.append(c)
        if len(pick) == n:
            candidates.append(pick)
    # one suit, then jokers, then anything
    for s in range(4):
        pick = list(fixed)
        rest = list(usable)
        for wanted in (lambda c, s=s: c // 6 == s, lambda c: c // 6 == JOKER, lambda c: True):
            for c in list(rest):
                if len(pick) == n:
                    break
                if wanted(c):
                    pick.append(c)
                    rest.remove(c)
        if len(pick) == n:
            candidates.append(pick)
        # the same without jokers
        pick = list(fixed)
        rest = list(usable)
        for wanted in (lambda c, s=s: c // 6 == s, lambda c: c // 6 != JOKER, lambda c: True):
            for c in list(rest):
                if len(pick) == n:
                    break
                if wanted(c):
                    pick.append(c)
                    rest.remove(c)
        if len(pick) == n:
            candidates.append(pick)
    best = None
    for pick in candidates:
        value = set_score(pick) - _joker_penalty(pick, n, ctx)
        if best is None or value > best[0]:
            best = (value, pick)
    return best


def hand_value(hand, counts, ctx) -> float:
    """How good a hand is: its best set per card, plus flexibility."""
    best = 0.0
    for n in range(max(ctx["last"], 2), 8):
        found = best_set(hand, n, counts, ctx)
        if found:
            # value of the set plus an estimate for the rest of the hand
            best = max(best, found[0] + 1.5 * (len(hand) - n))
    flex = sum(min(_reach(c, counts), 6) for c in hand) / 20.0
    suits = [0] * 5
    for c in hand:
        suits[c // 6] += 1
    shape = max(suits[:4]) * 0.6 + sum(1 for s in suits[:4] if s) * 0.6
    return best + flex + shape


def peak_vp(counts) -> int:
    return sum(counts[x - 1] for x in range(1, 7) if counts[x - 1] and x + counts[x - 1] >= PEAK)


def _context(obs) -> dict:
    seat = obs["seat"]
    sets = obs["sets"][seat]
    return {
        "last": obs["last_set"][seat],
        "max_set": max((s[0] for s in sets), default=0),
        "joker_used": any(c // 6 == JOKER for s in sets for c in s[1]),
    }


def _turns_left(obs) -> float:
    """About how many more turns I get (this one included)."""
    if obs["ending"]:
        return 1.0
    seat = obs["seat"]
    n = obs["num_players"]
    best = 99.0
    for s in range(n):
        if s == seat:
            continue
        turns = obs["hand_sizes"][s] / SHED_PER_TURN
        # a seat after me in this round ends the round after my turn
        best = min(best, turns + (1 if s < seat else 0))
    return max(1.0, best)


def _danger(counts, card) -> float:
    """Leaving a pile one card short of the peak hands it to the next player."""
    x = card % 6 + 1
    if x + counts[x - 1] == PEAK - 1 and counts[x - 1] >= 2:
        return 0.5 * counts[x - 1]
    return 0.0


# ``value`` is how a hand is valued: ``hand_value`` here; the search's fast
# rollouts pass an equal but faster one (bots.search.games.seven_peak.hand_value).
def _after_take(hand, counts, x, card, ctx, value=hand_value) -> float:
    """Score of the position after taking ``card`` from pile ``x``."""
    area = list(counts)
    area[x - 1] -= 1
    return value(list(hand) + [card], area, ctx) + peak_vp(area)


def _best_take(hand, counts, piles, ctx, value=hand_value):
    best = None
    for x in range(1, 7):
        for card in sorted(set(piles[x - 1])):
            score = _after_take(hand, counts, x, card, ctx, value)
            if best is None or score > best[0]:
                best = (score, x, card)
    return best


def _put(hand, counts, piles, card):
    rest = list(hand)
    rest.remove(card)
    area = list(counts)
    area[card % 6] += 1
    new_piles = [list(p) for p in piles]
    new_piles[card % 6].append(card)
    return rest, area, new_piles


def _best_second(hand, counts, piles, ctx, width: int = 4, value=hand_value):
    """Best (score, second card) of "put another card, then take one"."""
    singles = []
    for b in sorted(set(hand)):
        rest, area, _ = _put(hand, counts, piles, b)
        singles.append((value(rest, area, ctx) + peak_vp(area), b))
    singles.sort(reverse=True)
    best = None
    for _, b in singles[:width]:
        rest, area, new_piles = _put(hand, counts, piles, b)
        take = _best_take(rest, area, new_piles, ctx, value)
        if take and (best is None or take[0] > best[0]):
            best = (take[0], b)
    return best


def _best_first(hand, counts, piles, ctx, value=hand_value):
    singles = []
    for a in sorted(set(hand)):
        rest, area, _ = _put(hand, counts, piles, a)
        score = value(rest, area, ctx) + peak_vp(area) - _danger(area, a)
        singles.append((score, a))
    singles.sort(reverse=True)
    best = singles[0]
    for _, a in singles[:3]:
        rest, area, new_piles = _put(hand, counts, piles, a)
        if not rest:
            continue
        second = _best_second(rest, area, new_piles, ctx, width=3, value=value)
        if second and second[0] > best[0] + 0.3:
            best = (second[0], a)
    return best[1]


def play_or_pass(best: tuple[float, int] | None, hand_size: int, left: float) -> str:
    """The turn step's choice from the best set's (value, size), if any: play
    a set worth enough per card for the turns left (``left``), else pass.
    The search's playout policy (``bots.search.games.seven_peak``) decides by it too."""
    if best is None:
        return "pass"
    value, n = best
    if left <= 1.5:
        return "play"
    cards_per_turn = hand_size / left
    target = 4.0 if cards_per_turn < 1.2 else 3.0 if cards_per_turn < 2.0 else 2.0
    if value / n >= target and n >= 3:
        return "play"
    if left <= 2.5 and value >= 6:
        return "play"
    return "pass"


def choose(obs: dict, legal: list, rng: random.Random) -> int:
    if len(legal) == 1:
        return 0
    ctx = _context(obs)
    step = obs["step"]
    counts = obs["counts"]
    hand = obs["hand"]

    if step == "turn":
        left = _turns_left(obs)
        if "play" not in legal:
            return legal.index("pass")
        best = None
        for n in range(max(1, ctx["last"]), 8):
            found = best_set(hand, n, counts, ctx)
            if found is None:
                continue
            value = found[0]
            rest = len(hand) - n
            if rest == 0:
                value += 2  # emptying the hand ends the game on my terms
            if best is None or value > best[0]:
                best = (value, n)
        return legal.index(play_or_pass(best, len(hand), left))

    if step == "value":
        left = _turns_left(obs)
        best = None
        for i, action in enumerate(legal):
            n = action[1]
            found = best_set(hand, n, counts, ctx)
            if found is None:
                continue
            value = found[0]
            if left > 1.5:
                value = value / n * 3 + value / 4  # favour efficiency early
            if best is None or value > best[0]:
                best = (value, i)
        return best[1] if best else 0

    if step == "cards":
        sel = obs["selecting"]
        n = sel["value"]
        fixed = list(sel["cards"])
        found = best_set(hand, n, counts, ctx, fixed=fixed)
        if found:
            remaining = list(found[1][len(fixed):])
            for c in remaining:
                if ["card", c] in legal:
                    return legal.index(["card", c])
        return 0

    if step == "put":
        card = _best_first(hand, counts, obs["area"], ctx)
        return legal.index(["put", card])

    if step == "more":
        stop_score = hand_value(hand, counts, ctx) + peak_vp(counts)
        second = _best_second(hand, counts, obs["area"], ctx)
        if second and second[0] > stop_score + 0.3:
            return legal.index(["put", second[1]])
        return legal.index("stop")

    if step == "take":
        take = _best_take(hand, counts, obs["area"], ctx)
        return legal.index(["take", take[1], take[2]])

    return rng.randrange(len(legal))
