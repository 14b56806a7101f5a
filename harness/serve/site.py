"""What every route shares (``Site``): the ladder, the stores, the
validator, the ladder's scheduler; who is asking (``Caller``) and what
they may see; the request models of the API.

Who may do what (``may_see_private``): everyone, signed in or not, reads
names, owners, descriptions, versions, their states and which validation
steps passed. A bot's files, each step's details and its stderr are for
its owner and the organiser. Only the owner submits under a name, edits
its description or retires its versions (the organiser may retire).
Secrets (deal keys, token digests, password hashes, the session key) live
in the ``.secret`` file and no route reads them out.

Requests are authenticated by an API token (``Authorization: Bearer``),
or by the session cookie that signing in sets (HttpOnly, SameSite=Lax,
Secure when the request came over HTTPS). A request that changes state on
the strength of the cookie must carry the session's CSRF token (a form's
hidden ``csrf`` field, or ``X-CSRF-Token``) and, when it has one, an
Origin of this site; a token-authenticated one needs neither (no browser
sends a bearer token by itself).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections.abc import Callable
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fastapi import Request
from fastapi.responses import HTMLResponse, Response
from jinja2 import Environment, PackageLoader, select_autoescape
from pydantic import BaseModel, Field

from harness.proc.safe_text import printable
from harness.proc.sandbox import Sandbox
from harness.serve import auth
from harness.serve import ladder_views as views
from harness.serve.archive import (
    ArchiveError,
    UnpackLimits,
    from_source,
    load_uploaded_manifest,
    unpack,
)
from harness.serve.db import (
    SESSION_TTL_S,
    Account,
    BotEntry,
    Refused,
    ServerStore,
    Version,
    entrant_key,
)
from harness.serve.ladder import Ladder
from harness.serve.ladder_run import LadderRun
from harness.serve.names import name_problem
from harness.serve.page_cache import PageCache, SeatStamps
from harness.serve.sprt_jobs import SprtJobs
from harness.serve.storage import Storage
from harness.serve.validation import Validator
from harness.web.replay_html import script_json

log = logging.getLogger(__name__)
API = "/api/v1"
COOKIE = "league_session"
DESCRIPTION_CHARS = 500
LANGUAGES = ("python", "javascript", "c", "rust")
ARCHIVE_TYPES = {"application/zip", "application/x-zip-compressed", "application/gzip",
                 "application/x-gzip", "application/x-tar", "application/x-gtar",
                 "application/octet-stream"}


class BodyTooLarge(Exception):
    def __init__(self, cap: int) -> None:
        super().__init__(cap)
        self.cap = cap


@dataclass(frozen=True)
class BotView:
    """A bot's page as data (shared between readers: not to be changed)."""

    entry: BotEntry
    private: bool  # with its owner's private parts
    stamp: Any  # what ``data`` is valid for (harness.serve.page_cache)
    data: dict[str, Any]


@dataclass
class Caller:
    account: Account | None
    session: str | None = None  # the session id when the cookie authenticated
    by_token: bool = False


class SessionIn(BaseModel):
    name: str = Field(max_length=64)
    password: str = Field(max_length=256)


class TokenIn(BaseModel):
    label: str = Field(default="", max_length=64)


class SprtIn(BaseModel):
    game: str = Field(max_length=32)
    players: int | None = Field(default=None, ge=2, le=7)
    baseline: str = Field(max_length=80, description="A: BOT@vN, or a boss")
    candidate: str = Field(max_length=80, description="B: BOT@vN, or a boss")


class DescriptionIn(BaseModel):
    description: str = Field(max_length=DESCRIPTION_CHARS)


class Site:
    """What every route shares: the ladder, the stores and the validator."""

    def __init__(self, ladder: Ladder, db_path: Path, sandbox: Sandbox,
                 secure_cookies: bool = False) -> None:
        self.ladder = ladder
        self.db_path = db_path
        self.store = ServerStore(db_path)
        self.storage = Storage(Path(f"{db_path}.bots"))
        self.ladder_run = LadderRun(ladder, self.store, db_path, self.storage, sandbox)
        # validations run where the matches run (the arena), else on this server
        self.validator = Validator(self.store, self.storage, ladder, sandbox,
                                   place=self.ladder_run.validation_arena)
        self.sprt = SprtJobs(ladder, db_path)
        self.key = self.store.server_key("session")
        self.sessions = auth.SessionCodec(self.key)
        self.logins = auth.LoginLimiter()
        self.secure_cookies = secure_cookies
        self.started = time.time()
        self.keeping = threading.Lock()  # accept(): keep the files, then the row
        self.pages = PageCache()  # the busiest pages' data, between changes
        self.seat_stamps = SeatStamps(db_path)
        self.templates = Environment(loader=PackageLoader("harness.serve", "templates"),
                                     autoescape=select_autoescape(default=True))
        self.templates.filters["shown"] = printable
        self.templates.filters["when"] = _when
        self.templates.filters["pool"] = pool_label

    # -- who is asking -------------------------------------------------------
    def caller(self, request: Request) -> Caller:
        header = request.headers.get("authorization")
        if header is not None:
            scheme, _, token = header.strip().partition(" ")
            account = self.store.token_account(token.strip()) if scheme.lower() == "bearer" \
                else None
            if account is None:
                raise Refused("the API token is not valid (unknown, revoked or malformed)", 401)
            return Caller(account, by_token=True)
        cookie = request.cookies.get(COOKIE)
        session = self.sessions.load(cookie, max_age_s=SESSION_TTL_S) if cookie else None
        account = self.store.session_account(session) if session else None
        return Caller(account, session if account else None)

    def require(self, request: Request, csrf: str | None = None) -> Caller:
        """The signed-in caller of a request that changes state."""
        caller = self.caller(request)
        if caller.account is None:
            raise Refused("sign in first (a session, or an API token in "
                          "'Authorization: Bearer ...')", 401)
        if not caller.by_token:
            presented = csrf or request.headers.get("x-csrf-token")
            if not auth.csrf_ok(self.key, caller.session or "", presented):
                raise Refused("missing or wrong CSRF token: reload the page and try again", 403)
            if not auth.same_origin(request.headers.get("origin"), request.headers.get("host"),
                                    request.url.scheme):
                raise Refused("the request came from another site (its Origin header)", 403)
        return caller

    def csrf(self, caller: Caller) -> str:
        return auth.csrf_token(self.key, caller.session) if caller.session else ""

    # -- accounts and sessions ----------------------------------------------
    def new_account(self, name: str, password: str, request: Request) -> Account:
        problem = name_problem(name, "account") or auth.password_problem(password, name)
        if problem:
            raise Refused(problem)
        limiter_key = ("signup", _client(request))
        if not self.logins.allow(limiter_key):
            raise Refused(f"too many sign-ups from here (the most is {self.logins.attempts} in "
                          f"{self.logins.window_s:g} s); try again in "
                          f"{self.logins.retry_after_s(limiter_key):.0f} s", 429)
        account = self.store.add_account(name)
        self.store.set_password(account, password)
        return account

    def sign_in(self, name: str, password: str, request: Request) -> str:
        """A new session id (a new one at every sign-in: no fixation)."""
        key = auth.login_key(name, _client(request))
        if not self.logins.allow(key):
            raise Refused(f"too many sign-in attempts for this account from here (the most is "
                          f"{self.logins.attempts} in {self.logins.window_s:g} s); try again in "
                          f"{self.logins.retry_after_s(key):.0f} s", 429)
        account = self.store.check_password(name, password)
        if account is None:
            raise Refused("wrong account name or password", 401)
        self.logins.reset(key)
        return self.store.new_session(account)

    def set_cookie(self, request: Request, response: Response, session: str) -> None:
        response.set_cookie(COOKIE, self.sessions.dump(session), max_age=SESSION_TTL_S,
                            path="/", httponly=True, samesite="lax",
                            secure=self.secure_cookies or request.url.scheme == "https")

    # -- submissions ---------------------------------------------------------
    async def receive(self, request: Request) -> tuple[Path, int]:
        """Stream the body to a file under incoming/; its path and size."""
        path = self.storage.scratch(".upload")
        size = 0
        with path.open("xb") as out:
            try:
                async for chunk in request.stream():
                    size += len(chunk)
                    if size > self.ladder.quotas.upload_bytes:
                        raise BodyTooLarge(self.ladder.quotas.upload_bytes)
                    out.write(chunk)
            except BaseException:
                out.close()
                path.unlink(missing_ok=True)
                raise
        return path, size

    def accept(self, account: Account, name: str, upload: Path, size: int,
               language: str | None, filename: str | None) -> Version:
        """Unpack, check the manifest, store the files, add the version. A
        refusal leaves nothing behind: not the upload, not its unpacked
        folder, and not its stored files when no version came of them (else
        uploads under a taken name or over a quota would fill the disk)."""
        folder = self.storage.scratch(".d")
        try:
            problem = name_problem(name)
            if problem:
                raise Refused(problem)
            existing = self.store.bot(name)
            if existing is not None and existing.owner_id != account.id:
                raise Refused(f"bot name {name!r} belongs to another account", 403)
            if language is None:
                limits = UnpackLimits(max_archive_bytes=self.ladder.quotas.upload_bytes)
                root = unpack(upload, folder, limits)
            else:
                root = from_source(upload, filename or "", language, name, folder)
            spec = load_uploaded_manifest(root, name)
            # One upload at a time from keeping the files to writing the row,
            # so that a refused one's files can be removed without racing an
            # upload of the same files that is about to use them.
            with self.keeping:
                digest = self.storage.keep(root)
                try:
                    version = self.store.add_version(
                        account, name, digest, "archive" if language is None else language,
                        size, spec.description[:DESCRIPTION_CHARS] or None, self.ladder.quotas)
                except Refused:
                    if not self.store.sha256_used(digest):
                        self.storage.discard(self.storage.source(digest).parent)
                    raise
        except ArchiveError as exc:
            raise Refused(str(exc)) from exc
        finally:
            upload.unlink(missing_ok=True)
            self.storage.discard(folder)
        self.validator.notify()
        return version

    def may_see_private(self, caller: Caller, owner_id: int) -> bool:
        account = caller.account
        return account is not None and (account.organiser or account.id == owner_id)

    # -- views as data -------------------------------------------------------
    def version_data(self, version: Version, private: bool) -> dict[str, Any]:
        data: dict[str, Any] = {
            "number": version.number, "sha256": version.sha256, "state": version.state,
            "created": version.created, "validated_at": version.validated_at,
            "source": version.source, "size": version.size, "attempts": version.attempts,
            "steps": [{"step": s["step"], "ok": s["ok"]} for s in version.steps]}
        if private:
            data["steps"] = [dict(s) for s in version.steps]
            data["stderr"] = version.stderr
        return data

    def bot_data(self, name: str, caller: Caller) -> dict[str, Any]:
        entry = self.store.bot(name)
        if entry is None:
            raise Refused(f"no bot named {name!r} on this ladder", 404)
        return self._bot_data(entry, self.may_see_private(caller, entry.owner_id))

    def _bot_data(self, entry: BotEntry, private: bool) -> dict[str, Any]:
        name = entry.name
        versions = self.store.versions(name)
        playing = next((v.number for v in versions if v.state == "valid"), None)
        return {"name": entry.name, "owner": entry.owner, "description": entry.description,
                "created": entry.created, "playing": playing,
                "versions": [self.version_data(v, private) for v in versions]}

    def organiser_only(self, request: Request, csrf: str | None = None,
                       change: bool = False) -> Caller:
        caller = self.require(request, csrf) if change else self.caller(request)
        if caller.account is None or not caller.account.organiser:
            raise Refused("this is the organiser's", 403)
        return caller

    def owns_entrant(self, caller: Caller) -> Any:
        """A test of whether ``caller`` may see an entrant's private data."""
        def private(entrant: str) -> bool:
            entry = self.store.bot(entrant.partition("@")[0])
            return entry is not None and self.may_see_private(caller, entry.owner_id)
        return private

    def leaderboard_data(self) -> dict[str, Any]:
        owners = {b["name"]: b["owner"] for b in self.store.bots()}
        pools = []
        for board in self.ladder_run.boards.values():
            rows = []
            for row in board.rows:
                bot, _, version = row["entrant"].partition("@v")
                rows.append({**row, "bot": bot, "version": int(version) if version else None,
                             "owner": owners.get(bot, "")})
            _bars(rows)
            pools.append({"pool": board.pool, "game": board.game, "players": board.players,
                          "refitted_at": board.at or None, "rows": rows})
        return {"pools": pools, "rating": "the project's Bradley-Terry fit with 95% "
                "intervals (docs/ratings.md), refitted as results arrive; 'moved' is the change "
                "since the refit before"}

    # -- the cached views (harness.serve.page_cache) ---------------------------
    def board_stamp(self) -> tuple[int, int]:
        """What the tables and the bots' list show changes only with these."""
        return self.store.catalog_version, self.ladder_run.refits

    def leaderboard(self) -> dict[str, Any]:
        return self.pages.get(("leaderboard",), self.board_stamp(), self.leaderboard_data)

    def leaderboard_json(self) -> tuple[bytes, str]:
        """The leaderboard as JSON (FastAPI's compact form) and its ETag."""
        def build() -> tuple[bytes, str]:
            body = json.dumps(self.leaderboard(), ensure_ascii=False, allow_nan=False,
                              separators=(",", ":")).encode()
            return body, f'"{hashlib.sha256(body).hexdigest()[:32]}"'
        return self.pages.get(("leaderboard.json",), self.board_stamp(), build)

    def bots(self) -> list[dict[str, Any]]:
        return self.pages.get(("bots",), self.store.catalog_version, self.store.bots)

    def bot_view(self, name: str, caller: Caller) -> BotView:
        """A bot's page as data: its rows, its standing on the ladder, its
        matches and faults; its owner's private parts when ``caller`` may
        see them. Refused (404) for a bot that does not exist."""
        def entry_and_numbers() -> tuple[BotEntry, list[int]]:
            entry = self.store.bot(name)  # unknown names are refused, never kept
            if entry is None:
                raise Refused(f"no bot named {name!r} on this ladder", 404)
            return entry, [v.number for v in self.store.versions(name)]

        entry, numbers = self.pages.get(("bot", name), self.store.catalog_version,
                                        entry_and_numbers)
        private = self.may_see_private(caller, entry.owner_id)
        stamp = (*self.board_stamp(),
                 self.seat_stamps.newest([entrant_key(name, n) for n in numbers]))
        data = self.pages.get(("bot-view", name, private), stamp,
                              lambda: self._bot_view_data(entry, private))
        return BotView(entry, private, stamp, data)

    def _bot_view_data(self, entry: BotEntry, private: bool) -> dict[str, Any]:
        data = self._bot_data(entry, private)
        numbers = [v["number"] for v in data["versions"]]
        with closing(views.results(self.db_path)) as store:
            ladder = views.bot_ladder(self.ladder_run, store, entry.name, numbers, private,
                                      self._head_to_head)
        paused = next((v for v in data["versions"] if v["state"] == "paused"), None)
        return {"bot": data, "standing": ladder, "standing_json": script_json(ladder),
                "paused": paused and self.store.paused_reason(entry.name, paused["number"])}

    def _head_to_head(self, store: Any, pool: str, first: str, second: str) -> dict[str, int]:
        """A rival's counts, as the scheduler keeps them in memory (a query
        grows with the pool's matches: 150 ms a rival at 60,000); from the
        file before the scheduler has counted them."""
        kept = self.ladder_run.head_to_head(pool, first, second)
        return kept if kept is not None else views.head_to_head(store, pool, first, second)

    def render_shared(self, key: tuple[Any, ...], stamp: Any, template: str,
                      values: Callable[[], dict[str, Any]]) -> HTMLResponse:
        """A page as a reader who is not signed in sees it (no account's
        header, no CSRF token): the same for all of them, so kept."""
        def build() -> str:
            return self.templates.get_template(template).render(
                ladder=self.ladder, me=None, csrf="", **values())
        return HTMLResponse(self.pages.get(("html", template, *key), stamp, build))

    def render(self, request: Request, template: str, status: int = 200,
               **values: Any) -> HTMLResponse:
        caller = values.pop("caller", None) or self.caller(request)
        page = self.templates.get_template(template).render(
            ladder=self.ladder, me=caller.account, csrf=self.csrf(caller), **values)
        return HTMLResponse(page, status_code=status)


BAR_WIDTH = 160


def _bars(rows: list[dict[str, Any]]) -> None:
    """Each row's interval as a bar on one scale per table (SVG coordinates)."""
    if not rows:
        return
    low = min(r["low"] for r in rows)
    high = max(r["high"] for r in rows)
    span = max(high - low, 1.0)

    def x(elo: float) -> float:
        return round(4 + (elo - low) / span * (BAR_WIDTH - 8), 1)

    for row in rows:
        row["bar"] = {"x": x(row["low"]), "w": max(1.0, round(x(row["high"]) - x(row["low"]), 1)),
                      "c": x(row["elo"])}


def _client(request: Request) -> str:
    return request.client.host if request.client else "?"


def pool_label(pool: str) -> str:
    """``ladder:target:3p`` as people say it: ``target, 3 players``."""
    parts = pool.split(":")
    if len(parts) == 3 and parts[0] == "ladder" and parts[2].endswith("p"):
        return f"{parts[1]}, {parts[2][:-1]} players"
    return pool


def _when(stamp: float | None) -> str:
    if stamp is None:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(stamp))
