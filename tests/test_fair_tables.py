"""Fair tables: seatings balanced for seat and neighbour, copies of a bot at
one table, and a league's identity independent of the order of its bots.

The twin test simulates leagues of a game in which seat order matters (a
player sitting directly after the strong bot finishes as if TWIN_PENALTY
weaker), with two identical bots under two names, and rates them with the
table's own fit: balanced seatings give the twins' difference an interval
that covers 0 about 95% of the time; the old cyclic rotation, which always
seats one twin after the strong bot, does not.
"""

from __future__ import annotations

import itertools
import json
import zlib
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from harness.league import (
    League,
    LeagueFileError,
    arrangement_count,
    arrangements,
    balanced_orders,
    load_league,
)
from harness.match import Limits
from harness.stats.ratings import ELO_PER_UNIT, RowTuples, rating_fit

ROOT = Path(__file__).resolve().parent.parent
TEST_BOTS = Path(__file__).parent / "bots"


# ---- the balanced sets -------------------------------------------------------------
def neighbour_counts(orders, n: int, k: int = 1) -> Counter:
    """(x, y) -> how often y sits k places after x, around the table."""
    return Counter((order[s], order[(s + k) % n]) for order in orders for s in range(n))


def assert_balanced(orders, labels) -> None:
    """Every label in every seat equally often, and every ordered pair of
    different labels at every distance equally often."""
    n = len(orders[0])
    seats = Counter((s, bot) for order in orders for s, bot in enumerate(order))
    assert set(seats) == {(s, b) for s in range(n) for b in labels}
    assert len(set(seats.values())) == 1, f"seats unbalanced: {seats}"
    for k in range(1, n):
        pairs = neighbour_counts(orders, n, k)
        assert set(pairs) == {(a, b) for a in labels for b in labels if a != b}, k
        assert len(set(pairs.values())) == 1, f"{k} places after, unbalanced: {pairs}"


@pytest.mark.parametrize("n", range(2, 8))
def test_balanced_orders_balance_seat_and_every_neighbour(n):
    orders = balanced_orders(n)
    assert len(orders) == len(set(orders)) == n * (n - 1)
    assert all(sorted(order) == list(range(n)) for order in orders)
    assert_balanced(orders, range(n))


def league(players: int, bots: list[str], rotation: str = "balanced", game: str = "tateyoko",
           copies: dict[str, int] | None = None, partners: str = "copies") -> League:
    return League(name="fair", game=game, bots=bots, players=players, deals=1, rotation=rotation,
                  partners=partners, seed=1, limits=Limits(), copies=copies or {})


@pytest.mark.parametrize("n", range(3, 8))
def test_every_table_is_seated_in_a_balanced_set(n):
    """Distinct bots: n(n - 1) seatings (every order at 3 seats); each bot
    in each seat, and directly after each other bot, equally often. The
    old cyclic rotation: n seatings, each bot always after the same one."""
    bots = [f"b{i}" for i in range(n)]
    (table,) = league(n, bots).tables()
    seatings = league(n, bots).seatings(table)
    assert len(seatings) == len(set(seatings)) == n * (n - 1)
    assert_balanced(seatings, bots)
    cyclic = league(n, bots, "cyclic").seatings(table)
    assert len(cyclic) == n
    after = neighbour_counts(cyclic, n)
    assert after[("b0", "b1")] == n and after[("b1", "b0")] == 0


@pytest.mark.parametrize("table", [("a", "a", "b"), ("a", "b", "b", "b"), ("a", "a", "b", "b"),
                                   ("a", "b", "b", "b", "b"), ("a", "a", "b", "c", "c"),
                                   ("a", "a", "a", "b", "b", "c"),
                                   ("a", "b", "c", "d", "d", "d", "d")])
def test_tables_with_repeated_bots_stay_balanced(table):
    """Every distinct arrangement when they are few, else the balanced orders
    (a seating that comes twice is played twice, under another match ID)."""
    n = len(table)
    seatings = league(n, sorted(set(table))).seatings(table)
    assert len(seatings) == min(arrangement_count(table), n * (n - 1))
    assert_balanced_multiset(seatings, table)


def test_unbalanced_tables_are_counted_for_the_warning():
    assert league(3, ["r", "h"], "cyclic").unbalanced_tables() == 0  # (r, r, h): every order
    assert league(4, ["r", "h"], "cyclic").unbalanced_tables() == 1  # (r, r, h, h): never r h r h
    assert league(5, list("abcdef"), "cyclic").unbalanced_tables() == 6
    assert league(3, list("abc"), "none").unbalanced_tables() == 1
    for n in range(3, 8):
        assert league(n, list("abcdefgh"), "balanced").unbalanced_tables() == 0
        assert league(n, list("abc"), "balanced").unbalanced_tables() == 0


def test_a_seating_played_twice_on_a_deal_gets_its_own_match_id():
    """Six seats of three bots: the 30 balanced orders seat some tables the
    same way twice; both are scheduled, told apart by their match IDs."""

    class Named(League):
        def bot_id(self, name: str) -> str:
            return name

    spec = Named(name="twice", game="tateyoko", bots=["a", "b", "c"], players=6, deals=2,
                 rotation="balanced", partners="copies", seed=1, limits=Limits())
    matches = list(spec.schedule())
    assert len(matches) == spec.size() == len({m.match_id for m in matches})
    assert len({(m.seats, m.deal) for m in matches}) < len(matches), "some seating twice"


def assert_balanced_multiset(seatings, table) -> None:
    """A multiset table: each bot's share of each seat is its share of the
    table, and of the seats directly after each bot, its share of the others."""
    n, count = len(table), Counter(table)
    seats = Counter((s, bot) for seating in seatings for s, bot in enumerate(seating))
    for (s, bot), times in seats.items():
        assert times * n == count[bot] * len(seatings), (s, bot)
    for k in range(1, n):
        pairs = neighbour_counts(seatings, n, k)
        for a, b in itertools.product(count, repeat=2):
            others = count[b] - (a == b)  # the seats k after one of a's that b may hold
            assert pairs[(a, b)] * (n - 1) == count[a] * others * len(seatings), (k, a, b)


def test_arrangements_are_every_distinct_order():
    assert arrangements(("a", "b", "a")) == [("a", "a", "b"), ("a", "b", "a"), ("b", "a", "a")]
    for table in [("x",) * 3 + ("y",) * 2, tuple("abcd")]:
        assert set(arrangements(table)) == set(itertools.permutations(table))
        assert len(arrangements(table)) == arrangement_count(table)


def test_teams_of_copies_and_mixed_partners_are_balanced():
    """Teams of copies: the teams take every order. Mixed partners: every
    distinct seating, so every partnership and every seat equally often."""
    copies = league(6, ["a", "b", "c"], game="twin_shoot")
    (table,) = copies.tables()
    seatings = copies.seatings(table)
    assert len(seatings) == 6
    assert all(s[0] == s[1] and s[2] == s[3] and s[4] == s[5] for s in seatings)
    mixed = league(4, ["a", "b", "c", "d"], game="tenos_square", partners="mixed")
    (table,) = mixed.tables()
    seatings = mixed.seatings(table)
    assert sorted(seatings) == sorted(itertools.permutations(table))
    assert_balanced(seatings, table)


# ---- the twin test --------------------------------------------------------------------
TWIN_PENALTY = 0.5   # strength lost sitting directly after the strong bot (87 Elo)
STRONG = 1.0         # the strong bot's strength (174 Elo)
LUCK = 0.7           # share of seat luck drawn once per deal (duplicate deals)


@dataclass(frozen=True)
class TwinSetting:
    players: int
    deals: int        # balanced; cyclic plays (players - 1) times as many: the same matches
    replications: int


def twin_bots(players: int) -> tuple[list[str], np.ndarray]:
    """The strong bot, the twins, and others spread below: in this order
    the cyclic rotation seats twin_a after the strong bot, always."""
    others = [f"other{i}" for i in range(players - 3)]
    strength = np.r_[STRONG, 0.0, 0.0, np.linspace(-0.6, 0.3, len(others))]
    return ["strong", "twin_a", "twin_b", *others], strength


def twin_schedule(players: int, rotation: str, deals: int) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """(matches, players) bot indices by seat and each match's deal, from the
    league's own seatings."""
    names, _ = twin_bots(players)
    spec = league(players, names, rotation)
    index = {name: i for i, name in enumerate(names)}
    per_deal = np.array([[index[bot] for bot in seating]
                         for table in spec.tables() for seating in spec.seatings(table)])
    return (np.tile(per_deal, (deals, 1)), np.repeat(np.arange(deals), len(per_deal)), names)


def simulate_twins(players: int, rotation: str, deals: int, replication: int) -> RowTuples:
    """One league of the seat-order game, as seat rows: an exponential race
    (Plackett-Luce orders) where the player directly after the strong bot
    (around the table) races TWIN_PENALTY weaker; seat luck shared by the
    matches of a deal with probability LUCK."""
    seats, deal, names = twin_schedule(players, rotation, deals)
    _, truth = twin_bots(players)
    rng = np.random.default_rng([zlib.crc32(f"{rotation}{players}".encode()), replication])
    strength = truth[seats]
    strength -= TWIN_PENALTY * (np.roll(seats, 1, axis=1) == 0)   # the seat before is the strong bot's
    matches = len(seats)
    shared = rng.random((deal.max() + 1, players))[deal]
    uniform = np.where(rng.random((matches, players)) < LUCK, shared, rng.random((matches, players)))
    finish = -np.log(uniform) / np.exp(strength)
    rank = 1 + np.argsort(np.argsort(finish, axis=1), axis=1)
    rows = [(f"m{m}", s, names[bot], s, float(players - r), r, None, int(deal[m]), "twins")
            for m, (table, ranks) in enumerate(zip(seats.tolist(), rank.tolist()))
            for s, (bot, r) in enumerate(zip(table, ranks))]
    columns = ("match_id", "seat", "bot", "team", "score", "rank", "fault_kind", "deal", "league")
    return RowTuples(columns, [rows])


def twin_coverage(players: int, rotation: str, deals: int, replications: int) -> tuple[float, float, float]:
    """Mean twin difference (Elo), how often its interval covers 0, mean width."""
    diffs, covered, widths = [], 0, []
    for r in range(replications):
        d = rating_fit(simulate_twins(players, rotation, deals, r)).difference("twin_a", "twin_b")
        diffs.append(d.elo)
        covered += d.elo_low <= 0 <= d.elo_high
        widths.append(d.elo_high - d.elo_low)
    return float(np.mean(diffs)), covered / replications, float(np.mean(widths))


TWIN_SETTINGS = [TwinSetting(3, 30, 200), TwinSetting(4, 20, 200), TwinSetting(5, 15, 200),
                 TwinSetting(6, 12, 200), TwinSetting(7, 10, 200)]


@pytest.mark.statistical
@pytest.mark.slow
@pytest.mark.parametrize("setting", TWIN_SETTINGS, ids=[f"{s.players} seats" for s in TWIN_SETTINGS])
def test_twins_rate_alike_with_balanced_seatings_and_apart_with_cyclic(setting):
    """The same matches either way: balanced plays `deals` deals in n(n - 1)
    seatings, cyclic (n - 1) times as many deals in n rotations."""
    n = setting.players
    balanced = twin_coverage(n, "balanced", setting.deals, setting.replications)
    cyclic = twin_coverage(n, "cyclic", setting.deals * (n - 1), setting.replications)
    for rotation, (mean, coverage, width) in (("balanced", balanced), ("cyclic", cyclic)):
        print(f"{n} seats {rotation:8}: twin_a - twin_b {mean:+6.1f} Elo (mean of "
              f"{setting.replications} leagues), interval covers 0 in {coverage:.1%}, "
              f"width {width:.0f}")
    mean, coverage, width = balanced
    assert 0.90 <= coverage <= 0.99 and abs(mean) < width / 8, balanced
    mean, coverage, width = cyclic
    bias = -TWIN_PENALTY * ELO_PER_UNIT  # twin_a always sits after the strong bot
    assert coverage < 0.5 and abs(mean - bias) < abs(bias) / 3, cyclic


# ---- copies ----------------------------------------------------------------------------
COPIES = """
name = "copies"
game = "limit"
bots = ["random", "heuristic"]
players = 4
deals = 2
seed = 7
copies = { heuristic = 3 }
"""


def write(tmp_path: Path, text: str, name: str = "league.toml") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_copies_seat_one_bot_against_three_copies(tmp_path):
    spec = load_league(write(tmp_path, COPIES))
    assert spec.copies == {"heuristic": 3} and spec.rotation == "balanced"
    assert list(spec.tables()) == [("heuristic", "heuristic", "heuristic", "random")]
    matches = list(spec.schedule())
    assert len(matches) == spec.size() == 2 * 4 and len({m.match_id for m in matches}) == 8
    for deal in range(2):
        seatings = [m.seats for m in matches if m.deal == deal]
        assert sorted(s.index(spec.bot_id("random")) for s in seatings) == [0, 1, 2, 3]
        assert all(Counter(s)[spec.bot_id("heuristic")] == 3 for s in seatings)
    assert spec.config()["copies"] == {"heuristic": 3}
    assert "copies" not in load_league(write(tmp_path, COPIES.replace(
        "copies = { heuristic = 3 }", ""))).config(), "as leagues stored before copies"


def test_copies_with_more_bots_form_every_table_that_fills_the_seats(tmp_path):
    text = COPIES.replace('["random", "heuristic"]', '["random", "heuristic", "heuristic_half"]')
    spec = load_league(write(tmp_path, text.replace("players = 4", "players = 3").replace(
        "heuristic = 3", "heuristic = 2")), [TEST_BOTS])
    # random + heuristic_half fill 2 of the 3 seats, all three 4: neither is a table
    assert list(spec.tables()) == [("heuristic", "heuristic", "heuristic_half"),
                                   ("heuristic", "heuristic", "random")]
    assert spec.table_count() == 2
    gauntlet = load_league(write(tmp_path, text.replace(
        "seed = 7", 'seed = 7\nformat = "gauntlet"\nchallengers = ["random"]')), [TEST_BOTS])
    assert list(gauntlet.tables()) == [("heuristic", "heuristic", "heuristic", "random")]


@pytest.mark.parametrize("copies,message", [
    ("{ nobody = 3 }", "nobody not in 'bots'"),
    ("{ heuristic = 4 }", "from 1 to 3"),
    ("{ heuristic = 0 }", "from 1 to 3"),
    ('{ heuristic = "3" }', "from 1 to 3"),
    ("{ heuristic = true }", "from 1 to 3"),
    ("3", "must be a table"),
    ("{ heuristic = 2 }", "no two or more bots fill the 4 seats"),
])
def test_copies_that_cannot_be_played_are_refused_with_the_field(tmp_path, copies, message):
    with pytest.raises(LeagueFileError, match="field 'copies'") as raised:
        load_league(write(tmp_path, COPIES.replace("{ heuristic = 3 }", copies)))
    assert message in str(raised.value)


def test_copies_are_refused_in_team_games(tmp_path):
    text = COPIES.replace('"limit"', '"tenos_square"').replace("heuristic = 3", "heuristic = 2")
    with pytest.raises(LeagueFileError, match="a team game seats teams, not copies"):
        load_league(write(tmp_path, text))


def test_ranks_among_copies_do_not_move_ratings():
    """A free-for-all match of r against three copies of h: which copy
    finished ahead of which says nothing of either bot's strength, so
    shuffling the copies' ranks among themselves leaves the fit unchanged;
    h is one row, and r's difference is with the pooled copies."""
    rng = np.random.default_rng(3)
    seatings = arrangements(("h", "h", "h", "r"))
    played = [(seatings[m % 4], [int(r) for r in rng.permutation(4) + 1]) for m in range(60)]
    columns = ("match_id", "seat", "bot", "team", "score", "rank", "fault_kind", "deal", "league")

    def rows(shuffle: bool) -> RowTuples:
        out = []
        for m, (seating, ranks) in enumerate(played):
            if shuffle:
                copies = [r for bot, r in zip(seating, ranks) if bot == "h"]
                rng.shuffle(copies)
                it = iter(copies)
                ranks = [next(it) if bot == "h" else r for bot, r in zip(seating, ranks)]
            out += [(f"m{m}", s, bot, s, float(4 - r), r, None, m // 4, "c")
                    for s, (bot, r) in enumerate(zip(seating, ranks))]
        return RowTuples(columns, [out])

    plain, shuffled = rating_fit(rows(False)), rating_fit(rows(True))
    assert plain.bots == ["h", "r"]
    for a, b in zip(plain.rows, shuffled.rows):
        assert (a.bot, a.games, a.avg_rank) == (b.bot, b.games, b.avg_rank)
        assert (a.elo, a.elo_low, a.elo_high) == pytest.approx((b.elo, b.elo_low, b.elo_high))
    assert plain.difference("r", "h").elo == pytest.approx(shuffled.difference("r", "h").elo)


# ---- real leagues through the command line ---------------------------------------------
def cli(*args: str, code: int = 0):
    from typer.testing import CliRunner

    from harness.cli import app

    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == code, (result.exit_code, result.stdout, result.stderr,
                                      result.exception)
    assert "Traceback" not in result.stderr
    return result


@pytest.fixture
def bot_path(monkeypatch):
    monkeypatch.setenv("LEAGUE_BOT_PATH", str(TEST_BOTS))


def test_a_league_of_one_bot_against_copies_plays_to_one_pooled_row(tmp_path, bot_path):
    path, db = write(tmp_path, COPIES), str(tmp_path / "r.db")
    run = cli("run", path, "--db", db, "--engine", "inline", "--workers", "1", "-q")
    assert "played 8 matches" in run.stderr
    data = json.loads(cli("table", "copies", "--db", db, "--json").stdout)
    rows = {r["bot"].split("@")[0]: r for r in data["ratings"]}
    assert set(rows) == {"random", "heuristic"}, "the three copies are one row"
    assert rows["heuristic"]["games"] == 3 * 8 and rows["random"]["games"] == 8  # seats played
    versus = cli("table", "copies", "--db", db, "--versus", "random", "--versus", "heuristic")
    (line,) = [x for x in versus.stdout.splitlines() if x.strip().startswith("random - heuristic")]
    (pair,) = [d for d in data["differences"]
               if {d["first"].split("@")[0], d["second"].split("@")[0]} == {"random", "heuristic"}]
    sign = 1 if pair["first"].startswith("random") else -1
    assert f"{sign * pair['elo']:+7.1f}" in line, "against the pooled copies"
    assert "note:" not in versus.stderr
    assert "nothing to play" in cli("run", path, "--db", db, "--engine", "inline", "-q").stderr


@pytest.mark.slow
def test_reordering_bots_is_the_same_league_and_changing_rotation_is_not(tmp_path, bot_path):
    text = ('name = "order"\ngame = "limit"\nbots = ["random", "heuristic", "heuristic_half"]\n'
            "players = 3\ndeals = 1\nseed = 4\n")
    path, db = write(tmp_path, text, "order.toml"), str(tmp_path / "r.db")
    assert "played 6 matches" in cli("run", path, "--db", db, "--engine", "inline", "-q").stderr
    write(tmp_path, text.replace('"random", "heuristic", "heuristic_half"',
                                 '"heuristic_half", "random", "heuristic"'), "order.toml")
    again = cli("run", path, "--db", db, "--engine", "inline", "-q").stderr
    assert "nothing to play" in again, "the same matches: nothing replayed"
    write(tmp_path, text + 'rotation = "cyclic"\n', "order.toml")
    refused = cli("run", path, "--db", db, "--engine", "inline", code=2).stderr
    assert "rotation 'balanced' -> 'cyclic'" in refused and "new name" in refused


@pytest.mark.slow
def test_a_league_stored_with_the_old_default_is_told_how_to_go_on(tmp_path, bot_path):
    """Before "balanced" became the default, a file without rotation was
    cyclic: resuming it now is refused, saying which line keeps it going."""
    text = ('name = "old"\ngame = "limit"\nbots = ["random", "heuristic"]\nplayers = 4\n'
            "deals = 1\nseed = 4\n")
    path, db = write(tmp_path, text + 'rotation = "cyclic"\n', "old.toml"), str(tmp_path / "r.db")
    first = " ".join(cli("run", path, "--db", db, "--engine", "inline", "-q").stderr.split())
    assert "played 12 matches" in first
    # (random, random, heuristic, heuristic) rotated never seats random after heuristic
    # after random: the one table of three that cyclic leaves unbalanced
    assert 'rotation = "cyclic": at 1 of 3 tables some bot' in first
    write(tmp_path, text, "old.toml")
    refused = cli("run", path, "--db", db, "--engine", "inline", code=2).stderr
    assert "rotation 'cyclic' -> 'balanced'" in refused
    assert f'add rotation = "cyclic" to {path}' in " ".join(refused.split())
    # the cyclic schedule follows the order of bots: there, reordering is refused too
    write(tmp_path, text.replace('"random", "heuristic"', '"heuristic", "random"')
          + 'rotation = "cyclic"\n', "old.toml")
    assert "bots" in cli("run", path, "--db", db, "--engine", "inline", code=2).stderr


def test_versus_notes_the_same_code_under_another_name(capsys):
    from harness.cli.results import _warn_twins

    _warn_twins(["heuristic@abc", "heuristic2@abc", "search@def"], ("search@def", "heuristic@abc"))
    err = capsys.readouterr().err
    assert "heuristic2 is the same code as heuristic" in err and "copies" in err
    _warn_twins(["heuristic@abc", "search@def"], ("search@def", "heuristic@abc"))
    assert capsys.readouterr().err == ""
