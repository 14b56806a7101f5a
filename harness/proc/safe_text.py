"""Bots' text made safe to show on a terminal or a page.

A bot controls its stderr, its ``hello`` name, the bytes fault details quote
and the name in its manifest. Printed raw, such text can drive the
organiser's terminal (clear the screen, set the window title, write to the
clipboard with OSC 52, which passes even when output is piped), overwrite a
line with ``\\r`` to forge one, or reorder what a line seems to say with a
bidirectional override (U+202E). :func:`printable` renders every such
character visibly instead, as a Python-style escape, so the text keeps its
meaning to a reader and its bytes to an investigator, and the database keeps
what the bot sent: escaping is done where text is shown, never where it is
stored.
"""

from __future__ import annotations

import re
import unicodedata

# Everything outside printable ASCII is looked at; the categories decide. A
# CR LF line end is one match: it moves to a new line, so it cannot overwrite.
_SUSPECT = re.compile(r"\r\n|[^\x20-\x7e]")
# Cc: C0 controls, DEL and C1 (ESC, BEL, CSI 0x9b, OSC 0x9d, ...); Cf: format
# characters (bidi overrides and isolates, zero-width characters, BOM, tags);
# Zl/Zp: line and paragraph separators; Cs: lone surrogates, which cannot
# even be encoded for output.
_HIDDEN_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})
_NAMED = {"\n": "\\n", "\t": "\\t", "\r": "\\r"}


def _escape(char: str) -> str:
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def printable(text: str, multiline: bool = True) -> str:
    """``text`` with every control character, escape-sequence introducer and
    invisible format character written as a visible escape (ESC as ``\\x1b``,
    U+202E as ``\\u202e``, CR as ``\\r``). ``multiline`` keeps newlines, CR LF
    line ends and tabs as they are (a stderr log); without it they are escaped
    too, so a one-line field (a name, a fault's detail) stays one line. A
    backslash already in the text is left alone: a bot can make its text look
    escaped, never make it act."""
    keep = ("\n", "\t", "\r\n") if multiline else ()

    def visible(match: re.Match[str]) -> str:
        char = match.group()
        if char in keep:
            return char
        if len(char) > 1:
            return "\\r\\n"
        return char if unicodedata.category(char) not in _HIDDEN_CATEGORIES else _escape(char)

    return _SUSPECT.sub(visible, text)
