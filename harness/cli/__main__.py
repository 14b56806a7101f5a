"""``python -m harness.cli``: the ``league`` command."""

from harness.cli import app

app()
