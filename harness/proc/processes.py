"""Small facts about processes on this machine, from the kernel: whether a
pid is alive, a process's live descendants, and the CPU time they used.
Shared by the bot client, the sandbox and the results store (which asks
whether the run that holds a league is still alive)."""

from __future__ import annotations

import os
from pathlib import Path


def pid_alive(pid: int) -> bool:
    """Whether a process with this pid runs on this machine (any owner)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def process_tree(pid: int, limit: int = 4096) -> list[int]:
    """A process and its live descendants (at most ``limit``), from /proc."""
    found: list[int] = []
    stack = [pid]
    while stack and len(found) < limit:
        current = stack.pop()
        try:
            children = Path(f"/proc/{current}/task/{current}/children").read_text().split()
        except OSError:
            continue
        found.append(current)
        stack.extend(int(c) for c in children)
    return found


def tree_cpu_seconds(pid: int) -> float:
    """CPU time of a process and its live descendants, from /proc."""
    total, ticks = 0.0, os.sysconf("SC_CLK_TCK")
    for current in process_tree(pid):
        try:
            fields = Path(f"/proc/{current}/stat").read_text().rsplit(")", 1)[1].split()
            total += sum(int(f) for f in fields[11:15]) / ticks
        except (OSError, IndexError, ValueError):
            continue
    return total
