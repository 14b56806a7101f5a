"""What a match leaves behind: the records the match runner makes and the
store keeps (shared by both, so neither imports the other)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Fault:
    kind: str
    decision: int
    detail: str
    stderr_tail: str = ""
    started: bool = True  # False: the bot never got through its start and handshake


@dataclass
class ThinkTime:
    """A seat's decisions in one match and the time they took, measured by the
    harness from the request sent to the reply read (what the deadline counts)."""

    moves: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0

    def add(self, ms: float) -> None:
        self.moves += 1
        self.total_ms += ms
        if ms > self.max_ms:
            self.max_ms = ms


@dataclass
class MatchResult:
    match_id: str
    game: str
    rules_version: str
    seed: int
    bots: list[str]
    scores: list[float]
    ranks: list[int]
    faults: list[Fault | None]
    capped: bool
    decisions: int
    started_at: float
    duration_s: float
    teams: list[list[int]] | None
    replay: dict[str, Any] = field(repr=False)
    think: list[ThinkTime] | None = None  # per seat; None from runners that do not time

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def unstarted(self) -> list[str]:
        """Bots of this match that never started: the match says nothing of them."""
        return [bot for bot, fault in zip(self.bots, self.faults)
                if fault is not None and not fault.started]
