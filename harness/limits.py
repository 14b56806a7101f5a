"""What a bot may use, defined once: each limit with its default and bounds.

The deadlines are in milliseconds everywhere: in a league file's
``[limits]``, here, and in the ``limits`` map of the ``start`` message and
the ``time_left_ms`` of each ``act``, which carry these very integers (only
the clock that enforces a deadline turns it into seconds). The league
loader and every command (`league play`, `check`, `sprt`; `league run`
through its league file) take their defaults from ``DEFAULT_LIMITS``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
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

    def for_bot(self) -> dict[str, Any]:
        """The ``limits`` map of the ``start`` message."""
        r = self.resources
        return {"decision_ms": self.decision_ms, "startup_ms": self.startup_ms,
                "memory_mb": r.memory_mb, "cpu_s": r.cpu_s, "processes": r.processes,
                "file_mb": r.file_mb, "open_files": r.open_files}


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
                "memory_mb": (32, 65_536), "cpu_s": (1, 86_400), "processes": (1, 4096),
                "file_mb": (1, 4096), "open_files": (16, 65_536)}
