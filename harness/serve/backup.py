"""A consistent copy of a site (or any results file) while it runs.

SQLite's online backup API copies each database as one snapshot, however
many writers are busy: the ladder file (accounts, versions, results) and
its ``.secret`` (keys, credential hashes) are copied page by page and
retried where a writer changed a page meanwhile. Then the uploaded files
the copied ladder file refers to are copied: a version's folder is named
by its contents and never changes once written, so what the snapshot names
is there to copy, and a version added after the snapshot is not named.
The copy is a site that `league serve --db DEST` serves as it was.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from harness.store import secret_path

PAGES_PER_STEP = 1024  # pages copied at a time: writers wait only between steps


@dataclass(frozen=True)
class BackupSummary:
    databases: list[Path]
    versions: int
    bytes: int


def backup(source: Path, dest: Path) -> BackupSummary:
    if not source.exists():
        raise FileNotFoundError(f"no database {source}")
    if dest.exists() or secret_path(dest).exists():
        raise FileExistsError(f"{dest} (or its .secret) exists: choose a new name")
    copied = [_copy_database(source, dest)]
    if secret_path(source).exists():
        copied.append(_copy_database(secret_path(source), secret_path(dest)))
    versions = _copy_versions(source, dest)
    size = sum(path.stat().st_size for path in copied)
    return BackupSummary(copied, versions, size)


def _copy_database(source: Path, dest: Path) -> Path:
    os.close(os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
    with closing(sqlite3.connect(f"file:{source.resolve()}?mode=ro", uri=True,
                                 timeout=30)) as reader, \
            closing(sqlite3.connect(dest)) as writer:
        reader.execute("PRAGMA busy_timeout=30000")
        reader.backup(writer, pages=PAGES_PER_STEP)
        if writer.execute("PRAGMA integrity_check").fetchone()[0] != "ok":
            raise RuntimeError(f"the copy of {source} failed its integrity check")
    return dest


def _copy_versions(source: Path, dest: Path) -> int:
    """The uploaded folders the copied ladder file names (none for a plain results file)."""
    with closing(sqlite3.connect(dest)) as copy:
        tables = {row[0] for row in copy.execute("SELECT name FROM sqlite_master")}
        if "ladder_versions" not in tables:
            return 0
        digests = {row[0] for row in copy.execute("SELECT DISTINCT sha256 FROM ladder_versions")}
    here, there = Path(f"{source}.bots"), Path(f"{dest}.bots")
    there.mkdir(mode=0o700, exist_ok=True)
    for digest in sorted(digests):
        folder = here / digest
        if folder.is_dir():
            shutil.copytree(folder, there / digest, symlinks=True, dirs_exist_ok=True)
    return len(digests)
