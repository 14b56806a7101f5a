"""Bot manifests: how the harness finds and starts bots.

A manifest is a TOML file (``bots/*.toml``, or any directory on the bot path)::

    name = "my-bot"                      # unique; how leagues and the CLI name it
    command = ["./my-bot", "--fast"]     # argv; "{python}" = the harness's Python
    games = ["limit", "tateyoko"]        # or "*" for every game
    cwd = "."                            # relative to the manifest; default "."
    files = ["my-bot", "lib/*.py"]       # globs (from cwd) hashed as the bot's
                                         # version; default: every file in cwd
    description = "..."                  # optional
    build = ["gcc", "-O2", "-o", "my-bot", "my-bot.c"]  # optional: argv that
                                         # makes the files (`league build`)
    protocol = "json"                    # optional: "msgpack" (default) or "json"
                                         # (JSON lines), the wire encoding
    [env]                                # optional extra environment
    MY_BOT_DEPTH = "3"

The bot path is ``bots/`` of this repository, then every directory listed in
``LEAGUE_BOT_PATH`` (``:``-separated) or given with ``--bots``. A bot can
also be named by the path of its manifest file.

Manifests are written by strangers, and the harness reads their files before
any sandbox exists, so a manifest is held to its own folder:

- ``cwd`` and every file the ``files`` globs match must lie, after links are
  followed, inside the folder that holds the manifest. An absolute glob or one
  with a ``..`` part is refused outright. The harness's own manifests
  (``REPO_MANIFEST_DIRS``: ``bots/``, ``harness/bench/bots/``, ``tests/bots/``)
  are the one exception: they ship the repository's own bot and engine code
  with ``cwd = ".."``, so their folder is the repository (REPO_ROOT). Only
  whoever controls the repository can put a manifest there; the exception is
  for those exact folders, so ``bots/js_random/bot.toml`` or an entrant's
  folder anywhere is held to its own folder. Put entrants outside them.
- A bot's files are capped before a byte is read, by their apparent size
  (``st_size``, so a sparse file of 1 GiB that takes no disk counts as 1 GiB):
  at most MAX_BOT_FILES files, MAX_FILE_BYTES each, MAX_BUNDLE_BYTES in all
  (the largest built-in bot, search: 52 files, 0.6 MiB). Hashing streams; what
  a league holds in memory to ship to its workers is bounded by the caps, per
  bot.
- A name is an identity: 1 to 64 of letters, digits, ``_ . -``, starting with
  a letter or digit (NAME_PATTERN). Two manifests that claim one name are
  refused, both of them, by every command, naming both manifests: the first
  found does not win, so no entrant can take another's name (or results) by
  being found first.

Every such problem is a ManifestError naming the manifest, the bot (where its
name could be read) and the field.

A bot must run from its files alone, so what would otherwise fail only inside
the sandbox, in bwrap's words, is refused by name: a ``files`` pattern that
matches no file, and a ``command`` whose program is a relative path
(``./my-bot``) that is not one of the bot's files, or is not executable.
Checked when the manifest is read; for a manifest with a ``build`` step,
whose outputs may not exist yet, when its files are read (the message then
says to build it first).

The cache (BotCache) holds each version's files as the sandbox mounts them,
sealed: before a copy runs, every file in it (compiled ``.pyc`` files too)
is checked against the seal recorded when it was built, kept where no bot
can reach; an altered copy is rebuilt, and said so in the log.
"""

from __future__ import annotations

import compileall
import contextlib
import fcntl
import hashlib
import io
import json
import logging
import os
import re
import secrets
import shutil
import stat
import sys
import tempfile
import threading
import tomllib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from games import GAMES
from harness.proc.botproc import PROTOCOLS
from harness.suggest import did_you_mean, unknown_keys

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILTIN_BOT_DIR = REPO_ROOT / "bots"
# The repository's own manifest folders: their cwd and files may reach the
# whole repository (module docstring). An exact folder, not "anything under".
REPO_MANIFEST_DIRS = (BUILTIN_BOT_DIR, REPO_ROOT / "harness" / "bench" / "bots",
                      REPO_ROOT / "tests" / "bots")

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
# Caps on one bot's files, judged by apparent size before reading. The
# built-in bots are far below them (search: 52 files, 0.6 MiB); a bot with
# weights of tens of MiB still fits.
MAX_BOT_FILES = 2_000
MAX_FILE_BYTES = 32 << 20
MAX_BUNDLE_BYTES = 64 << 20
_CHUNK = 1 << 20

log = logging.getLogger(__name__)


class ManifestError(ValueError):
    """A bot manifest that cannot be used; the message names file, bot and
    field. ``bot`` is the name the manifest claims, where it could be read."""

    bot: str | None = None


def _manifest_error(message: str, bot: str | None) -> ManifestError:
    error = ManifestError(message)
    error.bot = bot
    return error


class UnknownBotError(KeyError):
    """No usable manifest has this name. ``unnamed`` lists the manifests that
    could not even say their name (one of them may be the bot asked for)."""

    unnamed: tuple[str, ...] = ()

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
    build: tuple[str, ...] = ()  # argv that makes the bot's files (``league build``); () = none
    protocol: str = "msgpack"  # the wire encoding, one of botproc.PROTOCOLS

    @property
    def where(self) -> str:
        """How messages name this entrant: its manifest and its bot name."""
        return f"{self.manifest} (bot {self.name!r})"

    def plays(self, slug: str) -> bool:
        return self.games is None or slug in self.games

    def argv(self) -> list[str]:
        return [sys.executable if part == "{python}" else part for part in self.command]

    def file_paths(self) -> list[Path]:
        """The bot's files (its ``files`` globs from cwd, default all of cwd),
        each inside cwd after links; at most MAX_BOT_FILES of them."""
        root = self.cwd.resolve()
        paths: set[Path] = set()
        for pattern in self.files or ("**/*",):
            matched = False
            for path in _glob(self.cwd, pattern, self.where):
                if not path.is_file() or "__pycache__" in path.parts:
                    continue
                matched = True
                if not _under(path.resolve(), root) or not _under(path.absolute(), root):
                    raise ManifestError(f"{self.where}: field 'files': {str(path)!r} lies outside "
                                        f"the bot's directory {root} (a link or '..')")
                paths.add(path)
                if len(paths) > MAX_BOT_FILES:
                    raise ManifestError(f"{self.where}: field 'files': more than {MAX_BOT_FILES:,} "
                                        "files (MAX_BOT_FILES); list the ones the bot needs")
            if not matched and self.files:
                raise ManifestError(f"{self.where}: field 'files': "
                                    f"{_no_match(pattern, self.cwd)}{self._build_hint()}")
        problem = _program_problem(self.command, self.cwd, paths.__contains__)
        if problem:
            raise ManifestError(f"{self.where}: field 'command': {problem}{self._build_hint()}")
        return sorted(paths)

    def _build_hint(self) -> str:
        """What to do when a file is missing that a build step may make."""
        return f"; run `league build {self.name}` first" if getattr(self, "build", None) else ""

    def _sized(self) -> list[tuple[Path, int]]:
        """The bot's files with their apparent sizes, refused over the caps
        before any is read (a sparse file counts at its full size)."""
        sized, total = [], 0
        for path in self.file_paths():
            size = path.stat().st_size
            if size > MAX_FILE_BYTES:
                raise ManifestError(f"{self.where}: field 'files': {self._relative(path)!r} is "
                                    f"{size:,} bytes, over the {MAX_FILE_BYTES:,} a bot file may "
                                    "have (MAX_FILE_BYTES)")
            total += size
            if total > MAX_BUNDLE_BYTES:
                raise ManifestError(f"{self.where}: field 'files': the files come to more than "
                                    f"the {MAX_BUNDLE_BYTES:,} bytes a bot may have "
                                    "(MAX_BUNDLE_BYTES)")
            sized.append((path, size))
        return sized

    def _relative(self, path: Path) -> str:
        return str(path.relative_to(self.cwd))

    def _read(self, keep: bool) -> BotBundle:
        """The version digest of the bot's files, streamed in chunks; with
        ``keep`` their bytes too (at most MAX_BUNDLE_BYTES in all)."""
        # What runs: the manifest's command, cwd, files and env (not its comments,
        # description or games list), then every listed file's path and bytes.
        runs = {"command": list(self.command),
                "cwd": os.path.relpath(self.cwd, self.manifest.parent.resolve()),
                "files": list(self.files), "env": dict(sorted(self.env.items()))}
        if self.protocol != "msgpack":  # the default leaves every msgpack bot's version as it was
            runs["protocol"] = self.protocol
        digest = hashlib.sha256(json.dumps(runs, sort_keys=True).encode())
        files = []
        left = MAX_BUNDLE_BYTES
        for path, _ in self._sized():
            relative = self._relative(path)
            digest.update(relative.encode())
            data, executable = _read_capped(path, min(MAX_FILE_BYTES, left), digest, keep,
                                            f"{self.where}: field 'files': {relative!r}")
            left -= len(data)
            files.append((relative, executable, data))
        return BotBundle(digest.hexdigest()[:16], tuple(files))

    def bundle(self) -> BotBundle:
        """The bot's files read once, with the version they hash to: what a
        worker materialises and runs, so the version names what runs."""
        return self._read(keep=True)

    def version_hash(self) -> str:
        """A digest of the manifest and the bot's files: a changed bot is a
        new entry. Streams: holds no file whole."""
        return self._read(keep=False).version


def _no_match(pattern: str, cwd: Path) -> str:
    return f"files pattern {pattern!r} matches no file in {cwd}"


def _program_problem(command: tuple[str, ...] | list[str], cwd: Path,
                     listed: Callable[[Path], bool]) -> str:
    """Why the command's program, a relative path (``./my-bot``), cannot run
    in the sandbox, which holds only the bot's files ('' if it can, or is
    not such a path). ``listed``: whether a path is one of the bot's files."""
    program = command[0]
    if "/" not in program or os.path.isabs(program) or program == "{python}":
        return ""  # found on PATH, or a system path: the sandbox's /usr
    relative = os.path.normpath(program)
    target = cwd / relative
    if relative.startswith(".."):
        return f"program {program!r} lies outside the bot's directory {cwd}"
    if not target.is_file():
        return f"program {program!r} is not a file: there is no {target}"
    if not listed(target):
        return (f"program {program!r} is not among the bot's files (field 'files'), so the "
                "sandbox, which holds only those, cannot run it; add it to 'files'")
    if not os.access(target, os.X_OK):
        return f"program {program!r} is not executable (chmod +x {target})"
    return ""


def _files_of(cwd: Path, pattern: str, where: str) -> Iterator[Path]:
    """The files a ``files`` pattern matches, lazily (compiled files left out)."""
    return (path for path in _glob(cwd, pattern, where)
            if path.is_file() and "__pycache__" not in path.parts)


def _check_matches(cwd: Path, patterns: tuple[str, ...], command: list[str], where: str,
                   bot: str | None) -> None:
    """Each ``files`` pattern matches a file, and a relative program is one of
    them: else the bot would fail only in the sandbox, in bwrap's words. Each
    glob stops at its first match: every command reads every manifest."""
    for pattern in patterns:
        if next(_files_of(cwd, pattern, where), None) is None:
            raise _manifest_error(f"{where}: field 'files': {_no_match(pattern, cwd)}", bot)

    def listed(target: Path) -> bool:
        return not patterns or any(target in _files_of(cwd, pattern, where)
                                   for pattern in patterns)
    problem = _program_problem(command, cwd, listed)
    if problem:
        raise _manifest_error(f"{where}: field 'command': {problem}", bot)


def _glob(cwd: Path, pattern: str, where: str) -> Iterator[Path]:
    try:
        yield from cwd.glob(pattern)
    except (ValueError, NotImplementedError) as exc:
        raise ManifestError(f"{where}: field 'files': pattern {pattern!r}: {exc}") from exc


def _read_capped(path: Path, limit: int, digest: Any, keep: bool,
                 where: str) -> tuple[bytes, bool]:
    """A regular file's bytes (b"" unless ``keep``) fed to ``digest``, and
    whether it is executable; refused past ``limit`` bytes, so a file that
    grows after its size was judged is not read whole either. Opened without
    blocking: a FIFO put in a file's place cannot hang the harness."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(descriptor, "rb") as handle:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise ManifestError(f"{where} is not a regular file")
        chunks, size = [], 0
        while chunk := handle.read(min(_CHUNK, limit + 1 - size)):
            size += len(chunk)
            if size > limit:
                raise ManifestError(f"{where} grew past the bot's caps while it was read")
            digest.update(chunk)
            if keep:
                chunks.append(chunk)
    return b"".join(chunks), info.st_mode & 0o111 != 0


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


# ---- the cache ------------------------------------------------------------------
SEALS = ".seals"
# Per process: a version directory's listing (inode, size, ctime, mode of every
# entry) when it last matched its seal. ctime changes with any write, chmod or
# rename and no unprivileged process can set it back, so an unchanged listing
# means unchanged files; hashing them again (5 ms for `search`) is skipped.
_VERIFIED: dict[Path, tuple[tuple[Any, ...], ...]] = {}
_VERIFIED_LOCK = threading.Lock()


class BotCache:
    """Materialised bot versions, content-addressed: ``<root>/<name>-<version>/``
    holds exactly the files the version hashes, read-only, with Python files
    compiled. The sandbox mounts one such directory as the bot's only files;
    a worker on any node builds it from the bundle it was sent.

    A copy is sealed when built: ``<root>/.seals/<dir>.json`` records every
    entry of the directory (mode, and each file's SHA-256, ``.pyc`` files
    included). Before a copy runs, :meth:`materialise` checks it against its
    seal: the first time in a process by hashing every file, later by its
    listing (see _VERIFIED). A copy that differs (a file changed, added or
    removed, a mode changed) or has no seal is rebuilt and the event logged.

    Modes: the root is 0711 (a bot running under a uid of its own may pass
    through to its own copy but list no other), ``.seals`` 0700 with files
    0600, copies 0555 with files 0444 (0555 when executable). A sandboxed bot
    sees only its own copy, read-only, at /bot. A process running as the
    harness's own user (an unsandboxed bot) could rewrite seals too: that is
    why nothing runs bots unsandboxed unless a person asks."""

    def __init__(self, root: Path | None = None) -> None:
        self.root = Path(root) if root else default_cache_dir()
        self._prepared = False

    def path(self, name: str, bundle: BotBundle) -> Path:
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
        return self.root / f"{safe}-{bundle.version}"

    def materialise(self, name: str, bundle: BotBundle) -> Path:
        """The checked copy of ``bundle``, built (again) where needed."""
        target = self.path(name, bundle)
        self._prepare()
        with self._locked(target.name):
            problem = self._problem(target)
            if problem is None:
                return target
            if target.exists() or target.is_symlink():
                log.warning("bot %s: the cached copy %s %s; rebuilding it from the bot's files",
                            name, target, problem)
                _discard(target)
            self._build(target, bundle)
        return target

    def _prepare(self) -> None:
        if self._prepared:
            return
        self.root.mkdir(parents=True, exist_ok=True)
        os.chmod(self.root, 0o711)
        seals = self.root / SEALS
        seals.mkdir(mode=0o700, exist_ok=True)
        os.chmod(seals, 0o700)
        self._prepared = True

    @contextlib.contextmanager
    def _locked(self, key: str) -> Iterator[None]:
        """One process at a time checks or builds a version on this node."""
        descriptor = os.open(self.root / SEALS / f"{key}.lock",
                             os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX)
            yield
        finally:
            os.close(descriptor)

    def _seal_path(self, target: Path) -> Path:
        return self.root / SEALS / f"{target.name}.json"

    def _problem(self, target: Path) -> str | None:
        """None if ``target`` is intact, else what is wrong with it."""
        if not target.exists() and not target.is_symlink():
            return "is missing"
        if target.is_symlink() or not target.is_dir():
            return "is not a directory"
        key = target.absolute()
        listing = _listing(target)
        with _VERIFIED_LOCK:
            if _VERIFIED.get(key) == listing:
                return None
        try:
            sealed = json.loads(self._seal_path(target).read_text())["entries"]
        except (OSError, ValueError, KeyError, TypeError):
            return "has no seal (built by an older harness, or never finished)"
        differs = _differences(sealed, _seal_of(target))
        if differs:
            return f"differs from its seal ({differs})"
        with _VERIFIED_LOCK:
            _VERIFIED[key] = listing
        return None

    def _build(self, target: Path, bundle: BotBundle) -> None:
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=self.root))
        try:
            _write_bundle(staging, bundle)
            seal = json.dumps({"version": bundle.version, "entries": _seal_of(staging)})
            _write_private(self._seal_path(target), seal)
            os.rename(staging, target)
        finally:
            if staging.exists():
                _discard(staging)
        with _VERIFIED_LOCK:
            _VERIFIED[target.absolute()] = _listing(target)


def _entries(directory: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every entry under ``directory`` (itself as ""), links not followed."""
    yield "", os.lstat(directory)
    for parent, dirs, files in os.walk(directory):
        for entry in sorted(dirs + files):
            path = os.path.join(parent, entry)
            yield os.path.relpath(path, directory), os.lstat(path)


def _listing(directory: Path) -> tuple[tuple[Any, ...], ...]:
    return tuple((relative, info.st_ino, info.st_size, info.st_ctime_ns, info.st_mode)
                 for relative, info in _entries(directory))


def _seal_of(directory: Path) -> dict[str, str]:
    """What each entry is: its type and mode, and a file's SHA-256."""
    seal = {}
    for relative, info in _entries(directory):
        mode = f"{stat.S_IMODE(info.st_mode):o}"
        if stat.S_ISREG(info.st_mode):
            with open(directory / relative, "rb") as handle:
                seal[relative] = f"file {mode} {hashlib.file_digest(handle, 'sha256').hexdigest()}"
        elif stat.S_ISDIR(info.st_mode):
            seal[relative] = f"dir {mode}"
        else:
            seal[relative] = f"other {stat.S_IFMT(info.st_mode):o}"
    return seal


def _differences(sealed: dict[str, str], found: dict[str, str], shown: int = 5) -> str:
    """Which entries changed, were added or were removed (a few of each)."""
    parts = []
    for what, names in (("changed", [n for n in found if n in sealed and found[n] != sealed[n]]),
                        ("added", [n for n in found if n not in sealed]),
                        ("removed", [n for n in sealed if n not in found])):
        if names:
            more = f" and {len(names) - shown} more" if len(names) > shown else ""
            parts.append(f"{what}: {', '.join(n or '.' for n in names[:shown])}{more}")
    return "; ".join(parts)


def _write_private(path: Path, text: str) -> None:
    """``text`` into ``path`` (mode 0600) at once: a reader sees the old or the new."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    with os.fdopen(descriptor, "w") as handle:
        handle.write(text)
    os.replace(temporary, path)


def _discard(directory: Path) -> None:
    """Remove a copy (its directories are read-only): first out of the way,
    so that no one finds it half removed."""
    if directory.is_symlink() or not directory.is_dir():
        directory.unlink(missing_ok=True)
        return
    aside = directory.with_name(f".discard-{directory.name}-{secrets.token_hex(4)}")
    os.rename(directory, aside)
    for parent, _, _ in os.walk(aside):
        os.chmod(parent, 0o700)
    shutil.rmtree(aside, ignore_errors=True)


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
    for parent, _, files in os.walk(directory):
        for name in files:  # the compiled files too
            written = os.path.join(parent, name)
            os.chmod(written, os.lstat(written).st_mode & 0o555)
    for parent in [walked[0] for walked in os.walk(directory)]:
        os.chmod(parent, 0o555)


def _field(data: dict[str, Any], key: str, kind: type, where: str, bot: str | None,
           default: Any = ...) -> Any:
    if key not in data:
        if default is ...:
            raise _manifest_error(f"{where}: missing field '{key}'", bot)
        return default
    value = data[key]
    if not isinstance(value, kind):
        raise _manifest_error(f"{where}: field '{key}' must be {kind.__name__}, got {value!r}", bot)
    return value


MANIFEST_KEYS = {"name", "command", "games", "cwd", "files", "env", "description", "build",
                 "protocol"}


def containment_root(folder: Path) -> Path:
    """The folder a manifest's cwd and files must stay in: the folder that
    holds it (resolved), or the repository for the repository's own."""
    folder = folder.resolve()
    return REPO_ROOT if folder in REPO_MANIFEST_DIRS else folder


def load_manifest(path: Path) -> BotSpec:
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: {exc}") from exc
    name = data.get("name")
    bot = name if isinstance(name, str) else None
    where = f"{path} (bot {ascii(bot)})" if bot is not None else str(path)
    unknown = sorted(set(data) - MANIFEST_KEYS)
    if unknown:
        raise _manifest_error(f"{where}: unknown key(s) {unknown_keys(unknown, MANIFEST_KEYS)}; "
                              f"a manifest may hold "
                              f"{', '.join(sorted(MANIFEST_KEYS))}", bot)
    name = _field(data, "name", str, where, bot)
    if not NAME_PATTERN.fullmatch(name):
        raise _manifest_error(f"{where}: field 'name' = {ascii(name)} is not a bot name: 1 to 64 "
                              "letters, digits, '_', '.' or '-', the first a letter or digit", bot)
    command = _field(data, "command", list, where, bot)
    if not command or not all(isinstance(part, str) for part in command):
        raise _manifest_error(f"{where}: field 'command' must be a non-empty list of strings", bot)
    games = _games(data.get("games", "*"), where, bot)
    root = containment_root(path.parent)
    cwd = _cwd(path.parent, _field(data, "cwd", str, where, bot, "."), root, where, bot)
    files = _patterns(_field(data, "files", list, where, bot, []), where, bot)
    build = _build_step(data, where, bot)
    if not build:  # a build's outputs may not exist yet: checked when the bot is used
        _check_matches(cwd, files, command, where, bot)
    env = _field(data, "env", dict, where, bot, {})
    protocol = data.get("protocol", "msgpack")
    if protocol not in PROTOCOLS:
        raise _manifest_error(f"{where}: field 'protocol' = {ascii(protocol)} is not an encoding "
                              f"the harness speaks; use one of: "
                              f"{', '.join(map(repr, PROTOCOLS))}", bot)
    return BotSpec(
        name=name, command=tuple(command), cwd=cwd, games=games, manifest=path.resolve(),
        files=files, env={str(k): str(v) for k, v in env.items()},
        description=str(data.get("description", "")), build=build, protocol=protocol,
    )


def _build_step(data: dict[str, Any], where: str, bot: str | None) -> tuple[str, ...]:
    """``build``: an argv like ``command`` (no shell), run in the bot's cwd
    by ``league build`` (harness.proc.build); not part of the version, which
    hashes what the build made, as ``files`` lists it."""
    build = data.get("build", [])
    if "build" in data and (not isinstance(build, list) or not build or
                            not all(isinstance(part, str) and part for part in build)):
        raise _manifest_error(f"{where}: field 'build' must be a non-empty list of non-empty "
                              "strings, an argv like 'command' (e.g. [\"gcc\", \"-O2\", "
                              "\"-o\", \"bot\", \"bot.c\"])", bot)
    return tuple(build)


def _games(value: Any, where: str, bot: str | None) -> tuple[str, ...] | None:
    if value == "*":
        return None
    if isinstance(value, list) and all(isinstance(g, str) for g in value):
        unknown = [g for g in value if g not in GAMES]
        if unknown:
            raise _manifest_error(f"{where}: field 'games' names unknown games "
                                  f"{unknown_keys(unknown, GAMES)}", bot)
        return tuple(value)
    raise _manifest_error(f"{where}: field 'games' must be \"*\" or a list of game slugs", bot)


def _cwd(folder: Path, value: str, root: Path, where: str, bot: str | None) -> Path:
    """The bot's working directory: inside ``root`` after links, and a folder."""
    cwd = (folder / value).resolve()
    if not _under(cwd, root):
        raise _manifest_error(f"{where}: field 'cwd' = {value!r} is {cwd}, outside the folder "
                              f"that holds the manifest ({root}); a bot's files stay in its "
                              "own folder", bot)
    if not cwd.is_dir():
        raise _manifest_error(f"{where}: field 'cwd' = {value!r}: {cwd} is not a folder", bot)
    return cwd


def _patterns(value: list[Any], where: str, bot: str | None) -> tuple[str, ...]:
    """``files`` globs: relative, without '..' (checked again, after links,
    against the files they match)."""
    for pattern in value:
        if not isinstance(pattern, str) or not pattern:
            raise _manifest_error(f"{where}: field 'files' must list glob patterns, got "
                                  f"{pattern!r}", bot)
        if os.path.isabs(pattern) or ".." in Path(pattern).parts:
            raise _manifest_error(f"{where}: field 'files': pattern {pattern!r} reaches outside "
                                  "the bot's directory (absolute, or '..'); patterns are "
                                  "relative to cwd", bot)
    return tuple(value)


_WARNED_DIRS: set[str] = set()  # LEAGUE_BOT_PATH entries warned about: once a process


def bot_dirs(extra: list[Path] | None = None) -> list[Path]:
    """The bot path: bots/, LEAGUE_BOT_PATH, then ``extra`` (``--bots``, which
    the CLI checks itself). A LEAGUE_BOT_PATH entry that is no folder is
    warned about (once a process), not silently searched in vain."""
    dirs = [BUILTIN_BOT_DIR]
    variable = os.environ.get("LEAGUE_BOT_PATH", "")
    for entry in variable.split(os.pathsep):
        if not entry:
            continue
        if not os.path.isdir(entry) and entry not in _WARNED_DIRS:
            _WARNED_DIRS.add(entry)
            what = "is not a folder" if os.path.exists(entry) else "does not exist"
            tilde = (" (a '~' in quotes is not expanded: write $HOME)"
                     if entry.startswith("~") else "")
            log.warning("warning: LEAGUE_BOT_PATH names the folder %s, which %s%s; no bots are "
                        "found there (LEAGUE_BOT_PATH=%s)", entry, what, tilde, variable)
        dirs.append(Path(entry))
    dirs += list(extra or [])
    return dirs


class Catalog:
    """Every manifest on the bot path, read once: the usable bots by name,
    the problems of the others, and the names no manifest may use (a name
    two manifests claim, or whose only manifest is broken)."""

    def __init__(self, extra: list[Path] | None = None) -> None:
        self.extra = extra
        self.bots: dict[str, BotSpec] = {}
        self.problems: list[str] = []
        self.refused: dict[str, str] = {}  # name -> why it cannot be used
        self.unnamed: list[str] = []  # problems of manifests that name no bot
        self.claims: dict[str, list[Path]] = {}  # name -> every manifest claiming it
        for path in self._manifests():
            self._add(path)
        for name, paths in self.claims.items():
            if len(paths) > 1:
                self._refuse(name, f"bot name {name!r} is claimed by {len(paths)} manifests: "
                                   f"{' and '.join(str(p) for p in paths)}; a name is one "
                                   "entrant's, so none of them is used (rename all but one)")

    def _manifests(self) -> Iterator[Path]:
        seen: set[Path] = set()
        for directory in bot_dirs(self.extra):
            for path in sorted(directory.glob("*.toml")) + sorted(directory.glob("*/bot.toml")):
                if path.resolve() not in seen:  # one folder given twice is one manifest
                    seen.add(path.resolve())
                    yield path

    def _add(self, path: Path) -> None:
        try:
            spec = load_manifest(path)
        except ManifestError as exc:
            self.problems.append(str(exc))
            if exc.bot is None:
                self.unnamed.append(str(exc))
            else:  # its name is taken all the same: no other manifest may use it
                self.claims.setdefault(exc.bot, []).append(path.resolve())
                self.refused.setdefault(exc.bot, str(exc))
            return
        self.claims.setdefault(spec.name, []).append(spec.manifest)
        self.bots.setdefault(spec.name, spec)

    def _refuse(self, name: str, problem: str) -> None:
        self.bots.pop(name, None)
        self.refused[name] = problem
        self.problems.append(problem)

    def resolve(self, name: str) -> BotSpec:
        """A bot by name, or by the path of its manifest (whose name no other
        manifest on the bot path may claim)."""
        if name.endswith(".toml") and Path(name).is_file():
            spec = load_manifest(Path(name))
            others = [p for p in self.claims.get(spec.name, []) if p != spec.manifest]
            if others:
                raise _manifest_error(
                    f"bot name {spec.name!r} of {spec.manifest} is also claimed by "
                    f"{' and '.join(str(p) for p in others)}; a name is one entrant's", spec.name)
            return spec
        if name in self.refused:
            raise _manifest_error(f"bot {name!r} cannot be used: {self.refused[name]}", name)
        if name not in self.bots:
            hint = f"; unusable manifests: {'; '.join(self.problems)}" if self.problems else ""
            searched = ", ".join(str(d) for d in bot_dirs(self.extra))
            error = UnknownBotError(
                f"unknown bot {name!r}{did_you_mean(name, self.bots)}; known bots: "
                f"{', '.join(sorted(self.bots))} (searched "
                f"{searched}; add a folder with --bots DIR or LEAGUE_BOT_PATH){hint}")
            error.unnamed = tuple(self.unnamed)
            raise error
        return self.bots[name]


def discover_all(extra: list[Path] | None = None) -> tuple[dict[str, BotSpec], list[str]]:
    """Every usable bot on the bot path by name, and the problems of the
    manifests that cannot be used (a broken manifest must not hide the other
    bots). A name two manifests claim is refused for both, as a problem."""
    catalog = Catalog(extra)
    return catalog.bots, catalog.problems


def discover(extra: list[Path] | None = None) -> dict[str, BotSpec]:
    return discover_all(extra)[0]


def resolve(name: str, extra: list[Path] | None = None) -> BotSpec:
    """A bot by name, or by the path of its manifest (Catalog.resolve)."""
    return Catalog(extra).resolve(name)
