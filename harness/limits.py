"""What a bot may use, defined once: each limit with its default and bounds.

The deadlines are in milliseconds everywhere: in a league file's
``[limits]``, here, and in the ``limits`` map of the ``start`` message and
the ``time_left_ms`` of each ``act``, which carry these very integers (only
the clock that enforces a deadline turns it into seconds). The league
loader and every command (`league play`, `check`, `sprt`; `league run`
through its league file) take their defaults from ``DEFAULT_LIMITS``.

Time comes in one model with few fields (PROTOCOL.md, "Clocks"): each
decision may take ``decision_ms``; a ``bank_ms`` of overage per bot per
match lets a decision run over that, the excess drawn from the bank
(Kaggle's overage); a ``clock_ms`` per bot per match, with ``increment_ms``
added after each decision, bounds the whole match (cutechess's base +
increment). A decision's hard deadline is min(decision_ms + the bank left,
the clock left). All three default to 0: none, which is the fixed
per-decision limit alone. ``BotTime`` gives one bot other times (odds),
which ``Limits.for_name`` applies; ``harness.clock.SeatClock`` keeps the
account during a match.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any


@dataclass(frozen=True)
class ResourceLimits:
    """What one bot slot may use. Every figure can be set in a league's [limits]."""

    memory_mb: int = 1024
    cpu_s: float = 60.0  # CPU seconds per match, all of the bot's processes together
    processes: int = 64
    file_mb: int = 64
    open_files: int = 256

    def rlimits(self, enforce_nproc: bool, memory_group: bool = False) -> dict[str, int]:
        limits = {
            "RLIMIT_FSIZE": self.file_mb << 20,
            "RLIMIT_NOFILE": self.open_files,
            "RLIMIT_CORE": 0,
        }
        if not memory_group:
            # With a memory group, RLIMIT_DATA must not trip first: an allocation it
            # refuses (MemoryError, bad_alloc) leaves no trace the harness can read, so
            # a bot that catches it and goes quiet would look like a timeout; the
            # group's OOM kill is counted (memory.oom_control) and cannot be caught.
            limits["RLIMIT_DATA"] = self.memory_mb << 20
        if enforce_nproc:
            limits["RLIMIT_NPROC"] = self.processes
        return limits


@dataclass(frozen=True)
class Limits:
    """Everything a league limits, in one place: the deadlines the harness
    enforces are the ones the ``start`` message tells the bot."""

    decision_ms: int = 1000  # per decision, wall clock
    startup_ms: int = 15000  # process start and handshake
    resources: ResourceLimits = field(default_factory=ResourceLimits)
    clock_ms: int = 0  # per bot per match, all its decisions together; 0: no clock
    increment_ms: int = 0  # added to the clock after each decision (needs a clock)
    bank_ms: int = 0  # overage per bot per match: what decisions over decision_ms draw on
    bots: tuple[tuple[str, BotTime], ...] = ()  # bots with times of their own (odds)

    def for_bot(self) -> dict[str, Any]:
        """The ``limits`` map of the ``start`` message."""
        r = self.resources
        return {"decision_ms": self.decision_ms, "startup_ms": self.startup_ms,
                "clock_ms": self.clock_ms, "increment_ms": self.increment_ms,
                "bank_ms": self.bank_ms,
                "memory_mb": r.memory_mb, "cpu_s": r.cpu_s, "processes": r.processes,
                "file_mb": r.file_mb, "open_files": r.open_files}

    def for_name(self, bot: str) -> Limits:
        """The limits ``bot`` plays under: these, with its own times if it has them."""
        for name, own in self.bots:
            if name == bot:
                return own.applied(self)
        return self

    def odds(self) -> dict[str, dict[str, Any]]:
        """The bots with times of their own, as a league file gives them."""
        return {name: own.as_dict() for name, own in self.bots}

    @property
    def timed(self) -> bool:
        """Whether a decision may take more than ``decision_ms``, or the match
        has a clock: some bot's times then depend on its earlier decisions."""
        return bool(self.clock_ms or self.bank_ms or self.bots)


# The times a bot can be given apart from the others ([limits.bots.NAME]).
TIME_FIELDS = ("decision_ms", "clock_ms", "increment_ms", "bank_ms")
TIME_ODDS_BOUNDS = (0.01, 100.0)


@dataclass(frozen=True)
class BotTime:
    """One bot's times (a league's ``[limits.bots.NAME]``, cutechess's
    per-engine ``tc=``): the league's times scaled by ``time_odds`` (0.5:
    half of every one of them), or times of its own (``own``: TIME_FIELDS
    it sets; the others stay the league's)."""

    time_odds: float | None = None
    own: tuple[tuple[str, int], ...] = ()

    def applied(self, limits: Limits) -> Limits:
        scaled: dict[str, Any] = dict(self.own)
        if self.time_odds is None:
            return replace(limits, bots=(), **scaled)
        scaled = {key: round(getattr(limits, key) * self.time_odds) for key in TIME_FIELDS}
        # a limit that is there stays there, however small the odds make it
        for key in ("decision_ms", "clock_ms"):
            if getattr(limits, key):
                scaled[key] = max(1, scaled[key])
        return replace(limits, bots=(), **scaled)

    def as_dict(self) -> dict[str, Any]:
        return {"time_odds": self.time_odds} if self.time_odds is not None else dict(self.own)


DEFAULT_LIMITS = Limits()
# A league file's [limits] keys and their defaults: the keys of the start
# message's map, so a bot is told each limit under the name the file sets it by.
LIMIT_FIELDS: dict[str, Any] = DEFAULT_LIMITS.for_bot()
# (minimum, maximum) of each limit, documented in the README's league-file
# section. Beyond them a value is a mistake, not a wish: a deadline of years
# overflows poll(), a memory cap of petabytes no setrlimit or control group
# takes, so every match would end in a harness error; below them no bot
# (a Python interpreter needs about 30 MiB and a dozen files) can start.
LIMIT_BOUNDS = {"decision_ms": (1, 600_000), "startup_ms": (1, 600_000),
                "clock_ms": (0, 36_000_000), "increment_ms": (0, 600_000),
                "bank_ms": (0, 36_000_000),
                "memory_mb": (32, 65_536), "cpu_s": (1, 86_400), "processes": (1, 4096),
                "file_mb": (1, 4096), "open_files": (16, 65_536)}
