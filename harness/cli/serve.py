"""`league serve` (the submission site), `league users` (its accounts) and
`league submit` (a bot author's upload, through the site's JSON API)."""

from __future__ import annotations

import fcntl
import json
import os
import tempfile
import time
import tomllib
import zipfile
from dataclasses import replace
from pathlib import Path
from typing import Any, Optional

import typer

from harness.cli.common import EXIT_BOT, _sandbox, app, fail
from harness.proc.safe_text import printable

users_app = typer.Typer(no_args_is_help=True, help="The accounts of a `league serve` site.")
app.add_typer(users_app, name="users")

LadderDbOption = typer.Option(Path("ladder.db"), "--db", metavar="FILE",
                              help="The site's SQLite file (its .secret and .bots beside it).")
TOKEN_FILE = Path("~/.config/league/token")
EXTENSIONS = {".py": "python", ".js": "javascript", ".mjs": "javascript", ".c": "c", ".rs": "rust"}
SKIPPED = {".git", "__pycache__", ".venv", "node_modules", "target", ".mypy_cache"}


@app.command(short_help="Serve a ladder site where people submit bots (pages and a JSON API).")
def serve(
    ladder_file: Path = typer.Argument(..., metavar="LADDER.toml", help="The ladder file."),
    db: Path = LadderDbOption,
    host: str = typer.Option("127.0.0.1", "--host", help="Address to listen on; put a TLS "
                             "proxy in front before you open it beyond this machine."),
    port: int = typer.Option(8000, "--port", min=0, max=65535),
    behind_proxy: bool = typer.Option(False, "--behind-proxy", help="Trust X-Forwarded-Proto "
                                      "and -For from 127.0.0.1 (a TLS proxy on this machine): "
                                      "cookies are then Secure."),
    secure_cookies: bool = typer.Option(False, "--secure-cookies",
                                        help="Mark the session cookie Secure in any case."),
    address: Optional[str] = typer.Option(None, "--address", metavar="HOST:PORT",
                                          help="Play the ladder's matches on this Ray cluster "
                                               "(the ladder file's [play] address)."),
) -> None:
    """Serve LADDER.toml: accounts, uploads, validation in the sandbox, the JSON
    API under /api/v1 (OpenAPI at /api/v1/openapi.json). One server per --db."""
    import uvicorn

    from harness.serve.app import create_app
    from harness.serve.ladder import LadderFileError, load_ladder

    try:
        ladder = load_ladder(ladder_file)
    except LadderFileError as exc:
        fail(str(exc))
    if address:
        ladder = replace(ladder, play=replace(ladder.play, address=address, engine="ray"))
    lock = _hold_lock(db)
    sandbox = _sandbox(ladder.sandbox)
    app_ = create_app(ladder, db, sandbox, secure_cookies=secure_cookies)
    typer.echo(f"serving ladder {ladder.name!r} from {db} on http://{host}:{port} "
               f"({ladder.validation_workers} validation worker(s), sandbox {sandbox.mode}); "
               f"accounts: league users add NAME --db {db}", err=True)
    try:
        uvicorn.run(app_, host=host, port=port, log_level="info", proxy_headers=behind_proxy,
                    forwarded_allow_ips="127.0.0.1" if behind_proxy else None,
                    timeout_keep_alive=10, server_header=False)
    finally:
        lock.close()


def _hold_lock(db: Path) -> Any:
    """One server per site: a second would run the same validations."""
    lock = open(f"{db}.lock", "a")  # noqa: SIM115 - held for the server's life
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        fail(f"another `league serve` is serving {db} (it holds {db}.lock)")
    return lock


@app.command(short_help="Copy a results or site database, consistently, while it is in use.")
def backup(
    dest: Path = typer.Argument(..., help="The copy to make (a new file; its .secret and, for "
                                "a site, its .bots folder beside it)."),
    db: Path = LadderDbOption,
) -> None:
    """A consistent copy of --db (a `league serve` site's or a `league run`
    results file) while servers and runs write to it: SQLite's online backup
    of the file and its .secret, then the uploaded versions it names."""
    from harness.serve.backup import backup as copy

    try:
        summary = copy(db, dest)
    except (OSError, RuntimeError) as exc:
        fail(str(exc))
    typer.echo(f"copied {', '.join(map(str, summary.databases))} ({summary.bytes:,} bytes)"
               + (f" and {summary.versions} uploaded version folder(s)" if summary.versions
                  else ""))


# ---- accounts -------------------------------------------------------------------
def _server_store(db: Path) -> Any:
    from harness.serve.db import ServerStore

    return ServerStore(db)


@users_app.command("add")
def users_add(
    name: str = typer.Argument(..., help="The account name."),
    db: Path = LadderDbOption,
    organiser: bool = typer.Option(False, "--organiser",
                                   help="May see every bot's files and stderr, and retire any "
                                        "version."),
    password_stdin: bool = typer.Option(False, "--password-stdin",
                                        help="Also set a password for the web pages, read "
                                             "from standard input."),
) -> None:
    """Make an account; prints its API token, once."""
    from harness.serve import auth
    from harness.serve.db import Refused
    from harness.serve.names import name_problem

    # the organiser at the shell may use a reserved word (its own "organiser");
    # only the site's sign-up keeps them from strangers
    problem = name_problem(name, "account", reserved_ok=True)
    password = typer.get_text_stream("stdin").readline().rstrip("\n") if password_stdin else ""
    problem = problem or (auth.password_problem(password, name) if password_stdin else None)
    if problem:
        fail(problem)
    store = _server_store(db)
    try:
        account = store.add_account(name, organiser)
    except Refused as exc:
        fail(str(exc))
    if password_stdin:
        store.set_password(account, password)
    _, token = store.add_token(account, "league users add")
    typer.echo(f"account {name} made{' (organiser)' if organiser else ''}; its API token, "
               "shown this once (keep it in LEAGUE_TOKEN or ~/.config/league/token):", err=True)
    typer.echo(token)


@users_app.command("token")
def users_token(name: str = typer.Argument(...), db: Path = LadderDbOption,
                label: str = typer.Option("league users token", "--label")) -> None:
    """Make another API token for an account; prints it, once."""
    store = _server_store(db)
    account = store.account(name)
    if account is None:
        fail(f"no account {name!r} in {db}")
    typer.echo(store.add_token(account, label)[1])


@users_app.command("password")
def users_password(name: str = typer.Argument(...), db: Path = LadderDbOption) -> None:
    """Set an account's web password, read from standard input."""
    from harness.serve import auth

    store = _server_store(db)
    account = store.account(name)
    if account is None:
        fail(f"no account {name!r} in {db}")
    password = typer.get_text_stream("stdin").readline().rstrip("\n")
    problem = auth.password_problem(password, name)
    if problem:
        fail(problem)
    store.set_password(account, password)
    typer.echo(f"password of {name} set", err=True)


@users_app.command("list")
def users_list(db: Path = LadderDbOption) -> None:
    """The accounts, their bots and their live tokens (ids only)."""
    store = _server_store(db)
    for row in store.accounts():
        account = store.account(row["name"])
        live = [t["id"] for t in store.tokens(account) if not t["revoked"]] if account else []
        flags = " organiser" if row["organiser"] else ""
        flags += " disabled" if row["disabled"] else ""
        typer.echo(f"{row['name']:<32} {row['bots']} bot(s){flags}; tokens: "
                   f"{', '.join(live) or 'none'}")


@users_app.command("revoke")
def users_revoke(what: str = typer.Argument(..., metavar="NAME|TOKEN-ID",
                                            help="An account (all its tokens and sessions) "
                                                 "or one token's id."),
                 db: Path = LadderDbOption) -> None:
    """Revoke a token, or every token and session of an account."""
    store = _server_store(db)
    account = store.account(what)
    if account is not None:
        typer.echo(f"revoked {store.revoke_all(account)} token(s) of {what} and signed it out")
    elif store.revoke_token(what):
        typer.echo(f"revoked token {what}")
    else:
        fail(f"no account and no live token {what!r} in {db}")


# ---- submitting -----------------------------------------------------------------
@app.command(short_help="Upload a bot (a folder with bot.toml, or one source file) to a site.")
def submit(
    path: Path = typer.Argument(..., help="The bot's folder (with bot.toml), or one source "
                                "file (.py, .js, .c, .rs)."),
    server: Optional[str] = typer.Option(None, "--server", envvar="LEAGUE_SERVER",
                                         help="The site, like http://127.0.0.1:8000 "
                                              "(or LEAGUE_SERVER)."),
    name: Optional[str] = typer.Option(None, "--name", help="The bot's name (a single file; "
                                       "default: the file's stem). A folder's is its bot.toml's."),
    language: Optional[str] = typer.Option(None, "--language",
                                           help="A single file's language (default: by its "
                                                "extension)."),
    wait: bool = typer.Option(True, "--wait/--no-wait",
                              help="Wait for the validation and print its verdict."),
    timeout_s: float = typer.Option(900, "--timeout", help="Seconds to wait for the verdict."),
) -> None:
    """Upload a new version through the site's API. The token comes from
    LEAGUE_TOKEN or ~/.config/league/token, never from the command line (it
    would show in `ps` and the shell's history). Exits 3 if validation fails."""
    import httpx

    if not server:
        fail("say which site: --server URL (or LEAGUE_SERVER)")
    token = _token()
    base = server.rstrip("/")
    with tempfile.TemporaryDirectory() as scratch:
        body, content_type, bot, params = _upload_of(path, name, language, Path(scratch))
        headers = {"authorization": f"Bearer {token}", "content-type": content_type}
        try:
            with body.open("rb") as stream:
                reply = httpx.post(f"{base}/api/v1/bots/{bot}/versions", content=stream,
                                   headers=headers, params=params, timeout=120)
        except httpx.HTTPError as exc:
            fail(f"cannot reach {base}: {exc}")
    data = _json(reply)
    if reply.status_code != 201:
        fail(f"{base} refused the upload ({reply.status_code}): "
             f"{printable(str(data.get('error', reply.text[:500])))}")
    typer.echo(f"uploaded {bot} v{data['number']} (sha256 {data['sha256'][:12]}): "
               f"{base}{data['url']}")
    if wait:
        _wait_for_verdict(base, token, bot, int(data["number"]), timeout_s)


def _token() -> str:
    token = os.environ.get("LEAGUE_TOKEN", "").strip()
    if token:
        return token
    path = TOKEN_FILE.expanduser()
    try:
        return path.read_text().strip()
    except OSError:
        fail(f"no API token: set LEAGUE_TOKEN, or put it in {TOKEN_FILE} (the organiser's "
             "`league users add` prints one; so does the site's account page)")


def _upload_of(path: Path, name: str | None, language: str | None, scratch: Path
               ) -> tuple[Path, str, str, dict[str, str]]:
    """(the body's file, its content type, the bot's name, query parameters)."""
    if path.is_dir():
        manifest = path / "bot.toml"
        try:
            bot = tomllib.loads(manifest.read_text()).get("name")
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            fail(f"{manifest}: {exc}")
        if not isinstance(bot, str):
            fail(f"{manifest}: no name")
        archive = scratch / "bot.zip"
        _zip_folder(path, archive)
        return archive, "application/zip", bot, {}
    if not path.is_file():
        fail(f"no file or folder {path}")
    language = language or EXTENSIONS.get(path.suffix)
    if language is None:
        fail(f"say the language of {path.name}: --language "
             f"{'|'.join(sorted(set(EXTENSIONS.values())))}")
    return path, "text/plain", name or path.stem, {"language": language, "filename": path.name}


def _zip_folder(folder: Path, archive: Path) -> None:
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as out:
        for file in sorted(folder.rglob("*")):
            relative = file.relative_to(folder)
            if any(part in SKIPPED for part in relative.parts) or file.is_symlink() \
                    or not file.is_file():
                continue
            out.write(file, relative.as_posix())


def _json(reply: Any) -> dict[str, Any]:
    try:
        data = reply.json()
    except (ValueError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def _wait_for_verdict(base: str, token: str, bot: str, number: int, timeout_s: float) -> None:
    import httpx

    deadline = time.monotonic() + timeout_s
    headers = {"authorization": f"Bearer {token}"}
    while True:
        try:
            reply = httpx.get(f"{base}/api/v1/bots/{bot}/versions/{number}", headers=headers,
                              timeout=30)
        except httpx.HTTPError as exc:
            fail(f"cannot reach {base}: {exc}")
        data = _json(reply)
        if reply.status_code != 200 or "state" not in data:
            fail(f"{base} answered {reply.status_code} while we waited for the verdict: "
                 f"{printable(str(data.get('error', reply.text[:300])))}")
        if data["state"] not in ("queued", "validating"):
            break
        if time.monotonic() > deadline:
            fail(f"no verdict after {timeout_s:g} s; see {base}/bots/{bot}/versions/{number}")
        time.sleep(1)
    for step in data.get("steps", []):
        mark = typer.style("ok  ", fg=typer.colors.GREEN) if step.get("ok") else \
            typer.style("FAIL", fg=typer.colors.RED)
        typer.echo(f"{mark} {printable(str(step.get('step')), False)}: "
                   f"{printable(str(step.get('detail', '')), False)}")
    if data.get("stderr"):
        typer.echo(printable(str(data["stderr"])[-3000:]), err=True)
    typer.echo(f"{bot} v{number}: {data.get('state')}")
    if data.get("state") != "valid":
        raise typer.Exit(EXIT_BOT)

