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
from itertools import chain, compress
from operator import not_
from pathlib import Path
from typing import Any, Protocol

import msgpack

from harness.proc.processes import tree_cpu_seconds

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 4 << 20
STDERR_TAIL_BYTES = 4096
QUIT_GRACE_S = 0.5


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


class BotLimitExceeded(BotError):
    """A resource limit of the slot (memory, CPU, processes, file size) was broken."""

    kind = "limit"


class BotStateError(RuntimeError):
    """The harness used a client in the wrong state (a harness bug)."""


# ---- reading replies ---------------------------------------------------------
# The caps on a reply bound what one can cost the harness. The largest reply
# the games need is 49 bytes (an action of tile_hunt echoed; no game's action
# has over 5 items or nests below its first level: `python -m
# harness.bench.reader --games`), so they leave a wide margin while keeping
# decoding and checking any reply under a millisecond. 64 KiB replies cost
# 4 ms to decode alone: a byte can be a whole container, so the byte cap
# bounds the objects made; msgpack allocates a claimed array's length before
# its items arrive (up to 1,024 arrays open at once), so the item cap bounds
# the memory held (at 1,024 items, 8 MiB and 4.5 ms for one 4 KiB reply).
MAX_REPLY_BYTES = 4 << 10
MAX_CONTAINER_ITEMS = 64
MAX_STRING_BYTES = 1 << 10
MAX_DEPTH = 8


def _describe(data: bytes) -> str:
    return repr(bytes(data[:40]))[2:-1] + ("..." if len(data) > 40 else "")


def _looks_like_text(data: bytes) -> bool:
    sample = bytes(data[:64])
    return len(sample) >= 2 and all(32 <= b < 127 or b in (9, 10, 13) for b in sample)


class ReplyReader:
    """Decodes a bot's stdout into messages, one at a time. No byte sequence
    can make it raise anything but :class:`BotBadMessage`, or make it hold more
    than MAX_REPLY_BYTES: the caps on reply, container and string sizes and
    nesting bound both the memory and the time that one reply can cost the
    harness (decoding and checking any reply: well under a millisecond, a few
    times a plain decode; ``python -m harness.bench.reader`` measures it)."""

    def __init__(self) -> None:
        self._new_unpacker()

    def _new_unpacker(self) -> None:
        self._unpacker = msgpack.Unpacker(
            raw=False, strict_map_key=True, max_buffer_size=MAX_REPLY_BYTES,
            max_str_len=MAX_STRING_BYTES, max_bin_len=MAX_STRING_BYTES,
            max_array_len=MAX_CONTAINER_ITEMS, max_map_len=MAX_CONTAINER_ITEMS,
            max_ext_len=0)
        self._fed = 0
        self._head = b""  # the first bytes of the current reply, for messages

    def feed(self, data: bytes) -> None:
        if self._fed - self._unpacker.tell() + len(data) > MAX_REPLY_BYTES:
            raise BotBadMessage(f"reply larger than the protocol allows ({MAX_REPLY_BYTES} bytes)")
        if len(self._head) < 64:
            self._head += bytes(data[:64 - len(self._head)])
        try:
            self._unpacker.feed(data)
        except Exception as exc:  # noqa: BLE001 - BufferFull and friends: any failure is the bot's
            raise BotBadMessage(f"reply larger than the protocol allows ({exc})") from None
        self._fed += len(data)

    def buffered(self) -> int:
        """Bytes received but not yet part of a decoded message."""
        return self._fed - self._unpacker.tell()

    def next_message(self) -> tuple[bool, Any]:
        """(True, message) for a complete message, (False, None) if more bytes are needed."""
        try:
            message = next(self._unpacker)
        except StopIteration:
            return False, None
        except Exception as exc:  # noqa: BLE001 - whatever msgpack raises, the bot sent it
            head = self._head
            self._head = b""
            if _looks_like_text(head):
                raise BotBadMessage(f"your bot wrote text to stdout: '{_describe(head)}'; "
                                    "logs go to stderr, stdout is for MessagePack only") from None
            reason = type(exc).__name__ + (f": {exc}" if str(exc) else "")
            raise BotBadMessage(f"not valid MessagePack ({reason}) in bytes "
                                f"'{_describe(head)}'") from None
        head = self._head
        self._head = b""
        if not isinstance(message, dict) and _looks_like_text(head):
            raise BotBadMessage(f"your bot wrote text to stdout: '{_describe(head)}'; "
                                "logs go to stderr, stdout is for MessagePack only")
        if not _within_depth(message, MAX_DEPTH):
            raise BotBadMessage(f"reply nested deeper than {MAX_DEPTH} levels")
        return True, message


_IS_CONTAINER = frozenset((list, dict)).__contains__
_IS_DICT = frozenset((dict,)).__contains__


def _within_depth(message: Any, depth: int) -> bool:
    """Whether ``message`` nests arrays and maps at most ``depth`` levels deep.

    It walks a level at a time with C iterators (``map``, ``compress``,
    ``chain``), never running Python code per value: a recursive walk cost a
    Python call per value, 20 times the decode itself for a reply of many
    tiny containers. Keys need no look: ``strict_map_key`` makes them strings."""
    if depth > 0 and type(message) is dict and not any(map(_IS_CONTAINER, map(type, message.values()))):
        return True  # the usual reply, a flat map: one pass over its values
    level = [message]
    for _ in range(depth):
        containers = list(filter(None, compress(level, map(_IS_CONTAINER, map(type, level)))))
        if not containers:
            return True  # empty containers have nothing below them
        is_dict = list(map(_IS_DICT, map(type, containers)))
        if any(is_dict):
            containers = [*map(dict.values, compress(containers, is_dict)),
                          *compress(containers, map(not_, is_dict))]
        level = list(chain.from_iterable(containers))
    return not any(map(_IS_CONTAINER, map(type, level)))


# ---- transports -----------------------------------------------------------
class Transport(Protocol):
    def send(self, message: dict[str, Any], deadline: float) -> None: ...
    def receive(self, deadline: float) -> Any: ...
    def receive_ready(self, ready: Sequence[int]) -> tuple[bool, Any]: ...
    def wait_fds(self) -> tuple[int, ...]: ...
    def ensure_quiet(self) -> None: ...
    def alive(self) -> bool: ...
    def stderr_tail(self) -> str: ...
    def cpu_seconds(self) -> float: ...
    def live_breach(self) -> str: ...
    def close(self, grace_s: float) -> None: ...


class PipeTransport:
    """A bot process on stdin/stdout pipes, in a session and process group of
    its own. ``cleanup`` runs after the process is gone (the sandbox slot's
    control groups, its private temporary directory); ``limits_hint`` turns
    an exit into the resource limit that caused it, where one did."""

    def __init__(self, command: Sequence[str], cwd: Path | None = None,
                 env: dict[str, str] | None = None, *,
                 slot: SlotResources | None = None) -> None:
        self.slot = slot
        try:
            self.process = subprocess.Popen(
                list(command), cwd=cwd, env=env, stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, bufsize=0,
                start_new_session=True, close_fds=True,
            )
        except OSError as exc:
            if slot is not None:
                slot.release()
            raise BotStartupError(f"cannot start {list(command)!r}: {exc}") from exc
        assert self.process.stdout and self.process.stdin and self.process.stderr
        self._stdout_fd = self.process.stdout.fileno()
        self._stdin_fd = self.process.stdin.fileno()
        os.set_blocking(self._stdin_fd, False)
        self._exit_fd = _pidfd(self.process.pid)
        # poll objects made once: no descriptor lists rebuilt per decision
        self._quiet = select.poll()
        self._quiet.register(self._stdout_fd, select.POLLIN)
        self._watch = select.poll()
        self._watch.register(self._stdout_fd, select.POLLIN)
        if self._exit_fd is not None:
            self._watch.register(self._exit_fd, select.POLLIN)
        self._packer = msgpack.Packer()  # the bytes of msgpack.packb, without a new Packer each time
        self._reader = ReplyReader()
        self._stderr = _StderrDrain(self.process.stderr)
        self._closed = False
        self.exited_by_itself: bool | None = None  # known after close()

    def stderr_tail(self, wait_s: float = 0.0) -> str:
        """The last STDERR_TAIL_BYTES; ``wait_s`` waits that long for end of file."""
        return self._stderr.tail(wait_s)

    def alive(self) -> bool:
        return self.process.poll() is None

    def cpu_seconds(self) -> float:
        if self.slot is not None:
            return self.slot.cpu_seconds(self.process.pid)
        return tree_cpu_seconds(self.process.pid)

    def live_breach(self) -> str:
        """A limit the running bot has hit already ('' if none)."""
        return self.slot.live_breach() if self.slot is not None else ""

    def send(self, message: dict[str, Any], deadline: float) -> None:
        """Write without ever blocking past the deadline: a bot that stops
        reading its input must not hang the harness."""
        data = self._packer.pack(message)
        written = self._write_some(data)
        if written < len(data):  # the pipe is full: wait for the bot to read, up to the deadline
            self._send_rest(memoryview(data)[written:], deadline)

    def _send_rest(self, data: memoryview, deadline: float) -> None:
        while data:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([], [self._stdin_fd], [], remaining)[1]:
                raise BotTimeout("bot stopped reading its input before the deadline")
            data = data[self._write_some(data):]

    def _write_some(self, data: bytes | memoryview) -> int:
        """Bytes the pipe took now (0 when full)."""
        try:
            return os.write(self._stdin_fd, data)
        except BlockingIOError:
            return 0
        except OSError as exc:
            raise self._exit_error(f"bot closed its input: {exc}") from None

    def ensure_quiet(self) -> None:
        """Between a reply and the next request a bot must say nothing: bytes
        waiting now were sent unasked, and would otherwise answer a later
        decision."""
        if self._reader.buffered():
            raise BotBadMessage("sent more than one message for one request")
        if self._quiet.poll(0):
            data = os.read(self._stdout_fd, 64)
            if not data:
                raise self._exit_error()
            raise BotBadMessage(f"sent a message when none was expected: '{_describe(data)}'")

    def receive(self, deadline: float) -> Any:
        looked_late = False
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                # Bytes already in the pipe arrived in time, even if the harness
                # (busy with another match, or descheduled) reads them late.
                if looked_late or not self._quiet.poll(0):
                    raise self._timeout_error()
                looked_late = True
                remaining = 0.0
            # poll takes whole milliseconds: round up, the loop checks the deadline itself
            ready = self._watch.poll(int(remaining * 1000) + 1)
            if not ready:
                if deadline - time.monotonic() <= 0:
                    raise self._timeout_error()
                continue
            complete, message = self.receive_ready([fd for fd, _ in ready])
            if complete:
                return message

    def wait_fds(self) -> tuple[int, ...]:
        """What to poll for a reply: stdout, and the process's exit where the
        kernel offers a descriptor for it (the first is always stdout)."""
        return (self._stdout_fd,) if self._exit_fd is None else (self._stdout_fd, self._exit_fd)

    def receive_ready(self, ready: Sequence[int]) -> tuple[bool, Any]:
        """One step of :meth:`receive` (which waits for the next), for a
        caller that polls many bots at once too: ``ready`` holds this bot's
        descriptors that poll reported. Reads what is there without waiting:
        (True, message) once a reply is whole, (False, None) while more bytes
        are needed."""
        reader = self._reader
        complete, message = reader.next_message()
        if not complete:
            if self._stdout_fd not in ready:
                # The bot exited while something it started still holds stdout open.
                raise self._exit_error()
            data = os.read(self._stdout_fd, 65536)
            if not data:
                raise self._exit_error()
            reader.feed(data)
            complete, message = reader.next_message()
            if not complete:
                return False, None
        if reader.buffered():
            raise BotBadMessage("sent more than one message for one request")
        return True, message

    def _timeout_error(self) -> BotError:
        """A bot that broke a limit and then went quiet (a memory bomb thrashing
        against its cap) is reported for the limit, not for thinking too long."""
        if self.slot is not None:
            breach = self.slot.limit_breach(None, self._stderr.tail())
            if breach:
                return BotLimitExceeded(f"{breach} (and it gave no answer before the deadline)")
        return BotTimeout("no answer before the deadline")

    def _exit_error(self, what: str = "") -> BotError:
        code = self._wait_briefly()
        if self.slot is not None:
            breach = self.slot.limit_breach(code, self._stderr.tail(wait_s=0.2))
            if breach:
                return BotLimitExceeded(breach)
        if what:
            return BotCrashed(what)
        return BotCrashed(f"bot exited ({_exit_text(code)})")

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
        assert process.stdin is not None and process.stdout is not None
        try:
            process.stdin.close()
        except OSError:
            pass
        if process.poll() is None and grace_s > 0:
            try:
                process.wait(timeout=grace_s)
            except subprocess.TimeoutExpired:
                pass
        self.exited_by_itself = process.poll() is not None
        # The whole group goes; in a sandbox the kernel then ends its PID namespace.
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        process.wait()
        if self.slot is not None:
            self.slot.release()
        process.stdout.close()
        if self._exit_fd is not None:
            os.close(self._exit_fd)
        self._stderr.finish()


def _exit_text(code: int | None) -> str:
    if code is None:
        return "still running, but its output is closed"
    if code < 0 or code > 128:
        number = -code if code < 0 else code - 128
        try:
            return f"killed by {signal.Signals(number).name}"
        except ValueError:
            return f"exit code {code}"
    return f"exit code {code}"


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


class _StderrDrain:
    """Reads a bot's stderr all the time (a bot that logs a lot must never
    block on a full pipe) and keeps the last STDERR_TAIL_BYTES. The thread
    owns the file and closes it itself, so its descriptor number can never be
    reused under it for another bot's pipe."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._tail: collections.deque[int] = collections.deque(maxlen=STDERR_TAIL_BYTES)
        self._stop = threading.Event()
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        fd = self._stream.fileno()
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([fd], [], [], 0.2)
                if not ready:
                    continue
                chunk = os.read(fd, 65536)
                if not chunk:
                    return
                with self._lock:
                    self._tail.extend(chunk)
        except (OSError, ValueError):
            return
        finally:
            self._stream.close()
            self._done.set()

    def tail(self, wait_s: float = 0.0) -> str:
        if wait_s:
            self._done.wait(wait_s)
        with self._lock:
            return bytes(self._tail).decode("utf-8", "replace")

    def finish(self) -> None:
        """Wait for end of file (the process is dead), then stop reading anyway:
        something the bot started may hold stderr open."""
        self._done.wait(1.0)
        self._stop.set()
        self._thread.join(timeout=1.0)


class SlotResources(Protocol):
    """What a sandbox slot offers the transport (see harness.proc.sandbox)."""

    def cpu_seconds(self, pid: int) -> float: ...
    def live_breach(self) -> str: ...
    def limit_breach(self, exit_code: int | None, stderr_tail: str) -> str: ...
    def release(self) -> None: ...


class FakeTransport:
    """Scripted replies for unit tests: each entry is a message to return,
    raw ``bytes`` to decode as if the bot wrote them, an exception to raise,
    or a callable taking the sent message."""

    def __init__(self, replies: Sequence[Any]) -> None:
        self.replies = collections.deque(replies)
        self.sent: list[dict[str, Any]] = []
        self.closed = 0
        self.cpu = 0.0

    def send(self, message: dict[str, Any], deadline: float = 0.0) -> None:
        self.sent.append(message)

    def ensure_quiet(self) -> None:
        pass

    def receive(self, deadline: float) -> Any:
        if not self.replies:
            raise BotTimeout("fake transport has no reply left")
        reply = self.replies.popleft()
        if isinstance(reply, BaseException):
            raise reply
        if isinstance(reply, bytes):
            return self._decode(reply)
        if callable(reply):
            return reply(self.sent[-1])
        return reply

    def receive_ready(self, ready: Sequence[int]) -> tuple[bool, Any]:
        return True, self.receive(0.0)

    def wait_fds(self) -> tuple[int, ...]:
        return ()  # always ready: a poller never waits on a fake

    @staticmethod
    def _decode(data: bytes) -> Any:
        reader = ReplyReader()
        reader.feed(data)
        complete, message = reader.next_message()
        if not complete:
            raise BotTimeout("incomplete reply")
        if reader.buffered():
            raise BotBadMessage("sent more than one message for one request")
        return message

    def alive(self) -> bool:
        return not self.closed

    def stderr_tail(self) -> str:
        return ""

    def cpu_seconds(self) -> float:
        return self.cpu

    def live_breach(self) -> str:
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


CPU_CHECK_INTERVAL_S = 0.02


class BotClient:
    """Protocol v1 from the harness side.

    ``cpu_limit_s`` caps the CPU time the bot's processes use per match,
    counted from the end of its previous match (so CPU burnt while idle
    between matches counts too); None or 0 means no cap."""

    def __init__(self, transport: Transport, label: str = "bot",
                 cpu_limit_s: float | None = None) -> None:
        self.transport = transport
        self.label = label
        self.state = BotState.NEW
        self.name: str | None = None
        self.matches_played = 0
        self.cpu_limit_s = cpu_limit_s or None
        self._cpu_mark = 0.0
        self._cpu_checked_at = 0.0
        self._asked: tuple[list[Any], int, float] = ([], -1, 0.0)
        self.trace: Tracer | None = None

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

    def _send(self, message: dict[str, Any], deadline: float) -> None:
        if self.trace is not None:
            self.trace("to", self.label, message)
        try:
            self.transport.ensure_quiet()
            self.transport.send(message, deadline)
        except BotError as error:
            raise self._fault(error) from None

    def _exchange(self, message: dict[str, Any], deadline: float, expect: str) -> dict[str, Any]:
        self._send(message, deadline)
        try:
            reply = self.transport.receive(deadline)
        except BotError as error:
            raise self._fault(error) from None
        return self._expected(reply, expect)

    def _expected(self, reply: Any, expect: str) -> dict[str, Any]:
        """The reply, traced, if it is the ``expect`` message; else its fault."""
        if self.trace is not None:
            self.trace("from", self.label, reply)
        problem = _reply_problem(reply, expect)
        if problem:
            raise self._fault(BotBadMessage(problem))
        return reply  # _reply_problem checked it is a map

    def handshake(self, timeout_s: float) -> None:
        self._require(BotState.NEW)
        reply = self._exchange({"type": "hello", "protocol": PROTOCOL_VERSION},
                               time.monotonic() + timeout_s, "hello")
        if reply.get("protocol") != PROTOCOL_VERSION:
            raise self._fault(BotBadMessage(
                f"bot speaks protocol {reply.get('protocol')!r:.40}, harness speaks {PROTOCOL_VERSION}"))
        name = reply.get("name", self.label)
        self.name = name if isinstance(name, str) else self.label
        self.state = BotState.READY
        self._cpu_mark = self.transport.cpu_seconds() if self.cpu_limit_s else 0.0

    def start_match(self, info: dict[str, Any], timeout_s: float = 2.0) -> None:
        self._require(BotState.READY)
        self._send({"type": "start", **info}, time.monotonic() + timeout_s)
        self.state = BotState.PLAYING

    def choose(self, obs: dict[str, Any], legal: list[Any], decision: int, time_ms: int) -> int:
        """Ask for an action and wait for it; returns a valid index into ``legal``."""
        self.ask(obs, legal, decision, time_ms)
        return self.await_answer()

    # ask() then answer(): choose() in two halves, for a caller that keeps
    # several matches in flight on one thread and polls their bots together.
    def ask(self, obs: dict[str, Any], legal: list[Any], decision: int, time_ms: int) -> float:
        """Send an ``act`` request that gives the bot ``time_ms`` (its
        ``time_left_ms``, as is); returns its deadline (time.monotonic)."""
        if self.state is not BotState.PLAYING:
            self._require(BotState.PLAYING)
        deadline = time.monotonic() + time_ms / 1000
        self._send({"type": "act", "decision": decision, "obs": obs, "legal": legal,
                    "time_left_ms": time_ms}, deadline)
        self._asked = (legal, decision, deadline)
        return deadline

    def answer(self, ready: Sequence[int] | None) -> int | None:
        """The asked decision's index, from what the bot sent. ``ready``: the
        bot's descriptors that poll reported, to read without waiting (None
        while the reply is incomplete); None: wait for the reply up to the
        deadline (once it has passed, bytes already in the pipe still count,
        else it is a timeout)."""
        legal, decision, deadline = self._asked
        try:
            if ready is None:
                reply = self.transport.receive(deadline)
            else:
                complete, reply = self.transport.receive_ready(ready)
                if not complete:
                    return None
        except BotError as error:
            raise self._fault(error) from None
        return self._accept(self._expected(reply, "action"), legal, decision)

    def await_answer(self) -> int:
        """answer() for a caller that waits: blocks until the reply or the deadline."""
        index = self.answer(None)
        assert index is not None  # answer(None) returns a whole reply's index or raises
        return index

    def wait_fds(self) -> tuple[int, ...]:
        return self.transport.wait_fds()

    @property
    def deadline(self) -> float:
        """The asked decision's deadline (time.monotonic)."""
        return self._asked[2]

    def _accept(self, reply: dict[str, Any], legal: list[Any], decision: int) -> int:
        """The valid index a well-formed ``action`` reply names, or its fault."""
        echoed = reply.get("decision", decision)
        if echoed != decision or isinstance(echoed, bool):
            raise self._fault(BotBadMessage(
                f"a stale reply: it answers decision {echoed!r:.20}, but decision {decision} "
                "was asked"))
        index = reply.get("index")
        if type(index) is int and 0 <= index < len(legal):
            pass  # the usual answer; anything else goes the long way, to its fault
        else:
            index = self._index_of(reply, legal)
        if time.monotonic() - self._cpu_checked_at >= CPU_CHECK_INTERVAL_S:
            self._check_limits(force=False)
        return index

    def _check_limits(self, force: bool) -> float | None:
        """CPU per match and live limits (refused forks); at most every
        CPU_CHECK_INTERVAL_S, since each check reads /proc or cgroup files.
        Returns the CPU seconds read (None: not read)."""
        now = time.monotonic()
        if not force and now - self._cpu_checked_at < CPU_CHECK_INTERVAL_S:
            return None
        self._cpu_checked_at = now
        breach = self.transport.live_breach()
        if breach:
            raise self._fault(BotLimitExceeded(breach))
        if not self.cpu_limit_s:
            return None
        cpu = self.transport.cpu_seconds()
        used = cpu - self._cpu_mark
        if used > self.cpu_limit_s:
            raise self._fault(BotLimitExceeded(
                f"CPU limit: the bot's processes used {used:.1f} s of CPU in this match "
                f"(limit {self.cpu_limit_s:g} s per match)"))
        return cpu

    def _index_of(self, reply: dict[str, Any], legal: list[Any]) -> int:
        if "index" in reply:
            index = reply["index"]
            if isinstance(index, bool) or not isinstance(index, int):
                raise self._fault(BotBadMessage(f"index must be an int, got {index!r:.60}"))
            if not 0 <= index < len(legal):
                raise self._fault(BotIllegalAction(
                    f"index {index} out of range: {len(legal)} legal actions"))
            return index
        value = reply["action"]
        for position, action in enumerate(legal):
            if _same_on_the_wire(action, value):
                return position
        raise self._fault(BotIllegalAction(f"action {value!r:.60} is not legal"))

    def check_limits(self) -> None:
        """Read the live limits now, whenever the last reading was: a breach
        made during the match's last decisions is that match's fault (the
        reading after its ``end`` message only replaces the process)."""
        self._require(BotState.PLAYING)
        self._check_limits(force=True)

    def end_match(self, result: dict[str, Any], timeout_s: float = 2.0) -> None:
        self._require(BotState.PLAYING)
        self._send({"type": "end", **result}, time.monotonic() + timeout_s)
        cpu = self._check_limits(force=True)
        self.matches_played += 1
        self.state = BotState.READY
        if cpu is not None:  # the next match counts from this reading
            self._cpu_mark = cpu

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
                self.transport.send({"type": "quit"}, time.monotonic() + QUIT_GRACE_S)
            except BotError:
                polite = False
        self.state = BotState.CLOSED
        self.transport.close(QUIT_GRACE_S if polite else 0.0)


def _reply_problem(reply: Any, expect: str) -> str:
    """Why a decoded reply is not the message the protocol expects ('' if it is)."""
    if not isinstance(reply, dict):
        return f"expected a map, got {type(reply).__name__}: {reply!r:.80}"
    for key in reply:
        if not isinstance(key, str):
            return f"map keys must be strings: {reply!r:.80}"
    if reply.get("type") != expect:
        return f"expected a {expect!r} message, got {reply!r:.120}"
    if expect == "action":
        has_index, has_action = "index" in reply, "action" in reply
        if has_index and has_action:
            return "an action message must hold index or action, not both"
        if not (has_index or has_action):
            return "action message without index or action"
    return ""


def _same_on_the_wire(legal: Any, value: Any) -> bool:
    """Compare as MessagePack does: tuples are arrays, True is not 1."""
    if isinstance(legal, (tuple, list)):
        return (isinstance(value, list) and len(value) == len(legal)
                and all(_same_on_the_wire(a, b) for a, b in zip(legal, value)))
    if isinstance(value, (list, dict)) or isinstance(value, bool) != isinstance(legal, bool):
        return False
    return type(value) is type(legal) and value == legal or (
        isinstance(value, (int, float)) and isinstance(legal, (int, float)) and value == legal)


Tracer = Callable[[str, str, Any], None]  # direction ("to" or "from"), bot label, message
