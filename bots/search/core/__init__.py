"""The search itself, for any game: ``Searcher`` (search.py) over a
game's ``GameConfig`` (config.py), with rollout policies (policies.py) and
the record an opponent model keeps (beliefs.py). Nothing here names a
game; ``config_for`` loads one by its slug."""

from bots.search.core.config import GameConfig, config_for
from bots.search.core.search import Budget, Outcome, Searcher

__all__ = ["Budget", "GameConfig", "Outcome", "Searcher", "config_for"]
