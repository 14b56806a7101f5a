"""SPRTs between two versions, started by the organiser from the site.

Each is ``league sprt GAME A@vN B@vM --db LADDER.db`` in a process of its
own: the same command an organiser runs by hand on the server's data
(the versions' built files are read from the site's store), stored in the
ladder file as a league of its own and resumable the same way. The site
keeps which tests it started, and shows each one's output as it goes.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness.serve.db import Refused
from harness.serve.ladder import Ladder

LOG_TAIL = 4000


@dataclass
class SprtJob:
    id: int
    game: str
    players: int
    baseline: str
    candidate: str
    started: float
    log: Path
    process: subprocess.Popen[bytes]

    def view(self) -> dict[str, Any]:
        code = self.process.poll()
        try:
            text = self.log.read_text(errors="replace")[-LOG_TAIL:]
        except OSError:
            text = ""
        return {"id": self.id, "game": self.game, "players": self.players,
                "baseline": self.baseline, "candidate": self.candidate,
                "started": self.started, "running": code is None, "exit_code": code,
                "output": text}


class SprtJobs:
    def __init__(self, ladder: Ladder, db_path: Path) -> None:
        self.ladder, self.db_path = ladder, db_path
        self.folder = Path(f"{db_path}.sprt")
        self.jobs: list[SprtJob] = []
        self._lock = threading.Lock()

    def start(self, game: str, players: int | None, baseline: str, candidate: str) -> SprtJob:
        if game not in self.ladder.games:
            raise Refused(f"{game!r} is not one of this ladder's games "
                          f"({', '.join(self.ladder.games)})")
        seats = players or self.ladder.games[game][0]
        if seats not in self.ladder.games[game]:
            raise Refused(f"{game} is played here by {self.ladder.games[game]} players, "
                          f"not {seats}")
        for name in (baseline, candidate):
            if "@v" not in name and name not in self.ladder.play.bosses:
                raise Refused(f"{name!r}: name a version as BOT@vN, or a boss "
                              f"({', '.join(self.ladder.play.bosses)})")
        with self._lock:
            if any(job.process.poll() is None for job in self.jobs):
                raise Refused("an SPRT is running already: one at a time, beside the ladder",
                              409)
            self.folder.mkdir(exist_ok=True, mode=0o700)
            number = len(self.jobs) + 1
            log = self.folder / f"{int(time.time())}-{number}.log"
            command = [sys.executable, "-m", "harness.cli", "sprt", game, baseline, candidate,
                       "--players", str(seats), "--db", str(self.db_path),
                       "--engine", "inline", "--workers", "1",
                       "--decision-ms", str(self.ladder.limits.decision_ms),
                       "--sandbox", self.ladder.sandbox]
            with log.open("wb") as out:
                process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                           stdin=subprocess.DEVNULL)
            job = SprtJob(number, game, seats, baseline, candidate, time.time(), log, process)
            self.jobs.append(job)
            return job

    def views(self) -> list[dict[str, Any]]:
        return [job.view() for job in reversed(self.jobs)]

    def stop(self) -> None:
        for job in self.jobs:
            if job.process.poll() is None:
                job.process.terminate()
