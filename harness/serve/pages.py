"""The server-rendered pages: the same actions as the API, as forms. Every
form that changes state carries the session's CSRF token in a hidden
``csrf`` field; the site checks it (Site.require) before anything else."""

from __future__ import annotations

import secrets
from contextlib import closing
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from markupsafe import Markup
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import UploadFile

from harness.serve import ladder_views as views
from harness.serve.db import Refused
from harness.serve.site import COOKIE, LANGUAGES, Site
from harness.serve.storage import CHUNK
from harness.web.replay_html import replay_page


def register(app: FastAPI, site: Site) -> None:
    _reading(app, site)
    _signing(app, site)
    _submitting(app, site)
    _owning(app, site)
    _ladder_pages(app, site)


def _reading(app: FastAPI, site: Site) -> None:
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    def index(request: Request) -> HTMLResponse:
        caller = site.caller(request)
        if caller.account is None:  # the same page for every such reader: kept
            return site.render_shared((), site.board_stamp(), "index.html", lambda: {
                "bots": site.bots(), "leaderboard": site.leaderboard()})
        return site.render(request, "index.html", caller=caller, bots=site.bots(),
                           leaderboard=site.leaderboard())

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> Response:
        # The pages name a data: icon, but a browser showing an API reply
        # (JSON, no <head>) asks for /favicon.ico: "no content", not a 404
        # that the browser's console reports as an error.
        return Response(status_code=204)

    @app.get("/bots/{name}", response_class=HTMLResponse, include_in_schema=False)
    def bot(name: str, request: Request) -> HTMLResponse:
        caller = site.caller(request)
        view = site.bot_view(name, caller)

        def values() -> dict[str, Any]:
            data = view.data
            return {"bot": data["bot"], "standing": data["standing"],
                    "standing_json": Markup(data["standing_json"]), "private": view.private,
                    "mine": caller.account is not None and caller.account.id == view.entry.owner_id,
                    "paused": data["paused"]}

        if caller.account is None:  # the same page for every such reader: kept
            return site.render_shared((name,), view.stamp, "bot.html", values)
        return site.render(request, "bot.html", caller=caller, **values())

    @app.get("/bots/{name}/versions/{number}", response_class=HTMLResponse,
             include_in_schema=False)
    def version(name: str, number: int, request: Request) -> HTMLResponse:
        caller = site.caller(request)
        entry = site.store.bot(name)
        found = site.store.version(name, number) if entry else None
        if entry is None or found is None:
            raise Refused(f"no version {number} of a bot named {name!r}", 404)
        private = site.may_see_private(caller, entry.owner_id)
        return site.render(request, "version.html", caller=caller, bot=entry,
                           version=site.version_data(found, private), private=private)


def _signing(app: FastAPI, site: Site) -> None:
    @app.get("/login", response_class=HTMLResponse, include_in_schema=False)
    def login_page(request: Request, next: str = "/") -> HTMLResponse:
        return site.render(request, "login.html", next=_local(next))

    @app.post("/login", include_in_schema=False)
    async def login(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=4)
        name, password = _field(form, "name"), _field(form, "password")
        target = _local(_field(form, "next") or "/")
        try:
            session = await run_in_threadpool(site.sign_in, name, password, request)
        except Refused as exc:
            return site.render(request, "login.html", exc.status, error=str(exc), next=target,
                               name=name)
        response = RedirectResponse(target, status_code=303)
        site.set_cookie(request, response, session)
        return response

    @app.post("/logout", include_in_schema=False)
    async def logout(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=2)
        caller = site.require(request, _field(form, "csrf"))
        if caller.session:
            site.store.end_session(caller.session)
        response = RedirectResponse("/", status_code=303)
        response.delete_cookie(COOKIE, path="/")
        return response

    @app.get("/signup", response_class=HTMLResponse, include_in_schema=False)
    def signup_page(request: Request) -> HTMLResponse:
        return site.render(request, "signup.html")

    @app.post("/signup", include_in_schema=False)
    async def signup(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=3)
        name, password = _field(form, "name"), _field(form, "password")
        try:
            if site.ladder.signup != "open":
                raise Refused("this ladder's organiser makes the accounts", 403)
            await run_in_threadpool(site.new_account, name, password, request)
            session = await run_in_threadpool(site.sign_in, name, password, request)
        except Refused as exc:
            return site.render(request, "signup.html", exc.status, error=str(exc), name=name)
        response = RedirectResponse("/account", status_code=303)
        site.set_cookie(request, response, session)
        return response


def _submitting(app: FastAPI, site: Site) -> None:
    @app.get("/submit", response_class=HTMLResponse, include_in_schema=False)
    def submit_page(request: Request) -> Response:
        caller = site.caller(request)
        if caller.account is None:
            return _to_login("/submit")
        return site.render(request, "submit.html", caller=caller, languages=LANGUAGES)

    @app.post("/submit", include_in_schema=False)
    async def submit(request: Request) -> Response:
        form = await request.form(max_files=1, max_fields=4, max_part_size=8 << 10)
        name = _field(form, "name")
        language = _field(form, "language") or "archive"
        try:
            caller = await run_in_threadpool(site.require, request, _field(form, "csrf"))
            upload = form.get("file")
            if not isinstance(upload, UploadFile) or not upload.filename:
                raise Refused("choose a file to upload")
            path, size = await _save(site, upload)
            assert caller.account is not None
            version = await run_in_threadpool(
                site.accept, caller.account, name, path, size,
                None if language == "archive" else language, upload.filename)
        except Refused as exc:
            return site.render(request, "submit.html", exc.status, error=str(exc), name=name,
                               languages=LANGUAGES)
        return RedirectResponse(f"/bots/{name}/versions/{version.number}", status_code=303)


async def _save(site: Site, upload: UploadFile) -> tuple[Any, int]:
    """The form's file (spooled by the form parser) copied under incoming/."""
    path = site.storage.scratch(".upload")
    size = 0
    with path.open("xb") as out:
        while chunk := await upload.read(CHUNK):
            size += len(chunk)
            if size > site.ladder.quotas.upload_bytes:
                out.close()
                path.unlink(missing_ok=True)
                raise Refused(f"the file is over this ladder's cap of "
                              f"{site.ladder.quotas.upload_bytes:,} bytes", 413)
            out.write(chunk)
    return path, size


def _owning(app: FastAPI, site: Site) -> None:
    @app.get("/account", response_class=HTMLResponse, include_in_schema=False)
    def account(request: Request) -> Response:
        caller = site.caller(request)
        if caller.account is None:
            return _to_login("/account")
        return _account_page(site, request, caller)

    @app.post("/account/tokens", include_in_schema=False)
    async def new_token(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=3)
        caller = site.require(request, _field(form, "csrf"))
        assert caller.account is not None
        _, token = site.store.add_token(caller.account, _field(form, "label")[:64])
        return _account_page(site, request, caller, new_token=token)

    @app.post("/account/tokens/{token_id}/revoke", include_in_schema=False)
    async def revoke(token_id: str, request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=2)
        caller = site.require(request, _field(form, "csrf"))
        assert caller.account is not None
        site.store.revoke_token(token_id, caller.account)
        return RedirectResponse("/account", status_code=303)

    @app.post("/bots/{name}/description", include_in_schema=False)
    async def describe(name: str, request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=3)
        caller = site.require(request, _field(form, "csrf"))
        entry = site.store.bot(name)
        if entry is None or caller.account is None or caller.account.id != entry.owner_id:
            raise Refused(f"{name} is not your bot", 403)
        site.store.set_description(name, _field(form, "description")[:500])
        return RedirectResponse(f"/bots/{name}", status_code=303)

    @app.post("/bots/{name}/versions/{number}/retire", include_in_schema=False)
    async def retire(name: str, number: int, request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=2)
        caller = site.require(request, _field(form, "csrf"))
        entry = site.store.bot(name)
        account = caller.account
        if entry is None or account is None or not (account.id == entry.owner_id
                                                     or account.organiser):
            raise Refused(f"{name} is not your bot", 403)
        site.store.retire(name, number)
        return RedirectResponse(f"/bots/{name}", status_code=303)


def _account_page(site: Site, request: Request, caller: Any, new_token: str = "") -> HTMLResponse:
    assert caller.account is not None
    mine = [b for b in site.store.bots() if b["owner"] == caller.account.name]
    return site.render(request, "account.html", caller=caller, tokens=site.store.tokens(
        caller.account), new_token=new_token, bots=mine)


def _to_login(then: str) -> RedirectResponse:
    return RedirectResponse(f"/login?next={then}", status_code=303)


def _field(form: Any, key: str) -> str:
    value = form.get(key)
    return value if isinstance(value, str) else ""


def _local(target: str) -> str:
    """Only a path on this site (no open redirect to another)."""
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return "/"
    return target


def _ladder_pages(app: FastAPI, site: Site) -> None:
    @app.get("/matches/{match_id}", response_class=HTMLResponse, include_in_schema=False)
    def match(match_id: str, request: Request) -> HTMLResponse:
        """The replay viewer, served: the single-file page, whose inline script
        runs by this response's nonce alone (the data is a JSON block)."""
        caller = site.caller(request)
        private = site.owns_entrant(caller)
        with closing(views.results(site.db_path)) as store:
            try:
                row, seats, replay = store.match(match_id)
            except KeyError as exc:
                raise Refused(str(exc.args[0]), 404) from exc
            stderr = store.decision_stderr(row["id"])
        shown = {seat["seat"]: private(seat["bot"]) for seat in seats}  # one look per seat
        for seat in seats:  # a fault's detail and stderr are its owner's
            if seat.get("fault_kind") and not shown[seat["seat"]]:
                seat["fault_detail"], seat["fault_stderr"] = "(shown to its owner)", ""
        nonce = secrets.token_urlsafe(16)
        page = replay_page(row, seats, replay, [s for s in stderr if shown.get(s[1], False)])
        page = page.replace("<script>\n", f'<script nonce="{nonce}">\n', 1)
        page = page.replace("<main>\n", '<main>\n<p class="muted"><a href="/">the ladder</a> · '
                            f'<a href="/api/v1/matches/{row["id"]}">this match as JSON</a></p>\n', 1)
        response = HTMLResponse(page)
        response.headers["content-security-policy"] = (
            f"default-src 'self'; script-src 'nonce-{nonce}'; style-src 'self' 'unsafe-inline'; "
            "img-src 'self' data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; "
            "form-action 'self'")
        return response

    @app.get("/organiser", response_class=HTMLResponse, include_in_schema=False)
    def organiser(request: Request) -> Response:
        caller = site.caller(request)
        if caller.account is None:
            return _to_login("/organiser")
        site.organiser_only(request)
        return _organiser_page(site, request, caller)

    @app.post("/organiser/sprt", include_in_schema=False)
    async def start_sprt(request: Request) -> Response:
        form = await request.form(max_files=0, max_fields=6)
        caller = site.organiser_only(request, _field(form, "csrf"), change=True)
        players = _field(form, "players")
        try:
            site.sprt.start(_field(form, "game"), int(players) if players.isdigit() else None,
                            _field(form, "baseline").strip(), _field(form, "candidate").strip())
        except Refused as exc:
            return _organiser_page(site, request, caller, error=str(exc), status=exc.status)
        return RedirectResponse("/organiser", status_code=303)


def _organiser_page(site: Site, request: Request, caller: Any, error: str = "",
                    status: int = 200) -> HTMLResponse:
    with closing(views.results(site.db_path)) as store:
        data = views.organiser(site.ladder_run, store)
    return site.render(request, "organiser.html", status, caller=caller, figures=data,
                       sprts=site.sprt.views(), error=error)
