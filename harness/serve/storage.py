"""Where uploaded versions live on disk: content-addressed and write-once.

``ladder.db.bots/`` holds:

- ``incoming/``: uploads as they stream in, and their unpacked folders. A
  server that starts empties it: whatever is there was cut off by a kill.
- ``<sha256>/src/``: a version's files as uploaded, read-only, named by the
  digest of their paths, executable bits and contents (``tree_digest``). Two
  uploads of the same files share one folder. A folder is moved into place
  whole (one rename), before its version's row is written, so a version
  that can be seen always has its files.
- ``<sha256>/ready/``: the same files after the build step, made by the
  validation that passed: what the ladder's matches will run.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import shutil
import stat
import zipfile
from collections.abc import Iterator
from pathlib import Path

CHUNK = 1 << 16


class Storage:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.incoming = root / "incoming"
        self.incoming.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(root, 0o700)

    def clear_incoming(self) -> int:
        """Remove what a killed server left half-received; how many entries."""
        left = list(self.incoming.iterdir())
        for entry in left:
            remove_tree(entry)
        return len(left)

    def scratch(self, suffix: str = "") -> Path:
        """A fresh, not yet existing path under incoming/."""
        return self.incoming / f"{secrets.token_hex(8)}{suffix}"

    def source(self, digest: str) -> Path:
        return self.root / digest / "src"

    def ready(self, digest: str) -> Path:
        return self.root / digest / "ready"

    def keep(self, folder: Path) -> str:
        """Move an unpacked bot folder into place; its digest. The folder is
        gone afterwards (moved, or discarded as a copy of one kept already)."""
        digest = tree_digest(folder)
        target = self.source(digest)
        if target.exists():
            remove_tree(folder)
            return digest
        target.parent.mkdir(exist_ok=True, mode=0o700)
        _read_only(folder)
        try:
            folder.rename(target)
        except OSError:  # another upload of the same files won the race
            if not target.exists():
                raise
            remove_tree(folder)
        return digest

    def keep_ready(self, digest: str, built: Path) -> None:
        target = self.ready(digest)
        if target.exists():
            remove_tree(built)
            return
        try:
            built.rename(target)
        except OSError:
            if not target.exists():
                raise
            remove_tree(built)

    def discard(self, folder: Path) -> None:
        remove_tree(folder)

    def zip_stream(self, digest: str) -> Iterator[bytes]:
        """A version's files as a zip, made in a temporary file and streamed."""
        path = self.scratch(".zip")
        source = self.source(digest)
        try:
            with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
                for file in regular_files(source):
                    archive.write(file, file.relative_to(source).as_posix())
            with path.open("rb") as stream:
                while chunk := stream.read(CHUNK):
                    yield chunk
        finally:
            path.unlink(missing_ok=True)


def tree_digest(folder: Path) -> str:
    """sha256 of every file's relative path, executable bit and contents."""
    digest = hashlib.sha256()
    for file in regular_files(folder):
        info = file.lstat()
        relative = file.relative_to(folder).as_posix().encode()
        digest.update(b"%d:%s:%d:%d:" % (len(relative), relative, bool(info.st_mode & 0o111),
                                          info.st_size))
        with file.open("rb") as stream:
            while chunk := stream.read(CHUNK):
                digest.update(chunk)
    return digest.hexdigest()


def copy_tree(source: Path, target: Path) -> None:
    """A writable copy (the build writes into it)."""
    shutil.copytree(source, target, symlinks=True)
    for path in [target, *target.rglob("*")]:
        mode = path.lstat().st_mode
        if not stat.S_ISLNK(mode):
            path.chmod(stat.S_IMODE(mode) | stat.S_IWUSR)


def regular_files(folder: Path) -> list[Path]:
    """Every regular file under ``folder`` (links left out), by relative path."""
    return sorted((p for p in folder.rglob("*") if p.is_file() and not p.is_symlink()),
                  key=lambda p: p.relative_to(folder).as_posix())


def _read_only(folder: Path) -> None:
    for path in [*folder.rglob("*"), folder]:
        mode = path.lstat().st_mode
        if stat.S_ISREG(mode):
            path.chmod(stat.S_IMODE(mode) & ~0o222)


def remove_tree(path: Path) -> None:
    """Remove a file or a folder, read-only folders (a build's) included."""
    if path.is_dir() and not path.is_symlink():
        for sub in [path, *path.rglob("*")]:
            if sub.is_dir() and not sub.is_symlink():
                sub.chmod(0o700)
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)
