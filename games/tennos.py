"""The TENNOS deck (seed 003), defined once for every TENNOS game.

6 suits x ranks 1..13 (A=1, J=11, Q=12, K=13) plus 4 jokers = 82 cards.
Suits in this order: spade, heart, diamond, club, leaf, cross.
Colours: red = heart, diamond, cross; black = spade, club, leaf.
Jokers have no suit, rank or colour unless a game says so.

A card is an int, so observations stay small and fast:
``card = suit * 13 + (rank - 1)`` for 0..77, and jokers are 78..81.
Bots decode with ``suit = card // 13``, ``rank = card % 13 + 1`` (card < 78).
Engines do not repeat that arithmetic: they use :func:`suit_of` and
:func:`rank_of`, or the tables ``SUIT_OF`` and ``RANK_OF`` in hot loops.
"""

from __future__ import annotations

from collections.abc import Iterable

SUITS: tuple[str, ...] = ("spade", "heart", "diamond", "club", "leaf", "cross")
SPADE, HEART, DIAMOND, CLUB, LEAF, CROSS = range(6)
SUIT_SYMBOLS: tuple[str, ...] = ("♠", "♥", "♦", "♣", "leaf ", "cross ")
RED_SUITS = frozenset({HEART, DIAMOND, CROSS})
BLACK_SUITS = frozenset({SPADE, CLUB, LEAF})
RANK_NAMES = {1: "A", 11: "J", 12: "Q", 13: "K"}
NUM_SUITS = 6
NUM_RANKS = 13
JOKERS: tuple[int, ...] = (78, 79, 80, 81)


# Per-card lookups, for hot loops (an index is cheaper than a call).
SUIT_OF: tuple[int, ...] = tuple(c // NUM_RANKS for c in range(78)) + (-1,) * len(JOKERS)
RANK_OF: tuple[int, ...] = tuple(c % NUM_RANKS + 1 for c in range(78)) + (0,) * len(JOKERS)


def card(suit: int, rank: int) -> int:
    return suit * NUM_RANKS + rank - 1


def suit_of(c: int) -> int:
    """Suit index, or -1 for a joker."""
    return c // NUM_RANKS if c < 78 else -1


def rank_of(c: int) -> int:
    """Rank 1..13, or 0 for a joker."""
    return c % NUM_RANKS + 1 if c < 78 else 0


def is_joker(c: int) -> bool:
    return c >= 78


def is_red(c: int) -> bool:
    return c < 78 and c // NUM_RANKS in RED_SUITS


def is_black(c: int) -> bool:
    return c < 78 and c // NUM_RANKS in BLACK_SUITS


def deck(
    ranks: Iterable[int] = range(1, 14),
    suits: Iterable[int] = range(NUM_SUITS),
    jokers: bool = False,
) -> list[int]:
    """A sorted deck of the given ranks and suits (jokers appended if asked)."""
    rank_list = list(ranks)
    cards = [card(s, r) for s in suits for r in rank_list]
    return sorted(cards) + (list(JOKERS) if jokers else [])


def rank_name(rank: int) -> str:
    return RANK_NAMES.get(rank, str(rank))


def card_name(c: int) -> str:
    """Names people read at a glance: ♥Q, ♠10, leaf 7, cross A, joker."""
    if c >= 78:
        return "joker"
    return f"{SUIT_SYMBOLS[c // NUM_RANKS]}{rank_name(c % NUM_RANKS + 1)}"


def cards_name(cards: Iterable[int]) -> str:
    return " ".join(card_name(c) for c in cards)
