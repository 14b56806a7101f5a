"""The Python SDK for bot authors, by the name a bot imports it from its own
folder, with nothing copied:

    from league_sdk import Bot, run

The code is ``bots/sdk.py`` (the repository's own bots import it as
``bots.sdk``); this module re-exports it. Why both names: a bot in its own
folder cannot import ``bots.sdk`` inside the sandbox, which shows it its own
files, the Python installation and nothing of the harness's source tree.

Where ``league_sdk`` comes from when a bot runs:

- in the sandbox, the harness mounts ``bots/sdk.py`` read-only at
  ``/sdk/league_sdk.py`` and puts ``/sdk`` on ``PYTHONPATH`` for every
  ``{python}`` bot (harness.proc.sandbox);
- with ``--sandbox none``, and for a bot author running ``bot.py`` by hand
  with the harness's Python, from this module, installed with the harness.

The SDK is part of the harness, like the Python interpreter: it is not one
of a bot's files, so a new SDK does not make a new bot version. A bot that
wants its results tied to one SDK copies ``bots/sdk.py`` into its folder as
``league_sdk.py`` (its own folder comes first on ``sys.path``) and lists it
in ``files``.
"""

from bots.sdk import *  # noqa: F403 - the SDK's public names, whatever they are
from bots.sdk import PROTOCOL_VERSION, Bot, run

__all__ = ["PROTOCOL_VERSION", "Bot", "run"]
