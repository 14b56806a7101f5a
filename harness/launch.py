"""The first program of every bot slot: set resource limits, join the slot's
control groups, then exec the sandbox (or the bot itself with ``--sandbox
none``).

It runs as ``python -I -S launch.py CONFIG_JSON -- ARGV...`` so it needs
nothing but the standard library and starts in a few milliseconds. Limits set
here are inherited by everything the bot starts, and no bot code has run yet
when they are set. Doing this in a separate program rather than a
``preexec_fn`` keeps it safe in the harness's threads.
"""

from __future__ import annotations

import json
import os
import resource
import sys

EXIT_LAUNCH_FAILED = 121  # the harness reads this as a start-up fault


def _set_limit(name: str, value: int) -> None:
    kind = getattr(resource, name)
    _, hard = resource.getrlimit(kind)
    if hard != resource.RLIM_INFINITY:
        value = min(value, hard)
    resource.setrlimit(kind, (value, value))


def _join_cgroups(dirs: list[str]) -> None:
    # Writing 0 moves the writing process itself, before any bot code exists.
    for directory in dirs:
        with open(os.path.join(directory, "cgroup.procs"), "w") as handle:
            handle.write("0")


def main(argv: list[str]) -> None:
    if len(argv) < 4 or argv[2] != "--":
        sys.stderr.write("usage: launch.py CONFIG_JSON -- ARGV...\n")
        sys.exit(EXIT_LAUNCH_FAILED)
    config = json.loads(argv[1])
    command = argv[3:]
    try:
        _join_cgroups(config.get("cgroups", []))
        for name, value in config.get("rlimits", {}).items():
            _set_limit(name, int(value))
        if config.get("cwd"):
            os.chdir(config["cwd"])
        os.execvpe(command[0], command, config.get("env", {}))
    except OSError as exc:
        sys.stderr.write(f"cannot start {command[0]!r}: {exc}\n")
        sys.exit(EXIT_LAUNCH_FAILED)


if __name__ == "__main__":
    main(sys.argv)
