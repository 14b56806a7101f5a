"""Bot manifests: how the harness finds and starts bots.

A manifest is a TOML file (``bots/*.toml``, or any directory on the bot path)::

    name = "my-bot"                      # unique; how leagues and the CLI name it
    command = ["./my-bot", "--fast"]     # argv; "{python}" = the harness's Python
    games = ["limit", "tateyoko"]        # or "*" for every game
    cwd = "."                            # relative to the manifest; default "."
    files = ["my-bot", "lib/*.py"]       # globs (from cwd) hashed as the bot's
                                         # version; default: every file in cwd
    description = "..."                  # optional
    [env]                                # optional extra environment
    MY_BOT_DEPTH = "3"

The bot path is ``bots/`` of this repository, then every directory listed in
``LEAGUE_BOT_PATH`` (``:``-separated) or given with ``--bots``. A bot can
also be named by the path of its manifest file.
"""

from __future__ import annotations

import compileall
import contextlib
import hashlib
import io
import json
import os
import shutil
import sys
import tempfile
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from games import GAMES

REPO_ROOT = Path(__file__).resolve().parent.parent
BUILTIN_BOT_DIR = REPO_ROOT / "bots"


class ManifestError(ValueError):
    """A bot manifest that cannot be used; the message names file and field."""


class UnknownBotError(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


@dataclass(frozen=True)
class BotSpec:
    name: str
    command: tuple[str, ...]
    cwd: Path
    games: tuple[str, ...] | None  # None = every game
    manifest: Path
    files: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    description: str = ""

    def plays(self, slug: str) -> bool:
        return self.games is None or slug in self.games

    def argv(self) -> list[str]:
        return [sys.executable if part == "{python}" else part for part in self.command]

    def file_paths(self) -> list[Path]:
        """The bot's files (its ``files`` globs from cwd, default all of cwd)."""
        root = self.cwd.resolve()
        paths: set[Path] = set()
        for pattern in self.files or ("**/*",):
            for path in self.cwd.glob(pattern):
                if not path.is_file() or "__pycache__" in path.parts:
                    continue
                if not _under(path.resolve(), root) or not _under(path.absolute(), root):
                    raise ManifestError(f"{self.manifest}: file {str(path)!r} lies outside the "
                                        f"bot's directory {root} (a link or '..')")
                paths.add(path)
        return sorted(paths)

    def bundle(self) -> BotBundle:
        """The bot's files read once, with the version they hash to: what a
        worker materialises and runs, so the version names what runs."""
        # What runs: the manifest's command, cwd, files and env (not its comments,
        # description or games list), then every listed file's path and bytes.
        runs = {"command": list(self.command),
                "cwd": os.path.relpath(self.cwd, self.manifest.parent.resolve()),
                "files": list(self.files), "env": dict(sorted(self.env.items()))}
        digest = hashlib.sha256(json.dumps(runs, sort_keys=True).encode())
        files = []
        for path in self.file_paths():
            relative = str(path.relative_to(self.cwd))
            data = path.read_bytes()
            digest.update(relative.encode())
            digest.update(data)
            files.append((relative, path.stat().st_mode & 0o111 != 0, data))
        return BotBundle(digest.hexdigest()[:16], tuple(files))

    def version_hash(self) -> str:
        """A digest of the manifest and the bot's files: a changed bot is a new entry."""
        return self.bundle().version


@dataclass(frozen=True)
class BotBundle:
    """One bot version's files: (path relative to the bot's cwd, executable, bytes)."""

    version: str
    files: tuple[tuple[str, bool, bytes], ...]


def default_cache_dir() -> Path:
    explicit = os.environ.get("LEAGUE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "card-league" / "bots"


class BotCache:
    """Materialised bot versions, content-addressed: ``<root>/<name>-<version>/``
    holds exactly the files the version hashes, read-only, with Python files
    compiled. The sandbox mounts one such directory as the bot's only files;
    a worker on any node builds it from the bundle it was sent."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root else default_cache_dir()

    def path(self, name: str, bundle: BotBundle) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
        return self.root / f"{safe}-{bundle.version}"

    def materialise(self, name: str, bundle: BotBundle) -> Path:
        target = self.path(name, bundle)
        if (target / COMPLETE_MARK).exists():
            return target
        self.root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=self.root))
        try:
            _write_bundle(staging, bundle)
            try:
                os.rename(staging, target)
            except OSError:  # another worker got there first, or a stale partial copy
                if not (target / COMPLETE_MARK).exists():
                    shutil.rmtree(target, ignore_errors=True)
                    os.rename(staging, target)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        return target


COMPLETE_MARK = ".card-league-complete"


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _write_bundle(directory: Path, bundle: BotBundle) -> None:
    for relative, executable, data in bundle.files:
        path = directory / relative
        if Path(relative).is_absolute() or ".." in Path(relative).parts:
            raise ManifestError(f"bot file {relative!r} lies outside the bot's directory")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        path.chmod(0o555 if executable else 0o444)
    if any(relative.endswith(".py") for relative, _, _ in bundle.files):
        with contextlib.redirect_stdout(io.StringIO()):
            compileall.compile_dir(directory, ddir="/bot", quiet=2, workers=1)
    (directory / COMPLETE_MARK).write_text(bundle.version)
    directory.chmod(0o755)


def _field(data: dict[str, Any], key: str, kind: type, path: Path, default: Any = ...) -> Any:
    if key not in data:
        if default is ...:
            raise ManifestError(f"{path}: missing field '{key}'")
        return default
    value = data[key]
    if not isinstance(value, kind):
        raise ManifestError(f"{path}: field '{key}' must be {kind.__name__}, got {value!r}")
    return value


MANIFEST_KEYS = {"name", "command", "games", "cwd", "files", "env", "description"}


def load_manifest(path: Path) -> BotSpec:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: {exc}") from exc
    unknown = sorted(set(data) - MANIFEST_KEYS)
    if unknown:
        raise ManifestError(f"{path}: unknown key(s) {', '.join(unknown)}; a manifest may hold "
                            f"{', '.join(sorted(MANIFEST_KEYS))}")
    name = _field(data, "name", str, path)
    command = _field(data, "command", list, path)
    if not command or not all(isinstance(part, str) for part in command):
        raise ManifestError(f"{path}: field 'command' must be a non-empty list of strings")
    games_value = data.get("games", "*")
    if games_value == "*":
        games = None
    elif isinstance(games_value, list) and all(isinstance(g, str) for g in games_value):
        unknown = [g for g in games_value if g not in GAMES]
        if unknown:
            raise ManifestError(f"{path}: field 'games' names unknown games {unknown}")
        games = tuple(games_value)
    else:
        raise ManifestError(f"{path}: field 'games' must be \"*\" or a list of game slugs")
    cwd = (path.parent / _field(data, "cwd", str, path, ".")).resolve()
    files = _field(data, "files", list, path, [])
    env = _field(data, "env", dict, path, {})
    return BotSpec(
        name=name, command=tuple(command), cwd=cwd, games=games, manifest=path.resolve(),
        files=tuple(files), env={str(k): str(v) for k, v in env.items()},
        description=str(data.get("description", "")),
    )


def bot_dirs(extra: list[Path] | None = None) -> list[Path]:
    dirs = [BUILTIN_BOT_DIR]
    dirs += [Path(p) for p in os.environ.get("LEAGUE_BOT_PATH", "").split(os.pathsep) if p]
    dirs += list(extra or [])
    return dirs


def discover_all(extra: list[Path] | None = None) -> tuple[dict[str, BotSpec], list[str]]:
    """Every bot on the bot path by name, and the problems of the manifests
    that cannot be used (a broken manifest must not hide the other bots).
    A name used twice is a problem, and the first manifest keeps it."""
    found: dict[str, BotSpec] = {}
    problems: list[str] = []
    for directory in bot_dirs(extra):
        for path in sorted(Path(directory).glob("*.toml")) + sorted(Path(directory).glob("*/bot.toml")):
            try:
                spec = load_manifest(path)
            except ManifestError as exc:
                problems.append(str(exc))
                continue
            if spec.name in found and found[spec.name].manifest != spec.manifest:
                problems.append(f"bot name {spec.name!r} is used by "
                                f"{found[spec.name].manifest} and {path}; the first is kept")
                continue
            found[spec.name] = spec
    return found, problems


def discover(extra: list[Path] | None = None) -> dict[str, BotSpec]:
    return discover_all(extra)[0]


def resolve(name: str, extra: list[Path] | None = None) -> BotSpec:
    """A bot by name, or by the path of its manifest."""
    if name.endswith(".toml") and Path(name).is_file():
        return load_manifest(Path(name))
    catalog, problems = discover_all(extra)
    if name not in catalog:
        hint = f"; unusable manifests: {'; '.join(problems)}" if problems else ""
        searched = ", ".join(str(d) for d in bot_dirs(extra))
        raise UnknownBotError(
            f"unknown bot {name!r}; known bots: {', '.join(sorted(catalog))} (searched {searched}; "
            f"add a folder with --bots DIR or LEAGUE_BOT_PATH){hint}")
    return catalog[name]
