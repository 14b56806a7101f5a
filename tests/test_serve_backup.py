"""`league backup`: a consistent copy of a site while writers are busy."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from contextlib import closing
from pathlib import Path

import pytest

from harness.serve.db import ServerStore
from harness.serve.ladder import Quotas
from harness.serve.storage import Storage
from tests.helpers import wait_until

# a backup run as the command, under a busy writer: `make test`, not `make test-fast`
pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]


def test_a_backup_taken_under_writes_is_whole(tmp_path: Path) -> None:
    db = tmp_path / "ladder.db"
    store = ServerStore(db)
    storage = Storage(Path(f"{db}.bots"))
    owner = store.add_account("alice")
    folder = storage.scratch(".d")
    folder.mkdir()
    (folder / "bot.toml").write_text('name = "pick"\ncommand = ["{python}", "bot.py"]\n')
    (folder / "bot.py").write_text("print('hi')\n")
    digest = storage.keep(folder)
    store.add_version(owner, "pick", digest, "archive", 10, "", Quotas())
    stop = threading.Event()
    written = [0]

    def write() -> None:  # accounts and tokens, in both files, as fast as it can
        while not stop.is_set():
            account = store.add_account(f"user{written[0]}")
            store.add_token(account, "load")
            written[0] += 1

    writer = threading.Thread(target=write)
    writer.start()
    try:
        wait_until(lambda: written[0] >= 20, "20 accounts written")
        before = written[0]
        done = subprocess.run([sys.executable, "-m", "harness.cli", "backup",
                               str(tmp_path / "copy.db"), "--db", str(db)],
                              cwd=REPO, capture_output=True, text=True, timeout=120)
        after = written[0]
    finally:
        stop.set()
        writer.join()
    assert done.returncode == 0, done.stderr
    assert "1 uploaded version folder" in done.stdout
    copy = tmp_path / "copy.db"
    with closing(sqlite3.connect(copy)) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        users = connection.execute("SELECT COUNT(*) FROM accounts WHERE name LIKE 'user%'"
                                   ).fetchone()[0]
    assert before <= users <= after + 1  # one snapshot, taken while the writer ran
    with closing(sqlite3.connect(tmp_path / "copy.db.secret")) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert connection.execute("SELECT COUNT(*) FROM tokens").fetchone()[0] >= before
    copied = ServerStore(copy)
    version = copied.version("pick", 1)
    assert version is not None
    assert (Path(f"{copy}.bots") / version.sha256 / "src" / "bot.py").read_text() == \
        "print('hi')\n"
    # a second backup onto the same name is refused, and changes nothing
    again = subprocess.run([sys.executable, "-m", "harness.cli", "backup", str(copy),
                            "--db", str(db)], cwd=REPO, capture_output=True, text=True,
                           timeout=120)
    assert again.returncode == 2 and "choose a new name" in again.stderr
