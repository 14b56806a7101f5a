"""The search's parts for each game, one module or package per game slug.

Each defines ``CONFIG`` (a ``bots.search.core.GameConfig``) and what it
names: the heuristic's move read from the engine state (the rollout
policy), its ratings of the moves (the prior), fast playouts, an opponent
model, a fitted evaluation, a tuned default move, as the game has them.
``bots.search.core.config_for(slug)`` imports ``bots.search.games.<slug>``;
the search bot imports every game's before it answers ``hello``, so no
match's first decision pays for an import.
"""
