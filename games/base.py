"""The game contract every engine implements.

A game is a class derived from :class:`Game` with a :class:`GameInfo` in its
``INFO`` attribute. One instance is one match in progress (every round or
deal of the seed's game included). The harness, the bots and the tests use
only the methods below, so any engine that honours them plugs in everywhere.

Conventions every engine follows
--------------------------------
* Randomness: only ``self.rng`` (a :class:`random.Random` made from the seed
  given to :meth:`Game.new`). Never the ``random`` module's global state.
* Actions: small msgpack-native values in a deterministic order: ints,
  short strings, or tuples of those. Msgpack turns tuples into lists, so
  anything coming back from the wire goes through :func:`normalize_action`.
* Observations: a dict of str keys holding only ints, floats, strs, bools,
  None, lists and dicts, i.e. JSON and msgpack without loss (tuples are
  allowed; they read back as lists). It holds exactly what that player may
  know at that moment, and always holds ``"seat"``.
* Scores are valid at any moment ("as it stands") so a capped match can be
  scored; standings derive from :meth:`Game.rank_keys`.
* ``redeal(player, seed)`` returns a new state whose ``observation(player)``
  equals this state's, with every piece of information hidden from that
  player (other hands, deck order, future dice...) sampled afresh from
  ``seed``; the new state's ``rng`` is reseeded from ``seed`` too, so future
  chance is not leaked.
* ``from_observation(obs, seed)`` (a classmethod) does the same from the
  observation alone, as a bot receives it: a state whose ``observation`` of
  that seat is ``obs``, hidden parts sampled from ``seed``.
* The flow of the game (who acts next, how many decisions a turn takes, so
  the decision counter the harness sends to every bot) depends only on what
  every player may know. An engine never skips, adds or reorders a step
  because of a hidden card: where the rules let a player stop at will, it
  offers "stop" from public information even when the hand could not go on.
  Where the rules themselves make hidden information public (a card turned
  face up, hands scored, a forced pass), the engine declares it with
  :meth:`Game.reveals` and :attr:`Game.REVEALS`; ``games.testing`` checks
  the rest.
"""

from __future__ import annotations

import copy
import random
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Self

Action = Any  # int | str | tuple[int | str, ...]
Observation = dict[str, Any]


class GameError(Exception):
    """Base class of errors raised by game engines."""


class IllegalActionError(GameError):
    """An action that is not among the legal actions was applied."""


class UnknownGameError(GameError, KeyError):
    """No game is registered under that slug."""

    def __str__(self) -> str:  # KeyError would quote the message
        return str(self.args[0])


class PlayerCountError(GameError, ValueError):
    """The game does not allow that many players."""


TeamLayout = Callable[[int], "tuple[tuple[int, ...], ...] | None"]


def no_teams(num_players: int) -> None:
    return None


@dataclass(frozen=True)
class GameInfo:
    """Game metadata, declared as data."""

    slug: str
    title: str
    min_players: int
    max_players: int
    rules_version: str
    # Hard cap on decisions in one match; reaching it ends the match "capped".
    max_decisions: int
    # Seats of each team for a player count, or None for an individual game.
    teams: TeamLayout = field(default=no_teams)
    seed_ref: str = ""
    # Only these counts, where the range has gaps (twin_shoot: 4 or 6).
    only_counts: tuple[int, ...] = ()

    def player_counts(self) -> list[int]:
        if self.only_counts:
            return list(self.only_counts)
        return list(range(self.min_players, self.max_players + 1))

    def check_players(self, num_players: int) -> None:
        if num_players not in self.player_counts():
            counts = self.player_counts()
            allowed = (
                " or ".join(map(str, counts)) if self.only_counts
                else f"{self.min_players}-{self.max_players}"
            )
            raise PlayerCountError(f"{self.slug} is played by {allowed} players, not {num_players}")


def normalize_action(value: Any) -> Action:
    """Lists (as msgpack and JSON return tuples) become tuples, recursively."""
    if isinstance(value, list):
        return tuple(normalize_action(v) for v in value)
    return value


def copy_rng(rng: random.Random) -> random.Random:
    """An independent copy of a generator, cheaper than deepcopy (and than
    ``random.Random()``, which seeds itself from the OS before setstate)."""
    twin = random.Random.__new__(random.Random)
    twin.setstate(rng.getstate())
    return twin


def competition_ranks(keys: Sequence[Any]) -> list[int]:
    """Rank 1 is best; a larger key is better; equal keys share a rank (1,1,3)."""
    order = sorted(range(len(keys)), key=lambda s: keys[s], reverse=True)
    ranks = [0] * len(keys)
    for position, seat in enumerate(order):
        if position and keys[seat] == keys[order[position - 1]]:
            ranks[seat] = ranks[order[position - 1]]
        else:
            ranks[seat] = position + 1
    return ranks


def ranks_by_unit(keys: Sequence[Any], teams: Sequence[Sequence[int]] | None) -> list[int]:
    """Competition ranks of seats, or of teams (keyed by their first member)
    handed to every member."""
    if not teams:
        return competition_ranks(keys)
    team_ranks = competition_ranks([keys[team[0]] for team in teams])
    ranks = [0] * len(keys)
    for team, rank in zip(teams, team_ranks):
        for seat in team:
            ranks[seat] = rank
    return ranks


def reshuffle(rng: random.Random, groups: Sequence[Sequence[Any]]) -> list[list[Any]]:
    """The redeal sampler: shuffle the cards of ``groups`` together and hand
    them back, each group keeping its size (group order kept, cards within a
    group in shuffled order; sort where the engine keeps hands sorted).

    The pool is sorted before the shuffle, so the result depends only on
    which cards are hidden and on ``rng``, never on where they really lay:
    two states that look the same to a player redeal the same way.
    """
    pool = sorted(card for group in groups for card in group)
    rng.shuffle(pool)
    dealt: list[list[Any]] = []
    at = 0
    for group in groups:
        dealt.append(pool[at:at + len(group)])
        at += len(group)
    return dealt


class Game(ABC):
    """One match of a game in progress."""

    INFO: ClassVar[GameInfo]
    # Reveals the rules make: reason (as returned by ``reveals``) -> why the
    # rules allow it. The flow-leak check refuses a reason not listed here.
    REVEALS: ClassVar[dict[str, str]] = {}
    # Observation keys that only describe the flow (whose turn, which kind of
    # step): the flow-leak check compares what a player saw without them.
    FLOW_KEYS: ClassVar[tuple[str, ...]] = ("current_player", "phase", "step")

    num_players: int
    rng: random.Random
    decisions: int
    # Human-readable narration of events (deals, scoring); None = off.
    events: list[str] | None

    # ---- construction -------------------------------------------------
    @classmethod
    def new(cls, num_players: int, seed: int, narrate: bool = False) -> Self:
        cls.INFO.check_players(num_players)
        game = cls.__new__(cls)
        game.num_players = num_players
        game.rng = random.Random(seed)
        game.decisions = 0
        game.events = [] if narrate else None
        game.setup()
        return game

    @abstractmethod
    def setup(self) -> None:
        """Deal and prepare the first decision, using only ``self.rng``."""

    # ---- test positions -----------------------------------------------
    @classmethod
    def position(cls, num_players: int, seed: int = 0, **fields: Any) -> Self:
        """A position for a test or an example: ``new(num_players, seed)``,
        then the named fields replaced (see :meth:`set_position`).

        ``KingsOrder.position(3, hands=[...], set_aside=[...], to_act=1)``
        """
        game = cls.new(num_players, seed)
        game.set_position(**fields)
        return game

    def set_position(self, **fields: Any) -> None:
        """Replace fields of the state by name, for tests and examples.

        Only fields the engine already has may be set, so a renamed field
        fails loudly instead of adding an attribute nobody reads. The engine
        then recomputes whatever it derives from them
        (:meth:`_position_changed`). Consistency (every card exactly once,
        a legal seat to act) is the caller's to keep.
        """
        unknown = sorted(name for name in fields if not self._is_position_field(name))
        if unknown:
            settable = sorted(n for n in vars(self) if self._is_position_field(n))
            raise GameError(f"{self.INFO.slug}: a position has no field(s) {unknown}; "
                            f"fields: {settable}")
        for name, value in fields.items():
            setattr(self, name, value)
        self._position_changed(set(fields))

    def _is_position_field(self, name: str) -> bool:
        return (not name.startswith("_") and name not in ("rng", "events")
                and name in vars(self))

    def _position_changed(self, changed: set[str]) -> None:
        """Recompute state derived from the fields ``set_position`` changed.
        Engines that cache derived values override this."""
        return None

    # ---- flow ------------------------------------------------------------
    @abstractmethod
    def current_player(self) -> int:
        """Seat to act; -1 once the game is terminal."""

    @abstractmethod
    def legal_actions(self) -> list[Action]:
        """Legal actions of the current player, deterministic order, never empty
        while the game is not terminal."""

    @abstractmethod
    def _apply(self, action: Action) -> None:
        """Apply a legal action (not checked)."""

    @abstractmethod
    def is_terminal(self) -> bool: ...

    def apply(self, action: Action) -> None:
        """Apply an action, refusing anything that is not legal."""
        if self.is_terminal():
            raise IllegalActionError(f"{self.INFO.slug}: the game is over")
        legal = self.legal_actions()
        if action not in legal:
            raise IllegalActionError(
                f"{self.INFO.slug}: {action!r} is not legal for seat "
                f"{self.current_player()}; legal: {legal[:20]!r}"
                + (" ..." if len(legal) > 20 else "")
            )
        self.apply_unchecked(action)

    def apply_unchecked(self, action: Action) -> None:
        """Fast path for search: the caller guarantees legality."""
        self.decisions += 1
        self._apply(action)

    # ---- information -----------------------------------------------------
    @abstractmethod
    def observation(self, player: int) -> Observation:
        """Exactly what ``player`` may know now."""

    @abstractmethod
    def scores(self) -> list[float]:
        """Score of every seat as it stands (team games: the team's score)."""

    def rank_keys(self) -> list[Any]:
        """Sort keys per seat, larger is better: score, then the game's own
        tie-break. Override to add the tie-break."""
        return list(self.scores())

    def standings(self) -> list[int]:
        """Rank per seat, 1 = best; ties share the rank. In team games teams
        are ranked (1st, 2nd, ...) and every member gets the team's rank."""
        return ranks_by_unit(self.rank_keys(), self.teams())

    def teams(self) -> tuple[tuple[int, ...], ...] | None:
        return self.INFO.teams(self.num_players)

    def reveals(self, action: Action, player: int) -> tuple | None:
        """What applying ``action`` now rightly shows ``player`` of information
        hidden from them before, or None when it shows nothing hidden.

        The flow-leak check (``games.testing.check_flow_leaks``) applies the
        same action to states that ``player`` cannot tell apart and requires
        the same observation, seat to act and decision count afterwards. Some
        steps differ there by the rules, not by a leak: a deck card turned
        face up, hands shown at scoring, a forced pass of a player who cannot
        play. Declare those here: a tuple whose first item is a reason listed
        in ``REVEALS`` and whose other items are what is shown (e.g.
        ``("tile turned face up", name)``). The check compares two states
        further only when their reveals are equal, so give exactly what the
        rules show: naming more (a whole hand where only its penalty is
        shown) leaves states uncompared and hides leaks from the check;
        naming less makes it fail.
        """
        return None

    def _peek(self, action: Action) -> Self:
        """A clone with ``action`` applied, narration off: a helper for
        ``reveals`` (the step's public consequences, read off the result)."""
        twin = self.clone()
        twin.events = None
        twin.apply_unchecked(action)
        return twin

    # ---- copies and hidden information ----------------------------------
    def clone(self) -> Self:
        """An independent copy; engines may override with a faster one
        (start from ``_shallow_twin()`` and copy the mutable fields)."""
        return copy.deepcopy(self)

    def _shallow_twin(self) -> Self:
        """A shallow copy with its own rng and event list: the common start of
        a hand-written ``clone``."""
        twin = self.__class__.__new__(self.__class__)
        twin.__dict__.update(self.__dict__)
        twin.rng = copy_rng(self.rng)
        twin.events = None if self.events is None else list(self.events)
        return twin

    @abstractmethod
    def redeal(self, player: int, seed: int) -> Self:
        """A state identical from ``player``'s view, hidden parts resampled."""

    def _fresh_copy_for_redeal(self, seed: int) -> Self:
        """Helper: a clone whose rng is reseeded (future chance unknown)."""
        state = self.clone()
        state.rng = random.Random(seed)
        return state

    # ---- from one seat's view (determinization) ---------------------------
    @classmethod
    def from_observation(cls, obs: Observation, seed: int, decisions: int = 0) -> Self:
        """A full state that the seat ``obs["seat"]`` cannot tell from the real
        one, built from its observation alone: what a search bot samples and
        searches (``games.determinize.from_observation(slug, obs, seed)``).

        ``obs`` is the observation as it arrives over the wire (msgpack:
        tuples read back as lists). The returned state must satisfy:

        * its ``observation(obs["seat"])`` equals ``obs`` on the wire;
        * when that seat is to act, ``current_player()`` is that seat and
          ``legal_actions()`` equal, on the wire, the legal list the harness
          sent with ``obs``; it plays on legally to a proper end;
        * everything hidden from the seat (other hands, draw piles, deck
          order, face-down and set-aside cards, others' secret choices) is
          sampled from ``seed`` alone, and the state's ``rng`` is seeded from
          it too, so future chance is fresh;
        * it reads the observation only: nothing hidden ever enters.
          Inferences from the public record (a void shown by play) may be
          kept; say which in the module docstring.

        ``decisions`` is the state's decision counter (the harness sends it
        with every ``act``); it only matters for the game's decision cap.
        Build it as ``state, rng = cls._blank_from_observation(obs, seed,
        decisions)``, set every field from ``obs``, sampling the hidden ones
        with ``rng`` (``games.sampling`` helps), and ``return
        state._seed_future(rng)``. The conformance kit checks it
        (``games.testing.check_from_observation``).
        """
        raise NotImplementedError(f"{cls.INFO.slug}: from_observation is not implemented")

    @classmethod
    def _blank_from_observation(cls, obs: Observation, seed: int, decisions: int) -> tuple[Self, random.Random]:
        """Helper for ``from_observation``: a state with only the contract's
        fields set (player count from ``obs``, narration off), and the
        generator to sample the hidden parts with, seeded from ``seed``."""
        state = cls.__new__(cls)
        state.num_players = obs["num_players"]
        state.rng = random.Random(0)
        state.decisions = decisions
        state.events = None
        return state, random.Random(seed)

    def _seed_future(self, rng: random.Random) -> Self:
        """Helper for ``from_observation``, its last step: the state's own
        ``rng`` (future chance) seeded from the sampling generator."""
        self.rng = random.Random(rng.getrandbits(64))
        return self

    # ---- people ------------------------------------------------------------
    def describe_action(self, action: Action) -> str:
        """The current player's action in words people understand."""
        return repr(action)

    def narrate(self, text: str) -> None:
        if self.events is not None:
            self.events.append(text)
