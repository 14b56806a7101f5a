"""`league sprt`'s defaults and what they cost, kept apart from harness.stats.sprt
so that the command line can show them without importing numpy."""

DEFAULT_ELO0 = 0.0
DEFAULT_ELO1 = 20.0
DEFAULT_ALPHA = 0.05
DEFAULT_BETA = 0.05
DEFAULT_MAX_DEALS = 5000
# What the defaults cost, from harness.stats.sprt.simulate():
#   python -m harness.stats.sprt --simulate --runs 10000 --seed 100 --elo 0 --elo 20
DEFAULTS_NOTE = (
    "At the defaults, simulated (python -m harness.stats.sprt --simulate: 2 players, the field A, no "
    "ties, no card luck; 10,000 tests each): a B 20 Elo better is found in a median of 1,284 "
    "deals (90% within 3,110, 95% within 3,917); a B no better is cleared in 1,299 (90% within "
    "3,115); 98% of tests end at a bound before the cap, the rest get a fixed-sample verdict "
    "there; wrong verdicts 4.8% (B no better) and 5.2% (B 20 better). More seats (4 players: "
    "a median of 723 deals), teams, card luck that the pairing cancels, or a B much better or "
    "worse (100 Elo: 187) take fewer deals; ties and a field far weaker or stronger than A take "
    "more.")

__all__ = ["DEFAULT_ALPHA", "DEFAULT_BETA", "DEFAULT_ELO0", "DEFAULT_ELO1", "DEFAULT_MAX_DEALS",
           "DEFAULTS_NOTE"]
