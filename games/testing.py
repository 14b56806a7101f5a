"""The conformance kit: generic checks every game engine must pass.

Any engine written to ``games.base.Game`` can be checked in a few lines::

    from games.testing import check_game
    check_game("my_game", 4)           # raises ConformanceError on a failure

or one check at a time (each takes the slug, or the engine class before it
is registered, and a player count; the keyword arguments size the work)::

    check_random_play, check_illegal_actions_refused, check_determinism,
    check_clone, check_observations_msgpack, check_redeal,
    check_redealt_play_to_end, check_redealt_accept_every_action,
    check_redeal_sees_only_the_view, check_from_observation, check_flow_leaks,
    check_observations_match_schema, check_legal_actions_match_steps

The last two validate the wire format against the game's declared JSON
Schemas (``games.schemas``; they need the ``jsonschema`` package, a dev
dependency). They follow OpenSpiel's random-sim and resample tests and pgx's api_test,
plus a check of their own, ``check_flow_leaks``: the *flow* of the game (who
acts next, how many decisions a turn takes, so the decision counter the
harness sends every bot) must not tell a player anything they may not see.
It works in two ways:

* **Same action, hidden parts changed.** Along seeded random games, for an
  observer q and the acting player a != q, it re-deals the state for q
  (``redeal(q, ...)``, with the same random generator so that dice and new
  deals agree) and plays the same actions (legal in both states) in both
  until q is to act; after each step q's observation, ``current_player()``
  and ``decisions`` must be equal. A step the rules make revealing (a deck
  card turned up, hands scored, a forced pass) is declared by the game with
  ``Game.reveals``; the two states are compared further only while their
  reveals are equal.
* **Different secret choices.** From a state, the other players' actions are
  explored a few steps deep; wherever q is next asked to act, states that
  show q the same observation must show the same decision counter, seat to
  act and legal actions. This catches a step skipped after a secret answer
  (an answer only a partner may see).

``check_from_observation`` checks what a search bot builds from one seat's
view (``Game.from_observation``): that view, and the acting seat's legal
actions, rebuilt exactly, the rest sampled from the seed; ``check_rebuilds``
checks one observation (a bot's tests can run it on the positions they meet).

Every check raises :class:`ConformanceError` (an ``AssertionError``) with the
game, seed and decision where it failed. The golden-playthrough check lives
in ``games.playthrough`` (``check_golden``): it needs a directory of files.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, Union, cast

import msgpack

from games.base import Action, Game, IllegalActionError, copy_rng, ranks_by_unit
from games.playthrough import observation_bytes, random_playthrough, wire
from games.registry import get_game

__all__ = [
    "ConformanceError", "FlowReport", "CHECKS", "check_game", "resolve", "sample_states",
    "check_random_play", "check_illegal_actions_refused", "check_determinism",
    "check_clone", "check_observations_msgpack", "check_redeal",
    "check_redealt_play_to_end", "check_redealt_accept_every_action",
    "check_redeal_sees_only_the_view", "check_from_observation", "check_rebuilds",
    "check_flow_leaks", "check_observations_match_schema", "check_legal_actions_match_steps",
]


class ConformanceError(AssertionError):
    """An engine broke the game contract."""


GameRef = Union[str, type[Game]]  # a registered slug, or an engine class


def resolve(game: GameRef) -> type[Game]:
    """The class of a registered slug, or the class itself: an engine can be
    checked before it is registered."""
    return get_game(game) if isinstance(game, str) else game


def require(condition: Any, message: str) -> None:
    """Raise ConformanceError(message) unless condition holds (unlike
    ``assert`` it survives ``python -O``)."""
    if not condition:
        raise ConformanceError(message)


def sample_states(game: GameRef, num_players: int, seed: int, every: int,
                  most: int | None = None) -> Iterator[Game]:
    """States along a seeded random playthrough (every ``every`` decisions),
    the terminal one last. The caller must not change them: clone first.
    ``most``: spread the states wider in a long game, so that about that many
    come (checks that play each state to its end grow with the square of a
    game's length: tateyoko at 7 players runs to hundreds of decisions)."""
    if most is not None:
        every = max(every, -(-_playthrough_length(game, num_players, seed) // most))
    state = resolve(game).new(num_players, seed)
    picker = random.Random(seed * 7 + 1)
    while not state.is_terminal():
        if state.decisions % every == 0:
            yield state
        state.apply(picker.choice(state.legal_actions()))
    yield state


def _playthrough_length(game: GameRef, num_players: int, seed: int) -> int:
    """Decisions of the playthrough that sample_states walks."""
    state = resolve(game).new(num_players, seed)
    picker = random.Random(seed * 7 + 1)
    while not state.is_terminal():
        state.apply(picker.choice(state.legal_actions()))
    return state.decisions


def rollout_bytes(game: Game, policy_seed: int, limit: int = 400) -> bytes:
    """Every player's observations along a rollout picking actions by index."""
    picker = random.Random(policy_seed)
    chunks = [observation_bytes(game)]
    steps = 0
    while not game.is_terminal() and steps < limit:
        legal = game.legal_actions()
        game.apply_unchecked(legal[picker.randrange(len(legal))])
        chunks.append(observation_bytes(game))
        steps += 1
    return b"".join(chunks)


def _view(game: Game, player: int) -> bytes:
    return msgpack.packb(game.observation(player))


def _name(game: GameRef, num_players: int) -> str:
    return f"{resolve(game).INFO.slug} {num_players}p"


# ---- basic contract ---------------------------------------------------------


def check_random_play(game: GameRef, num_players: int, seeds: Iterable[int] = range(12)) -> None:
    """Random games end before the cap, with sane actions, scores and ranks."""
    cls = resolve(game)
    for seed in seeds:
        state = cls.new(num_players, seed)
        picker = random.Random(seed)
        while not state.is_terminal():
            where = f"{_name(cls, num_players)} seed {seed} decision {state.decisions}"
            require(state.decisions < cls.INFO.max_decisions, f"{where}: random play hit the hard cap")
            require(0 <= state.current_player() < num_players, f"{where}: bad current_player")
            legal = state.legal_actions()
            require(legal, f"{where}: a non-terminal state must offer actions")
            require(len(legal) <= 400, f"{where}: compound moves must be split into steps")
            require(len(set(map(repr, legal))) == len(legal), f"{where}: duplicate legal actions")
            state.apply(picker.choice(legal))
        _check_final(state, f"{_name(cls, num_players)} seed {seed}")


def _check_final(game: Game, where: str) -> None:
    require(game.current_player() == -1, f"{where}: current_player must be -1 at the end")
    require(game.legal_actions() == [], f"{where}: no legal actions at the end")
    scores = game.scores()
    require(len(scores) == game.num_players, f"{where}: one score per seat")
    standings = game.standings()
    require(sorted(standings)[0] == 1, f"{where}: someone ranks first")
    require(standings == ranks_by_unit(game.rank_keys(), game.teams()), f"{where}: ranks")
    for team in game.teams() or ():
        require(len({standings[s] for s in team}) == 1, f"{where}: team members share a rank")
        require(len({scores[s] for s in team}) == 1, f"{where}: team members share a score")


def check_illegal_actions_refused(game: GameRef, num_players: int, seed: int = 3) -> None:
    """Actions outside the legal list raise and change nothing."""
    name = _name(game, num_players)
    state = resolve(game).new(num_players, seed)
    before = observation_bytes(state)
    for bogus in (object(), "no-such-action", -12345, (99, 99, 99)):
        if bogus not in state.legal_actions():
            _require_refused(state, bogus, f"{name}: {bogus!r} was accepted")
    require(observation_bytes(state) == before, f"{name}: a refused action must change nothing")
    final, _ = random_playthrough(game, num_players, 5)
    _require_refused(final, 0, f"{name}: an action was accepted after the end")


def _require_refused(state: Game, action: Any, message: str) -> None:
    try:
        state.apply(action)
    except IllegalActionError:
        return
    raise ConformanceError(message)


def check_determinism(game: GameRef, num_players: int, seeds: Iterable[int] = range(3)) -> None:
    """The same seed and actions give the same match; seeds change the deal."""
    cls, name = resolve(game), _name(game, num_players)
    for seed in seeds:
        first, actions = random_playthrough(cls, num_players, seed)
        traces = []
        for _ in range(2):
            again = cls.new(num_players, seed)
            trace = []
            for action in actions:
                trace.append(observation_bytes(again))
                again.apply(action)
            traces.append(trace)
        require(traces[0] == traces[1], f"{name} seed {seed}: two replays differ")
        require(observation_bytes(first) == observation_bytes(again), f"{name} seed {seed}: the end differs")
        require(first.scores() == again.scores(), f"{name} seed {seed}: the scores differ")
    deals = {observation_bytes(cls.new(num_players, seed)) for seed in range(8)}
    require(len(deals) > 1, f"{name}: the seed must change the deal")


def check_clone(game: GameRef, num_players: int, seed: int = 11, every: int = 13,
                most: int = 12) -> None:
    """A clone is independent and carries the same future, chance included."""
    for state in sample_states(game, num_players, seed, every, most):
        if state.is_terminal():
            continue
        where = f"{_name(game, num_players)} decision {state.decisions}"
        snapshot = observation_bytes(state)
        twin = state.clone()
        require(observation_bytes(twin) == snapshot, f"{where}: the clone looks different")
        twin_future = rollout_bytes(twin, policy_seed=3)
        require(observation_bytes(state) == snapshot, f"{where}: playing the clone changed the original")
        require(
            rollout_bytes(state.clone(), policy_seed=3) == twin_future,
            f"{where}: a clone must carry the same future, chance included",
        )


def check_observations_msgpack(game: GameRef, num_players: int, seed: int = 21, every: int = 5) -> None:
    """Observations and actions survive msgpack and JSON unchanged."""
    for state in sample_states(game, num_players, seed, every):
        for player in range(num_players):
            obs = state.observation(player)
            where = f"{_name(game, num_players)} decision {state.decisions} seat {player}"
            require(isinstance(obs, dict), f"{where}: the observation must be a dict")
            require(obs.get("seat") == player, f"{where}: obs['seat'] must be the seat")
            require(all(isinstance(key, str) for key in obs), f"{where}: keys must be str")
            require(msgpack.packb(wire(obs)) == msgpack.packb(obs), f"{where}: not msgpack-native")
            json.dumps(wire(obs))
        for action in state.legal_actions():
            require(
                msgpack.packb(wire(action)) == msgpack.packb(action),
                f"{_name(game, num_players)}: action {action!r} is not msgpack-native",
            )


# ---- hidden information -------------------------------------------------------


def check_redeal(game: GameRef, num_players: int, seeds: Iterable[int] = range(3), every: int = 9) -> None:
    """Redeal keeps the player's view (the leak test) and the seat to act,
    leaves the original alone, and does resample something hidden (some
    redealt state has a different future; checked until seen twice)."""
    future_changed = 0
    for seed in seeds:
        for state in sample_states(game, num_players, seed, every):
            future = None
            if future_changed < 2:
                future = rollout_bytes(state.clone(), policy_seed=1, limit=40)
            for player in range(num_players):
                future_changed += _check_one_redeal(state, player, future)
    require(future_changed > 0, f"{_name(game, num_players)}: redeal never changed any hidden information")


def _check_one_redeal(state: Game, player: int, future: bytes | None) -> int:
    """Checks two redeals of one state for one player; how many of them
    changed the future (compared only when ``future`` is given)."""
    where = f"{state.INFO.slug} decision {state.decisions} seat {player}"
    view = _view(state, player)
    changed = 0
    for redeal_seed in range(2):
        dealt = state.redeal(player, redeal_seed)
        require(_view(dealt, player) == view, f"{where}: redeal changed the player's view")
        require(dealt.current_player() == state.current_player(), f"{where}: redeal changed the seat to act")
        if state.current_player() == player:
            require(dealt.legal_actions() == state.legal_actions(), f"{where}: redeal changed own legal actions")
        if future is not None and rollout_bytes(dealt, policy_seed=1, limit=40) != future:
            changed += 1
        require(_view(state, player) == view, f"{where}: redeal must not touch the original")
    return changed


def check_redeal_sees_only_the_view(game: GameRef, num_players: int, seed: int = 5, every: int = 15,
                                    most: int = 12) -> None:
    """A redeal is a function of the player's view and the seed alone: two
    states the player cannot tell apart redeal to the same state for the same
    seed. Otherwise the sample would carry where the hidden cards really lay
    (a search bot handed the true state could read it off), and two bots with
    one view would not agree."""
    for state in sample_states(game, num_players, seed, every, most):
        if state.is_terminal():
            continue
        for player in range(num_players):
            lookalike = state.redeal(player, 1234)
            first = rollout_bytes(state.redeal(player, 77), policy_seed=3, limit=40)
            second = rollout_bytes(lookalike.redeal(player, 77), policy_seed=3, limit=40)
            require(first == second, f"{_name(game, num_players)} decision {state.decisions} "
                    f"seat {player}: a redeal depends on more than the player's view")


def check_redealt_play_to_end(game: GameRef, num_players: int, seed: int = 4, every: int = 17) -> None:
    """A redealt state plays on to a proper end."""
    for state in sample_states(game, num_players, seed, every):
        dealt = state.redeal(state.current_player() if not state.is_terminal() else 0, 99)
        rollout_bytes(dealt, policy_seed=2, limit=dealt.INFO.max_decisions)
        require(dealt.is_terminal(), f"{_name(game, num_players)} decision {state.decisions}: a redealt game did not end")


def check_redealt_accept_every_action(game: GameRef, num_players: int, seed: int = 8, every: int = 7) -> None:
    """A search bot redeals for its own seat while another seat is mid-move:
    every action the redealt state offers must apply."""
    for state in sample_states(game, num_players, seed, every):
        if state.is_terminal():
            continue
        for player in range(num_players):
            dealt = state.redeal(player, 17 + player)
            for action in dealt.legal_actions()[:40]:
                dealt.clone().apply(action)


# ---- states built from one seat's view --------------------------------------------


def check_from_observation(game: GameRef, num_players: int, seeds: Iterable[int] = range(2),
                           every: int = 6) -> None:
    """``from_observation`` (``Game.from_observation``: what a search bot
    samples) rebuilds, along seeded random games, the acting seat's view as
    it comes over the wire: the rebuilt state shows that seat the same
    observation, seat to act, decision count and legal actions, and plays
    on to a proper end (every third state). Another seat's view, while
    someone else is to act, rebuilds too (its observation). The same seed
    rebuilds the same state, and the hidden parts come from the seed: some
    rebuilt state's future changes with it (checked until seen twice)."""
    cls, name = resolve(game), _name(game, num_players)
    changed = 0
    for seed in seeds:
        for index, state in enumerate(sample_states(cls, num_players, seed, every)):
            actor = state.current_player()
            seat = max(actor, 0)
            obs, legal = wire([state.observation(seat), state.legal_actions()])
            where = f"{name} seed {seed} decision {state.decisions} seat {seat}"
            rebuilt = check_rebuilds(cls, obs, legal, seed=index, decisions=state.decisions, where=where)
            require(rebuilt.current_player() == actor, f"{where}: the rebuilt state has another seat to act")
            if index % 3 == 0:
                _play_to_end(rebuilt, random.Random(index), where + " (rebuilt)")
            if actor >= 0:
                other = (seat + 1) % num_players
                check_rebuilds(cls, wire(state.observation(other)), None, seed=1,
                               decisions=state.decisions, where=f"{where}, seat {other}'s view")
                if changed < 2:
                    first = rollout_bytes(cls.from_observation(obs, 5, state.decisions), 1, limit=40)
                    again = rollout_bytes(cls.from_observation(obs, 5, state.decisions), 1, limit=40)
                    require(first == again, f"{where}: the same seed rebuilt different states")
                    if rollout_bytes(cls.from_observation(obs, 6, state.decisions), 1, limit=40) != first:
                        changed += 1
    require(changed > 0, f"{name}: from_observation never sampled anything hidden from the seed")


def check_rebuilds(game: GameRef, obs: Any, legal: list | None, seed: int, decisions: int = 0,
                   where: str = "") -> Game:
    """One observation (wire form) rebuilt by ``from_observation``: the state
    shows ``obs["seat"]`` exactly ``obs`` and, where ``legal`` (wire form)
    is given, that seat is to act with exactly those legal actions. Returns
    the rebuilt state; raises ConformanceError naming the first difference."""
    cls = resolve(game)
    where = where or f"{cls.INFO.slug} seat {obs['seat']}"
    try:
        state = cls.from_observation(obs, seed, decisions)
    except NotImplementedError as exc:
        raise ConformanceError(f"{where}: {exc} (see games.base.Game.from_observation)") from None
    seen = wire(state.observation(obs["seat"]))
    if seen != obs:
        keys = [k for k in obs if seen.get(k) != obs[k]] or sorted(set(seen) - set(obs))
        raise ConformanceError(f"{where}: the rebuilt observation differs in {keys}: "
                               f"{[(seen.get(k), obs.get(k)) for k in keys[:2]]} (rebuilt, sent)")
    require(state.decisions == decisions, f"{where}: the rebuilt decision count differs")
    if legal is not None:
        require(state.current_player() == obs["seat"] or not legal,
                f"{where}: the rebuilt state has seat {state.current_player()} to act")
        mine = wire(state.legal_actions())
        require(mine == legal, f"{where}: the rebuilt legal actions differ: {mine[:8]} vs {legal[:8]}")
    return state


def _play_to_end(state: Game, picker: random.Random, where: str) -> None:
    """Random legal actions to the end: never stuck, never past the cap."""
    while not state.is_terminal():
        require(state.decisions < state.INFO.max_decisions, f"{where}: random play hit the hard cap")
        legal = state.legal_actions()
        require(legal, f"{where}: no legal action at decision {state.decisions} before the end")
        state.apply(picker.choice(legal))
    _check_final(state, where)


# ---- the flow of the game -------------------------------------------------------


@dataclass
class FlowReport:
    """What ``check_flow_leaks`` compared, and what it left out and why."""

    compared_steps: int = 0  # steps played in two states q cannot tell apart
    compared_turns: int = 0  # q's turns reached by different hidden choices
    revealed: Counter = field(default_factory=Counter)  # reveal reason -> steps not compared

    def __str__(self) -> str:
        why = ", ".join(f"{reason}: {k}" for reason, k in sorted(self.revealed.items()))
        return (
            f"{self.compared_steps} steps compared on re-dealt states, "
            f"{self.compared_turns} turns compared across hidden choices"
            + (f"; not compared where the rules reveal ({why})" if why else "")
        )


def check_flow_leaks(
    game: GameRef,
    num_players: int,
    seeds: Iterable[int] = (0, 1),
    every: int = 2,
    steps: int = 4,
    depth: int = 3,
    branch: int = 2,
) -> FlowReport:
    """The flow of the game shows nobody what they may not see (module doc).

    Along a seeded random game per seed, every ``every`` decisions: a
    re-dealt twin for one observer is played ``steps`` common actions on,
    and the other players' choices are explored ``depth`` steps deep,
    ``branch`` actions per step."""
    report = FlowReport()
    for seed in seeds:
        _flow_along_one_game(resolve(game), num_players, seed, report, every, steps, depth, branch)
    require(report.compared_steps > 0, f"{_name(game, num_players)}: no step could be compared")
    return report


def _flow_along_one_game(cls: type[Game], num_players: int, seed: int, report: FlowReport,
                         every: int, steps: int, depth: int, branch: int) -> None:
    game = cls.new(num_players, seed)
    picker = random.Random(seed * 31 + 7)
    while not game.is_terminal():
        if game.decisions % every == 0:
            actor = game.current_player()
            observers = [q for q in range(num_players) if q != actor]
            q = picker.choice(observers)
            twin = game.redeal(q, seed * 100003 + game.decisions)
            twin.rng = copy_rng(game.rng)  # the same dice and the same next deals
            _play_alike(game, twin, q, picker, steps, report)
            _explore_choices(game, observers, seed, depth, branch, report)
        game.apply(picker.choice(game.legal_actions()))


def _play_alike(first: Game, second: Game, q: int, picker: random.Random, steps: int,
                report: FlowReport) -> None:
    """Play the same actions in two states q cannot tell apart, until q is to
    act; after each step q must see the same observation, seat and counter."""
    a, b = first.clone(), second.clone()
    for _ in range(steps):
        if a.is_terminal() or a.current_player() == q:
            return
        offered = set(map(_key, b.legal_actions()))
        common = [x for x in a.legal_actions() if _key(x) in offered]
        if not common:
            return
        action = picker.choice(common)
        shown = _declared_reveal(a, action, q), _declared_reveal(b, action, q)
        if shown[0] != shown[1]:
            report.revealed[cast(tuple, shown[0] or shown[1])[0]] += 1  # they differ: one is a tuple
            return
        before = (a.decisions, a.current_player())
        a.apply_unchecked(action)
        b.apply_unchecked(action)
        _require_same_flow(a, b, q, f"after {action!r} by seat {before[1]} at decision {before[0]}")
        report.compared_steps += 1


def _key(action: Action) -> bytes:
    return msgpack.packb(action)


def _declared_reveal(game: Game, action: Action, q: int) -> tuple | None:
    shown = game.reveals(action, q)
    if shown is not None:
        require(
            isinstance(shown, tuple) and shown and shown[0] in game.REVEALS,
            f"{game.INFO.slug}: reveals() returned {shown!r}; the reason must be a key of REVEALS",
        )
    return shown


def _require_same_flow(a: Game, b: Game, q: int, what: str) -> None:
    where = f"{a.INFO.slug} {a.num_players}p, observer seat {q}, {what}"
    require(
        a.current_player() == b.current_player(),
        f"{where}: the seat to act depends on cards seat {q} cannot see "
        f"({a.current_player()} vs {b.current_player()})",
    )
    require(a.decisions == b.decisions, f"{where}: the decision counter differs")
    obs_a, obs_b = a.observation(q), b.observation(q)
    if msgpack.packb(obs_a) != msgpack.packb(obs_b):
        keys = sorted(k for k in obs_a if wire(obs_a.get(k)) != wire(obs_b.get(k)))
        raise ConformanceError(f"{where}: seat {q}'s observation differs in {keys}")


def _explore_choices(root: Game, observers: list[int], seed: int, depth: int, branch: int,
                     report: FlowReport) -> None:
    """Explore the other players' choices from ``root``; wherever an observer
    is next to act, histories that showed them the same things (the same
    observations, flow keys aside, step by step) must come with the same
    flow: decision counter, seat to act and legal actions."""
    tree = _choice_tree(root, seed, depth, branch)
    for q in observers:
        seen: dict[tuple, tuple] = {}
        for state, path, trace in _walk_for(tree, root, q):
            flow = (state.decisions, state.current_player(), tuple(map(_key, state.legal_actions())))
            key = (trace, _view(state, q))
            if key in seen and seen[key][0] != flow:
                raise ConformanceError(
                    f"{root.INFO.slug} {root.num_players}p, decision {root.decisions}: "
                    f"seat {q} sees the same things after {seen[key][1]!r} and {path!r}, "
                    f"but the decision counter / seat to act differ "
                    f"({seen[key][0][:2]} vs {flow[:2]}): the flow shows a hidden choice"
                )
            seen.setdefault(key, (flow, path))
            report.compared_turns += 1


Tree = list  # [(action, child state, child's Tree)]


def _choice_tree(state: Game, seed: int, depth: int, branch: int) -> Tree:
    """The states reached from ``state`` in ``depth`` steps, ``branch``
    actions tried per step. The actions tried depend only on the seat to act
    and the number of its options, so different paths try the same ones (and
    meet again when their hidden choices leave the same public state)."""
    if depth == 0 or state.is_terminal():
        return []
    legal = state.legal_actions()
    chooser = random.Random(hash((seed, state.current_player(), len(legal))))
    picks = legal if len(legal) <= branch else chooser.sample(legal, branch)
    tree = []
    for action in picks:
        child = state.clone()
        child.apply_unchecked(action)
        tree.append((action, child, _choice_tree(child, seed, depth - 1, branch)))
    return tree


def _walk_for(tree: Tree, root: Game, q: int) -> Iterator[tuple[Game, tuple, tuple]]:
    """(state, actions, what q saw on the way) for the states where q is next
    to act (or the game ended) before q acted. What q saw is the sequence of
    q's observations, flow keys aside, with repeats dropped: two histories
    with equal sequences differ only in hidden choices or in the flow."""
    stack: list[tuple[Tree, tuple, tuple]] = [(tree, (), (_content(root, q),))]
    while stack:
        branches, path, trace = stack.pop()
        for action, state, below in branches:
            seen = _content(state, q)
            here = (path + (action,), trace if seen == trace[-1] else trace + (seen,))
            if state.is_terminal() or state.current_player() == q:
                yield (state, *here)
            else:
                stack.append((below, *here))


def _content(game: Game, q: int) -> bytes:
    """q's observation without the keys that only describe the flow."""
    obs = game.observation(q)
    return msgpack.packb({k: v for k, v in obs.items() if k not in game.FLOW_KEYS})


# ---- the declared wire format ------------------------------------------------------


def schema_validators(slug: str) -> tuple[Any, Any, list[tuple[str, Any, Any]]]:
    """(obs, action, [(step, when, legal list)]) validators of a declared game."""
    from jsonschema import Draft202012Validator

    from games.schemas import action_schema, obs_schema, step_schemas

    steps = [
        (s["step"], Draft202012Validator(s["when"]),
         Draft202012Validator({"type": "array", "items": s["action"]}))
        for s in step_schemas(slug)
    ]
    return Draft202012Validator(obs_schema(slug)), Draft202012Validator(action_schema(slug)), steps


def _why(validator: Any, value: Any) -> str:
    from jsonschema.exceptions import best_match

    error = best_match(validator.iter_errors(value))
    return f"at {list(error.absolute_path)}: {error.message[:300]}"


def check_observations_match_schema(game: GameRef, num_players: int, seeds: Iterable[int] = range(3),
                                    samples: int = 8) -> None:
    """Every seat's observation, at ``samples`` points of seeded random games
    and at their end, validates against the game's declared obs schema."""
    slug = resolve(game).INFO.slug
    validator = schema_validators(slug)[0]
    for seed in seeds:
        length = sum(1 for _ in sample_states(game, num_players, seed, every=1)) - 1
        picks = {length * i // samples for i in range(samples)} | {length}
        for state in sample_states(game, num_players, seed, every=1):
            if state.decisions not in picks:
                continue
            for seat in range(num_players):
                obs = wire(state.observation(seat))
                if not validator.is_valid(obs):
                    raise ConformanceError(f"{_name(game, num_players)} seed {seed} seat {seat} after "
                                           f"{state.decisions} decisions: {_why(validator, obs)}")


def check_legal_actions_match_steps(game: GameRef, num_players: int, seed: int = 7) -> set[str]:
    """At every decision of a seeded random game, the actor's observation
    selects exactly one declared step, whose action schema takes every legal
    action. Returns the steps seen (a caller can require each declared step
    to be reached over all player counts)."""
    slug = resolve(game).INFO.slug
    _, action_validator, steps = schema_validators(slug)
    seen: set[str] = set()
    for state in sample_states(game, num_players, seed, every=1):
        if state.is_terminal():
            break
        where = f"{_name(game, num_players)} seed {seed} after {state.decisions} decisions"
        obs = wire(state.observation(state.current_player()))
        legal = wire(state.legal_actions())
        matched = [(name, check) for name, when, check in steps if when.is_valid(obs)]
        require(len(matched) == 1, f"{where}: the obs selects steps {[m[0] for m in matched]}, "
                "not exactly one")
        name, check = matched[0]
        if not check.is_valid(legal):
            raise ConformanceError(f"{where}: step {name}: legal {_why(check, legal)}")
        for action in legal:
            if not action_validator.is_valid(action):
                raise ConformanceError(f"{where}: {action!r} {_why(action_validator, action)}")
        seen.add(name)
    return seen


# ---- everything ---------------------------------------------------------------------

CHECKS: dict[str, Callable[..., Any]] = {
    "random_play": check_random_play,
    "illegal_actions_refused": check_illegal_actions_refused,
    "determinism": check_determinism,
    "clone": check_clone,
    "observations_msgpack": check_observations_msgpack,
    "redeal": check_redeal,
    "redealt_play_to_end": check_redealt_play_to_end,
    "redealt_accept_every_action": check_redealt_accept_every_action,
    "redeal_sees_only_the_view": check_redeal_sees_only_the_view,
    "from_observation": check_from_observation,
    "flow_leaks": check_flow_leaks,
    "observations_match_schema": check_observations_match_schema,
    "legal_actions_match_steps": check_legal_actions_match_steps,
}


def check_game(game: GameRef, num_players: int, seeds: Iterable[int] | None = None) -> dict[str, Any]:
    """Run every check for one player count; returns each check's result
    (the flow check's FlowReport, None for the others). ``seeds`` replaces
    the default seeds of the checks that take several."""
    results = {}
    for name, check in CHECKS.items():
        if seeds is not None and name in ("random_play", "determinism", "redeal", "from_observation",
                                          "flow_leaks", "observations_match_schema"):
            results[name] = check(game, num_players, seeds=list(seeds))
        else:
            results[name] = check(game, num_players)
    return results
