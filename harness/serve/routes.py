"""The JSON API, ``/api/v1``: everything the pages do, for scripts and for
``league submit``. Errors are ``{"error": message}`` with the status that
says what kind (400 bad input, 401 not signed in, 403 not yours or no
CSRF, 404 none such, 409 a name taken, 413 too large, 429 a quota)."""

from __future__ import annotations

import time
from contextlib import closing
from typing import Any

from fastapi import FastAPI, Query, Request, Response
from fastapi.responses import JSONResponse, StreamingResponse
from starlette.concurrency import run_in_threadpool

from harness.serve import auth
from harness.serve import ladder_views as views
from harness.serve.db import Refused
from harness.serve.site import (
    API,
    ARCHIVE_TYPES,
    COOKIE,
    LANGUAGES,
    DescriptionIn,
    SessionIn,
    Site,
    SprtIn,
    TokenIn,
)

UPLOAD_BODY = {
    "required": True,
    "description": "A zip, tar or gzip'd tar of a bot folder whose bot.toml names this bot; "
                   "or, with ?language=, one source file.",
    "content": {kind: {"schema": {"type": "string", "format": "binary"}}
                for kind in ("application/zip", "application/gzip", "application/x-tar",
                             "text/plain")},
}


def register(app: FastAPI, site: Site) -> None:
    _accounts(app, site)
    _bots(app, site)
    _ladder(app, site)

    @app.get(f"{API}/health", tags=["server"])
    def health() -> dict[str, Any]:
        counts = site.store.queue_counts()
        return {"ok": True, "ladder": site.ladder.name, "validations_queued": counts["queued"],
                "validations_running": counts["running"], "validations_done": counts["done"],
                "workers": site.validator.workers, "uptime_s": round(time.time() - site.started, 1),
                "play": site.ladder_run.status(), "page_cache": site.pages.counts()}

    @app.get(f"{API}/leaderboard", tags=["ladder"])
    def leaderboard(request: Request) -> Response:
        """Each pool's table at its last refit. With the ETag of a copy held
        (If-None-Match), 304 while it is still the current one."""
        body, etag = site.leaderboard_json()
        headers = {"etag": etag, "cache-control": "no-cache"}  # kept, but asked again each time
        if _not_modified(etag, request.headers.get("if-none-match", "")):
            return Response(status_code=304, headers=headers)
        return Response(body, media_type="application/json", headers=headers)

    @app.get(f"{API}/ladder", tags=["server"])
    def ladder() -> dict[str, Any]:
        quotas = site.ladder.quotas
        return {"name": site.ladder.name, "description": site.ladder.description,
                "games": {slug: list(counts) for slug, counts in site.ladder.games.items()},
                "signup": site.ladder.signup, "languages": list(LANGUAGES),
                "quotas": {"submissions_per_day": quotas.submissions_per_day,
                           "bots_per_account": quotas.bots_per_account,
                           "upload_bytes": quotas.upload_bytes},
                "limits": site.ladder.limits.for_bot()}


def _accounts(app: FastAPI, site: Site) -> None:
    @app.get(f"{API}/me", tags=["accounts"])
    def me(request: Request) -> dict[str, Any]:
        caller = site.caller(request)
        if caller.account is None:
            raise Refused("not signed in", 401)
        return {"name": caller.account.name, "organiser": caller.account.organiser}

    @app.post(f"{API}/accounts", status_code=201, tags=["accounts"])
    def sign_up(body: SessionIn, request: Request) -> dict[str, Any]:
        if site.ladder.signup != "open":
            raise Refused("this ladder's organiser makes the accounts (signup = \"invite\")", 403)
        account = site.new_account(body.name, body.password, request)
        _, token = site.store.add_token(account, "sign-up")
        return {"name": account.name, "token": token}

    @app.post(f"{API}/session", tags=["accounts"])
    def sign_in(body: SessionIn, request: Request, response: Response) -> dict[str, Any]:
        session = site.sign_in(body.name, body.password, request)
        site.set_cookie(request, response, session)
        return {"name": body.name, "csrf": auth.csrf_token(site.key, session)}

    @app.delete(f"{API}/session", tags=["accounts"])
    def sign_out(request: Request, response: Response) -> dict[str, Any]:
        caller = site.require(request)
        if caller.session:
            site.store.end_session(caller.session)
        response.delete_cookie(COOKIE, path="/")
        return {"signed_out": True}

    @app.get(f"{API}/tokens", tags=["accounts"])
    def tokens(request: Request) -> dict[str, Any]:
        caller = site.caller(request)
        if caller.account is None:
            raise Refused("not signed in", 401)
        return {"tokens": site.store.tokens(caller.account)}

    @app.post(f"{API}/tokens", status_code=201, tags=["accounts"])
    def new_token(body: TokenIn, request: Request) -> dict[str, Any]:
        caller = site.require(request)
        assert caller.account is not None
        token_id, token = site.store.add_token(caller.account, body.label)
        return {"id": token_id, "token": token, "label": body.label}

    @app.delete(f"{API}/tokens/{{token_id}}", tags=["accounts"])
    def revoke(token_id: str, request: Request) -> dict[str, Any]:
        caller = site.require(request)
        assert caller.account is not None
        if not site.store.revoke_token(token_id, caller.account):
            raise Refused(f"you have no live token {token_id!r}", 404)
        return {"revoked": token_id}


def _bots(app: FastAPI, site: Site) -> None:
    @app.get(f"{API}/bots", tags=["bots"])
    def bots() -> dict[str, Any]:
        return {"bots": site.bots()}

    @app.get(f"{API}/bots/{{name}}", tags=["bots"])
    def bot(name: str, request: Request) -> dict[str, Any]:
        return site.bot_data(name, site.caller(request))

    @app.post(f"{API}/bots/{{name}}/versions", status_code=201, tags=["bots"],
              openapi_extra={"requestBody": UPLOAD_BODY})
    async def submit(name: str, request: Request,
                     language: str | None = Query(None, description="one source file's "
                                                  "language: " + ", ".join(LANGUAGES)),
                     filename: str | None = Query(None, description="its file name")
                     ) -> JSONResponse:
        caller = await run_in_threadpool(site.require, request)
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if language is None and kind not in ARCHIVE_TYPES:
            raise Refused(f"send an archive (application/zip, application/gzip or "
                          f"application/x-tar), or one source file with ?language= "
                          f"({', '.join(LANGUAGES)}); got content type {kind!r}", 415)
        upload, size = await site.receive(request)
        assert caller.account is not None
        version = await run_in_threadpool(site.accept, caller.account, name, upload, size,
                                          language, filename)
        return JSONResponse({"name": name, "number": version.number, "sha256": version.sha256,
                             "state": version.state,
                             "url": f"/bots/{name}/versions/{version.number}"}, status_code=201)

    @app.get(f"{API}/bots/{{name}}/versions/{{number}}", tags=["bots"])
    def version(name: str, number: int, request: Request) -> dict[str, Any]:
        entry, found = _version_or_404(site, name, number)
        private = site.may_see_private(site.caller(request), entry.owner_id)
        return {"name": name, **site.version_data(found, private)}

    @app.get(f"{API}/bots/{{name}}/versions/{{number}}/files", tags=["bots"],
             response_class=StreamingResponse)
    def files(name: str, number: int, request: Request) -> StreamingResponse:
        entry, found = _version_or_404(site, name, number)
        if not site.may_see_private(site.caller(request), entry.owner_id):
            raise Refused("only the bot's owner and the organiser may download its files", 403)
        return StreamingResponse(
            site.storage.zip_stream(found.sha256), media_type="application/zip",
            headers={"content-disposition": f'attachment; filename="{name}-v{number}.zip"'})

    @app.patch(f"{API}/bots/{{name}}", tags=["bots"])
    def describe(name: str, body: DescriptionIn, request: Request) -> dict[str, Any]:
        caller = site.require(request)
        entry = _owned(site, name, caller, organiser_may=False)
        site.store.set_description(entry.name, body.description)
        return {"name": name, "description": body.description}

    @app.delete(f"{API}/bots/{{name}}/versions/{{number}}", tags=["bots"])
    def retire(name: str, number: int, request: Request) -> dict[str, Any]:
        caller = site.require(request)
        _owned(site, name, caller, organiser_may=True)
        if not site.store.retire(name, number):
            raise Refused(f"{name} has no version {number} that is not retired already", 404)
        return {"name": name, "number": number, "state": "retired"}


def _not_modified(etag: str, if_none_match: str) -> bool:
    """Whether If-None-Match names ``etag`` (weak ones as strong: a GET may),
    or ``*``."""
    tags = {tag.strip().removeprefix("W/") for tag in if_none_match[:2048].split(",")}
    return etag in tags or "*" in tags


def _version_or_404(site: Site, name: str, number: int) -> Any:
    entry = site.store.bot(name)
    found = site.store.version(name, number) if entry else None
    if entry is None or found is None:
        raise Refused(f"no version {number} of a bot named {name!r}", 404)
    return entry, found


def _owned(site: Site, name: str, caller: Any, organiser_may: bool) -> Any:
    entry = site.store.bot(name)
    if entry is None:
        raise Refused(f"no bot named {name!r} on this ladder", 404)
    account = caller.account
    if account.id != entry.owner_id and not (organiser_may and account.organiser):
        raise Refused(f"{name} belongs to another account", 403)
    return entry


def _ladder(app: FastAPI, site: Site) -> None:
    @app.get(f"{API}/bots/{{name}}/ladder", tags=["ladder"])
    def bot_ladder(name: str, request: Request) -> dict[str, Any]:
        standing: dict[str, Any] = site.bot_view(name, site.caller(request)).data["standing"]
        return standing

    @app.get(f"{API}/matches/{{match_id}}", tags=["ladder"])
    def match(match_id: str, request: Request) -> dict[str, Any]:
        with closing(views.results(site.db_path)) as store:
            try:
                return views.match_data(store, match_id,
                                        site.owns_entrant(site.caller(request)))
            except KeyError as exc:
                raise Refused(str(exc.args[0]), 404) from exc

    @app.get(f"{API}/organiser", tags=["ladder"])
    def organiser(request: Request) -> dict[str, Any]:
        site.organiser_only(request)
        with closing(views.results(site.db_path)) as store:
            return {**views.organiser(site.ladder_run, store), "sprt": site.sprt.views(),
                    "validated_recently": list(site.validator.recent)}  # where each ran

    @app.post(f"{API}/sprt", status_code=201, tags=["ladder"])
    def start_sprt(body: SprtIn, request: Request) -> dict[str, Any]:
        """Start `league sprt GAME A B` on this site's data (organiser)."""
        site.organiser_only(request, change=True)
        return site.sprt.start(body.game, body.players, body.baseline, body.candidate).view()

    @app.get(f"{API}/sprt", tags=["ladder"])
    def sprts(request: Request) -> dict[str, Any]:
        site.organiser_only(request)
        return {"sprt": site.sprt.views()}
