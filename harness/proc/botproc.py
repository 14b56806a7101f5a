"""Bot processes, handled like python-chess's ``chess.engine``.

A :class:`BotClient` speaks protocol v1 (PROTOCOL.md) over a
:class:`Transport`: a :class:`PipeTransport` to a real process (its own
process group, so a kill takes its children too), or a :class:`FakeTransport`
for unit tests. Every read has a wall-clock deadline. Anything that goes
wrong raises a :class:`BotError` subclass whose ``kind`` is what the match
runner records; after a fault the client is unusable and must be closed.
``close()`` is safe to call any number of times.

A bot speaks one of two encodings (PROTOCOLS, its manifest's ``protocol``):
MessagePack maps back to back, or JSON objects one a line. Each has its
reader (ReplyReader, JsonReplyReader) under the same caps and the same rule:
a reply is a map, so bytes that cannot start one (a debug line printed to
stdout, from any language) are a fault at once, named as text where they
look like text, instead of being decoded as whatever they happen to be.
"""

from __future__ import annotations

import array
import collections
import enum
import fcntl
import json
import os
import select
import signal
import subprocess
import termios
import threading
import time
from collections.abc import Callable, Sequence
from itertools import chain, compress
from operator import not_
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgpack

from harness.proc.processes import tree_cpu_seconds

if TYPE_CHECKING:
    from harness.clock import SeatClock

PROTOCOL_VERSION = 1
MAX_MESSAGE_BYTES = 4 << 20
STDERR_TAIL_BYTES = 4096
# each decision's stderr, where kept (league play --stderr, [logs] stderr = "all"):
# its first lines, within these caps
STDERR_DECISION_BYTES = 4096
STDERR_DECISION_LINES = 50
STDERR_SETTLE_S = 0.1  # the longest a reply waits for its stderr bytes already in the pipe
QUIT_GRACE_S = 0.5


# ---- errors ---------------------------------------------------------------
class BotError(Exception):
    """A bot failed; ``kind`` names the fault as results record it.
    ``after_match``: (match ID, seat) of the match whose ``end`` the bot had
    been sent when it failed, before it read anything of its next match
    (BotClient._ended_match): that match's fault, not the next one's."""

    kind = "error"
    after_match: tuple[str, int] | None = None

    def __init__(self, detail: str, stderr_tail: str = "") -> None:
        super().__init__(detail)
        self.detail = detail
        self.stderr_tail = stderr_tail


class BotStartupError(BotError):
    kind = "startup"


class BotTimeout(BotError):
    """No reply before the deadline; BotClient states the limit and the time
    waited in the detail (``NO_REPLY``: nothing came)."""

    kind = "timeout"


NO_REPLY = "no reply"


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
# The msgpack decoder's own caps, shared by both encodings: a JSON reply is
# held to them by decoding its MessagePack form (JsonReplyReader).
_UNPACK_CAPS = dict(max_str_len=MAX_STRING_BYTES, max_bin_len=MAX_STRING_BYTES,
                    max_array_len=MAX_CONTAINER_ITEMS, max_map_len=MAX_CONTAINER_ITEMS,
                    max_ext_len=0)
SHOWN_BYTES = 60  # of a bad reply, in its fault's detail and in --trace

# The wire encodings a manifest's `protocol` may name (PROTOCOL.md, "Framing").
PROTOCOLS = ("msgpack", "json")
# A reply is a map, so it can only start with a fixmap, map16 or map32 header.
_MAP_FIRST_BYTES = frozenset([*range(0x80, 0x90), 0xde, 0xdf])
_TEXT_ADVICE = "your bot wrote text to stdout (use stderr for debug output)"


def describe_bytes(data: bytes | bytearray, limit: int = SHOWN_BYTES) -> str:
    """The first ``limit`` bytes of ``data`` as a bytes literal: printable
    ASCII and escapes only (``b'debug\\n\\x1b'``), so it is safe on any
    terminal (safe_text.printable leaves it as it is) and shows the exact
    bytes."""
    return repr(bytes(data[:limit])) + ("..." if len(data) > limit else "")


def looks_like_text(data: bytes | bytearray) -> bool:
    """Whether bytes start like what a program prints (a debug line) rather
    than an encoded message: their first characters decode as printable
    UTF-8 (tabs and line ends too). Asked only of bytes that are not a reply
    anyway, so it chooses the fault's words, never whether it is one."""
    head = bytes(data[:16]).decode("utf-8", "replace")[:4]
    if head.lstrip(" \t").startswith('{"'):
        return False  # a JSON object: a message, if maybe not in the encoding expected
    return bool(head) and "\ufffd" not in head and all(
        char.isprintable() or char in "\t\r\n" for char in head)


class BadReplyBytes(BotBadMessage):
    """Bytes on stdout that are not a reply; ``raw`` holds the first of them
    (at most MAX_REPLY_BYTES), for ``--trace``."""

    def __init__(self, detail: str, raw: bytes | bytearray = b"") -> None:
        super().__init__(detail)  # raw optional: a pickled fault is rebuilt from its detail
        self.raw = bytes(raw[:MAX_REPLY_BYTES])


def _text_or(data: bytes | bytearray, otherwise: str) -> BadReplyBytes:
    """The fault for bytes that are not a reply: named as text where they
    look like it, else ``otherwise`` (which ends in the bytes shown)."""
    if looks_like_text(data):
        return BadReplyBytes(f"{_TEXT_ADVICE}: {describe_bytes(data)}", data)
    return BadReplyBytes(otherwise, data)


def unasked_fault(data: bytes) -> BotBadMessage:
    """The fault for bytes a bot sent when no reply was due."""
    return _text_or(data, f"sent a message when none was expected: {describe_bytes(data)}")


def extra_fault(data: bytes) -> BotBadMessage:
    """The fault for bytes that came after a whole reply, with it."""
    return _text_or(data, f"sent more than one message for one request: {describe_bytes(data)}")


class _Pending:
    """The bytes a reader has received but not yet decoded into a message."""

    def __init__(self) -> None:
        self._pending = bytearray()

    def buffered(self) -> int:
        """Bytes received but not yet part of a decoded message."""
        return len(self._pending)

    def leftover(self) -> bytes:
        """The bytes received but not yet part of a decoded message."""
        return bytes(self._pending)


class ReplyReader(_Pending):
    """Decodes a bot's MessagePack stdout into messages, one at a time. No
    byte sequence can make it raise anything but :class:`BotBadMessage`, or
    make it hold more than MAX_REPLY_BYTES: the caps on reply, container and
    string sizes and nesting bound both the memory and the time that one
    reply can cost the harness (decoding and checking any reply: well under a
    millisecond, a few times a plain decode; ``python -m harness.bench.reader``
    measures it). A reply must be a map, so its first byte is judged before
    any decoding: anything else (a ``printf`` line, whose letters would
    otherwise decode as a run of small integers) is a fault at once, named as
    text where it looks like text."""

    def __init__(self) -> None:
        super().__init__()
        self._unpacker = msgpack.Unpacker(
            raw=False, strict_map_key=True, max_buffer_size=MAX_REPLY_BYTES, **_UNPACK_CAPS)
        self._told = 0  # the unpacker's position after the last message

    def feed(self, data: bytes) -> None:
        pending = self._pending
        if len(pending) + len(data) > MAX_REPLY_BYTES:
            head = bytes(pending[:SHOWN_BYTES + 1]) + bytes(data[:SHOWN_BYTES + 1])
            raise _text_or(head, f"reply larger than the protocol allows ({MAX_REPLY_BYTES} "
                                 f"bytes): {describe_bytes(head)}")
        try:
            self._unpacker.feed(data)
        except Exception as exc:  # noqa: BLE001 - BufferFull and friends: any failure is the bot's
            raise BadReplyBytes(f"reply larger than the protocol allows ({exc})", pending) from None
        pending += data

    def next_message(self) -> tuple[bool, Any]:
        """(True, message) for a complete message, (False, None) if more bytes are needed."""
        pending = self._pending
        if not pending:
            return False, None
        if pending[0] not in _MAP_FIRST_BYTES:
            hint = ('; this looks like JSON: a bot that speaks JSON lines says protocol = "json" '
                    'in its manifest') if pending[:2] == b'{"' else ""
            raise _text_or(pending, f"a reply must be a MessagePack map, but it starts with byte "
                                    f"0x{pending[0]:02x}: {describe_bytes(pending)}{hint}")
        try:
            message = next(self._unpacker)
        except StopIteration:
            return False, None
        except Exception as exc:  # noqa: BLE001 - whatever msgpack raises, the bot sent it
            reason = type(exc).__name__ + (f": {exc}" if str(exc) else "")
            raise BadReplyBytes(f"not valid MessagePack ({reason}) in bytes {describe_bytes(pending)}",
                                pending) from None
        told = self._unpacker.tell()
        del pending[:told - self._told]
        self._told = told
        if not _within_depth(message, MAX_DEPTH):
            raise BotBadMessage(f"reply nested deeper than {MAX_DEPTH} levels")
        return True, message


class JsonReplyReader(_Pending):
    """Decodes a bot's JSON-lines stdout into messages: one JSON object a
    line, UTF-8, ending in ``\\n`` (or ``\\r\\n``). It keeps the guarantees of
    :class:`ReplyReader` (only :class:`BotBadMessage` comes out; at most
    MAX_REPLY_BYTES held) and its caps: a line of at most MAX_REPLY_BYTES,
    then the value's MessagePack form decoded under the very caps of the
    MessagePack reader (items, string bytes, nesting, integers of 64 bits).
    Python's ``json`` raises a clean RecursionError on nesting past the
    interpreter's limit, long before the C stack. NaN and Infinity, which
    are not JSON, are refused; a number too large for a double (``1e999``)
    is an infinity, as in MessagePack; a key given twice keeps its last
    value, as in the MessagePack reader. A line that does not start like an
    object is a fault at once, named as text where it looks like text."""

    def feed(self, data: bytes) -> None:
        pending = self._pending
        if len(pending) + len(data) > MAX_REPLY_BYTES:
            head = bytes(pending[:SHOWN_BYTES + 1]) + bytes(data[:SHOWN_BYTES + 1])
            start = head.lstrip(b" \t")
            too_long = (f"reply larger than the protocol allows ({MAX_REPLY_BYTES} bytes a "
                        f"line, newline included): {describe_bytes(head)}")
            if start[:1] != b"{":  # not an object anyway: text, most likely
                raise _text_or(start, too_long)
            raise BadReplyBytes(too_long, head)
        pending += data

    def next_message(self) -> tuple[bool, Any]:
        pending = self._pending
        start = pending.lstrip(b" \t")
        if not start:
            return False, None
        if start[0] not in _JSON_FIRST_BYTES:  # no JSON value starts so: judged at once
            hint = ('; this looks like MessagePack: the manifest says protocol = "json"'
                    if start[0] in _MAP_FIRST_BYTES else "")
            raise _text_or(start, f"a reply must be a JSON object on one line, but it starts "
                                  f"with byte 0x{start[0]:02x}: {describe_bytes(pending)}{hint}")
        end = pending.find(b"\n")
        if end < 0:
            return False, None
        line = bytes(pending[:end])
        del pending[:end + 1]
        return True, _json_reply(line.removesuffix(b"\r"))


# The bytes a JSON value may start with: an object, or another value (a fault
# too, but named for what it is once its line is whole).
_JSON_FIRST_BYTES = frozenset(b'{["-0123456789tfn\r\n')


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _json_reply(line: bytes) -> dict[str, Any]:
    """One reply line's object, held to the MessagePack reader's caps."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BadReplyBytes(f"not valid UTF-8 (byte {exc.start}) in line {describe_bytes(line)}",
                            line) from None
    try:
        value = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        raise BadReplyBytes(f"reply nested deeper than {MAX_DEPTH} levels: {describe_bytes(line)}",
                            line) from None
    except ValueError as exc:
        raise _text_or(line, f"not valid JSON ({exc}) in line {describe_bytes(line)}") from None
    if type(value) is not dict:
        raise BadReplyBytes(f"a reply must be a JSON object, got {_JSON_KINDS[type(value)]}: "
                            f"{describe_bytes(line)}", line)
    try:
        value = msgpack.unpackb(msgpack.packb(value), raw=False, **_UNPACK_CAPS)
    except Exception as exc:  # noqa: BLE001 - out of range, over a cap: the bot's either way
        reason = "a number out of the range of 64-bit integers" \
            if isinstance(exc, OverflowError) else str(exc) or type(exc).__name__
        raise BadReplyBytes(f"reply over the protocol's caps ({reason}): {describe_bytes(line)}",
                            line) from None
    if not _within_depth(value, MAX_DEPTH):
        raise BadReplyBytes(f"reply nested deeper than {MAX_DEPTH} levels: {describe_bytes(line)}",
                            line)
    return value


_JSON_KINDS = {list: "an array", str: "a string", int: "a number", float: "a number",
               bool: "a boolean", type(None): "null"}


def reply_reader(protocol: str) -> ReplyReader | JsonReplyReader:
    """A reader of replies in ``protocol`` (one of PROTOCOLS)."""
    return JsonReplyReader() if protocol == "json" else ReplyReader()


def message_encoder(protocol: str) -> Callable[[dict[str, Any]], bytes]:
    """What turns a harness message into its bytes in ``protocol``: one
    MessagePack map, or one line of JSON in plain ASCII (``\\u`` escapes, no
    spaces: the simplest to parse by hand)."""
    if protocol == "json":
        encode = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"),
                                  allow_nan=False).encode
        return lambda message: encode(message).encode("ascii") + b"\n"
    return msgpack.Packer().pack  # the bytes of msgpack.packb, without a new Packer each time


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
    # what the bot did with its pipes (PipeTransport; NoPipes where there are none)
    bytes_written: int
    late_output: bytes
    @property
    def exit_code(self) -> int | None: ...
    def unread_input(self) -> int | None: ...
    def keep_stderr_log(self) -> None: ...
    def take_stderr(self, settle: bool = True) -> str: ...


class NoPipes:
    """The pipe accounting of a transport with no bot process behind it (a
    fake, or a bot in this process): nothing written or left unread, no exit
    code, no stderr to keep."""

    bytes_written = 0
    late_output = b""
    exit_code: int | None = None

    def unread_input(self) -> int | None:
        return None

    def keep_stderr_log(self) -> None:
        pass

    def take_stderr(self, settle: bool = True) -> str:
        return ""


class PipeTransport:
    """A bot process on stdin/stdout pipes, in a session and process group of
    its own. ``cleanup`` runs after the process is gone (the sandbox slot's
    control groups, its private temporary directory); ``limits_hint`` turns
    an exit into the resource limit that caused it, where one did."""

    def __init__(self, command: Sequence[str], cwd: Path | None = None,
                 env: dict[str, str] | None = None, *,
                 slot: SlotResources | None = None, protocol: str = "msgpack") -> None:
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
        self._encode = message_encoder(protocol)
        self._reader = reply_reader(protocol)
        self.late_output = b""  # stdout bytes left in the pipe when it closed (see close)
        self._stderr = _StderrDrain(self.process.stderr)
        self._closed = False
        self.exited_by_itself: bool | None = None  # known after close()
        self.bytes_written = 0  # to stdin, all told: with unread_input, what the bot has read

    def unread_input(self) -> int | None:
        """Bytes written to the bot's stdin that it has not read (None: not
        known). The pipe keeps them after the bot dies, while stdin is open."""
        if self._closed:
            return None
        try:
            return _pipe_bytes(self._stdin_fd)
        except OSError:
            return None

    @property
    def exit_code(self) -> int | None:
        """The code the process exited with by itself (None: running, or killed by the harness)."""
        return self.process.returncode if self.exited_by_itself else None

    def stderr_tail(self, wait_s: float = 0.0) -> str:
        """The last STDERR_TAIL_BYTES; ``wait_s`` waits that long for end of file."""
        return self._stderr.tail(wait_s)

    def keep_stderr_log(self) -> None:
        """Keep what the bot writes to stderr for take_stderr (_StderrDrain)."""
        self._stderr.keep_log()

    def take_stderr(self, settle: bool = True) -> str:
        """What the bot wrote to stderr since the last call (within the
        per-decision caps, a marker where bytes were dropped); ``settle``:
        with the bytes already in the pipe (after a reply: all it wrote before it)."""
        data, dropped = self._stderr.take(STDERR_SETTLE_S if settle else 0.0)
        return with_dropped(data.decode("utf-8", "replace"), dropped)

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
        data = self._encode(message)
        written = self._write_some(data)
        if written < len(data):  # the pipe is full: wait for the bot to read, up to the deadline
            self._send_rest(memoryview(data)[written:], deadline)

    def _send_rest(self, data: memoryview, deadline: float) -> None:
        while data:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([], [self._stdin_fd], [], remaining)[1]:
                raise BotTimeout("it stopped reading its input")
            data = data[self._write_some(data):]

    def _write_some(self, data: bytes | memoryview) -> int:
        """Bytes the pipe took now (0 when full)."""
        try:
            written = os.write(self._stdin_fd, data)
            self.bytes_written += written
            return written
        except BlockingIOError:
            return 0
        except OSError as exc:
            raise self._exit_error(f"bot closed its input: {exc}") from None

    def ensure_quiet(self) -> None:
        """Between a reply and the next request a bot must say nothing: bytes
        waiting now were sent unasked, and would otherwise answer a later
        decision."""
        if self._reader.buffered():
            raise extra_fault(self._reader.leftover())
        if self._quiet.poll(0):
            data = os.read(self._stdout_fd, SHOWN_BYTES + 1)
            if not data:
                raise self._exit_error()
            raise unasked_fault(data)

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
            raise extra_fault(reader.leftover())
        return True, message

    def _timeout_error(self) -> BotError:
        """A bot that broke a limit and then went quiet (a memory bomb thrashing
        against its cap) is reported for the limit, not for thinking too long."""
        if self.slot is not None:
            breach = self.slot.limit_breach(None, self._stderr.tail())
            if breach:
                return BotLimitExceeded(f"{breach} (and it gave no answer before the deadline)")
        return BotTimeout(NO_REPLY)  # BotClient adds the limit and the time waited

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

    def _left_in_stdout(self) -> bytes:
        """What the bot wrote to stdout that no one read (at most
        MAX_REPLY_BYTES), read without waiting: called once the process is
        gone, so all it wrote is in the pipe. A Python ``print`` without
        flush reaches the pipe only here, when the interpreter exits;
        ``league check`` shows it."""
        left = self._reader.leftover()
        while len(left) < MAX_REPLY_BYTES and self._quiet.poll(0):
            try:
                data = os.read(self._stdout_fd, MAX_REPLY_BYTES - len(left))
            except OSError:
                break
            if not data:
                break
            left += data
        return left

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
        self.late_output = self._left_in_stdout()
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


def _pipe_bytes(descriptor: int) -> int:
    """Bytes in a pipe, from either of its ends (FIONREAD)."""
    count = array.array("i", [0])
    fcntl.ioctl(descriptor, termios.FIONREAD, count)
    return count[0]


def _first_lines(data: bytes, dropped: int) -> tuple[bytes, int]:
    """``data`` cut after its STDERR_DECISION_LINES-th line, the cut counted as dropped."""
    end = -1
    for _ in range(STDERR_DECISION_LINES):
        end = data.find(b"\n", end + 1)
        if end < 0:
            return data, dropped
    return data[:end + 1], dropped + len(data) - end - 1


def dropped_note(dropped: int) -> str:
    """The marker where stderr bytes were dropped, with their count."""
    return f"[\u2026 {dropped:,} bytes dropped]"


def with_dropped(text: str, dropped: int) -> str:
    """``text`` and, if bytes were dropped after it, the marker on a line of its own."""
    if not dropped:
        return text
    separator = "" if not text or text.endswith("\n") else "\n"
    return f"{text}{separator}{dropped_note(dropped)}"


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


class _StderrDrain:
    """Reads a bot's stderr all the time (a bot that logs a lot must never
    block on a full pipe) and keeps the last STDERR_TAIL_BYTES. The thread
    owns the file and closes it itself, so its descriptor number can never be
    reused under it for another bot's pipe.

    Asked to (keep_log), it also keeps what arrived since the last take(),
    its first STDERR_DECISION_BYTES and STDERR_DECISION_LINES, counting the
    rest: each decision's stderr. The thread reads only what select reported
    ready, under the lock, so every byte the bot has written is either
    counted as read or still in the pipe (FIONREAD): take(settle_s) waits
    for the bytes in the pipe at the time of the call, so a line written
    before the reply is that decision's even though the thread reads it
    asynchronously."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self._fd = stream.fileno()
        self._tail: collections.deque[int] = collections.deque(maxlen=STDERR_TAIL_BYTES)
        self._stop = threading.Event()
        self._done = threading.Event()
        self._lock = threading.Lock()
        self._read_more = threading.Condition(self._lock)
        self._read = 0  # bytes read, all told
        self._closed = False  # the thread closed the file: its number is not ours
        self._logging = False
        self._log = bytearray()  # since the last take(), up to STDERR_DECISION_BYTES
        self._log_dropped = 0  # bytes since the last take() beyond that
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        fd = self._fd
        try:
            while not self._stop.is_set():
                ready, _, _ = select.select([fd], [], [], 0.2)
                if not ready:
                    continue
                with self._lock:  # ready: this read does not block (see the class doc)
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        return
                    self._tail.extend(chunk)
                    self._read += len(chunk)
                    if self._logging:
                        self._keep(chunk)
                    self._read_more.notify_all()
        except (OSError, ValueError):
            return
        finally:
            with self._lock:
                self._stream.close()
                self._closed = True
                self._read_more.notify_all()
            self._done.set()

    def _keep(self, chunk: bytes) -> None:
        room = max(STDERR_DECISION_BYTES - len(self._log), 0)
        self._log += chunk[:room]
        self._log_dropped += max(len(chunk) - room, 0)

    def keep_log(self) -> None:
        with self._lock:
            self._logging = True

    def take(self, settle_s: float = 0.0) -> tuple[bytes, int]:
        """What arrived since the last take (its first STDERR_DECISION_LINES
        lines within STDERR_DECISION_BYTES) and the bytes dropped beyond
        that; ``settle_s``: first wait up to that long for what is in the
        pipe now to be read."""
        with self._lock:
            if settle_s and not self._closed:
                try:
                    target = self._read + _pipe_bytes(self._fd)
                except OSError:
                    target = self._read
                self._read_more.wait_for(lambda: self._read >= target or self._closed, settle_s)
            data, dropped = bytes(self._log), self._log_dropped
            self._log.clear()
            self._log_dropped = 0
        return _first_lines(data, dropped)

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


class FakeTransport(NoPipes):
    """Scripted replies for unit tests: each entry is a message to return,
    raw ``bytes`` to decode as if the bot wrote them, an exception to raise,
    or a callable taking the sent message. ``protocol`` is the encoding the
    ``bytes`` entries are in."""

    def __init__(self, replies: Sequence[Any], protocol: str = "msgpack") -> None:
        self.replies = collections.deque(replies)
        self.protocol = protocol
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

    def _decode(self, data: bytes) -> Any:
        reader = reply_reader(self.protocol)
        reader.feed(data)
        complete, message = reader.next_message()
        if not complete:
            raise BotTimeout("incomplete reply")
        if reader.buffered():
            raise extra_fault(reader.leftover())
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
        # what the bot is being waited for, for a timeout's message: (what, limit
        # in ms, time.monotonic when asked, its clock or None)
        self._waiting: tuple[str, int, float, SeatClock | None] = ("reply", 0, 0.0, None)
        self.trace: Tracer | None = None
        # (match ID, seat) of the match whose `end` this process was sent last,
        # until a reply shows it has read its next `start` (_ended_match)
        self.ended: tuple[str, int] | None = None
        self._start_at = 0  # transport.bytes_written when the current match's start was sent

    def _require(self, *states: BotState) -> None:
        if self.state not in states:
            raise BotStateError(f"{self.label}: not allowed in state {self.state.value}")

    def _fault(self, error: BotError) -> BotError:
        """Kill the process first, so its last stderr words are all read."""
        if isinstance(error, BotTimeout):
            error.detail = self._timeout_detail(error.detail)
        if error.after_match is None:
            error.after_match = self._ended_match()
        if self.trace is not None and isinstance(error, BadReplyBytes):
            self.trace("from", self.label, error.raw)  # bytes that decoded to no message
        self.state = BotState.FAULTED
        self.transport.close(0.0)
        if not error.stderr_tail:
            error.stderr_tail = self.transport.stderr_tail()
        return error

    def _timeout_detail(self, detail: str) -> str:
        """A timeout's message with its numbers: the limit, the time waited, and
        the bot's clock or bank where it has one ("no reply within 1000 ms
        (waited 1003 ms)")."""
        what, limit_ms, since, clock = self._waiting
        waited = round((time.monotonic() - since) * 1000)
        if detail == NO_REPLY:
            text = f"no {what} within {limit_ms} ms (waited {waited} ms)"
        else:
            text = f"{detail} (waiting for its {what}: limit {limit_ms} ms, waited {waited} ms)"
        return text + (clock.timeout_note() if clock is not None else "")

    def _ended_match(self) -> tuple[str, int] | None:
        """The ended match a fault belongs to, seen now (before the process
        is killed): the bot was sent that match's ``end`` and has read
        nothing of its next ``start``, so it failed while handling ``end`` or
        between matches. None: the fault is the current match's (or there
        was no match before). A bot that dies after it read the next
        ``start`` cannot be told from one that died of it: that is the new
        match's fault."""
        if self.ended is None:
            return None
        if self.state is BotState.READY:  # the start was not sent whole
            return self.ended
        unread = self.transport.unread_input()
        if self.state is BotState.PLAYING and unread is not None \
                and unread >= self.transport.bytes_written - self._start_at:
            return self.ended
        return None

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
        now = time.monotonic()
        self._waiting = ("hello", round(timeout_s * 1000), now, None)
        reply = self._exchange({"type": "hello", "protocol": PROTOCOL_VERSION},
                               now + timeout_s, "hello")
        if reply.get("protocol") != PROTOCOL_VERSION:
            raise self._fault(BotBadMessage(
                f"bot speaks protocol {reply.get('protocol')!r:.40}, harness speaks {PROTOCOL_VERSION}"))
        name = reply.get("name", self.label)
        self.name = name if isinstance(name, str) else self.label
        self.state = BotState.READY
        self._cpu_mark = self.transport.cpu_seconds() if self.cpu_limit_s else 0.0

    def start_match(self, info: dict[str, Any], timeout_s: float = 2.0) -> None:
        self._require(BotState.READY)
        self._start_at = self.transport.bytes_written
        now = time.monotonic()
        self._waiting = ("start to be read", round(timeout_s * 1000), now, None)
        self._send({"type": "start", **info}, now + timeout_s)
        self.state = BotState.PLAYING

    def choose(self, obs: dict[str, Any], legal: list[Any], decision: int, time_ms: int) -> int:
        """Ask for an action and wait for it; returns a valid index into ``legal``."""
        self.ask(obs, legal, decision, time_ms)
        return self.await_answer()

    # ask() then answer(): choose() in two halves, for a caller that keeps
    # several matches in flight on one thread and polls their bots together.
    def ask(self, obs: dict[str, Any], legal: list[Any], decision: int, time_ms: int,
            clock: SeatClock | None = None) -> float:
        """Send an ``act`` request that gives the bot ``time_ms`` (its
        ``time_left_ms``, as is), with ``clock``'s fields (its clock, increment
        and bank left; the clock's figures go in a timeout's message);
        returns its deadline (time.monotonic)."""
        if self.state is not BotState.PLAYING:
            self._require(BotState.PLAYING)
        now = time.monotonic()
        deadline = now + time_ms / 1000
        self._waiting = ("reply", time_ms, now, clock)
        message = {"type": "act", "decision": decision, "obs": obs, "legal": legal,
                   "time_left_ms": time_ms}
        if clock is not None:
            message.update(clock.act_fields())
        self._send(message, deadline)
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
        index = self._accept(self._expected(reply, "action"), legal, decision)
        self.ended = None  # it has read this match's start: its faults are this match's
        return index

    def take_stderr(self, settle: bool = True) -> str:
        """What the bot wrote to stderr since the last call, where its
        transport keeps it (PipeTransport.take_stderr; '' elsewhere)."""
        return self.transport.take_stderr(settle)

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
            if same_on_the_wire(action, value):
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
        now = time.monotonic()
        self._waiting = ("end to be read", round(timeout_s * 1000), now, None)
        self._send({"type": "end", **result}, now + timeout_s)
        self.ended = (str(result.get("match_id")), int(result.get("seat", -1)))
        cpu = self._check_limits(force=True)
        self.matches_played += 1
        self.state = BotState.READY
        if cpu is not None:  # the next match counts from this reading
            self._cpu_mark = cpu

    @property
    def usable(self) -> bool:
        return self.state is BotState.READY and self.transport.alive()

    def close(self) -> BotError | None:
        """Ask the bot to quit, then kill its process group. Safe twice.

        Returns the fault of a process between matches that failed after its
        last match's ``end``: it died (exited with an error or by a signal,
        before or on its ``quit``) or wrote to stdout. That match's fault:
        ``after_match`` names it. None for anything else."""
        if self.state is BotState.CLOSED:
            return None
        polite = self.state in (BotState.READY, BotState.PLAYING)
        between = self.state is BotState.READY and self.ended is not None
        problem: BotError | None = None
        if polite:
            try:
                if between:
                    self.transport.ensure_quiet()
                self.transport.send({"type": "quit"}, time.monotonic() + QUIT_GRACE_S)
            except BotError as error:
                polite = False
                problem = error if between else None
        self.state = BotState.CLOSED
        self.transport.close(QUIT_GRACE_S if polite else 0.0)
        if not between:
            return None
        problem = problem or self._after_quit()
        if problem is not None:
            problem.after_match = self.ended
            problem.stderr_tail = problem.stderr_tail or self.transport.stderr_tail()
        return problem

    def _after_quit(self) -> BotError | None:
        """What a closed process did wrong after its last ``end``: bytes left
        on its stdout, or an exit with an error or by a signal."""
        late = self.transport.late_output
        if late:
            return unasked_fault(late)
        code = self.transport.exit_code
        if code:
            return BotCrashed(f"bot exited ({_exit_text(code)})")
        return None


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


def same_on_the_wire(legal: Any, value: Any) -> bool:
    """Compare as MessagePack does: tuples are arrays, True is not 1."""
    if isinstance(legal, (tuple, list)):
        return (isinstance(value, list) and len(value) == len(legal)
                and all(same_on_the_wire(a, b) for a, b in zip(legal, value)))
    if isinstance(value, (list, dict)) or isinstance(value, bool) != isinstance(legal, bool):
        return False
    return type(value) is type(legal) and value == legal or (
        isinstance(value, (int, float)) and isinstance(legal, (int, float)) and value == legal)


# direction ("to" or "from"), bot label, message; for bytes that decoded to no
# message (the fault says why), the bytes themselves
Tracer = Callable[[str, str, Any], None]
