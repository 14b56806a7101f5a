"""The ``league`` commands that make a bot: ``new`` (a starter kit, from
harness.kits) and ``build`` (a manifest's build step, harness.proc.build).

``league new`` writes a folder that is a whole bot: manifest, source, a
README, and the game pages generated from this harness's engines (docs/ is
not part of an installed harness, so the kit carries them). A kit with a
build step is built at once, in the sandbox, to prove it builds here; a
missing toolchain leaves the kit written and says what to install.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Optional

import typer

from harness.cli.common import (
    EXIT_BOT,
    BotsOption,
    SandboxOption,
    _bot_dirs,
    _sandbox,
    app,
    build_bot,
    fail,
)
from harness.kits import KITS, render
from harness.proc.catalog import (
    NAME_PATTERN,
    Catalog,
    ManifestError,
    UnknownBotError,
    resolve,
)
from harness.proc.safe_text import printable
from harness.suggest import did_you_mean

# Languages a kit could be written for but is not: said in --help and on refusal.
NOT_OFFERED = "go (no Go toolchain here to build and test a kit with)"
LANGS = ", ".join(KITS)


@app.command(short_help="Write a starter bot: manifest, source, README, game pages.")
def new(
    name: str = typer.Argument(..., help="The bot's name: 1 to 64 letters, digits, '_', '.' or "
                                         "'-', the first a letter or digit."),
    lang: str = typer.Option("python", "--lang", "-l", metavar="LANG",
                             help=f"The kit's language: {LANGS}. Not offered: {NOT_OFFERED}."),
    directory: Optional[Path] = typer.Option(None, "--dir", metavar="DIR",
                                             help="Where to write it (default: ./NAME); must "
                                                  "not exist, or be empty."),
    no_build: bool = typer.Option(False, "--no-build",
                                  help="Do not run the kit's build step (C, Rust) now."),
    bots_dir: Optional[list[Path]] = BotsOption,
    sandbox_mode: str = SandboxOption,
) -> None:
    """Write a starter bot in NAME/ (or --dir) that plays every game legally:
    a manifest (bot.toml), the bot, its build step where it has one (built
    now, in the sandbox), a README (build, check, play) and every game's page
    in docs/. Prints the commands to run next."""
    if not NAME_PATTERN.fullmatch(name):
        fail(f"{ascii(name)} is not a bot name: 1 to 64 letters, digits, '_', '.' or '-', the "
             "first a letter or digit")
    if lang not in KITS:
        fail(f"no starter kit for --lang {ascii(lang)}{did_you_mean(lang, KITS)}; kits: {LANGS} "
             f"(not offered: {NOT_OFFERED})")
    _refuse_taken(name, bots_dir)
    folder = directory or Path(name)
    _refuse_used(folder)
    has_build = "build" in tomllib.loads(render(lang, name, "", "")["bot.toml"])
    sandbox = _sandbox(sandbox_mode) if has_build and not no_build else None
    written = _write_kit(folder, lang, name, has_build)
    typer.echo(f"wrote {folder}/ ({KITS[lang].language} kit for bot {name!r}): "
               f"{', '.join(written)}")
    if sandbox is not None:
        _first_build(folder, sandbox)
    manifest = folder / "bot.toml"
    typer.echo("\nnext:")
    if has_build and no_build:
        typer.echo(f"  league build {manifest}")
    typer.echo(f"  league check {manifest}" + ("    # builds it first" if has_build else ""))
    typer.echo(f"  league play limit {manifest} random heuristic -v")
    typer.echo(f"  then make it play well: {KITS[lang].edit}; {folder}/README.md says more")


def _refuse_taken(name: str, bots_dir: Optional[list[Path]]) -> None:
    """A name is one entrant's: one that a manifest on the bot path claims
    would make both bots unusable (harness.proc.catalog)."""
    claims = Catalog(_bot_dirs(bots_dir)).claims.get(name)
    if claims:
        fail(f"bot name {name!r} is taken by {claims[0]}; a name is one entrant's: choose "
             "another")


def _refuse_used(folder: Path) -> None:
    """A kit goes only where it overwrites nothing."""
    if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
        fail(f"{folder} exists and is not a folder; give another NAME or --dir")
    if folder.is_dir() and any(folder.iterdir()):
        fail(f"{folder} exists and is not empty: a starter kit overwrites nothing; give another "
             "NAME or --dir, or remove it")


def _write_kit(folder: Path, lang: str, name: str, has_build: bool) -> list[str]:
    """Writes the kit and the game pages; returns what it wrote, briefly."""
    from games.docs import expected_files

    build_line = "league build bot.toml                          # compile it\n" \
        if has_build else ""
    check_note = "builds it, then " if has_build else ""
    files = render(lang, name, build_line, check_note)
    try:
        for relative, text in files.items():
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        # docs/games/GAME.md and docs/schemas/GAME.json; not the index, whose
        # links lead into the repository
        docs = {path: text for path, text in expected_files().items()
                if path.name != "README.md"}
        for relative_doc, text in docs.items():
            path = folder / relative_doc
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write the kit into {folder}: {exc}")
    pages = sum(1 for p in docs if p.suffix == ".md")
    return [*files, f"docs/ ({pages} game pages and their schemas)"]


def _first_build(folder: Path, sandbox: Any) -> None:
    """Builds the fresh kit; a toolchain that is not installed is a warning
    (the kit is written and says what it needs), a failed build an error."""
    from harness.proc.build import BuildError, toolchain_for
    from harness.proc.catalog import load_manifest

    spec = load_manifest(folder / "bot.toml")
    try:
        toolchain_for(spec.build[0])  # found on this machine at all?
    except BuildError as exc:
        typer.secho(f"warning: not built: {exc}. The kit is written; install it, then "
                    f"`league build {folder / 'bot.toml'}`", fg=typer.colors.YELLOW, err=True)
        return
    build_bot(spec, sandbox)


@app.command(short_help="Run a bot's build step (its manifest's `build`), in the sandbox.")
def build(
    bot: str = typer.Argument(..., help="Bot name, or the path of its manifest."),
    # harness.proc.build.BUILD_TIMEOUT_S, not imported: it would load the sandbox for --help
    timeout_s: float = typer.Option(300.0, "--timeout", min=1, metavar="S",
                                    help="Kill the build after this many seconds."),
    bots_dir: Optional[list[Path]] = BotsOption,
    sandbox_mode: str = SandboxOption,
) -> None:
    """Run a bot's build step, the manifest's `build` (an argv, in the bot's
    folder): in the sandbox, with no network and only the bot's folder
    writable. Then check that its files are all there and print its version.
    `league check` builds first too; `play`, `run` and `sprt` never build.
    Exits 3 if the build fails."""
    try:
        spec = resolve(bot, _bot_dirs(bots_dir))
    except (OSError, UnknownBotError, ManifestError) as exc:
        fail(str(exc))
    if not spec.build:
        typer.echo(f"bot {printable(spec.name, False)!r} has no build step (no 'build' in "
                   f"{spec.manifest}): nothing to build")
        return
    build_bot(spec, _sandbox(sandbox_mode), timeout_s)
    try:
        version = spec.version_hash()
    except (OSError, ManifestError) as exc:
        fail(f"the build ran, but the bot is not whole: {exc}", EXIT_BOT)
    typer.echo(f"{printable(spec.name, False)}: version {version}, "
               f"{len(spec.file_paths())} files")
