"""Bot processes, handled like python-chess's ``chess.engine``.

A :class:`BotClient` speaks protocol v1 (PROTOCOL.md) over a
:class:`Transport`: a :class:`PipeTransport` to a real process (its own
process group, so a kill takes its children too), or a :class:`FakeTransport`
for unit tests. Every read has a wall-clock deadline. Anything that goes
wrong raises a :class:`BotError` subclass whose ``kind`` is what the match
runner records; after a fault the client is unusable and must be closed.
``close()`` is safe to call any number of times.
"""

from __future__ import annotations

import collections
import enum
import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import msgpack

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 4 << 20
STDERR_TAIL_BYTES = 4096
QUIT_GRACE_S = 0.5
SEND_TIMEOUT_S = 5.0


# ---- errors ---------------------------------------------------------------
class BotError(Exception):
    """A bot failed; ``kind`` names the fault as results record it."""

    kind = "error"

    def __init__(self, detail: str, stderr_tail: str = "") -> None:
        super().__init__(detail)
        self.detail = detail
        self.stderr_tail = stderr_tail


class BotStartupError(BotError):
    kind = "startup"


class BotTimeout(BotError):
    kind = "timeout"


class BotCrashed(BotError):
    kind = "crash"


class BotBadMessage(BotError):
    """Not msgpack, or msgpack that is not the message the protocol expects."""

    kind = "bad_message"


class BotIllegalAction(BotError):
    kind = "illegal_action"


class BotStateError(RuntimeError):
    """The harness used a client in the wrong state (a harness bug)."""


# ---- transports -----------------------------------------------------------
class Transport(Protocol):
    def send(self, message: dict[str, Any]) -> None: ...
    def receive(self, deadline: float) -> Any: ...
    def alive(self) -> bool: ...
    def stderr_tail(self) -> str: ...
    def close(self, grace_s: float) -> None: ...


class PipeTransport:
    """A bot process on stdin/stdout pipes, in a process group of its own."""

    def __init__(self, command: Sequence[str], cwd: Path | None = None,
                 env: dict[str, str] | None = None) -> None:
        try:
            self.process = subprocess.Popen(
                list(command), cwd=cwd, env=env, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                start_new_session=True,
            )
        except OSError as exc:
            raise BotStartupError(f"cannot start {list(command)!r}: {exc}") from exc
        self._stdout_fd = self.process.stdout.fileno()
        self._stdin_fd = self.process.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)
        self._unpacker = msgpack.Unpacker(raw=False, strict_map_key=False,
                                          max_buffer_size=MAX_MESSAGE_BYTES)
        self._stderr = collections.deque(maxlen=STDERR_TAIL_BYTES)
        self._stderr_thread = threading.Thread(target=self._drain_stderr, daemon=True)
        self._stderr_thread.start()
        self._closed = False

    def _drain_stderr(self) -> None:
        # Read stderr all the time: a bot that logs a lot must never block on a full pipe.
        fd = self.process.stderr.fileno()
        while True:
            try:
                chunk = os.read(fd, 65536)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            self._stderr.extend(chunk)

    def stderr_tail(self) -> str:
        return bytes(self._stderr).decode("utf-8", "replace")

    def alive(self) -> bool:
        return self.process.poll() is None

    def send(self, message: dict[str, Any]) -> None:
        """Write without ever blocking past SEND_TIMEOUT_S: a bot that stops
        reading its input must not hang the harness."""
        data = memoryview(msgpack.packb(message))
        deadline = time.monotonic() + SEND_TIMEOUT_S
        while data:
            try:
                written = os.write(self._stdin_fd, data)
            except BlockingIOError:
                written = 0
            except (BrokenPipeError, ConnectionResetError, OSError) as exc:
                raise BotCrashed(f"bot closed its input: {exc}") from exc
            data = data[written:]
            if data:
                remaining = deadline - time.monotonic()
                if remaining <= 0 or not select.select([], [self._stdin_fd], [], remaining)[1]:
                    raise BotTimeout("bot stopped reading its input")

    def receive(self, deadline: float) -> Any:
        while True:
            try:
                return next(self._unpacker)
            except StopIteration:
                pass
            except (msgpack.UnpackException, ValueError) as exc:
                raise BotBadMessage(f"not valid msgpack ({type(exc).__name__}{': ' if str(exc) else ''}{exc})") from exc
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise BotTimeout("no answer before the deadline")
            ready, _, _ = select.select([self._stdout_fd], [], [], remaining)
            if not ready:
                raise BotTimeout("no answer before the deadline")
            data = os.read(self._stdout_fd, 65536)
            if not data:
                code = self._wait_briefly()
                raise BotCrashed(f"bot exited (exit code {code})")
            try:
                self._unpacker.feed(data)
            except msgpack.BufferFull as exc:
                raise BotBadMessage("message larger than the protocol allows") from exc

    def _wait_briefly(self) -> int | None:
        try:
            return self.process.wait(timeout=0.2)
        except subprocess.TimeoutExpired:
            return None

    def close(self, grace_s: float = QUIT_GRACE_S) -> None:
        if self._closed:
            return
        self._closed = True
        process = self.process
        for stream in (process.stdin,):
            try:
                stream.close()
            except OSError:
                pass
        if process.poll() is None and grace_s > 0:
            try:
                process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
        # The whole group goes, including anything the bot started.
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()
        process.stdout.close()
        self._stderr_thread.join(timeout=1.0)
        process.stderr.close()


class FakeTransport:
    """Scripted replies for unit tests: each entry is a message to return, an
    exception to raise, or a callable taking the sent message."""

    def __init__(self, replies: Sequence[Any]) -> None:
        self.replies = collections.deque(replies)
        self.sent: list[dict[str, Any]] = []
        self.closed = 0

    def send(self, message: dict[str, Any]) -> None:
        self.sent.append(message)

    def receive(self, deadline: float) -> Any:
        if not self.replies:
            raise BotTimeout("fake transport has no reply left")
        reply = self.replies.popleft()
        if isinstance(reply, BaseException):
            raise reply
        if callable(reply):
            return reply(self.sent[-1])
        return reply

    def alive(self) -> bool:
        return not self.closed

    def stderr_tail(self) -> str:
        return ""

    def close(self, grace_s: float = 0.0) -> None:
        self.closed += 1


# ---- the client ------------------------------------------------------------
class BotState(enum.Enum):
    NEW = "new"
    READY = "ready"  # handshake done, between matches
    PLAYING = "playing"
    FAULTED = "faulted"
    CLOSED = "closed"


class BotClient:
    """Protocol v1 from the harness side."""

    def __init__(self, transport: Transport, label: str = "bot") -> None:
        self.transport = transport
        self.label = label
        self.state = BotState.NEW
        self.name: str | None = None
        self.matches_played = 0

    def _require(self, *states: BotState) -> None:
        if self.state not in states:
            raise BotStateError(f"{self.label}: not allowed in state {self.state.value}")

    def _fault(self, error: BotError) -> BotError:
        """Kill the process first, so its last stderr words are all read."""
        self.state = BotState.FAULTED
        self.transport.close(0.0)
        if not error.stderr_tail:
            error.stderr_tail = self.transport.stderr_tail()
        return error

    def _exchange(self, message: dict[str, Any], deadline: float) -> dict[str, Any]:
        try:
            self.transport.send(message)
            reply = self.transport.receive(deadline)
        except BotError as error:
            raise self._fault(error) from None
        if not isinstance(reply, dict):
            raise self._fault(BotBadMessage(f"expected a map, got {type(reply).__name__}: {reply!r:.80}"))
        return reply

    def handshake(self, timeout_s: float) -> None:
        self._require(BotState.NEW)
        reply = self._exchange({"type": "hello", "protocol": PROTOCOL_VERSION},
                               time.monotonic() + timeout_s)
        if reply.get("type") != "hello":
            raise self._fault(BotBadMessage(f"expected hello, got {reply!r:.120}"))
        if reply.get("protocol") != PROTOCOL_VERSION:
            raise self._fault(BotBadMessage(
                f"bot speaks protocol {reply.get('protocol')!r}, harness speaks {PROTOCOL_VERSION}"))
        self.name = str(reply.get("name", self.label))
        self.state = BotState.READY

    def start_match(self, info: dict[str, Any]) -> None:
        self._require(BotState.READY)
        try:
            self.transport.send({"type": "start", **info})
        except BotError as error:
            raise self._fault(error) from None
        self.state = BotState.PLAYING

    def choose(self, obs: dict[str, Any], legal: list[Any], decision: int, timeout_s: float) -> int:
        """Ask for an action; returns a valid index into ``legal``."""
        self._require(BotState.PLAYING)
        deadline = time.monotonic() + timeout_s
        reply = self._exchange({"type": "act", "decision": decision, "obs": obs, "legal": legal,
                                "time_left_ms": int(timeout_s * 1000)}, deadline)
        if reply.get("type") != "action":
            raise self._fault(BotBadMessage(f"expected an action, got {reply!r:.120}"))
        return self._index_of(reply, legal)

    def _index_of(self, reply: dict[str, Any], legal: list[Any]) -> int:
        if "index" in reply:
            index = reply["index"]
            if isinstance(index, bool) or not isinstance(index, int):
                raise self._fault(BotBadMessage(f"index must be an int, got {index!r:.60}"))
            if not 0 <= index < len(legal):
                raise self._fault(BotIllegalAction(
                    f"index {index} out of range: {len(legal)} legal actions"))
            return index
        if "action" in reply:
            try:
                return legal.index(reply["action"])
            except ValueError:
                raise self._fault(BotIllegalAction(
                    f"action {reply['action']!r:.60} is not legal")) from None
        raise self._fault(BotBadMessage("action message without index or action"))

    def end_match(self, result: dict[str, Any]) -> None:
        self._require(BotState.PLAYING)
        try:
            self.transport.send({"type": "end", **result})
        except BotError as error:
            raise self._fault(error) from None
        self.matches_played += 1
        self.state = BotState.READY

    @property
    def usable(self) -> bool:
        return self.state is BotState.READY and self.transport.alive()

    def close(self) -> None:
        """Ask the bot to quit, then kill its process group. Safe twice."""
        if self.state is BotState.CLOSED:
            return
        polite = self.state in (BotState.READY, BotState.PLAYING)
        if polite:
            try:
                self.transport.send({"type": "quit"})
            except BotError:
                polite = False
        self.state = BotState.CLOSED
        self.transport.close(QUIT_GRACE_S if polite else 0.0)


StartBot = Callable[[], BotClient]
