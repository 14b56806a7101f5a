"""The ``league`` command line (entry point ``harness.cli:app``).

:mod:`harness.cli.common` holds the Typer ``app``, its global options, the
exit codes and the helpers the commands share; each command module imports
it (never another command module) and registers its commands on ``app``:
:mod:`~harness.cli.play` (games, bots, play, check, doctor),
:mod:`~harness.cli.new` (new, build: a starter kit, a build step),
:mod:`~harness.cli.run` (run), :mod:`~harness.cli.sprt` (sprt) and
:mod:`~harness.cli.results` (the read commands: table, status, matches,
report, replay, logs) and :mod:`~harness.cli.serve` (serve, users, submit). Importing this package registers them all.
"""

# imported in the order `league --help` lists their commands
# isort: off
from harness.cli import play, new, run, sprt, results, serve  # noqa: F401 - they register on `app`
# isort: on
from harness.cli.common import (
    EXIT_BOT,
    EXIT_CODES,
    EXIT_DB,
    EXIT_HARNESS_ERROR,
    EXIT_INTERRUPTED,
    EXIT_USAGE,
    app,
)

__all__ = ["EXIT_BOT", "EXIT_CODES", "EXIT_DB", "EXIT_HARNESS_ERROR", "EXIT_INTERRUPTED",
           "EXIT_USAGE", "app"]
