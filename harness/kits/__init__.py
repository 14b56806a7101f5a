"""The starter kits that `league new` writes: one folder per language
(``python/``, ``javascript/``, ``c/``, ``rust/``) holding a manifest
(``bot.toml``) and a bot that plays every game legally, plus ``README.md``,
shared by all. They are package data, so an installed harness writes them.

Each kit is a template: ``{{name}}`` becomes the bot's name, which
NAME_PATTERN keeps to letters, digits and ``_ . -``, so it is safe in TOML,
in source strings and in Markdown as it is. The README's other
placeholders are filled from KITS.

Why these protocols: Python uses the SDK (``league_sdk``, MessagePack);
JavaScript, C and Rust speak JSON lines (``protocol = "json"``), which
their standard libraries (or forty lines of C) read, so no kit needs a
package from a registry: C and Rust build offline, in the sandbox.
"""

from __future__ import annotations

from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable

NAME_PLACEHOLDER = "{{name}}"
README = "README.md"


@dataclass(frozen=True)
class Kit:
    lang: str  # as --lang names it
    language: str  # as the README names it
    needs: str  # what must be installed where it is built and played
    edit: str  # where to make it play well
    files: tuple[tuple[str, str], ...]  # (path, what it is): the README's table
    protocol: str  # the README's sentence on the wire encoding


_JSON_LINES = ("It speaks JSON lines (`protocol = \"json\"` in bot.toml): one JSON object a "
               "line, each way, ASCII, no spaces; flush after every reply.")

KITS = {kit.lang: kit for kit in (
    Kit("python", "Python", "It needs only the harness's Python: `{python}` in bot.toml is the "
        "interpreter the harness runs on, with `msgpack` and the SDK, `league_sdk`.",
        "`choose` in bot.py",
        (("bot.toml", "the manifest: how the harness runs it, which files are the bot"),
         ("bot.py", "the bot, on the SDK: `from league_sdk import Bot, run` (it comes with "
          "the harness: nothing to copy)")),
        "The SDK speaks it (MessagePack) for you: you write `choose`."),
    Kit("javascript", "JavaScript", "It needs Node.js (`node` on PATH, in /usr, where the "
        "harness runs it) and no packages.", "`choose` in bot.js",
        (("bot.toml", "the manifest: how the harness runs it, which files are the bot"),
         ("bot.js", "the bot: the protocol loop and `choose`")),
        _JSON_LINES),
    Kit("c", "C", "It needs gcc, and no library: `league build bot.toml` compiles it (the "
        "manifest's `build`, in the sandbox).", "`choose` in bot.c",
        (("bot.toml", "the manifest: its build step, how the harness runs it, which files are "
          "the bot"),
         ("bot.c", "the bot: the protocol loop, `choose`, and `json_*` helpers to read a "
          "message"),
         ("bot", "the program, once built")),
        _JSON_LINES),
    Kit("rust", "Rust", "It needs cargo and rustc (rustup's are found in ~/.cargo/bin) and no "
        "crates: `league build bot.toml` runs `cargo build --release --offline` (the "
        "manifest's `build`, in the sandbox).", "`MyBot::choose` in src/main.rs",
        (("bot.toml", "the manifest: its build step, how the harness runs it, which files are "
          "the bot"),
         ("Cargo.toml", "the crate: std only"),
         ("src/main.rs", "the bot: the protocol loop, `MyBot::choose`, a small JSON parser"),
         ("target/release/bot", "the program, once built")),
        _JSON_LINES),
)}


def template_files(lang: str) -> dict[str, str]:
    """The kit's files (path relative to the bot's folder -> template text),
    its README included."""
    root = resources.files(__name__)
    files = dict(_walk(root / lang, ""))
    files[README] = (root / README).read_text(encoding="utf-8")
    return files


def _walk(folder: Traversable, prefix: str) -> list[tuple[str, str]]:
    found = []
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name == "__pycache__":
            continue
        if entry.is_dir():
            found += _walk(entry, f"{prefix}{entry.name}/")
        else:
            found.append((f"{prefix}{entry.name}", entry.read_text(encoding="utf-8")))
    return found


def render(lang: str, name: str, build: str, check_note: str) -> dict[str, str]:
    """The kit for bot ``name`` (its path -> its text). ``build``: the README's
    build line(s), '' for a kit without a build step."""
    kit = KITS[lang]
    table = "".join(f"| `{path}` | {what} |\n" for path, what in kit.files)
    fills = {"{{language}}": kit.language, "{{lang}}": lang, "{{needs}}": kit.needs,
             "{{edit}}": kit.edit, "{{files}}": table, "{{protocol}}": kit.protocol,
             "{{build}}": build, "{{check_note}}": check_note}
    rendered = {}
    for path, text in template_files(lang).items():
        if path == README:
            for placeholder, value in fills.items():
                text = text.replace(placeholder, value)
        rendered[path] = text.replace(NAME_PLACEHOLDER, name)
    return rendered
