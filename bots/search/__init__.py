"""The search bot's parts: per-game settings, rollout policies, the search, an in-process arena."""
