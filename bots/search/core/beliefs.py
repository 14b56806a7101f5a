"""What an opponent model (``GameConfig.refine``) keeps within one decision.

A game's refiner deals a sampled world's other hands again until the
heuristic, holding them, would have played as their owners did. A player
who plays unlike the heuristic makes that search endless and wrong, so
each refiner keeps a ``FitRecord`` per decision and leaves a seat that
almost no hand explains as the rules deal it: such a player costs the
search accuracy, never a move.
"""

from __future__ import annotations

# a seat whose hands fit its play this rarely (after this many tries in one
# decision) is taken to play unlike the heuristic: its worlds are left alone
GIVE_UP_AFTER = 48
GIVE_UP_SHARE = 0.05


class FitRecord:
    """Per seat, the tries one decision's worlds have made to fit its play
    and how many fitted: a seat fitted rarely (under ``GIVE_UP_SHARE`` of
    ``GIVE_UP_AFTER`` tries or more) plays unlike the heuristic, and its
    worlds are left as the rules deal them for the rest of the decision.
    Shared by the games' refiners."""

    def __init__(self) -> None:
        self.tried: dict[int, int] = {}
        self.fitted: dict[int, int] = {}

    def given_up(self, seat: int) -> bool:
        tried = self.tried.get(seat, 0)
        return tried >= GIVE_UP_AFTER and self.fitted[seat] < GIVE_UP_SHARE * tried

    def add(self, seat: int, attempts: int, fitted: bool) -> None:
        self.tried[seat] = self.tried.get(seat, 0) + attempts
        self.fitted[seat] = self.fitted.get(seat, 0) + fitted
