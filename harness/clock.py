"""One bot's time during one match: the account that ``harness.limits``'s
clock fields describe (PROTOCOL.md, "Clocks").

Each decision may take ``allowed_ms()``: decision_ms plus the bank left,
but never more than the clock left. What a decision took is charged after
its reply (``charge``), counted as the deadline counts it, from sending
``act`` to the complete reply, and never more than it was allowed (a reply
that arrived in time but was read late is not charged for the harness's
delay). The part over decision_ms comes out of the bank; all of it comes
off the clock, and the increment goes on. A bot whose clock is down to 0
with no increment gets 0 ms for its next decision: a timeout, whose
message says so (``timeout_note``). The harness keeps one SeatClock per seat
and match; nothing here reads the time, so it is tested without waiting.
"""

from __future__ import annotations

from typing import Any

from harness.limits import Limits


class SeatClock:
    """A seat's clock and bank in one match, under its bot's limits."""

    __slots__ = ("decision_ms", "clock_ms", "increment_ms", "bank_ms", "clock_left",
                 "bank_left", "decisions", "_fields")

    def __init__(self, limits: Limits) -> None:
        self.decision_ms = limits.decision_ms
        self.clock_ms = limits.clock_ms
        self.increment_ms = limits.increment_ms
        self.bank_ms = limits.bank_ms
        self.clock_left = float(limits.clock_ms)  # meaningless without a clock (clock_ms 0)
        self.bank_left = float(limits.bank_ms)
        self.decisions = 0  # decisions charged so far
        # act's fields, kept while they cannot change (no clock, no bank)
        self._fields: dict[str, Any] | None = None

    @property
    def fixed(self) -> bool:
        """The fixed per-decision limit alone: every decision is allowed the same."""
        return not self.clock_ms and not self.bank_ms

    def allowed_ms(self) -> int:
        """The next decision's hard deadline, in whole ms (its ``time_left_ms``)."""
        allowed = self.decision_ms + self.bank_left
        if self.clock_ms:
            allowed = min(allowed, self.clock_left)
        return max(0, int(allowed))

    def act_fields(self) -> dict[str, Any]:
        """What ``act`` carries besides ``time_left_ms``: the clock left before
        this decision (None without a clock), the increment, the bank left."""
        if self._fields is not None:
            return self._fields
        fields = {"clock_ms": int(self.clock_left) if self.clock_ms else None,
                  "increment_ms": self.increment_ms, "bank_ms": int(self.bank_left)}
        if self.fixed:
            self._fields = fields
        return fields

    def charge(self, took_ms: float) -> None:
        """A decision answered in ``took_ms``: its time off the bank and the
        clock (no more than it was allowed), then the increment on."""
        self.decisions += 1
        if self.fixed:
            return
        spent = min(max(0.0, took_ms), self.allowed_ms())
        self.bank_left = max(0.0, self.bank_left - max(0.0, spent - self.decision_ms))
        if self.clock_ms:
            self.clock_left = max(0.0, self.clock_left - spent) + self.increment_ms

    def timeout_note(self) -> str:
        """What a timeout of the next decision leaves of the bot's time (all it
        was allowed spent, no increment): '' for the fixed limit alone, else
        e.g. "; clock 0 ms left of 60000 (+500/decision) after 54 decisions"."""
        if self.fixed:
            return ""
        spent = self.allowed_ms()
        parts = []
        if self.clock_ms:
            increment = f" (+{self.increment_ms}/decision)" if self.increment_ms else ""
            parts.append(f"clock {max(0, int(self.clock_left - spent))} ms left of "
                         f"{self.clock_ms}{increment}")
        if self.bank_ms:
            drawn = max(0.0, spent - self.decision_ms)
            parts.append(f"bank {max(0, int(self.bank_left - drawn))} ms left of {self.bank_ms} "
                         f"(decision limit {self.decision_ms} ms)")
        decisions = f"{self.decisions} decision{'s' if self.decisions != 1 else ''}"
        return f"; {', '.join(parts)} after {decisions}"
