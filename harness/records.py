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
class EndFault:
    """A fault a bot made after its match was over: sent ``end``, it died or
    wrote to stdout before it read its next ``start`` (or its ``quit``).
    It is that match's (match_id, seat), recorded beside its result, which
    it does not change: the game was over, its scores and ranks stand. The
    harness sees it only at the process's next use, often after the result
    has gone to the store, so the store keeps it as an amendment."""

    match_id: str
    seat: int
    bot: str
    kind: str
    detail: str
    stderr_tail: str = ""


@dataclass
class DecisionStderr:
    """What a bot wrote to stderr for one decision, where a match keeps it
    (``league play --stderr``, a league's ``[logs] stderr = "all"``): what
    arrived from its previous decision's reply (or its match's start) to this
    decision's reply, within the caps, as the bot wrote it (escaped where
    shown, never where stored)."""

    decision: int
    seat: int
    text: str


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
    end_faults: list[EndFault] = field(default_factory=list)  # seen by the time it was stored
    stderr: list[DecisionStderr] = field(default_factory=list)  # per decision, where kept

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def unstarted(self) -> list[str]:
        """Bots of this match that never started: the match says nothing of them."""
        return [bot for bot, fault in zip(self.bots, self.faults)
                if fault is not None and not fault.started]
