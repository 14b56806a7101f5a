"""Who is asking, for the submission server: API tokens, passwords, session
cookies, CSRF tokens, the Origin check and login rate limiting. Primitives
only; harness.serve.db stores what they make and harness.serve.app applies
them to requests.

API tokens (``new_token``, ``parse_token``, ``token_matches``) look like
``lgt_<id>_<secret>``: a 12-hex-digit id that is a lookup key, not a secret,
and 32 random bytes (URL-safe base64). The server stores the id and the
SHA-256 of the whole token, never the token. SHA-256 and not argon2, because
a token carries 256 bits of entropy (no dictionary to slow down, so a slow
hash buys nothing) and is checked on every request: argon2 there would let
anyone with a stream of bogus tokens burn the server's two cores. The id
finds the one stored digest to compare, with ``hmac.compare_digest`` so the
comparison's time says nothing of how much matched. ``parse_token`` is
strict (exact prefix, length and alphabet): anything else is None, before a
database is touched.

Passwords (``hash_password``, ``verify_password``) are argon2id, argon2-cffi's
defaults (RFC 9106's low-memory profile: 64 MiB, 3 passes): people's
passwords are guessable, so each guess against a stolen database must cost
memory and time. Verification never raises: a mismatch, a malformed stored
hash or unencodable text is False. ``password_problem`` states the rules
(10 to 256 characters, not the account's name).

Sessions (``SessionCodec``): the cookie carries only a random session id,
signed with itsdangerous (HMAC, with a timestamp for expiry). The server
keeps the sessions, so signing out or revoking deletes the row and the
cookie is dead even while its signature is good; the signature means a
guessed or tampered cookie costs no database look-up.

CSRF (``csrf_token``, ``csrf_ok``): a cookie-authenticated POST, PATCH or
DELETE must carry ``HMAC-SHA256(key, session id)`` in a form field or the
X-CSRF-Token header. Bound to the session, so it needs no storage, changes
with every sign-in, and one account's token is worthless in another's
session. ``same_origin`` adds the browser's own Origin header as a second
check. Bearer-token requests need neither: a browser never attaches them on
its own.

Login attempts (``LoginLimiter``): at most 10 per (account name, client
address) in a moving 5-minute window, in memory (a restart forgets them,
which only gives an attacker one more window), bounded in size.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from functools import cache
from urllib.parse import urlsplit

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from itsdangerous import BadData, URLSafeTimedSerializer

# ---------------------------------------------------------------- tokens

TOKEN_PREFIX = "lgt_"
TOKEN_ID_HEX = 12
_TOKEN_SECRET_BYTES = 32
# token_urlsafe(32): 32 bytes as unpadded URL-safe base64, 43 characters.
_TOKEN_SECRET_CHARS = 43
TOKEN_CHARS = len(TOKEN_PREFIX) + TOKEN_ID_HEX + 1 + _TOKEN_SECRET_CHARS
_TOKEN_SHAPE = re.compile(
    rf"\A{TOKEN_PREFIX}([0-9a-f]{{{TOKEN_ID_HEX}}})_[A-Za-z0-9_-]{{{_TOKEN_SECRET_CHARS}}}\Z")


@dataclass(frozen=True)
class IssuedToken:
    """A new API token: ``token`` goes to its owner once and is never stored;
    ``token_id`` and ``digest`` are what the server keeps."""

    token: str = field(repr=False)  # kept out of logs and tracebacks
    token_id: str
    digest: str


def token_digest(token: str) -> str:
    """The stored form of a token: SHA-256 of the whole token, hex."""
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def new_token() -> IssuedToken:
    """A fresh token, its id and its digest."""
    token_id = secrets.token_hex(TOKEN_ID_HEX // 2)
    token = f"{TOKEN_PREFIX}{token_id}_{secrets.token_urlsafe(_TOKEN_SECRET_BYTES)}"
    return IssuedToken(token=token, token_id=token_id, digest=token_digest(token))


def parse_token(text: object) -> tuple[str, str] | None:
    """``(token_id, digest)`` for a well-formed token, else None (never
    raises, whatever ``text`` is)."""
    if not isinstance(text, str) or len(text) != TOKEN_CHARS:
        return None
    match = _TOKEN_SHAPE.match(text)
    if match is None:
        return None
    return match.group(1), token_digest(text)


def bearer_token(authorization: str | None) -> tuple[str, str] | None:
    """``parse_token`` of an ``Authorization: Bearer <token>`` header's
    token (the scheme in any case), or None for no header, another scheme or
    a malformed token."""
    if not authorization:
        return None
    scheme, _, credentials = authorization.strip().partition(" ")
    if scheme.lower() != "bearer":
        return None
    return parse_token(credentials.strip())


def token_matches(presented_digest: str, stored_digest: str) -> bool:
    """Whether two token digests are equal, in time that does not depend on
    where they differ."""
    return hmac.compare_digest(_utf8(presented_digest), _utf8(stored_digest))


def _utf8(text: str) -> bytes:
    # compare_digest refuses non-ASCII str; bytes of anything compare safely.
    return text.encode("utf-8", "surrogatepass")


# ---------------------------------------------------------------- passwords

MIN_PASSWORD_CHARS = 10
MAX_PASSWORD_CHARS = 256

_HASHER = PasswordHasher()  # argon2id, RFC 9106 low-memory profile


def password_problem(password: object, name: str = "") -> str | None:
    """None when ``password`` may be ``name``'s password, else why not."""
    if not isinstance(password, str):
        return "a password must be text"
    if len(password) < MIN_PASSWORD_CHARS:
        return (f"a password needs at least {MIN_PASSWORD_CHARS} characters; "
                f"this one has {len(password)}")
    if len(password) > MAX_PASSWORD_CHARS:
        return (f"a password has at most {MAX_PASSWORD_CHARS} characters; "
                f"this one has {len(password)}")
    if not _encodable(password):
        return "a password must be valid Unicode text (this one holds a lone surrogate)"
    if name and password.strip().casefold() == name.strip().casefold():
        return "a password must not be the account's name"
    return None


def hash_password(password: str) -> str:
    """The argon2id hash of ``password`` (check ``password_problem`` first),
    in PHC form: ``$argon2id$v=19$m=...,t=...,p=...$salt$hash``."""
    return _HASHER.hash(password)


def verify_password(stored_hash: str, password: object) -> bool:
    """Whether ``password`` is the one ``stored_hash`` was made from. False,
    never an exception, for a wrong password, a malformed hash, text that is
    not a string or not encodable, or text longer than any password may be
    (which is refused before argon2 runs: no password that long exists)."""
    if not isinstance(password, str) or not isinstance(stored_hash, str):
        return False
    if len(password) > MAX_PASSWORD_CHARS or not _encodable(password):
        return False
    try:
        return _HASHER.verify(stored_hash, password)
    except (VerificationError, InvalidHashError, ValueError, TypeError):
        # VerifyMismatchError (the wrong password) is a VerificationError;
        # ValueError/TypeError: argon2 choking on a hash that is not argon2's.
        return False


def password_needs_rehash(stored_hash: str) -> bool:
    """Whether ``stored_hash`` was made with other parameters than today's
    (rehash on the next successful sign-in). False for a malformed hash."""
    try:
        return _HASHER.check_needs_rehash(stored_hash)
    except (InvalidHashError, ValueError, TypeError):
        return False


def dummy_verify(password: object) -> bool:
    """Spend what a real verification spends, and return False: sign-in
    calls this for an account that does not exist, so the response time
    does not say which names have accounts."""
    verify_password(_dummy_hash(), password)
    return False


@cache
def _dummy_hash() -> str:
    """A hash of a password nobody knows, made on first use (not at import:
    hashing takes 64 MiB and a fraction of a second)."""
    return hash_password(secrets.token_urlsafe(16))


def _encodable(text: str) -> bool:
    """Whether ``text`` is valid UTF-8 material (JSON can carry lone
    surrogates, which argon2-cffi's encode would raise on)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


# ---------------------------------------------------------------- sessions and CSRF

def new_secret_key() -> bytes:
    """A key for signing cookies and CSRF tokens: 32 random bytes."""
    return secrets.token_bytes(32)


def new_session_id() -> str:
    """A session's id: 32 random bytes, URL-safe base64 (43 characters)."""
    return secrets.token_urlsafe(32)


class SessionCodec:
    """The session cookie's value: a session id, signed and timestamped.
    ``load`` gives the id back only for a cookie this key signed no more
    than ``max_age_s`` seconds ago; anything else is None."""

    _SALT = "league-session-v1"  # keeps these signatures apart from any other use of the key

    def __init__(self, key: bytes) -> None:
        self._serializer = URLSafeTimedSerializer(key, salt=self._SALT)

    def dump(self, session_id: str) -> str:
        return self._serializer.dumps(session_id)

    def load(self, cookie: object, max_age_s: int) -> str | None:
        if not isinstance(cookie, str) or not cookie or len(cookie) > 4096:
            return None  # browsers cap a cookie at 4096 bytes; ours is ~100
        try:
            value = self._serializer.loads(cookie, max_age=max_age_s)
        except (BadData, UnicodeError, ValueError, TypeError):
            # BadData covers bad signatures, expiry and undecodable payloads.
            return None
        return value if isinstance(value, str) else None


def csrf_token(key: bytes, session_id: str) -> str:
    """The CSRF token of the session ``session_id``: HMAC-SHA256, hex."""
    message = b"league-csrf-v1:" + session_id.encode("utf-8", "surrogatepass")
    return hmac.new(key, message, hashlib.sha256).hexdigest()


def csrf_ok(key: bytes, session_id: str, presented: str | None) -> bool:
    """Whether ``presented`` is the session's CSRF token (None, empty or
    anything not a string is not)."""
    if not isinstance(presented, str) or not presented:
        return False
    return hmac.compare_digest(_utf8(presented), _utf8(csrf_token(key, session_id)))


_DEFAULT_PORTS = {"http": 80, "https": 443}


def same_origin(origin_header: str | None, host_header: str | None, scheme: str) -> bool:
    """Whether a cookie-authenticated unsafe request's Origin header names
    this server (``scheme``, as the app sees it, and the Host header).

    No Origin header: True (older browsers, curl and scripts send none; the
    CSRF token still guards). "null" (sandboxed frames, some redirects), an
    empty or malformed Origin, another scheme, host or port: False. Behind a
    TLS-terminating proxy the app must see the outside scheme (uvicorn's
    --proxy-headers), or every browser POST fails this check."""
    if origin_header is None:
        return True
    origin = _host_port(origin_header.strip(), with_scheme=True)
    here = _host_port(host_header.strip() if host_header else "", with_scheme=False,
                      scheme=scheme.lower())
    return origin is not None and here is not None and origin == here


def _host_port(text: str, with_scheme: bool,
               scheme: str = "") -> tuple[str, str, int] | None:
    """(scheme, host, port) of an Origin ("https://host:port") or a Host
    header ("host:port", given its scheme); None when malformed."""
    if not text or not text.isascii() or any(ch.isspace() for ch in text):
        return None
    try:
        parts = urlsplit(text if with_scheme else f"//{text}")
        port = parts.port
    except ValueError:  # a port that is not a number, or out of range
        return None
    found_scheme = parts.scheme.lower() if with_scheme else scheme
    if found_scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    if parts.path or parts.query or parts.fragment or "@" in parts.netloc:
        return None  # an Origin is scheme://host[:port], nothing more
    return found_scheme, parts.hostname.lower(), port or _DEFAULT_PORTS[found_scheme]


# ---------------------------------------------------------------- login rate limiting

# Any hashable works as a key (``login_key`` makes the usual one; a sign-up
# limit may key by address alone).
LoginKey = Hashable

# Key parts longer than this are cut: names are at most 32 characters, and a
# megabyte "name" must not become a megabyte of memory.
_KEY_PART_CHARS = 64


def login_key(name: str, client_ip: str) -> tuple[str, str]:
    """The limiter's key for a sign-in as ``name`` from ``client_ip``."""
    return name.lower()[:_KEY_PART_CHARS], client_ip[:_KEY_PART_CHARS]


class LoginLimiter:
    """At most ``attempts`` allowed sign-ins per key in any ``window_s``
    seconds (a moving window: each attempt counts for ``window_s`` after it).

    Refused attempts are not counted, so a key holds at most ``attempts``
    timestamps; at most ``max_keys`` keys are kept, the least recently used
    evicted first (in O(1): an OrderedDict in order of use). Evicting forgets
    someone's count, the lesser harm: refusing new keys instead would let a
    flood of names lock everyone out. Thread-safe: the app calls it from its
    worker threads."""

    def __init__(self, attempts: int = 10, window_s: float = 300.0, max_keys: int = 10_000,
                 clock: Callable[[], float] = time.monotonic) -> None:
        if attempts < 1 or window_s <= 0 or max_keys < 1:
            raise ValueError("attempts and max_keys must be at least 1, window_s above 0")
        self.attempts = attempts
        self.window_s = window_s
        self.max_keys = max_keys
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: OrderedDict[LoginKey, deque[float]] = OrderedDict()

    def allow(self, key: LoginKey) -> bool:
        """Count an attempt for ``key`` and say whether it may go ahead."""
        now = self._clock()
        with self._lock:
            times = self._seen.get(key)
            if times is None:
                self._make_room()
                times = self._seen[key] = deque()
            self._seen.move_to_end(key)
            self._forget_old(times, now)
            if len(times) >= self.attempts:
                return False
            times.append(now)
            return True

    def retry_after_s(self, key: LoginKey) -> float:
        """Seconds until ``key`` may try again (0 if it may now): the value
        of a 429's Retry-After."""
        now = self._clock()
        with self._lock:
            times = self._seen.get(key)
            if times is None:
                return 0.0
            self._forget_old(times, now)
            if len(times) < self.attempts:
                return 0.0
            return max(0.0, times[0] + self.window_s - now)

    def reset(self, key: LoginKey) -> None:
        """Forget ``key``'s attempts (after a successful sign-in)."""
        with self._lock:
            self._seen.pop(key, None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._seen)

    def _forget_old(self, times: deque[float], now: float) -> None:
        while times and times[0] <= now - self.window_s:
            times.popleft()

    def _make_room(self) -> None:
        """Below ``max_keys`` keys before a new one goes in (lock held):
        the least recently used go, which are also the likeliest to have
        no attempt left in the window."""
        while len(self._seen) >= self.max_keys:
            self._seen.popitem(last=False)
