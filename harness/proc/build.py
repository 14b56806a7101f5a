"""A bot's build step: the manifest's ``build``, an argv like ``command``
(``["gcc", "-O2", "-o", "bot", "bot.c"]``), run in the bot's cwd.

When it runs, predictably: ``league build BOT`` always; ``league new``
once, to prove a fresh kit builds; ``league check`` before it checks (the
author's loop is edit, check; ``--no-build`` skips it). ``league play``,
``run`` and ``sprt`` never build: a league plays the files as they are,
and a bot whose built files are missing is refused, saying to run
``league build`` first. The step is not part of the bot's version; what it
makes is, as ``files`` lists it (list the sources too, to tie results to
them).

Where it runs: a build runs a stranger's build tooling, so, like a bot, it
runs in the sandbox (``--sandbox bwrap``): no network, its own namespaces
and the syscall filter, ``/usr`` and the harness's Python read-only, a
private ``/tmp``, and the bot's folder writable at ``/bot`` (the build's
working directory; nothing else of the machine is writable). A program
that is not in the sandbox's /usr is looked up on the host and its
installation mounted read-only at its own path, first on PATH: rustup's
``cargo``/``rustc`` (the toolchain at ``rustc --print sysroot``, with
``CARGO_HOME`` in the private /tmp), or a toolchain installed in its own
folder (``/opt/go/bin/go`` mounts ``/opt/go``). With ``--sandbox none`` it
runs directly, with the harness's environment. Either way it has a time
limit (BUILD_TIMEOUT_S) after which its whole process group is killed,
resource limits (BUILD_LIMITS), and only the tail of its output is kept
(a build that prints without end costs no memory).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
import time
import tomllib
from dataclasses import dataclass
from pathlib import Path

from harness.limits import ResourceLimits
from harness.proc.catalog import BotSpec
from harness.proc.sandbox import (
    SANDBOX_PATH,
    Sandbox,
    SandboxUnavailable,
    Toolchain,
    bot_environment,
    launch_command,
    probe,
)

BUILD_TIMEOUT_S = 300.0
# A compiler needs more than a bot: rustc takes a GiB on a mid-sized crate.
BUILD_LIMITS = ResourceLimits(memory_mb=4096, processes=512, file_mb=1024, open_files=4096)
OUTPUT_TAIL_BYTES = 16 << 10
SHOWN_LINES = 25


class BuildError(RuntimeError):
    """A build that could not start at all (its program not found, no
    sandbox); the message says why."""


@dataclass(frozen=True)
class BuildResult:
    ok: bool
    seconds: float
    exit_code: int | None  # None: killed at the time limit
    output_tail: str  # the last OUTPUT_TAIL_BYTES of stdout and stderr together
    timeout_s: float

    def summary(self, spec: BotSpec) -> str:
        """One line: what ran, how it ended, how long it took."""
        ran = " ".join(spec.build)
        if self.ok:
            return f"build `{ran}` done in {self.seconds:.1f} s"
        if self.exit_code is None:
            return (f"build `{ran}` killed after its time limit of {self.timeout_s:g} s "
                    "(--timeout)")
        return f"build `{ran}` failed with exit code {self.exit_code} after {self.seconds:.1f} s"

    def shown_output(self, lines: int = SHOWN_LINES) -> list[str]:
        """The last ``lines`` lines of the build's output."""
        return self.output_tail.rstrip("\n").split("\n")[-lines:] if self.output_tail.strip() \
            else []


def run_build(spec: BotSpec, sandbox: Sandbox,
              timeout_s: float = BUILD_TIMEOUT_S) -> BuildResult:
    """Run ``spec``'s build step in its cwd; raises BuildError if it cannot
    start (no build step, a program not found). A failed build is a result."""
    if not spec.build:
        raise BuildError(f"{spec.where}: no 'build' in its manifest: nothing to build")
    _refuse_shared_folder(spec)
    argv = [sys.executable if part == "{python}" else part for part in spec.build]
    if sandbox.mode == "bwrap":
        command, env = _sandboxed(spec, argv)
        cwd = None
    else:
        command, env, cwd = argv, {**os.environ, **spec.env}, spec.cwd
    return _run(command, env, cwd, timeout_s)


def _refuse_shared_folder(spec: BotSpec) -> None:
    """A build may write anywhere in its cwd, so its cwd must be the bot's
    own: a folder that holds another bot's manifest (a folder of manifests
    on the bot path, with cwd = ".") would let one entrant's build rewrite
    another entrant."""
    others = [path for path in [*spec.cwd.glob("*.toml"), *spec.cwd.glob("*/bot.toml")]
              if path.resolve() != spec.manifest and _is_manifest(path)]
    if others:
        raise BuildError(f"{spec.where}: its build would write in {spec.cwd}, which holds other "
                         f"bots' manifests ({', '.join(p.name for p in others[:3])}); give the "
                         "bot a folder of its own (NAME/bot.toml) or a cwd of its own")


def _is_manifest(path: Path) -> bool:
    """A bot manifest, not another tool's TOML (Cargo.toml, pyproject.toml)."""
    try:
        data = tomllib.loads(path.read_text())
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    return "command" in data and "name" in data


def _sandboxed(spec: BotSpec, argv: list[str]) -> tuple[list[str], dict[str, str]]:
    found = probe()
    if not found.bwrap_works or found.bwrap is None:
        raise BuildError(f"the sandbox cannot run here: {found.bwrap_problem}")
    toolchain = toolchain_for(argv[0])
    env = bot_environment(spec.env, "/tmp")
    env.update(toolchain.env)
    env["PATH"] = ":".join([*toolchain.path, env["PATH"]])
    try:
        command = launch_command(found.bwrap, spec.cwd, argv, env, BUILD_LIMITS, [], None,
                                 found.seccomp, build=toolchain)
    except SandboxUnavailable as exc:
        raise BuildError(str(exc)) from exc
    return command, {"PATH": SANDBOX_PATH}


def toolchain_for(program: str) -> Toolchain:
    """What the sandbox must mount for ``program`` (a build's argv[0]) to
    run: nothing for a program in its /usr or a path in the bot's folder."""
    if "/" in program or program == sys.executable or shutil.which(program, path=SANDBOX_PATH):
        return Toolchain()
    host = _host_which(program)
    if host is None:
        raise BuildError(f"build program {program!r} is not installed here (looked in "
                         f"{SANDBOX_PATH}, on PATH and in ~/.cargo/bin)")
    real = Path(os.path.realpath(host))
    if real.name.startswith("rustup"):  # a rustup proxy: mount the toolchain it runs
        sysroot = _rust_sysroot(Path(host).with_name("rustc"))
        return Toolchain((sysroot,), (f"{sysroot}/bin",), (("CARGO_HOME", "/tmp/cargo"),))
    prefix = real.parent.parent
    home = Path.home().resolve()
    # a manifest names the program: what it names must not show a stranger's
    # build the harness user's files (~/.local holds more than programs)
    if prefix == Path("/") or prefix == home or home in prefix.parents or \
            prefix in home.parents:
        raise BuildError(f"build program {program!r} is {real}, outside the sandbox's /usr, in "
                         f"{prefix}, which the sandbox does not show a build (it may hold more "
                         "than the program); install it under /usr or in a folder of its own "
                         "(/opt/NAME), or for a bot you trust build with --sandbox none")
    return Toolchain((str(prefix),), (str(real.parent),))


def _host_which(program: str) -> str | None:
    cargo_bin = Path.home() / ".cargo" / "bin"
    return shutil.which(program) or shutil.which(program, path=str(cargo_bin))


def _rust_sysroot(rustc: Path) -> str:
    try:
        found = subprocess.run([str(rustc), "--print", "sysroot"], capture_output=True,
                               text=True, timeout=60)
    except (OSError, subprocess.SubprocessError) as exc:
        raise BuildError(f"cannot ask {rustc} where its toolchain is: {exc}") from exc
    sysroot = found.stdout.strip()
    if found.returncode != 0 or not Path(sysroot).is_dir():
        raise BuildError(f"`{rustc} --print sysroot` did not name the toolchain: "
                         f"{(found.stderr or found.stdout).strip()[-300:]}")
    return sysroot


def _run(command: list[str], env: dict[str, str], cwd: Path | None,
         timeout_s: float) -> BuildResult:
    clock = time.monotonic()
    try:
        process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT, env=env, cwd=cwd,
                                   start_new_session=True)
    except OSError as exc:
        raise BuildError(f"cannot start the build `{' '.join(command)}`: {exc}") from exc
    tail = _TailReader(process)
    try:
        exit_code: int | None = process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        exit_code = None
    finally:
        _kill_group(process)
        tail.join()
    seconds = time.monotonic() - clock
    return BuildResult(exit_code == 0, seconds, exit_code, tail.text(), timeout_s)


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """Whatever the build left running (a daemon, a hung compiler) goes."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


class _TailReader:
    """Reads a process's output to its end, keeping the last OUTPUT_TAIL_BYTES."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        assert process.stdout is not None
        self._stream = process.stdout
        self._kept = bytearray()
        self._thread = threading.Thread(target=self._read, daemon=True)
        self._thread.start()

    def _read(self) -> None:
        try:
            while chunk := os.read(self._stream.fileno(), 65536):
                self._kept += chunk
                del self._kept[:-OUTPUT_TAIL_BYTES]
        except (OSError, ValueError):
            return  # closed by join: what was read is kept

    def join(self) -> None:
        # the group is dead; a pipe a grandchild in another session still holds
        # must not hang the harness: after a while the pipe is closed under it
        self._thread.join(timeout=5)
        self._stream.close()

    def text(self) -> str:
        return bytes(self._kept).decode("utf-8", "replace")
