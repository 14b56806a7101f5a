"""The search's experiment tools: nothing the bot runs imports them.

arena.py plays the search against the heuristic on duplicate deals, in
process; stats.py gives those runs' figures; tuning.py plays a game's
tuned default move against the heuristic; fitting.py refits the fitted
evaluations from heuristic self-play; tile_hunt_exact.py values tile_hunt's
final round exactly, a probe of how far the search falls short there.
Their results, and the commands that reproduce them: docs/search.md.
"""
