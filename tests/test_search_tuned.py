"""The search's tuned default moves (GameConfig.base): legal, seeded,
stronger than the heuristic on duplicate deals, and the move the search
keeps when it cannot tell its candidates apart."""

from __future__ import annotations

import random

import pytest

from bots.heuristics import load
from bots.search.core import Budget, Searcher, config_for
from bots.search.games.target.hand import discard as target_discard
from bots.search.games.target.hand import hand_value as target_hand_value
from bots.search.games.tateyoko.tuned import lines_to_go_out
from bots.search.lab.tuning import compare, tuned_games
from games import get_game, implemented_games
from games.determinize import from_observation
from games.playthrough import wire
from games.tile_hunt import reroll_options

# the games' tuned default moves, and the search's priors
BASES = {slug: config_for(slug).base for slug in tuned_games()}
PRIORS = {slug: config_for(slug).prior for slug in implemented_games()
          if config_for(slug).prior is not None}


def positions(slug: str, players: int, seeds: range):
    """(obs, legal) of every decision with a choice, tuned moves at every seat."""
    base = BASES[slug]
    for seed in seeds:
        game = get_game(slug).new(players, seed)
        rng = random.Random(seed)
        while not game.is_terminal():
            legal = game.legal_actions()
            obs, wire_legal = wire([game.observation(game.current_player()), legal])
            index = 0
            if len(legal) > 1:
                yield obs, wire_legal
                index = base(obs, wire_legal, rng)
            game.apply(legal[index])


@pytest.mark.parametrize("slug,players", [(slug, players) for slug in sorted(BASES)
                                          for players in (3, 4, 6)
                                          if players in get_game(slug).INFO.player_counts()])
def test_tuned_moves_are_legal_and_seeded(slug, players):
    base = BASES[slug]
    seen = 0
    for obs, legal in positions(slug, players, range(3)):
        index = base(obs, legal, random.Random(7))
        assert 0 <= index < len(legal)
        assert base(obs, legal, random.Random(7)) == index
        seen += 1
    assert seen > 50


def test_the_tuned_all_aboard_move_keeps_its_joker_while_the_round_goes_on():
    """On a red signal with a joker and three black cards, the heuristic
    clears the signal with the joker and plays every black card after it,
    for the bonus of an all-red hand as if the round ended then. The tuned
    move dumps a red suit instead while the deck is deep (its hand will be
    refilled first), and plays as the heuristic once the round may end:
    the deck is down to 6 + 3 cards per player."""
    from games.all_aboard import legal_plays
    from games.tennos import card_name

    names = {card_name(c): c for c in range(78)}
    joker = 81
    hand = sorted([names[n] for n in ("♠4", "♠9", "♥4", "♥K", "♦A", "♦Q", "♣9")] + [joker])
    field = names["♦K"]
    legal = legal_plays(hand, field)
    assert joker in legal and len(legal) == 5
    heuristic = load("all_aboard")
    tuned = BASES["all_aboard"]
    for players, deck_size, tuned_keeps_the_joker in [
            (4, 41, True), (4, 19, True), (4, 18, False), (4, 8, False),  # from 18 cards on
            (6, 25, True), (6, 24, False), (2, 13, True), (2, 12, False)]:  # 24 and 12
        obs = {"hand": hand, "field": field, "field_red": True, "deck_size": deck_size,
               "num_players": players}
        assert legal[heuristic(obs, legal, random.Random(1))] == joker
        played = legal[tuned(obs, legal, random.Random(1))]
        assert (played != joker) == tuned_keeps_the_joker, (deck_size, card_name(played))


@pytest.mark.statistical
@pytest.mark.slow
@pytest.mark.parametrize("slug,deals", [("all_aboard", 200), ("tateyoko", 100), ("tile_hunt", 40),
                                        ("target", 200)])
def test_the_tuned_move_beats_the_heuristic(slug, deals):
    """Deterministic (fixed deals and seeds), 6-15 s each. On these deals:
    all_aboard +111 [+93, +129] Elo (+33 [+18, +47] before the all-red
    bonus waited for the round's end), tateyoko +125 [+103, +150] (+51
    [+30, +73] with the open cards alone as a tie-break), tile_hunt +100
    [+57, +146], target +76 [+59, +94] (docs/search.md: +118, +88, +86
    and +78 on 2,000, 500, 600 and 1,000 other deals)."""
    result = compare(slug, players=4, deals=deals, first_deal=500)
    assert result["deals"] == deals and result["lo"] > 0, result


@pytest.mark.parametrize("slug", sorted(set(BASES) & set(PRIORS)))
def test_the_search_ranks_its_candidates_by_the_tuned_values(slug):
    """With more legal moves than it searches, the search keeps those its
    prior rates best: the prior is the tuned move's own valuation, so the
    tuned move is always among the best rated, at every step where the
    search rates its candidates by the prior (tile_hunt has none: its turn
    search plays every step it searches). tateyoko's "pass" is rated as
    the hand kept, but the tuned move, like the heuristic, never passes
    while it can place a card: it is left out of the comparison."""
    config = config_for(slug)
    checked = 0
    for obs, legal in positions(slug, 4, range(4)):
        if (config.search_step is not None and not config.search_step(obs)) or (
                config.turn_step is not None and config.turn_step(obs)):
            continue
        world = from_observation(slug, obs, 5, 0)
        values = PRIORS[slug](world, obs["seat"], world.legal_actions())
        chosen = BASES[slug](obs, legal, random.Random(3))
        assert len(values) == len(legal)
        rivals = [v for v, action in zip(values, legal) if action != "pass"]
        assert values[chosen] >= max(rivals) - 1e-4
        checked += 1
    assert checked > 20


def test_lines_to_go_out_counts_the_turns_a_hand_needs():
    """A turn lays one line: a column of one rank, or a row of one suit's
    run (K and A are one apart). The count takes the longest such group
    left, again and again."""
    from games.tennos import card  # rank 1 (A) to 13 (K)

    assert lines_to_go_out([]) == 0
    assert lines_to_go_out([card(0, 5)]) == 1
    assert lines_to_go_out([card(0, 5), card(1, 5), card(4, 5)]) == 1  # a column
    assert lines_to_go_out([card(2, 12), card(2, 13), card(2, 1), card(2, 2)]) == 1  # a row over K-A
    assert lines_to_go_out([card(0, 5), card(1, 6), card(2, 7)]) == 3  # nothing lines up
    # a column of A's, then the row 2-3 left over
    assert lines_to_go_out([card(s, 1) for s in range(6)] + [card(0, 2), card(0, 3)]) == 2
    assert lines_to_go_out([card(3, r) for r in range(1, 14)]) == 1  # a whole suit: one row
    assert lines_to_go_out([card(0, 5), card(0, 7)]) == 2  # a gap breaks the run


def test_the_tuned_tile_hunt_move_does_not_roll_every_die_for_the_reversal():
    """In the final round the heuristic values the reversal tile (five 1s:
    first place at once) above anything, so it rerolls all five dice for
    it, even as the leader with a straight one die away. The tuned move
    values it as the heuristic values a sure lead (``WIN_BONUS``)."""
    from bots.heuristics import tile_hunt as heuristic_module

    scores = [1250, 1050, 850, 1000]
    tiles = [{"name": name, "points": points, "owner": None}
             for name, points in [("5-quartet", 450), ("6-quintet", 800), ("straight 1-5", 350),
                                  ("straight 2-6", 400), ("2-duo", 150)]]
    obs = {"seat": 0, "num_players": 4, "phase": "late", "final_round": True,
           "order": [0, 1, 3, 2], "turn_position": 0, "step": "roll", "dice": [2, 2, 4, 5, 6],
           "rerolls_left": 2, "tiles": tiles, "reversal": "face_up", "chip_supply": 13,
           "scores": scores}
    legal = ["stop"] + [list(option) for option in reroll_options((2, 2, 4, 5, 6))]
    heuristic = legal[heuristic_module.choose(obs, legal, random.Random(1))]
    tuned = legal[BASES["tile_hunt"](obs, legal, random.Random(1))]
    assert heuristic == [2, 2, 4, 5, 6]
    assert tuned != heuristic and len(tuned) < 5, tuned
    # without the reversal tile on the table the two agree
    obs["reversal"] = "aside"
    assert BASES["tile_hunt"](obs, legal, random.Random(1)) == heuristic_module.choose(
        obs, legal, random.Random(1))


def test_the_search_keeps_its_tuned_move_when_it_cannot_tell():
    """With no playout to compare by, the search plays its default move: the
    tuned one, which is not always the heuristic's."""
    slug = "all_aboard"
    assert config_for(slug).base is not None
    heuristic = load(slug)
    differs = 0
    for obs, legal in positions(slug, 4, range(4)):
        searcher = Searcher(slug, obs["seat"], 4, seed=11)
        outcome = searcher.choose(obs, legal, Budget(iterations=0))
        expected = BASES[slug](obs, legal, random.Random(11))
        assert outcome.index == outcome.heuristic == expected
        differs += expected != heuristic(obs, legal, random.Random(11))
    assert differs > 0, "the tuned move is never other than the heuristic's"


def test_the_tuned_target_move_discards_what_a_drawn_card_would_beat():
    """The heuristic discards only ranks 5-9 (reach 8 or less). The tuned
    move values a hand by the odds of its farthest card of each target's
    suit: a 3 or a J goes (a drawn card is likelier to do better), as does
    the lower of two cards of one suit; an A and a K of one suit stay
    together (one of them is farthest from every target of the suit), and
    a hand of extremes in four suits is kept whole."""
    from bots.heuristics.target import choose_discard
    from games.tennos import card  # suit 0-5, rank 1 (A) to 13 (K)

    def both(hand: list[int]) -> tuple[int | None, object]:
        legal = ["stop", *sorted(hand)]
        return target_discard(sorted(hand), 4), legal[choose_discard({}, legal)]

    assert both([card(0, 1), card(1, 13), card(2, 7), card(2, 6)]) == (card(2, 7), card(2, 7))
    assert both([card(0, 1), card(1, 13), card(2, 4), card(3, 10)]) == (card(2, 4), "stop")
    assert both([card(0, 3), card(1, 11), card(2, 2), card(3, 12)]) == (card(0, 3), "stop")
    assert both([card(0, 1), card(0, 2), card(1, 12), card(3, 13)]) == (card(0, 2), "stop")
    assert both([card(0, 1), card(0, 13), card(1, 12), card(3, 13)]) == (None, "stop")
    assert both([card(0, 1), card(1, 13), card(2, 1), card(3, 13)]) == (None, "stop")
    # farther is worth more, and a second suit more than a second card of one
    unseen = 60
    assert target_hand_value([card(0, 1)], unseen) > target_hand_value([card(0, 3)], unseen)
    assert (target_hand_value([card(0, 1), card(1, 1)], unseen)
            > target_hand_value([card(0, 1), card(0, 2)], unseen))
    # with one other hand (20 unseen cards) a middling 4 is seldom beaten: it stays
    assert target_discard(sorted([card(0, 1), card(1, 13), card(2, 4), card(3, 10)]), 2) is None
