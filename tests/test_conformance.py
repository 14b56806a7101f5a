"""The shared conformance suite, run against every registered game and every
player count it allows. The checks live in the games package
(``games.testing``, the conformance kit); this file runs them, plus the
golden playthroughs of ``tests/golden``. Select one game with
``pytest tests/test_conformance.py -k SLUG``. Games at six and seven players
are marked slow: ``make test`` runs them, ``make test-fast`` does not.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from games import get_game, implemented_games
from games import testing as kit
from games.playthrough import check_golden, golden_cases

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"

# Six and seven players: the same checks on the longest matches and the
# largest observations, half the conformance suite's time for a fifth of its
# cases. `make test` runs them; `make test-fast` (the edit loop) checks every
# game at its smaller counts only.
CROWDED = 6

GAME_COUNTS = [
    pytest.param(slug, n, id=f"{slug}-{n}p", marks=pytest.mark.slow if n >= CROWDED else ())
    for slug in implemented_games()
    for n in get_game(slug).INFO.player_counts()
]


def test_registry_rejects_unknown_games_clearly():
    with pytest.raises(KeyError, match="unknown game 'chess'"):
        get_game("chess")


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_random_play_ends_with_valid_results(slug, num_players):
    kit.check_random_play(slug, num_players)


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_illegal_actions_are_refused(slug, num_players):
    kit.check_illegal_actions_refused(slug, num_players)


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_same_seed_same_actions_same_match(slug, num_players):
    kit.check_determinism(slug, num_players)


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_clone_is_independent(slug, num_players):
    kit.check_clone(slug, num_players)


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_observations_are_msgpack_native(slug, num_players):
    kit.check_observations_msgpack(slug, num_players)


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_redeal_keeps_the_players_view_and_resamples_the_rest(slug, num_players):
    """Also the leak test: hidden parts change, the player's view does not."""
    kit.check_redeal(slug, num_players)


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_redealt_states_play_to_the_end(slug, num_players):
    kit.check_redealt_play_to_end(slug, num_players)


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_states_redealt_for_any_seat_accept_every_legal_action(slug, num_players):
    kit.check_redealt_accept_every_action(slug, num_players)


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_a_redeal_depends_only_on_the_players_view(slug, num_players):
    kit.check_redeal_sees_only_the_view(slug, num_players)


def test_the_view_only_check_catches_a_redeal_that_keeps_the_true_cards_order():
    """A sampler that shuffles the hidden cards without sorting them first
    draws from the right distribution, but which sample comes out depends on
    where the cards really were: the kit refuses it."""
    from games.kings_order import KingsOrder, sort_hand

    class OrderedPool(KingsOrder):
        def redeal(self, player, seed):
            state = self._fresh_copy_for_redeal(seed)
            others = [s for s in range(state.num_players) if s != player]
            pool = [c for s in others for c in state.hands[s]] + list(state.set_aside)
            state.rng.shuffle(pool)
            for s in others:
                size = len(state.hands[s])
                state.hands[s], pool = sort_hand(pool[:size]), pool[size:]
            state.set_aside = pool
            return state

    with pytest.raises(kit.ConformanceError, match="depends on more than the player's view"):
        kit.check_redeal_sees_only_the_view(OrderedPool, 3)


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_a_state_built_from_one_seats_view_shows_that_view_and_plays_on(slug, num_players):
    """What a search bot samples (``Game.from_observation``): the seat's view
    and legal actions rebuilt exactly, the rest from the seed."""
    kit.check_from_observation(slug, num_players)


def test_the_rebuild_check_catches_a_builder_that_drops_a_hidden_card():
    """A from_observation that deals another hand one card short (the card
    goes to the set-aside pile) shows the seat a wrong hand size."""
    from games.cat_in_the_box import CatInTheBox

    class DropsACard(CatInTheBox):
        @classmethod
        def from_observation(cls, obs, seed, decisions=0):
            state = super().from_observation(obs, seed, decisions)
            other = (obs["seat"] + 1) % state.num_players
            if state.hands[other]:
                state.set_aside = sorted(state.set_aside + [state.hands[other].pop()])
            return state

    with pytest.raises(kit.ConformanceError, match="rebuilt observation differs in .*hand_sizes"):
        kit.check_from_observation(DropsACard, 4)


def test_the_rebuild_check_names_an_engine_without_from_observation():
    from games.base import Game
    from games.limit import Limit

    class NoBuilder(Limit):
        from_observation = classmethod(Game.from_observation.__func__)

    with pytest.raises(kit.ConformanceError, match="from_observation is not implemented"):
        kit.check_from_observation(NoBuilder, 3)


@pytest.mark.parametrize("slug,num_players", GAME_COUNTS)
def test_the_flow_of_the_game_leaks_nothing(slug, num_players):
    """Who acts next and the decision counter depend only on what each player
    may see. Steps left uncompared are the ones where the rules themselves
    show hidden cards; each game names them, with the rule, in its REVEALS."""
    report = kit.check_flow_leaks(slug, num_players)
    reveals = get_game(slug).REVEALS
    for reason in report.revealed:
        assert reveals[reason], f"{slug}: say why {reason!r} may be shown"
    print(f"{slug} {num_players}p: {report}")


def test_the_flow_check_catches_a_turn_that_ends_on_a_hidden_card():
    """The kit's flow check fails on an engine that ends a turn by itself
    when the hand cannot go on (tateyoko's rules version 1)."""
    from games.tateyoko import Tateyoko

    class AutoStop(Tateyoko):
        def _line_can_go_on(self) -> bool:
            return bool(self._continuations())

    with pytest.raises(kit.ConformanceError, match="seat to act depends on cards"):
        kit.check_flow_leaks(AutoStop, 3)


def test_the_flow_check_catches_a_question_skipped_after_a_secret_answer():
    """...and on one that skips the second open-bid question after a "no"
    (twin_shoot's rules version 1)."""
    from games.twin_shoot import CLOSED, TwinShoot

    class SkipSecond(TwinShoot):
        def _apply(self, action):
            if self.phase == "open" and action == CLOSED and self.to_act == self.open_askees[0]:
                self.open_answers[self.to_act] = False
                self._start_play()
                return
            super()._apply(action)

    with pytest.raises(kit.ConformanceError, match="the flow shows a hidden choice"):
        kit.check_flow_leaks(SkipSecond, 4)


GOLDEN = [
    pytest.param(slug, n, seed, id=f"{slug}-{n}p-seed{seed}")
    for slug in implemented_games()
    for n, seed in golden_cases(slug)
]


@pytest.mark.parametrize("slug,num_players,seed", GOLDEN)
def test_golden_playthrough(slug, num_players, seed):
    check_golden(slug, num_players, seed, GOLDEN_DIR)


LOGGED_GAMES = [
    pytest.param(slug, id=slug) for slug in implemented_games()
    if "log" in get_game(slug).new(get_game(slug).INFO.player_counts()[0], 0).observation(0)
]


@pytest.mark.parametrize("slug", LOGGED_GAMES)
def test_the_public_log_is_the_same_for_every_seat_and_only_grows(slug):
    """A game's `log` is public history: every seat sees the same one, and
    from one step to the next it only gains entries, unless a new round
    starts it afresh (then it holds at most the new round's first steps,
    and `previous_log` holds the round before whole, so nothing of it is
    lost to a seat whose last decision came before its end)."""
    for num_players in get_game(slug).INFO.player_counts():
        before: list = []
        grew = restarts = 0
        for state in kit.sample_states(slug, num_players, seed=5, every=1):
            views = [state.observation(seat) for seat in range(num_players)]
            logs = [view["log"] for view in views]
            assert all(log == logs[0] for log in logs), f"{slug} {num_players}p: seats see different logs"
            log = logs[0]
            if log[:len(before)] == before:
                grew += len(log) > len(before)
            else:
                assert len(log) <= num_players, f"{slug} {num_players}p: the log lost entries mid-round"
                previous = views[0].get("previous_log")
                assert previous is not None, f"{slug}: the log restarts without a previous_log"
                assert all(view["previous_log"] == previous for view in views)
                assert previous[:len(before)] == before and len(previous) >= len(before)
                restarts += 1
            before = log
        assert grew > 5
        if "previous_log" in views[0]:
            assert restarts >= 1, f"{slug} {num_players}p: no round ended in the sampled states"
