"""The ladder file and the server's store, without a server: the rules that
must hold however many requests race (names, quotas, a validation's
verdict written once)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from harness.serve.db import Refused, ServerStore
from harness.serve.ladder import LadderFileError, Quotas, load_ladder

REPO = Path(__file__).resolve().parents[1]


def ladder_file(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "ladder.toml"
    path.write_text(text)
    return path


def test_the_demo_ladder_loads() -> None:
    ladder = load_ladder(REPO / "ladders" / "demo.toml")
    assert ladder.games and all(ladder.games.values())
    assert ladder.sandbox == "bwrap" and ladder.signup == "invite"


@pytest.mark.parametrize("text, words", [
    ('name = "x"\ngames = { limt = [2] }\n', ["unknown game 'limt'", "did you mean 'limit'"]),
    ('name = "x"\ngames = { limit = [9] }\n', ["limit is played by", "not 9"]),
    ('name = "x"\ngames = {}\n', ["'games' must be a table"]),
    ('name = "x"\ngames = { limit = [3] }\nsignup = "anyone"\n', ["'signup'", "'open'"]),
    ('name = "x"\ngames = { limit = [3] }\n[quotas]\nupload_bytes = 0\n',
     ["upload_bytes must be an integer from 1 to"]),
    ('name = "x"\ngames = { limit = [3] }\n[quotas]\nsubmisions_per_day = 3\n',
     ["did you mean 'submissions_per_day'"]),
    ('name = "x"\ngames = { limit = [3] }\n[validation]\nsandbox = "docker"\n',
     ["sandbox = 'docker'", "'bwrap'"]),
    ('name = "x"\ngames = { limit = [3] }\n[limits]\ndecision_ms = -1\n', ["decision_ms"]),
    ('games = { limit = [3] }\n', ["'name'"]),
    ('name = "x"\ngames = { limit = [3] }\nmatches = 3\n', ["unknown field"]),
])
def test_a_broken_ladder_file_says_where(tmp_path: Path, text: str, words: list[str]) -> None:
    with pytest.raises(LadderFileError) as caught:
        load_ladder(ladder_file(tmp_path, text))
    message = str(caught.value)
    assert str(tmp_path) in message
    for word in words:
        assert word in message, message


def test_every_player_count_by_star(tmp_path: Path) -> None:
    ladder = load_ladder(ladder_file(tmp_path, 'name = "x"\ngames = { target = "*" }\n'))
    assert ladder.games["target"] == (2, 3, 4, 5, 6)
    assert ladder.plays(("limit", "target")) == ["target"]
    assert ladder.plays(None) == ["target"]


# ---- the store -------------------------------------------------------------------
@pytest.fixture
def store(tmp_path: Path) -> ServerStore:
    return ServerStore(tmp_path / "ladder.db")


def test_names_belong_to_their_first_owner(store: ServerStore) -> None:
    alice, bob = store.add_account("alice"), store.add_account("bob")
    quotas = Quotas()
    store.add_version(alice, "pick", "a" * 64, "archive", 10, "", quotas)
    for name, status in (("pick", 403), ("Pick", 409), ("p1ck", 409), ("pick_", 409)):
        with pytest.raises(Refused) as caught:
            store.add_version(bob, name, "b" * 64, "archive", 10, "", quotas)
        assert caught.value.status == status, name
    with pytest.raises(Refused, match="looks like your bot 'pick'"):
        store.add_version(alice, "PICK", "c" * 64, "archive", 10, "", quotas)
    assert [v.number for v in store.versions("pick")] == [1]
    with pytest.raises(Refused, match="looks like 'alice'"):
        store.add_account("Al1ce")


def test_quotas_hold_when_uploads_race(store: ServerStore) -> None:
    """Twelve threads upload at once against a quota of five a day: exactly
    five versions, numbered 1 to 5 (the check and the insert are one
    transaction)."""
    alice = store.add_account("alice")
    quotas = Quotas(submissions_per_day=5)
    refused: list[int] = []
    start = threading.Barrier(12)

    def upload(index: int) -> None:
        start.wait()
        try:
            store.add_version(alice, "pick", f"{index:064x}", "archive", 10, "", quotas)
        except Refused as exc:
            assert "5" in str(exc)
            refused.append(exc.status)

    threads = [threading.Thread(target=upload, args=(i,)) for i in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert refused == [429] * 7
    assert sorted(v.number for v in store.versions("pick")) == [1, 2, 3, 4, 5]


def test_bots_per_account(store: ServerStore) -> None:
    alice = store.add_account("alice")
    quotas = Quotas(bots_per_account=1)
    store.add_version(alice, "one", "a" * 64, "archive", 10, "", quotas)
    store.add_version(alice, "one", "b" * 64, "archive", 10, "", quotas)  # the same bot: fine
    with pytest.raises(Refused, match="you own 1 bots.*is 1") as caught:
        store.add_version(alice, "two", "c" * 64, "archive", 10, "", quotas)
    assert caught.value.status == 429 and store.bot("two") is None


def test_a_verdict_is_written_once_by_the_run_that_holds_it(store: ServerStore) -> None:
    alice = store.add_account("alice")
    version = store.add_version(alice, "pick", "a" * 64, "archive", 10, "", Quotas())
    claimed = store.claim_validation("run-1")
    assert claimed is not None and claimed.id == version.id and claimed.state == "validating"
    assert store.claim_validation("run-2") is None  # nothing else queued
    # the server dies; the next one queues it again and runs it
    assert store.requeue_interrupted() == 1
    again = store.claim_validation("run-2")
    assert again is not None and again.attempts == 2
    steps = [{"step": "quit", "ok": True, "detail": "", "stderr": ""}]
    assert not store.finish_validation(version.id, "run-1", False, steps, "")  # the dead run
    assert store.finish_validation(version.id, "run-2", True, steps, "")
    assert not store.finish_validation(version.id, "run-2", True, steps, "")  # once
    final = store.version("pick", 1)
    assert final is not None and final.state == "valid" and final.attempts == 2
    assert store.queue_counts() == {"queued": 0, "running": 0, "done": 1}


def test_tokens_and_sessions(store: ServerStore) -> None:
    alice = store.add_account("alice")
    token_id, token = store.add_token(alice, "laptop")
    assert store.token_account(token) == alice
    assert store.token_account(token[:-1] + ("A" if token[-1] != "A" else "B")) is None
    assert store.revoke_token(token_id, store.add_account("bob")) is False  # not bob's
    assert store.revoke_token(token_id, alice) is True
    assert store.token_account(token) is None
    session = store.new_session(alice)
    assert store.session_account(session) == alice
    store.end_session(session)
    assert store.session_account(session) is None
    # the secrets are in the .secret file, not the ladder file
    text = (store.path.read_bytes())
    assert token_id.encode() not in text and session.encode() not in text


def test_the_organiser_may_take_a_reserved_name_at_the_shell(tmp_path: Path) -> None:
    """`make serve` makes the account `organiser`: a word the site reserves
    from strangers (sign-up refuses it), which the organiser's own command may
    use."""
    from typer.testing import CliRunner

    from harness.cli import app
    from harness.serve.names import name_problem

    db = tmp_path / "ladder.db"
    made = CliRunner().invoke(app, ["users", "add", "organiser", "--organiser", "--db", str(db)])
    assert made.exit_code == 0, made.output
    account = ServerStore(db).account("organiser")
    assert account is not None and account.organiser
    assert name_problem("organiser", "account") is not None  # what sign-up checks
