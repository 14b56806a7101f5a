"""`league submit` and `league users` against a real `league serve` on
loopback: the commands run in subprocesses as a bot author and an organiser
would run them, with HOME pointed at an empty folder so that no token file
of the machine's user is read."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import httpx
import pytest

from tests.serve_site import LEAGUE, RANDOM_BOT, REPO, Site, bot_zip
from tests.serve_site import site as site  # noqa: PLC0414 - the fixture, used by name

# real servers on loopback: `make test`, not the edit loop (`make test-fast`)
pytestmark = pytest.mark.slow

CRASHING_BOT = """\
from league_sdk import Bot, run



class Crash(Bot):
    def choose(self, obs, legal, time_left_ms):
        raise RuntimeError("this bot gives up at its first decision")


run(Crash())
"""


def bot_folder(parent: Path, name: str, source: str = RANDOM_BOT) -> Path:
    folder = parent / name
    folder.mkdir()
    (folder / "bot.toml").write_text(f'name = "{name}"\ncommand = ["{{python}}", "bot.py"]\n')
    (folder / "bot.py").write_text(source)
    return folder


def league(*args: str, home: Path, token: str | None = None,
           stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it: HOME is ``home``; LEAGUE_TOKEN only if given."""
    env = {key: value for key, value in os.environ.items()
           if key not in ("LEAGUE_TOKEN", "LEAGUE_SERVER")}
    env.update(HOME=str(home), NO_COLOR="1", COLUMNS="200")
    if token is not None:
        env["LEAGUE_TOKEN"] = token
    return subprocess.run([*LEAGUE, *args], cwd=REPO, env=env, input=stdin,
                          capture_output=True, text=True, timeout=300)


def me(site: Site, token: str) -> int:
    """The status of GET /api/v1/me with ``token``: 200 while it is live."""
    return httpx.get(f"{site.url}/api/v1/me", headers={"authorization": f"Bearer {token}"},
                     timeout=30).status_code


def live_tokens(site: Site, account: str, listing: str | None = None) -> list[str]:
    """The token ids `league users list` shows for ``account`` (in ``listing``,
    its output, or in a fresh run's)."""
    if listing is None:
        done = site.league("users", "list")
        assert done.returncode == 0, done.stderr
        listing = done.stdout
    line = next(line for line in listing.splitlines() if line.split()[0] == account)
    shown = line.split("tokens: ", 1)[1].strip()
    return [] if shown == "none" else shown.split(", ")


# ------------------------------------------------------------------ league submit

@pytest.mark.slow
def test_submit_a_folder_with_the_token_in_the_environment(site: Site, tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "picker")
    done = league("submit", str(folder), "--server", site.url, home=tmp_path,
                  token=site.tokens["alice"])
    assert done.returncode == 0, done.stdout + done.stderr
    assert "uploaded picker v1" in done.stdout
    version = site.verdict("alice", "picker", 1)
    assert version["state"] == "valid"
    for step in version["steps"]:  # every step the server ran, printed
        assert f"ok   {step['step']}: " in done.stdout, done.stdout
    assert done.stdout.rstrip().endswith("picker v1: valid")


@pytest.mark.slow
def test_submit_reads_the_token_file_in_home(site: Site, tmp_path: Path) -> None:
    token_file = tmp_path / ".config" / "league" / "token"
    token_file.parent.mkdir(parents=True)
    token_file.write_text(site.tokens["bob"] + "\n")
    single = tmp_path / "solo.py"
    single.write_text(RANDOM_BOT)
    done = league("submit", str(single), "--server", site.url, "--name", "solo", home=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.rstrip().endswith("solo v1: valid")
    with site.client() as client:
        data = client.get("/api/v1/bots/solo").json()
    assert data["owner"] == "bob"
    assert data["versions"][0]["source"] == "python"  # the language, from the extension


def test_submit_without_a_token_says_where_to_put_one(site: Site, tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "nobody")
    done = league("submit", str(folder), "--server", site.url, home=tmp_path)
    assert done.returncode == 2
    assert "no API token" in done.stderr and "LEAGUE_TOKEN" in done.stderr
    assert "~/.config/league/token" in done.stderr
    with site.client() as client:
        assert client.get("/api/v1/bots/nobody").status_code == 404


def test_submit_has_no_token_option(tmp_path: Path) -> None:
    shown = league("submit", "--help", home=tmp_path)
    assert shown.returncode == 0, shown.stderr
    assert "--server" in shown.stdout
    assert "--token" not in shown.stdout
    refused = league("submit", "x.py", "--token", "secret", "--server", "http://127.0.0.1:9",
                     home=tmp_path)
    assert refused.returncode == 2
    assert "No such option" in refused.stderr


@pytest.mark.slow
def test_submit_of_a_bot_that_fails_validation_exits_3(site: Site, tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "quitter", CRASHING_BOT)
    done = league("submit", str(folder), "--server", site.url, home=tmp_path,
                  token=site.tokens["alice"])
    assert done.returncode == 3, done.stdout + done.stderr
    assert re.search(r"^FAIL target, 3 players: ", done.stdout, re.MULTILINE), done.stdout
    assert "quitter v1: failed" in done.stdout
    assert "this bot gives up at its first decision" in done.stdout + done.stderr


def test_submit_under_another_accounts_name_is_refused(site: Site, tmp_path: Path) -> None:
    taken = site.upload("alice", "taken", bot_zip("taken"))
    assert taken.status_code == 201, taken.text
    folder = bot_folder(tmp_path, "taken")
    done = league("submit", str(folder), "--server", site.url, home=tmp_path,
                  token=site.tokens["bob"])
    assert done.returncode == 2
    assert "refused the upload (403)" in done.stderr
    assert "bot name 'taken' belongs to another account" in done.stderr
    with site.client() as client:
        assert len(client.get("/api/v1/bots/taken").json()["versions"]) == 1


def test_submit_to_a_server_that_is_not_there(tmp_path: Path) -> None:
    folder = bot_folder(tmp_path, "lonely")
    done = league("submit", str(folder), "--server", "http://127.0.0.1:9", home=tmp_path,
                  token="whatever")
    assert done.returncode == 2
    assert "cannot reach http://127.0.0.1:9" in done.stderr


# ------------------------------------------------------------------ league users

def test_users_list_shows_accounts_roles_and_live_token_ids(site: Site) -> None:
    listing = site.league("users", "list")
    assert listing.returncode == 0, listing.stderr
    lines = {line.split()[0]: line for line in listing.stdout.splitlines()}
    assert set(lines) == {"alice", "bob", "olga"}
    assert "organiser" in lines["olga"] and "organiser" not in lines["alice"]
    assert "0 bot(s)" in lines["alice"]
    for name in lines:
        assert len(live_tokens(site, name, listing.stdout)) == 1
    assert site.tokens["alice"] not in listing.stdout  # ids only, never a token


@pytest.mark.slow
def test_users_token_and_revoke_by_id_and_by_name(site: Site) -> None:
    first = site.tokens["alice"]
    made = site.league("users", "token", "alice")
    assert made.returncode == 0, made.stderr
    second = made.stdout.strip()
    assert me(site, second) == 200
    ids = live_tokens(site, "alice")
    assert len(ids) == 2

    # By id: that token alone.
    second_id = next(i for i in ids if i in second)
    one = site.league("users", "revoke", second_id)
    assert one.returncode == 0, one.stderr
    assert f"revoked token {second_id}" in one.stdout
    assert (me(site, second), me(site, first)) == (401, 200)

    # By name: every token of the account; the others' stay.
    third = site.league("users", "token", "alice").stdout.strip()
    everything = site.league("users", "revoke", "alice")
    assert everything.returncode == 0, everything.stderr
    assert "revoked 2 token(s) of alice" in everything.stdout
    assert (me(site, first), me(site, third)) == (401, 401)
    assert live_tokens(site, "alice") == []
    assert me(site, site.tokens["bob"]) == 200

    unknown = site.league("users", "revoke", "no-such-thing")
    assert unknown.returncode == 2
    assert "no account and no live token 'no-such-thing'" in unknown.stderr


def test_users_password_sets_the_web_password(site: Site) -> None:
    def sign_in(password: str) -> int:
        return httpx.post(f"{site.url}/api/v1/session", json={"name": "bob", "password": password},
                          timeout=30).status_code

    short = site.league("users", "password", "bob", stdin="short\n")
    assert short.returncode == 2
    assert "at least" in short.stderr and "this one has 5" in short.stderr
    assert sign_in("bob-password-22") == 200  # unchanged by the refusal

    changed = site.league("users", "password", "bob", stdin="a-brand-new-password-7\n")
    assert changed.returncode == 0, changed.stderr
    assert sign_in("a-brand-new-password-7") == 200
    assert sign_in("bob-password-22") == 401

    nobody = site.league("users", "password", "nobody", stdin="a-brand-new-password-7\n")
    assert nobody.returncode == 2
    assert "no account 'nobody'" in nobody.stderr
