"""The serve load test (harness.bench.serve_load): a bounded run against a
real `league serve` on loopback finds no error and loses no submission, and
the checks it rests on do catch a lost, unfinished or misjudged version."""

from __future__ import annotations

from collections import Counter

import pytest

from harness.bench import serve_load
from harness.bench.serve_load import Outcome, Submission, Tally, check
from harness.serve.names import skeleton


@pytest.mark.slow
def test_twenty_clients_at_once_lose_nothing_and_meet_no_error() -> None:
    # 20 clients, 5 reads and 1 upload each, a one-game ladder, 2 workers.
    outcome = serve_load.local_load(clients=20, reads=5, submits=1, timeout_s=240,
                                    workers=2, games={"target": [3]})
    report = serve_load.report(outcome, reads=5, submits=1)
    assert outcome.errors == [], report
    assert outcome.lost == [], report
    assert outcome.unfinished == [] and outcome.wrong == [], report
    tally = outcome.tally
    assert len(tally.submissions) == 20, report
    assert sum(len(tally.latencies[kind]) for kind in serve_load.READ_KINDS) == 100
    # One client in four uploaded a bot that fails, and it was judged so.
    verdicts = Counter(outcome.verdicts[(s.bot, s.number)]["state"] for s in tally.submissions)
    assert verdicts == {"valid": 15, "failed": 5}, report
    assert len(outcome.to_validated()) == 20
    assert report.splitlines()[-1] == "ok"


def _accepted(bot: str, number: int, sha256: str, expected: str = "valid") -> Outcome:
    tally = Tally()
    tally.accepted(Submission(0, bot, number, sha256, 0.0, expected))
    return Outcome(clients=1, workers=1, wall_s=1.0, tally=tally)


def test_a_version_missing_or_with_another_sha256_is_lost() -> None:
    missing = _accepted("b", 1, "a" * 64)
    missing.verdicts = {("b", 2): {"sha256": "a" * 64, "state": "valid"}}
    check(missing)
    changed = _accepted("b", 1, "a" * 64)
    changed.verdicts = {("b", 1): {"sha256": "c" * 64, "state": "valid"}}
    check(changed)
    assert len(missing.lost) == 1 and len(changed.lost) == 1
    assert not missing.ok and not changed.ok


def test_a_version_still_queued_or_misjudged_fails_the_run() -> None:
    late = _accepted("b", 1, "a" * 64)
    late.verdicts = {("b", 1): {"sha256": "a" * 64, "state": "validating"}}
    check(late)
    wrong = _accepted("b", 1, "a" * 64, expected="failed")
    wrong.verdicts = {("b", 1): {"sha256": "a" * 64, "state": "valid"}}
    check(wrong)
    right = _accepted("b", 1, "a" * 64, expected="failed")
    right.verdicts = {("b", 1): {"sha256": "a" * 64, "state": "failed"}}
    check(right)
    assert late.unfinished and not late.ok
    assert wrong.wrong and not wrong.ok
    assert right.ok


def test_each_client_uploads_first_then_spreads_its_uploads_among_its_reads() -> None:
    steps = serve_load.plan(reads=30, submits=2)
    assert steps[0] == "upload" and steps.count("upload") == 2 and len(steps) == 32
    assert steps.index("upload", 1) == 16
    assert Counter(serve_load.plan(reads=6, submits=0)) == {
        "bot page": 2, "bot json": 2, "index": 2}


def test_one_client_in_four_uploads_failing_bots_and_names_never_collide() -> None:
    failing = [c for c in range(20) if serve_load.expected_verdict(c, 0) == "failed"]
    assert failing == [3, 7, 11, 15, 19]
    assert [serve_load.expected_verdict(3, u) for u in range(3)] == ["failed", "valid", "failed"]
    names = [serve_load.bot_name(f"client-{c}") for c in range(200)]
    assert len({skeleton(name) for name in names}) == 200
    assert serve_load.bot_name("c" * 32) == "load-" + "c" * 27


def test_percentile_is_the_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert serve_load.percentile(values, 0.5) == 50
    assert serve_load.percentile(values, 0.99) == 99
    assert serve_load.percentile([7.0], 0.99) == 7
