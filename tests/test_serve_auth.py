"""The submission server's name rules and auth primitives
(harness/serve/names.py, harness/serve/auth.py): unit tests, no server."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from itsdangerous.timed import TimestampSigner

from harness.serve import auth
from harness.serve.names import NAME_RULE, RESERVED, is_reserved, name_problem, skeleton

# ---------------------------------------------------------------- names

LOOK_ALIKES = [
    ("Bot", "bot"), ("b0t", "bot"), ("BOT_", "bot"), ("b-o-t", "bot"),
    ("bot1", "botl"), ("botI", "botl"), ("bot1", "botI"), ("Bo_T-1", "b0t1"),
    ("5ly", "sly"), ("2ed", "zed"), ("8ob", "bob"),
    ("corn", "com"), ("vvin", "win"), ("clip", "dip"), ("c1ip", "dip"),
]
DIFFERENT = [("bot2", "bot3"), ("bot", "bat"), ("bot", "bots"), ("alpha", "alpha2"),
             ("ab", "ba")]


@pytest.mark.parametrize(("first", "second"), LOOK_ALIKES)
def test_look_alike_names_share_a_skeleton(first: str, second: str) -> None:
    assert skeleton(first) == skeleton(second)


@pytest.mark.parametrize(("first", "second"), DIFFERENT)
def test_different_names_keep_different_skeletons(first: str, second: str) -> None:
    assert skeleton(first) != skeleton(second)


def test_skeleton_folds_unicode_that_slipped_past_the_rule() -> None:
    # Defence in depth: the rule refuses these, but a skeleton of one still
    # lands on its ASCII twin.
    assert skeleton("\uff42\uff4f\uff54") == skeleton("bot")  # fullwidth
    assert skeleton("b\u200dot") == skeleton("bot")  # zero-width joiner


@pytest.mark.parametrize("name", ["a", "A1", "9lives", "my_bot-2", "x" * 32, "Z-_"])
def test_names_within_the_rule_pass(name: str) -> None:
    assert NAME_RULE.match(name)
    assert name_problem(name) is None


REFUSED = {
    "empty": ("", "empty"),
    "33 characters": ("x" * 33, "more than 32"),
    "leading dash": ("-bot", "starts with"),
    "leading underscore": ("_bot", "starts with"),
    "space": ("my bot", "character 3"),
    "slash": ("a/b", "'/'"),
    "dot dot": ("..", "starts with"),
    "NUL": ("bot\x00", "'\\x00'"),
    "ESC": ("bot\x1b[31m", "'\\x1b'"),
    "markup": ("<script>", "starts with '<'"),
    "trailing newline": ("bot\n", "'\\n'"),
    "Cyrillic o": ("b\u043et", "U+043E"),
    "fullwidth": ("\uff42\uff4f\uff54", "U+FF42"),
    "zero-width joiner": ("b\u200dot", "U+200D"),
    "right-to-left mark": ("bot\u200f", "U+200F"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_names_outside_the_rule_are_refused_with_a_printable_message(case: str) -> None:
    name, detail = REFUSED[case]
    message = name_problem(name)
    assert message is not None
    assert detail in message
    assert "32" in message  # the rule, with its number
    assert ascii(name[:40]) in message  # the name, quoted so escapes show
    assert message.isascii() and message.isprintable()
    if not name.isascii():
        assert "only ASCII" in message


def test_a_huge_name_is_quoted_only_in_part() -> None:
    message = name_problem("x" * 100_000, what="account")
    assert message is not None and len(message) < 400
    assert "100000 characters" in message and message.startswith("account name")


@pytest.mark.parametrize("value", [None, 7, ["bot"], {"name": "bot"}])
def test_a_name_that_is_not_text_is_refused(value: object) -> None:
    message = name_problem(value)
    assert message is not None and "must be text" in message


@pytest.mark.parametrize("name", ["random", "Heuristic", "SEARCH", "js-random", "Adm1n",
                                  "organiser", "organizer", "api", "static", "new", "rand0m"])
def test_reserved_names_and_their_look_alikes_are_refused(name: str) -> None:
    message = name_problem(name)
    assert message is not None and "reserved" in message
    assert name_problem(name, reserved_ok=True) is None


def test_every_reserved_word_obeys_the_rule() -> None:
    # The reference bots enter under these names with reserved_ok=True.
    assert all(NAME_RULE.match(word) for word in RESERVED)
    assert not is_reserved("randomness") and not is_reserved("searcher")


# ---------------------------------------------------------------- tokens

def test_a_new_token_parses_to_its_id_and_digest() -> None:
    issued = auth.new_token()
    assert issued.token.startswith("lgt_" + issued.token_id + "_")
    assert len(issued.token_id) == 12 and len(issued.token) == auth.TOKEN_CHARS
    assert auth.parse_token(issued.token) == (issued.token_id, issued.digest)
    assert auth.bearer_token(f"Bearer {issued.token}") == (issued.token_id, issued.digest)
    assert auth.bearer_token(f"bearer  {issued.token} ") == (issued.token_id, issued.digest)
    assert issued.token not in repr(issued)  # kept out of logs


def test_tokens_are_unique() -> None:
    tokens = [auth.new_token() for _ in range(50)]
    assert len({t.token for t in tokens}) == 50 and len({t.token_id for t in tokens}) == 50


@pytest.mark.parametrize("position", [-1, -20, 20])  # in the secret, and in the id
def test_a_token_with_one_character_changed_does_not_match(position: int) -> None:
    issued = auth.new_token()
    index = position % len(issued.token)
    swapped = "b" if issued.token[index] != "b" else "c"
    forged = issued.token[:index] + swapped + issued.token[index + 1:]
    assert forged != issued.token and len(forged) == len(issued.token)
    parsed = auth.parse_token(forged)
    assert parsed is not None
    assert not auth.token_matches(parsed[1], issued.digest)
    assert auth.token_matches(issued.digest, issued.digest)


@pytest.mark.parametrize("text", [
    "", "lgt_", "Bearer x", "lgt_" + "0" * 12 + "_" + "a" * 42,  # one short
    "lgt_" + "0" * 12 + "_" + "a" * 44,  # one long
    "lgt_" + "G" * 12 + "_" + "a" * 43,  # id not lower-case hex
    "LGT_" + "0" * 12 + "_" + "a" * 43, "lgt_" + "0" * 12 + "_" + "a" * 42 + "=",
    "lgt_" + "0" * 12 + "_" + "a" * 42 + "\n", "lgt_" + "0" * 12 + "_" + "a" * 42 + "\u0430",
])
def test_parse_token_refuses_malformed_tokens(text: str) -> None:
    assert auth.parse_token(text) is None


@pytest.mark.parametrize("header", [None, "", "Basic abc", "Bearer", "Bearer lgt_x",
                                    "Token " + "lgt_" + "0" * 12 + "_" + "a" * 43])
def test_bearer_token_refuses_other_headers(header: str | None) -> None:
    assert auth.bearer_token(header) is None


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.text(), st.text(alphabet="lgt_0123456789abcdefABC-", min_size=55,
                                    max_size=65), st.binary(), st.none(), st.integers()))
def test_parse_token_never_raises(text: object) -> None:
    parsed = auth.parse_token(text)
    assert parsed is None or (isinstance(text, str) and parsed[0] == text[4:16])


def test_token_matches_survives_non_ascii() -> None:
    assert not auth.token_matches("\u0430" * 64, "a" * 64)


# ---------------------------------------------------------------- passwords

def test_passwords_hash_with_argon2id_and_verify() -> None:
    stored = auth.hash_password("correct horse battery")
    assert stored.startswith("$argon2id$")
    assert auth.verify_password(stored, "correct horse battery")
    assert not auth.verify_password(stored, "correct horse batterY")
    assert not auth.password_needs_rehash(stored)


@pytest.mark.parametrize("stored", ["", "garbage", "$argon2id$", "$argon2id$v=19$m=1,t=1,p=1$x$y",
                                    "$2b$12$abcdefghijklmnopqrstuv", "\u0430" * 10])
def test_verify_password_is_false_for_malformed_hashes(stored: str) -> None:
    assert auth.verify_password(stored, "correct horse battery") is False


def test_a_hash_with_weaker_parameters_needs_rehashing() -> None:
    assert auth.password_needs_rehash("$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo")
    assert not auth.password_needs_rehash("garbage")


@pytest.mark.parametrize("presented", [None, 12345, "\ud800" * 12, "x" * 100_000])
def test_verify_password_is_false_for_hostile_input(presented: object) -> None:
    stored = auth.hash_password("correct horse battery")
    assert auth.verify_password(stored, presented) is False
    assert auth.dummy_verify(presented) is False


@pytest.mark.parametrize(("password", "detail"), [
    ("short", "at least 10"), ("x" * 257, "at most 256"), ("alice-1234", "name"),
    ("ALICE-1234 ", "name"), (None, "text"), ("\ud800" * 12, "Unicode"),
])
def test_password_problems_are_stated(password: object, detail: str) -> None:
    message = auth.password_problem(password, name="alice-1234")
    assert message is not None and detail in message


def test_good_passwords_pass() -> None:
    assert auth.password_problem("x" * 10, name="alice") is None
    assert auth.password_problem("y" * 256, name="alice") is None


# ---------------------------------------------------------------- sessions

def test_a_session_cookie_round_trips() -> None:
    codec = auth.SessionCodec(auth.new_secret_key())
    session_id = auth.new_session_id()
    assert codec.load(codec.dump(session_id), max_age_s=3600) == session_id


def test_a_tampered_cookie_is_refused() -> None:
    codec = auth.SessionCodec(auth.new_secret_key())
    cookie = codec.dump(auth.new_session_id())
    for position in (0, len(cookie) // 2, -1):
        forged = list(cookie)
        forged[position] = "A" if forged[position] != "A" else "B"
        assert codec.load("".join(forged), max_age_s=3600) is None


def test_a_cookie_signed_with_another_key_is_refused() -> None:
    cookie = auth.SessionCodec(auth.new_secret_key()).dump("session-1")
    assert auth.SessionCodec(auth.new_secret_key()).load(cookie, max_age_s=3600) is None


def test_an_expired_cookie_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    codec = auth.SessionCodec(auth.new_secret_key())
    real_timestamp = TimestampSigner.get_timestamp
    # itsdangerous's own clock, set back 100 s while signing: no sleeping.
    monkeypatch.setattr(TimestampSigner, "get_timestamp",
                        lambda self: real_timestamp(self) - 100)
    cookie = codec.dump("session-1")
    monkeypatch.setattr(TimestampSigner, "get_timestamp", real_timestamp)
    assert codec.load(cookie, max_age_s=50) is None
    assert codec.load(cookie, max_age_s=3600) == "session-1"


@pytest.mark.parametrize("cookie", ["", "garbage", "a.b.c", ".", "\x00" * 10, "\ud800",
                                    "\u0430.\u0430.\u0430", "x" * 10_000, None, 5])
def test_a_garbage_cookie_is_refused(cookie: object) -> None:
    codec = auth.SessionCodec(auth.new_secret_key())
    assert codec.load(cookie, max_age_s=3600) is None


# ---------------------------------------------------------------- CSRF and Origin

def test_csrf_tokens_are_bound_to_the_key_and_the_session() -> None:
    key = auth.new_secret_key()
    token = auth.csrf_token(key, "session-1")
    assert auth.csrf_ok(key, "session-1", token)
    assert not auth.csrf_ok(key, "session-2", token)  # another session
    assert not auth.csrf_ok(auth.new_secret_key(), "session-1", token)  # another key
    assert not auth.csrf_ok(key, "session-1", token[:-1] + ("0" if token[-1] != "0" else "1"))
    for presented in (None, "", "\u0430" * 64, token.upper() + "x"):
        assert not auth.csrf_ok(key, "session-1", presented)


@pytest.mark.parametrize(("origin", "host", "scheme", "same"), [
    (None, "example.org", "https", True),  # curl, old clients: the CSRF token guards
    ("https://example.org", "example.org", "https", True),
    ("https://EXAMPLE.org:443", "example.org", "https", True),  # default port, any case
    ("http://127.0.0.1:8000", "127.0.0.1:8000", "http", True),
    ("http://[::1]:8000", "[::1]:8000", "http", True),
    ("null", "example.org", "https", False),
    ("", "example.org", "https", False),
    ("https://evil.example", "example.org", "https", False),
    ("https://example.org.evil.example", "example.org", "https", False),
    ("http://127.0.0.1:8001", "127.0.0.1:8000", "http", False),  # another port
    ("http://example.org", "example.org", "https", False),  # another scheme
    ("https://example.org", None, "https", False),  # nothing to compare with
    ("https://example.org/path", "example.org", "https", False),
    ("https://user@example.org", "example.org", "https", False),
    ("https://example.org:99999", "example.org", "https", False),
    ("https://example.org:x", "example.org", "https", False),
    ("ftp://example.org", "example.org", "https", False),
    ("https://ex\u0430mple.org", "example.org", "https", False),
])
def test_same_origin(origin: str | None, host: str | None, scheme: str, same: bool) -> None:
    assert auth.same_origin(origin, host, scheme) is same


# ---------------------------------------------------------------- login limiter

class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_the_eleventh_attempt_in_the_window_is_refused() -> None:
    clock = FakeClock()
    limiter = auth.LoginLimiter(attempts=10, window_s=300, clock=clock)
    key = auth.login_key("Alice", "10.0.0.1")
    for _ in range(10):
        assert limiter.allow(key)
        clock.now += 1
    assert not limiter.allow(key)
    assert not limiter.allow(auth.login_key("ALICE", "10.0.0.1"))  # name case folded
    assert limiter.allow(auth.login_key("alice", "10.0.0.2"))  # another address
    assert limiter.allow(auth.login_key("bob", "10.0.0.1"))  # another account
    assert limiter.retry_after_s(key) == pytest.approx(290)
    clock.now = 1000.0 + 300  # the first attempt has left the window
    assert limiter.allow(key) and not limiter.allow(key)


def test_reset_forgets_a_key() -> None:
    limiter = auth.LoginLimiter(attempts=2, window_s=300, clock=FakeClock())
    key = auth.login_key("alice", "10.0.0.1")
    assert limiter.allow(key) and limiter.allow(key) and not limiter.allow(key)
    limiter.reset(key)
    assert limiter.allow(key) and limiter.retry_after_s(key) == 0.0


def test_the_limiter_holds_at_most_max_keys() -> None:
    limiter = auth.LoginLimiter(attempts=1, window_s=300, max_keys=100, clock=FakeClock())
    watched = auth.login_key("watched", "10.0.0.1")
    assert limiter.allow(watched)
    for number in range(1000):
        limiter.allow(auth.login_key(f"user{number}", "10.0.0.9"))
        assert not limiter.allow(watched)  # used on every round, so never evicted
    assert len(limiter) == 100
    assert limiter.allow(auth.login_key("user0", "10.0.0.9"))  # long evicted: counts afresh


def test_huge_key_parts_are_cut() -> None:
    name, address = auth.login_key("A" * 1_000_000, "1" * 1_000_000)
    assert name == "a" * 64 and len(address) == 64


def test_concurrent_attempts_never_exceed_the_limit() -> None:
    limiter = auth.LoginLimiter(attempts=10, window_s=300)
    key = auth.login_key("alice", "10.0.0.1")
    allowed: list[bool] = []
    start = threading.Barrier(8)

    def hammer() -> None:
        start.wait()
        results = [limiter.allow(key) for _ in range(200)]
        allowed.extend(results)  # list.extend is atomic under the GIL

    threads = [threading.Thread(target=hammer) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sum(allowed) == 10 and len(allowed) == 1600
