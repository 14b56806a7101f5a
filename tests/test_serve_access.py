"""The submission server's security and access rules, over HTTP: a real
`league serve` on loopback (tests/serve_site.py), real uploads, the real
sandbox for validation, the real SQLite files.

Each test states one rule and checks three things: the status code, the
message (clear, with the limit's number where there is one), and that
nothing changed (no version, no bot, no token, no file left under
ladder.db.bots/incoming). Most tests share one module-scoped server
(``main``): its state is set up once (alice's bots ``pick``, valid, and
``crasher``, failed with a stderr marker) and the tests only add things
that no other test counts (their own bot names and tokens). The quota and
open-signup rules need other ladder settings, so they get servers of their
own (``quota``, ``open_site``)."""

from __future__ import annotations

import base64
import html
import io
import json
import re
import socket
import sqlite3
import stat
import tarfile
import zipfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from harness.serve.site import COOKIE
from tests.serve_site import Site, bot_zip, make_site

ALICE_PASSWORD = "alice-password-1"
BOB_PASSWORD = "bob-password-22"
OLGA_PASSWORD = "olga-password-333"
CAROL_PASSWORD = "carol-password-4444"
# real servers on loopback: `make test`, not the edit loop (`make test-fast`)
pytestmark = pytest.mark.slow

# What the crashing bot writes to stderr before it dies: only its owner and
# the organiser may read it.
STDERR_MARKER = "SECRET-STDERR-7f3a91"
CRASHING_BOT = f"""\
import sys

sys.stderr.write("{STDERR_MARKER}\\n")
sys.stderr.flush()
raise SystemExit(3)
"""
QUOTA_UPLOAD_BYTES = 64 << 10


# ---------------------------------------------------------------- servers

def add_users(site: Site, **passwords: str) -> None:
    """`league users add` for each account at once (each hashes a password
    with argon2, a CPU-bound second or so); ``olga`` is the organiser; an
    empty password makes a token-only account. The first makes the ladder
    file alone: two processes that both create it find it locked."""
    (first, password), *others = passwords.items()
    site.add_user(first, first == "olga", password)
    with ThreadPoolExecutor(max(1, len(others))) as pool:
        for done in [pool.submit(site.add_user, name, name == "olga", password)
                     for name, password in others]:
            done.result()


@pytest.fixture(scope="module")
def main(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """An invite-only ladder with alice, bob, carol (for the login limit) and
    the organiser olga; alice owns ``pick`` (valid) and ``crasher`` (failed,
    with STDERR_MARKER in its stderr)."""
    site = make_site(tmp_path_factory.mktemp("main"), bots=10)
    add_users(site, alice=ALICE_PASSWORD, bob=BOB_PASSWORD, carol=CAROL_PASSWORD,
              olga=OLGA_PASSWORD)
    site.start()
    try:  # validated in the background: only the tests that need a verdict wait
        assert site.upload("alice", "pick", bot_zip("pick")).status_code == 201
        assert site.upload("alice", "crasher", bot_zip("crasher", CRASHING_BOT)).status_code == 201
        yield site
    finally:
        site.stop()


def crasher_failed(main: Site) -> None:
    crashed = main.verdict("alice", "crasher", 1)
    assert crashed["state"] == "failed", crashed
    assert STDERR_MARKER in json.dumps(crashed), crashed


@pytest.fixture(scope="module")
def quota(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """A ladder with tight quotas: 2 submissions a day, 1 bot per account,
    uploads of at most 64 KiB."""
    site = make_site(tmp_path_factory.mktemp("quota"), per_day=2, bots=1,
                     upload=QUOTA_UPLOAD_BYTES)
    add_users(site, alice="", bob="")
    site.start()
    yield site
    site.stop()


@pytest.fixture(scope="module")
def open_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    site = make_site(tmp_path_factory.mktemp("open"), signup="open")
    add_users(site, alice="")
    site.start()
    yield site
    site.stop()


# ---------------------------------------------------------------- helpers

def incoming(site: Site) -> list[str]:
    """What uploads left under ladder.db.bots/incoming (the received bytes,
    ``.upload``, and their unpacked folders, ``.d``); validations' own work
    folders (``.work``) come and go there too, and are left out."""
    return sorted(p.name for p in (Path(f"{site.db}.bots") / "incoming").iterdir()
                  if p.suffix != ".work")


def stored_versions(site: Site) -> list[str]:
    """The content-addressed version folders under ladder.db.bots."""
    return sorted(p.name for p in Path(f"{site.db}.bots").iterdir() if p.name != "incoming")


def version_count(site: Site, name: str) -> int:
    """How many versions ``name`` has (0 when there is no such bot)."""
    with site.client() as client:
        reply = client.get(f"/api/v1/bots/{name}")
    if reply.status_code == 404:
        return 0
    assert reply.status_code == 200, reply.text
    return len(reply.json()["versions"])


def error(reply: httpx.Response) -> str:
    data = reply.json()
    assert set(data) == {"error"}, data
    return str(data["error"])


def assert_nothing_changed(site: Site, before: dict[str, Any]) -> None:
    assert snapshot(site, *before["counts"]) == before


def snapshot(site: Site, *names: str) -> dict[str, Any]:
    return {"counts": {name: version_count(site, name) for name in names},
            "incoming": incoming(site), "stored": stored_versions(site)}


class Browser:
    """A cookie session of one account, signed in through the API, with its
    CSRF token: what a browser holds after signing in."""

    def __init__(self, site: Site, name: str, password: str) -> None:
        self.client = httpx.Client(base_url=site.url, timeout=60)
        reply = self.client.post("/api/v1/session", json={"name": name, "password": password})
        assert reply.status_code == 200, reply.text
        self.csrf: str = reply.json()["csrf"]
        self.cookie: str = reply.cookies[COOKIE]
        self.set_cookie = reply.headers.get_list("set-cookie")

    def close(self) -> None:
        self.client.close()


def cookie_client(site: Site, cookie: str) -> httpx.Client:
    """A client that presents ``cookie`` as its session cookie, nothing else."""
    return httpx.Client(base_url=site.url, timeout=60, cookies={COOKIE: cookie})


def zip_of(members: dict[str, bytes], modes: dict[str, int] | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            info = zipfile.ZipInfo(name)
            info.compress_type = zipfile.ZIP_DEFLATED
            if modes and name in modes:
                info.external_attr = modes[name] << 16
            archive.writestr(info, data)
    return buffer.getvalue()


def tar_of(members: list[tarfile.TarInfo], data: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for member in members:
            body = data.get(member.name)
            if body is not None:
                member.size = len(body)
            archive.addfile(member, io.BytesIO(body) if body is not None else None)
    return buffer.getvalue()


def tar_member(name: str, kind: bytes = tarfile.REGTYPE, **fields: Any) -> tarfile.TarInfo:
    member = tarfile.TarInfo(name)
    member.type = kind
    member.mode = 0o644
    for key, value in fields.items():
        setattr(member, key, value)
    return member


def manifest(name: str, extra: str = "") -> bytes:
    return f'name = "{name}"\ncommand = ["{{python}}", "bot.py"]\n{extra}'.encode()


# ---------------------------------------------------------------- access between accounts

def test_another_account_cannot_submit_under_a_taken_name(main: Site) -> None:
    before = snapshot(main, "pick")
    reply = main.upload("bob", "pick", bot_zip("pick"))
    assert reply.status_code == 403
    assert error(reply) == "bot name 'pick' belongs to another account"
    assert_nothing_changed(main, before)


@pytest.mark.parametrize("look_alike", ["Pick", "p1ck", "pick_"])
def test_a_look_alike_of_a_taken_name_is_refused(main: Site, look_alike: str) -> None:
    before = snapshot(main, "pick", look_alike)
    reply = main.upload("bob", look_alike, bot_zip(look_alike))
    assert reply.status_code == 409
    assert error(reply) == (f"bot name {look_alike!r} looks like 'pick', which belongs to "
                            "another account")
    assert_nothing_changed(main, before)


def test_files_are_for_the_owner_and_the_organiser(main: Site) -> None:
    route = "/api/v1/bots/pick/versions/1/files"
    for user in ("bob", None):
        with main.client(user) as client:
            reply = client.get(route)
            page = client.get("/bots/pick").text + client.get("/bots/pick/versions/1").text
        assert reply.status_code == 403, user
        assert error(reply) == "only the bot's owner and the organiser may download its files"
        assert "/files" not in page, user
    for user in ("alice", "olga"):
        with main.client(user) as client:
            reply = client.get(route)
            page = client.get("/bots/pick").text
        assert reply.status_code == 200, user
        assert reply.headers["content-type"] == "application/zip"
        with zipfile.ZipFile(io.BytesIO(reply.content)) as archive:
            assert sorted(archive.namelist()) == ["bot.py", "bot.toml"]
        assert route in page, user
    assert incoming(main) == []  # the zip was made in a scratch file, and removed


def test_step_details_and_stderr_are_for_the_owner_and_the_organiser(main: Site) -> None:
    crasher_failed(main)
    routes = ["/api/v1/bots/crasher/versions/1", "/api/v1/bots/crasher",
              "/bots/crasher/versions/1", "/bots/crasher"]
    for user in ("bob", None):
        with main.client(user) as client:
            replies = [client.get(route) for route in routes]
        for route, reply in zip(routes, replies, strict=True):
            assert reply.status_code == 200, (user, route)
            assert STDERR_MARKER not in reply.text, (user, route)
        version = replies[0].json()
        assert "stderr" not in version
        assert version["steps"] and all(set(step) == {"step", "ok"} for step in version["steps"])
        assert "shown to the owner and the organiser" in replies[2].text
    for user in ("alice", "olga"):
        with main.client(user) as client:
            version = client.get(routes[0]).json()
            page = client.get(routes[2]).text
        assert STDERR_MARKER in version["stderr"], user
        assert any(set(step) > {"step", "ok"} for step in version["steps"]), version
        assert STDERR_MARKER in page, user


def test_another_account_cannot_describe_or_retire(main: Site) -> None:
    with main.client("alice") as client:
        before = client.get("/api/v1/bots/pick").json()
    with main.client("bob") as client:
        described = client.patch("/api/v1/bots/pick", json={"description": "bob was here"})
        retired = client.delete("/api/v1/bots/pick/versions/1")
    assert described.status_code == retired.status_code == 403
    assert error(described) == error(retired) == "pick belongs to another account"
    bob = Browser(main, "bob", BOB_PASSWORD)
    try:  # the pages' forms, with bob's own good CSRF token
        form_description = bob.client.post("/bots/pick/description",
                                           data={"csrf": bob.csrf, "description": "bob"})
        form_retire = bob.client.post("/bots/pick/versions/1/retire", data={"csrf": bob.csrf})
    finally:
        bob.close()
    assert form_description.status_code == form_retire.status_code == 403
    assert "pick is not your bot" in form_description.text
    assert "pick is not your bot" in form_retire.text
    with main.client("alice") as client:
        assert client.get("/api/v1/bots/pick").json() == before


def test_the_organiser_may_read_and_retire_but_not_submit(main: Site) -> None:
    assert main.upload("alice", "spare", bot_zip("spare")).status_code == 201
    before = snapshot(main, "spare")
    submitted = main.upload("olga", "spare", bot_zip("spare"))
    assert submitted.status_code == 403
    assert error(submitted) == "bot name 'spare' belongs to another account"
    assert_nothing_changed(main, before)
    with main.client("olga") as client:
        retired = client.delete("/api/v1/bots/spare/versions/1")
        described = client.patch("/api/v1/bots/spare", json={"description": "olga's words"})
        state = client.get("/api/v1/bots/spare/versions/1").json()["state"]
    assert retired.status_code == 200, retired.text
    assert retired.json() == {"name": "spare", "number": 1, "state": "retired"}
    assert state == "retired"
    assert described.status_code == 403  # a description is the owner's word alone
    assert error(described) == "spare belongs to another account"


# ---------------------------------------------------------------- CSRF

FOREIGN = "https://evil.example"
CSRF_CASES = {
    # case: (which CSRF token, Origin header or None, expected status, message fragment)
    "no token": ("none", None, 403, "missing or wrong CSRF token"),
    "a wrong token": ("wrong", None, 403, "missing or wrong CSRF token"),
    "another account's token": ("bob", None, 403, "missing or wrong CSRF token"),
    "another session's token": ("alice-other", None, 403, "missing or wrong CSRF token"),
    "a foreign Origin": ("right", FOREIGN, 403, "came from another site"),
    "Origin null": ("right", "null", 403, "came from another site"),
    "another port": ("right", "http://127.0.0.1:1", 403, "came from another site"),
    "the right token": ("right", None, 201, ""),
    "the right token, same origin": ("right", "same", 201, ""),
}


@pytest.fixture(scope="module")
def sessions(main: Site) -> Iterator[dict[str, Browser]]:
    """alice's session, a second one of hers, and bob's."""
    made = {"alice": Browser(main, "alice", ALICE_PASSWORD),
            "alice-other": Browser(main, "alice", ALICE_PASSWORD),
            "bob": Browser(main, "bob", BOB_PASSWORD)}
    yield made
    for browser in made.values():
        browser.close()


def csrf_headers(main: Site, sessions: dict[str, Browser], which: str,
                 origin: str | None) -> dict[str, str]:
    tokens = {"none": None, "wrong": "0" * 64, "right": sessions["alice"].csrf,
              "bob": sessions["bob"].csrf, "alice-other": sessions["alice-other"].csrf}
    headers = {}
    if tokens[which] is not None:
        headers["x-csrf-token"] = str(tokens[which])
    if origin is not None:
        headers["origin"] = main.url if origin == "same" else origin
    return headers


def live_tokens(main: Site, user: str) -> list[str]:
    with main.client(user) as client:
        return [t["id"] for t in client.get("/api/v1/tokens").json()["tokens"] if not t["revoked"]]


@pytest.mark.parametrize("case", list(CSRF_CASES))
def test_a_cookie_request_needs_its_sessions_csrf_token_and_origin(
        main: Site, sessions: dict[str, Browser], case: str) -> None:
    which, origin, status, message = CSRF_CASES[case]
    alice = sessions["alice"]
    before = live_tokens(main, "alice")
    made = alice.client.post("/api/v1/tokens", json={"label": case},
                             headers=csrf_headers(main, sessions, which, origin))
    described = alice.client.patch("/api/v1/bots/pick", json={"description": case},
                                   headers=csrf_headers(main, sessions, which, origin))
    assert made.status_code == status, made.text
    if status == 201:
        assert described.status_code == 200
        assert set(live_tokens(main, "alice")) - set(before) == {made.json()["id"]}
    else:
        assert described.status_code == status
        assert message in error(made) and message in error(described)
        assert live_tokens(main, "alice") == before
        with main.client() as client:
            assert client.get("/api/v1/bots/pick").json()["description"] != case


def test_the_forms_need_the_csrf_field(main: Site) -> None:
    alice = Browser(main, "alice", ALICE_PASSWORD)
    try:
        before = live_tokens(main, "alice")
        for csrf in ("", "f" * 64):
            made = alice.client.post("/account/tokens", data={"label": "form", "csrf": csrf})
            submitted = alice.client.post(
                "/submit", data={"name": "formbot", "language": "archive", "csrf": csrf},
                files={"file": ("formbot.zip", bot_zip("formbot"), "application/zip")})
            logout = alice.client.post("/logout", data={"csrf": csrf})
            for reply in (made, submitted, logout):
                assert reply.status_code == 403, reply.url
                assert "missing or wrong CSRF token" in reply.text
        assert live_tokens(main, "alice") == before
        assert version_count(main, "formbot") == 0
        assert incoming(main) == []
        assert alice.client.get("/api/v1/me").json()["name"] == "alice"  # still signed in
        # the same forms with the session's token work
        made = alice.client.post("/account/tokens", data={"label": "form", "csrf": alice.csrf})
        assert made.status_code == 200 and len(live_tokens(main, "alice")) == len(before) + 1
        logout = alice.client.post("/logout", data={"csrf": alice.csrf})
        assert logout.status_code == 303
    finally:
        alice.close()


def test_a_bearer_token_needs_no_csrf_token(main: Site) -> None:
    with main.client("bob") as client:
        made = client.post("/api/v1/tokens", json={"label": "script"},
                           headers={"origin": FOREIGN})  # a script's Origin is not checked
        assert made.status_code == 201, made.text
        assert client.delete(f"/api/v1/tokens/{made.json()['id']}").status_code == 200


# ---------------------------------------------------------------- tokens

def test_a_token_revoked_through_the_api_is_refused(main: Site) -> None:
    with main.client("bob") as client:
        made = client.post("/api/v1/tokens", json={"label": "short-lived"}).json()
    token = made["token"]
    with httpx.Client(base_url=main.url, headers={"authorization": f"Bearer {token}"}) as client:
        assert client.get("/api/v1/me").json() == {"name": "bob", "organiser": False}
        assert client.delete(f"/api/v1/tokens/{made['id']}").status_code == 200
        after = client.get("/api/v1/me")
    assert after.status_code == 401
    assert error(after) == "the API token is not valid (unknown, revoked or malformed)"


def test_a_token_revoked_with_the_cli_is_refused(main: Site) -> None:
    with main.client("bob") as client:
        made = client.post("/api/v1/tokens", json={"label": "cli"}).json()
    done = main.league("users", "revoke", made["id"])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"revoked token {made['id']}"
    with httpx.Client(base_url=main.url,
                      headers={"authorization": f"Bearer {made['token']}"}) as client:
        reply = client.post("/api/v1/tokens", json={"label": "from a revoked token"})
    assert reply.status_code == 401
    assert "not valid" in error(reply)
    assert made["id"] not in live_tokens(main, "bob")


BAD_AUTHORIZATION = {
    "no scheme": "{token}",
    "basic": "Basic {token}",
    "bearer alone": "Bearer",
    "bearer and junk": "Bearer {token} extra",
    "cut short": "Bearer {short}",
    "one character changed": "Bearer {changed}",
    "github's format": "Bearer ghp_16C7e42F292c6912E7710c838347Ae178B4a",
    "a JWT": "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl",
    "openai's format": "Bearer sk-proj-abcdefghijklmnopqrstuvwxyz0123456789",
    "another id, same shape": "Bearer lgt_000000000000_{secret}",
}


@pytest.mark.parametrize("case", list(BAD_AUTHORIZATION))
def test_a_malformed_or_foreign_token_is_refused(main: Site, case: str) -> None:
    token = main.tokens["alice"]
    changed = token[:-1] + ("A" if token[-1] != "A" else "B")
    header = BAD_AUTHORIZATION[case].format(token=token, short=token[:-3], changed=changed,
                                            secret=token[-43:])
    with httpx.Client(base_url=main.url, headers={"authorization": header}) as client:
        reply = client.get("/api/v1/me")
        upload = client.post("/api/v1/bots/tokenless/versions", content=bot_zip("tokenless"),
                             headers={"content-type": "application/zip"})
    assert reply.status_code == upload.status_code == 401
    assert error(reply) == "the API token is not valid (unknown, revoked or malformed)"
    assert version_count(main, "tokenless") == 0


def test_a_token_is_shown_only_when_made(main: Site) -> None:
    with main.client("alice") as client:
        made = client.post("/api/v1/tokens", json={"label": "once"}).json()
        listed = client.get("/api/v1/tokens")
        page = client.get("/account")
    assert set(made) == {"id", "token", "label"}
    for row in listed.json()["tokens"]:
        assert set(row) == {"id", "label", "created", "revoked"}
    assert made["id"] in listed.text and made["id"] in page.text
    for token in (made["token"], *main.tokens.values()):
        assert token not in listed.text and token not in page.text


# ---------------------------------------------------------------- sessions

def cookie_attributes(set_cookie: list[str]) -> dict[str, str]:
    parsed = SimpleCookie()
    for header in set_cookie:
        parsed.load(header)
    morsel = parsed[COOKIE]
    return {key: str(morsel[key]) for key in ("httponly", "samesite", "path", "secure")}


def test_the_session_cookie_is_httponly_and_samesite_lax(main: Site) -> None:
    alice = Browser(main, "alice", ALICE_PASSWORD)
    alice.close()
    with httpx.Client(base_url=main.url, timeout=60) as client:
        form = client.post("/login", data={"name": "alice", "password": ALICE_PASSWORD,
                                           "next": "/account"})
    assert form.status_code == 303 and form.headers["location"] == "/account"
    for set_cookie in (alice.set_cookie, form.headers.get_list("set-cookie")):
        attributes = cookie_attributes(set_cookie)
        assert attributes["httponly"] == "True"
        assert attributes["samesite"].lower() == "lax"
        assert attributes["path"] == "/"
        assert attributes["secure"] in ("", "False")  # plain http on loopback


def test_a_tampered_cookie_is_signed_out(main: Site) -> None:
    alice = Browser(main, "alice", ALICE_PASSWORD)
    alice.close()
    good = alice.cookie
    # a character inside the signature: the last base64 character of an HMAC
    # carries padding bits too, so changing it may decode to the same bytes
    at = len(good) - 10
    changed = good[:at] + ("A" if good[at] != "A" else "B") + good[at + 1:]
    tampered = {"signature changed": changed, "signature dropped": good.rpartition(".")[0],
                "another value": good.replace(good.split(".")[0], "ImFub3RoZXIi"),
                "junk": "x" * 5000, "empty": ""}
    for case, cookie in tampered.items():
        with cookie_client(main, cookie) as client:
            me = client.get("/api/v1/me")
            account = client.get("/account")
            made = client.post("/api/v1/tokens", json={"label": case},
                               headers={"x-csrf-token": alice.csrf})
        assert me.status_code == 401 and error(me) == "not signed in", case
        assert account.status_code == 303, case
        assert account.headers["location"] == "/login?next=/account"
        assert made.status_code == 401 and "sign in first" in error(made), case
    with cookie_client(main, good) as client:
        assert client.get("/api/v1/me").json()["name"] == "alice"  # the good one still works


def test_signing_out_ends_the_session_on_the_server(main: Site) -> None:
    for how in ("api", "form"):
        alice = Browser(main, "alice", ALICE_PASSWORD)
        try:
            if how == "api":
                out = alice.client.delete("/api/v1/session",
                                          headers={"x-csrf-token": alice.csrf})
                assert out.status_code == 200 and out.json() == {"signed_out": True}
            else:
                out = alice.client.post("/logout", data={"csrf": alice.csrf})
                assert out.status_code == 303
        finally:
            alice.close()
        with cookie_client(main, alice.cookie) as client:  # the old cookie, kept by a thief
            me = client.get("/api/v1/me")
            made = client.post("/api/v1/tokens", json={"label": "after"},
                               headers={"x-csrf-token": alice.csrf})
        assert me.status_code == 401 and error(me) == "not signed in", how
        assert made.status_code == 401, how


def test_ten_wrong_passwords_lock_the_sign_in(main: Site) -> None:
    with httpx.Client(base_url=main.url, timeout=60) as client:
        for attempt in range(10):
            wrong = client.post("/api/v1/session",
                                json={"name": "carol", "password": f"wrong-guess-{attempt:02d}"})
            assert wrong.status_code == 401, attempt
            assert error(wrong) == "wrong account name or password"
        locked = client.post("/api/v1/session", json={"name": "carol", "password": CAROL_PASSWORD})
        form = client.post("/login", data={"name": "carol", "password": CAROL_PASSWORD})
    assert locked.status_code == 429
    assert "the most is 10 in 300 s" in error(locked)
    assert COOKIE not in locked.cookies
    assert form.status_code == 429 and "the most is 10 in 300 s" in form.text
    assert COOKIE not in form.cookies
    assert Browser(main, "alice", ALICE_PASSWORD).csrf  # another account is not locked


# ---------------------------------------------------------------- quotas

def test_the_daily_submission_quota(quota: Site) -> None:
    for number in (1, 2):
        reply = quota.upload("alice", "daily", bot_zip("daily", description=f"v{number}"))
        assert reply.status_code == 201 and reply.json()["number"] == number
    before = snapshot(quota, "daily")
    third = quota.upload("alice", "daily", bot_zip("daily", description="v3"))
    assert third.status_code == 429
    assert error(third) == ("quota: 2 submissions in the last 24 hours, the most this ladder "
                            "allows per account is 2")
    assert_nothing_changed(quota, before)


def test_the_bots_per_account_quota(quota: Site) -> None:
    assert quota.upload("bob", "first", bot_zip("first")).status_code == 201
    before = snapshot(quota, "first", "second")
    second = quota.upload("bob", "second", bot_zip("second"))
    assert second.status_code == 429
    assert error(second) == ("quota: you own 1 bots, the most this ladder allows per account "
                             "is 1")
    assert_nothing_changed(quota, before)


def raw_request(site: Site, head: str) -> bytes:
    """Send ``head`` (request line and headers) and no body; what the server
    answers. A server that waited for the body would not answer at all."""
    host, port = site.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=60) as connection:
        connection.sendall(head.encode())
        answer = b""
        while chunk := connection.recv(65536):
            answer += chunk
            if b"\r\n\r\n" in answer and answer.endswith(b"}"):
                break
    return answer


def test_a_declared_length_over_the_cap_is_refused_before_reading(quota: Site) -> None:
    before = snapshot(quota, "biggie")
    declared = 10 * QUOTA_UPLOAD_BYTES
    answer = raw_request(quota, f"POST /api/v1/bots/biggie/versions HTTP/1.1\r\n"
                                f"Host: 127.0.0.1\r\nAuthorization: Bearer {quota.tokens['bob']}"
                                f"\r\nContent-Type: application/zip\r\n"
                                f"Content-Length: {declared}\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 413 "), head
    message = json.loads(body)["error"]
    assert f"{QUOTA_UPLOAD_BYTES:,} bytes" in message, message
    assert_nothing_changed(quota, before)


def test_a_chunked_body_over_the_cap_is_cut_off(quota: Site) -> None:
    before = snapshot(quota, "streamer")
    sent = 0

    def body() -> Iterator[bytes]:  # no Content-Length: httpx sends it chunked
        nonlocal sent
        while sent < 3 * QUOTA_UPLOAD_BYTES:
            sent += 8 << 10
            yield b"\0" * (8 << 10)

    with quota.client("bob") as client:
        reply = client.post("/api/v1/bots/streamer/versions", content=body(),
                            headers={"content-type": "application/zip"})
    assert "content-length" not in reply.request.headers
    assert reply.request.headers["transfer-encoding"] == "chunked"
    assert reply.status_code == 413
    assert f"{QUOTA_UPLOAD_BYTES:,} bytes" in error(reply)
    assert_nothing_changed(quota, before)


# ---------------------------------------------------------------- archive attacks

def _too_many_files() -> bytes:
    from harness.proc.catalog import MAX_BOT_FILES
    files = {"bot.toml": manifest("evil"), "bot.py": b"pass\n"}
    files.update({f"f{i}.txt": b"x" for i in range(MAX_BOT_FILES)})
    return zip_of(files)


def _zip_bomb() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("bot.toml", manifest("evil"))
        with archive.open("bot.py", "w", force_zip64=True) as member:
            zeros = b"\0" * (1 << 20)
            for _ in range(16):  # 16 MiB of zeros in about 16 KiB: under the file cap
                member.write(zeros)
    return buffer.getvalue()


ARCHIVE_ATTACKS = {
    "a '..' path": (lambda: zip_of({"bot.toml": manifest("evil"), "../escape.py": b"x"}),
                    "has a '..' part"),
    "an absolute path": (lambda: zip_of({"bot.toml": manifest("evil"), "/tmp/escape.py": b"x"}),
                         "is an absolute path"),
    "a symlink in a zip": (lambda: zip_of({"bot.toml": manifest("evil"), "bot.py": b"/etc/passwd"},
                                          {"bot.py": stat.S_IFLNK | 0o777}),
                           "is a symbolic link"),
    "a symlink in a tar": (lambda: tar_of([tar_member("bot.toml"),
                                           tar_member("bot.py", tarfile.SYMTYPE,
                                                      linkname="/etc/passwd")],
                                          {"bot.toml": manifest("evil")}),
                           "symbolic link"),
    "a device in a tar": (lambda: tar_of([tar_member("bot.toml"),
                                          tar_member("null", tarfile.CHRTYPE, devmajor=1,
                                                     devminor=3)],
                                         {"bot.toml": manifest("evil")}),
                          "device"),
    "too many files": (_too_many_files, "a bot may have"),
    "a zip bomb": (_zip_bomb, "decompression bomb"),
    "not an archive": (lambda: b"#!/bin/sh\nrm -rf /\n", "not an archive this server reads"),
    "a manifest file outside the folder": (
        lambda: zip_of({"bot.toml": manifest("evil", 'files = ["../x"]\n'), "bot.py": b""}),
        "'..'"),
    "a manifest naming another bot": (
        lambda: zip_of({"bot.toml": manifest("other"), "bot.py": b""}),
        "bot.toml names the bot 'other', but it was uploaded as 'evil'"),
    "a manifest with an unknown key": (
        lambda: zip_of({"bot.toml": manifest("evil", "run_as_root = true\n"), "bot.py": b""}),
        "run_as_root"),
}


@pytest.mark.parametrize("attack", list(ARCHIVE_ATTACKS))
def test_a_hostile_archive_is_refused(main: Site, attack: str) -> None:
    make, message = ARCHIVE_ATTACKS[attack]
    before = snapshot(main, "evil")
    reply = main.upload("alice", "evil", make())
    assert reply.status_code == 400, reply.text
    assert message in error(reply)
    assert str(main.db.parent) not in error(reply)  # no path on the server
    assert_nothing_changed(main, before)
    assert before["counts"]["evil"] == 0


# ---------------------------------------------------------------- secrets

def secrets_in(site: Site) -> dict[str, str]:
    """Every secret the server keeps, in the forms that could leak: what the
    .secret file holds (password hashes and their parts, token digests,
    session ids, signing keys in hex and base64) and the deal keys."""
    found: dict[str, str] = {}
    uri = f"file:{site.db}.secret?mode=ro"
    with sqlite3.connect(uri, uri=True) as db:
        tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master")}
        for (hashed,) in db.execute("SELECT password_hash FROM credentials"):
            found[f"password hash {hashed[:20]}"] = hashed
            for part in hashed.split("$")[-2:]:  # the salt and the hash
                found[f"password hash part {part[:8]}"] = part
        for token_id, digest in db.execute("SELECT id, digest FROM tokens"):
            found[f"token digest of {token_id}"] = digest
        for (session_id,) in db.execute("SELECT id FROM sessions"):
            found[f"session {session_id[:8]}"] = session_id
        for name, key in db.execute("SELECT name, key FROM server_keys"):
            key = bytes(key)
            found[f"server key {name} (hex)"] = key.hex()
            found[f"server key {name} (base64)"] = base64.b64encode(key).decode().rstrip("=")
            found[f"server key {name} (url-safe)"] = \
                base64.urlsafe_b64encode(key).decode().rstrip("=")
        if "league_keys" in tables:
            for league, key in db.execute("SELECT league, key FROM league_keys"):
                found[f"deal key of {league}"] = str(key)
    for name, token in site.tokens.items():  # shown once, at `league users add`
        found[f"{name}'s token"] = token
    return found


def every_get_route(site: Site) -> list[str]:
    """Every GET route of the API (from its OpenAPI document) and every page,
    filled in with alice's bots."""
    with site.client() as client:
        paths = client.get("/api/v1/openapi.json").json()["paths"]
    api = [path.replace("{name}", "pick").replace("{number}", "1").replace("{token_id}", "x")
           for path, methods in paths.items() if "get" in methods]
    pages = ["/", "/bots/pick", "/bots/pick/versions/1", "/bots/crasher",
             "/bots/crasher/versions/1", "/account", "/submit", "/login", "/signup",
             "/api/v1/docs", "/api/v1/bots/crasher/versions/1",
             "/api/v1/bots/crasher/versions/1/files"]
    return sorted(set(api + pages))


def test_no_secret_is_ever_served(main: Site) -> None:
    crasher_failed(main)
    signed_in = {name: Browser(main, name, password) for name, password in
                 (("alice", ALICE_PASSWORD), ("bob", BOB_PASSWORD), ("olga", OLGA_PASSWORD))}
    try:
        secrets = secrets_in(main)
        assert any(label.startswith("session") for label in secrets)
        assert any(label.startswith("password hash") for label in secrets)
        assert any(label.startswith("server key") for label in secrets)
        routes = every_get_route(main)
        assert "/api/v1/ladder" in routes and "/api/v1/tokens" in routes
        clients = [main.client(), main.client("bob"), main.client("alice"), main.client("olga"),
                   *(cookie_client(main, browser.cookie) for browser in signed_in.values())]
        served = 0
        for client in clients:
            with client:
                for route in routes:
                    reply = client.get(route)
                    assert reply.status_code < 500, (route, reply.text)
                    seen = reply.content + str(list(reply.headers.raw)).encode()
                    for label, secret in secrets.items():
                        assert secret.encode() not in seen, f"{label} served at {route}"
                    served += 1
        assert served == len(clients) * len(routes)
    finally:
        for browser in signed_in.values():
            browser.close()


# ---------------------------------------------------------------- escaping

HOSTILE_TEXT = ("<script>alert(1)</script> \"><img src=x onerror=alert(2)> "
                "\x1b[31mred\x1b[0m bell\x07 back\rover")


def test_hostile_text_is_shown_escaped(main: Site) -> None:
    assert main.upload("alice", "escaper", bot_zip("escaper")).status_code == 201
    with main.client("alice") as client:
        described = client.patch("/api/v1/bots/escaper", json={"description": HOSTILE_TEXT})
    assert described.status_code == 200, described.text
    for user in (None, "bob", "alice"):
        with main.client(user) as client:
            for route in ("/", "/bots/escaper"):
                page = client.get(route).text
                for raw in ("<script>alert", "<img src=x", "\x1b", "\x07", "\r"):
                    assert raw not in page, (user, route, raw)
                assert "&lt;script&gt;" in page, (user, route)
            data = client.get("/api/v1/bots/escaper")
        assert data.json()["description"] == HOSTILE_TEXT
        assert b"\x1b" not in data.content and b"\\u001b" in data.content


@pytest.mark.parametrize("name", ["<script>", "red\x1b[31m", "bell\x07", "a\rb", "\u202eevil"])
def test_a_bot_name_with_markup_or_escapes_is_refused(main: Site, name: str) -> None:
    before = snapshot(main)
    with main.client("alice") as client:
        reply = client.post(f"/api/v1/bots/{quote(name, safe='')}/versions",
                            content=bot_zip(name), headers={"content-type": "application/zip"})
    assert reply.status_code == 400, reply.text
    assert error(reply).startswith(f"bot name {ascii(name)} is refused"), error(reply)
    assert not any(ch in error(reply) for ch in "\x1b\x07\r\u202e")
    alice = Browser(main, "alice", ALICE_PASSWORD)
    try:
        page = alice.client.post(
            "/submit", data={"name": name, "language": "archive", "csrf": alice.csrf},
            files={"file": ("bot.zip", bot_zip(name), "application/zip")})
    finally:
        alice.close()
    assert page.status_code == 400
    assert "<script>" not in page.text
    shown = re.search(r'<p class="error" role="alert">([^<]*)</p>', page.text)
    assert shown is not None and "is refused" in shown.group(1)
    assert ascii(name) in html.unescape(shown.group(1))
    assert not any(ch in shown.group(1) for ch in "\x1b\x07\r\u202e")
    assert_nothing_changed(main, before)


# ---------------------------------------------------------------- headers

def test_every_page_has_the_security_headers(main: Site) -> None:
    routes = [*every_get_route(main), "/no/such/page", "/api/v1/no/such/route",
              "/bots/no-such-bot"]
    for user in (None, "alice"):
        with main.client(user) as client:
            for route in routes:
                reply = client.get(route)
                assert "default-src 'self'" in reply.headers["content-security-policy"], route
                assert "frame-ancestors 'none'" in reply.headers["content-security-policy"]
                assert reply.headers["x-content-type-options"] == "nosniff", route
                assert reply.headers["x-frame-options"] == "DENY", route


def test_the_openapi_document_lists_the_upload(main: Site) -> None:
    with main.client() as client:
        reply = client.get("/api/v1/openapi.json")
    assert reply.status_code == 200
    upload = reply.json()["paths"]["/api/v1/bots/{name}/versions"]["post"]
    assert "application/zip" in upload["requestBody"]["content"]
    assert "201" in upload["responses"]


# ---------------------------------------------------------------- signup

def test_an_invite_only_ladder_refuses_signup(main: Site) -> None:
    with main.client() as client:
        api = client.post("/api/v1/accounts", json={"name": "mallory",
                                                    "password": "mallory-password-1"})
        form = client.post("/signup", data={"name": "mallory", "password": "mallory-password-1"})
        session = client.post("/api/v1/session", json={"name": "mallory",
                                                       "password": "mallory-password-1"})
    assert api.status_code == 403
    assert error(api) == "this ladder's organiser makes the accounts (signup = \"invite\")"
    assert form.status_code == 403 and "organiser makes the accounts" in form.text
    assert session.status_code == 401
    assert "mallory" not in main.league("users", "list").stdout


SIGNUP_REFUSALS = {
    "a short password": ("dave", "short", 400,
                         "a password needs at least 10 characters; this one has 5"),
    "the name as password": ("erin", "erin", 400, "at least 10 characters"),
    "a look-alike of alice": ("A1ice", "a-good-password-1", 409,
                              "account name 'A1ice' looks like 'alice', which is taken"),
    "alice again": ("alice", "a-good-password-1", 409, "account name 'alice' is taken"),
    "markup in the name": ("<b>x</b>", "a-good-password-1", 400,
                           "account name '<b>x</b>' is refused"),
}


def test_an_open_ladder_signs_up_good_accounts_only(open_site: Site) -> None:
    with open_site.client() as client:
        made = client.post("/api/v1/accounts", json={"name": "frank",
                                                     "password": "frank-password-1"})
        assert made.status_code == 201, made.text
        assert made.json()["name"] == "frank"
        me = client.get("/api/v1/me", headers={"authorization": f"Bearer {made.json()['token']}"})
        assert me.json() == {"name": "frank", "organiser": False}
        for case, (name, password, status, message) in SIGNUP_REFUSALS.items():
            reply = client.post("/api/v1/accounts", json={"name": name, "password": password})
            assert reply.status_code == status, (case, reply.text)
            assert message in error(reply), case
    listed = open_site.league("users", "list").stdout
    assert [line.split()[0] for line in listed.splitlines()] == ["alice", "frank"]
