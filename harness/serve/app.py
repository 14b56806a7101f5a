"""The submission server's app: FastAPI with server-rendered pages
(harness.serve.pages) and a JSON API under ``/api/v1``
(harness.serve.routes; OpenAPI at ``/api/v1/openapi.json``), doing the
same things: sign in, submit, watch the validation, read the ladder. What
the routes share, and who may see what, is harness.serve.site.

Bodies are capped as they stream in (``BodyCap``): an upload at the
ladder's ``upload_bytes``, anything else at 64 KiB; a declared length over
the cap is refused before a byte is read. Uploads go to a file, never
into memory whole, and are unpacked by harness.serve.archive into a fresh
folder; the version's row is written only once its files are in place.
Every response carries a strict Content-Security-Policy (no inline
script), ``nosniff`` and ``X-Frame-Options: DENY``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import HTMLResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from harness.proc.sandbox import Sandbox
from harness.serve import pages, routes
from harness.serve.db import Refused
from harness.serve.ladder import Ladder
from harness.serve.site import API, BodyTooLarge, Site
from harness.web.page import esc

log = logging.getLogger(__name__)
SMALL_BODY = 64 << 10
FORM_OVERHEAD = 64 << 10  # a multipart form's fields and boundaries around the file
UPLOAD_PATH = re.compile(r"^(/api/v1/bots/[^/]+/versions|/submit)$")
CSP = ("default-src 'self'; img-src 'self' data:; style-src 'self'; script-src 'self'; "
       "object-src 'none'; frame-ancestors 'none'; form-action 'self'; base-uri 'none'")


# ---- the middleware ---------------------------------------------------------
ASGIApp = Callable[[MutableMapping[str, Any], Callable[[], Awaitable[Any]],
                    Callable[[MutableMapping[str, Any]], Awaitable[None]]], Awaitable[None]]


class BodyCap:
    """Refuses a body over its cap: by its declared length before reading,
    else as the bytes arrive (the endpoint's read raises BodyTooLarge)."""

    def __init__(self, app: ASGIApp, upload_cap: int) -> None:
        self.app, self.upload_cap = app, upload_cap

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        upload = UPLOAD_PATH.match(scope["path"]) is not None
        # The refusal states the ladder's upload_bytes for an upload; a form
        # may carry its fields and boundaries on top of that, unstated.
        stated = self.upload_cap if upload else SMALL_BODY
        cap = stated + FORM_OVERHEAD if scope["path"] == "/submit" else stated
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > cap):
            response = _error_response(scope["path"], 413, _too_large(stated))
            await response(scope, receive, send)
            return
        seen = 0

        async def capped_receive() -> Any:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > cap:
                    raise BodyTooLarge(stated)
            return message

        await self.app(scope, capped_receive, send)


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"content-security-policy" for name, _ in headers):
                    headers.append((b"content-security-policy", CSP.encode()))  # a page's own wins
                headers += [(b"x-content-type-options", b"nosniff"),
                            (b"x-frame-options", b"DENY"),
                            (b"referrer-policy", b"same-origin")]
                own = any(name.lower() == b"cache-control" for name, _ in headers)
                if not own and not scope["path"].startswith("/static/"):  # a reply's own wins
                    headers.append((b"cache-control", b"no-store"))
                message["headers"] = headers
            await send(message)

        await self.app(scope, receive, with_headers)


def _too_large(cap: int) -> str:
    return f"the request is over this ladder's cap of {cap:,} bytes"


def _error_response(path: str, status: int, message: str) -> Response:
    if path.startswith(API):
        return JSONResponse({"error": message}, status_code=status)
    return HTMLResponse(f"<!doctype html><title>{status}</title><p>{esc(message)}</p>",
                        status_code=status)


def create_app(ladder: Ladder, db_path: Path, sandbox: Sandbox, secure_cookies: bool = False,
               validate: bool = True, play: bool = True) -> FastAPI:
    """The app; ``validate=False`` starts no validation workers and
    ``play=False`` no ladder (tests of the pages alone)."""
    site = Site(ladder, db_path, sandbox, secure_cookies)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        left = site.storage.clear_incoming()
        if left:
            log.warning("removed %d upload(s) cut off by the last stop", left)
        if validate:
            site.validator.start()
        if play:
            site.ladder_run.start()
        yield
        site.sprt.stop()
        # validators halt first: one waiting on the arena leaves its validation
        # queued for the next start, rather than run it here as the arena stops
        site.validator.halt()
        site.ladder_run.stop()
        site.validator.stop()

    app = FastAPI(title=f"league serve: {ladder.name}", version="1", lifespan=lifespan,
                  openapi_url=f"{API}/openapi.json", docs_url=f"{API}/docs", redoc_url=None)
    app.state.site = site
    _errors(app)
    routes.register(app, site)
    pages.register(app, site)
    app.mount("/static", StaticFiles(packages=[("harness.serve", "static")]), name="static")
    app.add_middleware(BodyCap, upload_cap=ladder.quotas.upload_bytes)
    app.add_middleware(SecurityHeaders)
    return app


def _errors(app: FastAPI) -> None:
    @app.exception_handler(Refused)
    async def refused(request: Request, exc: Refused) -> Response:
        return _error_response(request.url.path, exc.status, str(exc))

    @app.exception_handler(BodyTooLarge)
    async def too_large(request: Request, exc: BodyTooLarge) -> Response:
        return _error_response(request.url.path, 413, _too_large(exc.cap))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> Response:
        problems = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}"
                             for e in exc.errors()[:5])
        return _error_response(request.url.path, 400, f"bad request: {problems}")

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return _error_response(request.url.path, exc.status_code, str(exc.detail))

    @app.exception_handler(Exception)
    async def crashed(request: Request, exc: Exception) -> Response:
        log.exception("%s %s failed", request.method, request.url.path)
        return _error_response(request.url.path, 500, "the server failed on this request; "
                                                      "the organiser's log says why")
