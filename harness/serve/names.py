"""Bot and account names on the submission server: what a name may be, and
when two names are the same name.

The rule (``NAME_RULE``): 1 to 32 ASCII letters, digits, '_' or '-', the
first a letter or digit. ASCII only, because a name is shown on pages, in
terminals and in results files, and every non-ASCII character is a way to
look like someone else (Cyrillic 'а' for Latin 'a', fullwidth letters) or to
hide (zero-width joiners, right-to-left marks); refusing them is simpler and
surer than folding them. A leading '-' would read as an option on a command
line, so the first character is a letter or digit.

Identity (``skeleton``): two names are one name when their skeletons are
equal. A skeleton is the name casefolded, with '_' and '-' dropped and the
characters that read alike in a sans-serif font folded together. A bot name
belongs to the account that took it first; another account cannot take a
name whose skeleton is the same, so "b0t" cannot pose as "Bot".

Reserved names (``RESERVED``): the reference bots' names and the words the
site itself uses; nobody may take them or anything that looks like them.

Every refusal quotes the name with ``ascii()``, so terminal escapes, markup
and invisible characters in it show as text wherever the message goes.
"""

from __future__ import annotations

import re
import unicodedata

MAX_NAME_CHARS = 32

# \A and \Z (not ^ and $: '$' also matches before a trailing newline), and
# explicit ASCII classes (\w and \d match Unicode letters and digits).
NAME_RULE = re.compile(r"\A[A-Za-z0-9][A-Za-z0-9_-]{0,31}\Z")

RULE_TEXT = (f"1 to {MAX_NAME_CHARS} characters: only ASCII letters, digits, '_' and '-', "
             "the first a letter or digit")

# How much of a refused name a message quotes: enough to recognise it, never
# a megabyte of someone's upload echoed back.
_QUOTED_CHARS = 40

# Single characters that read as another in common fonts, folded after
# casefolding (so 'I' has become 'i' and 'O' has become 'o' already):
#   0 -> o   zero and the letter o
#   1 -> l   one and lower-case L
#   i -> l   lower-case i (and so upper-case I) and lower-case L
#   | -> l   a bar and lower-case L (the rule refuses '|'; folded anyway)
#   5 -> s   five and s
#   2 -> z   two and z
#   8 -> b   eight and b
_FOLD_CHARS = str.maketrans({"0": "o", "1": "l", "i": "l", "|": "l",
                             "5": "s", "2": "z", "8": "b", "_": None, "-": None})

# Pairs that read as one letter, folded after the single characters (so "c1"
# becomes "cl" and then "d"): in order,
#   rn -> m   "rn" and m
#   vv -> w   "vv" and w
#   cl -> d   "cl" and d
# None of the results (m, w, d) is a letter of any pair, so one pass in this
# order leaves no pair behind.
_FOLD_PAIRS = (("rn", "m"), ("vv", "w"), ("cl", "d"))

# Nobody's: the reference bots (bots/*.toml), and the words of the site's
# paths and roles, which a bot or account named so would make confusing
# ("admin" posting as a bot; /bots/new). Compared by skeleton.
RESERVED = frozenset({
    "random", "heuristic", "search", "js_random",
    "admin", "administrator", "organiser", "organizer", "root", "system", "moderator",
    "league", "ladder", "server", "api", "static", "assets", "health",
    "new", "edit", "delete", "login", "logout", "signup", "register",
    "account", "accounts", "session", "sessions", "token", "tokens", "me",
    "submit", "versions", "files", "null", "none", "anonymous", "everyone",
})


def skeleton(name: str) -> str:
    """The identity ``name`` shares with every name that looks like it (see
    the module docstring). Works on any text: non-ASCII is NFKC-normalised and
    stripped of format characters first, so even a name that slipped past the
    rule (fullwidth 'ｂｏｔ', a zero-width joiner) folds onto its ASCII twin."""
    text = unicodedata.normalize("NFKC", name)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    text = text.casefold().translate(_FOLD_CHARS)
    for pair, letter in _FOLD_PAIRS:
        text = text.replace(pair, letter)
    return text


_RESERVED_SKELETONS = frozenset(skeleton(word) for word in RESERVED)


def is_reserved(name: str) -> bool:
    """Whether ``name`` is, or looks like, a reserved name."""
    return skeleton(name) in _RESERVED_SKELETONS


def quoted(name: str) -> str:
    """``name`` as a message shows it: ascii() (escapes visible, quotes
    around it), cut after 40 characters with the full length stated."""
    if len(name) <= _QUOTED_CHARS:
        return ascii(name)
    return f"{ascii(name[:_QUOTED_CHARS])}... ({len(name)} characters)"


def name_problem(name: object, what: str = "bot", *, reserved_ok: bool = False) -> str | None:
    """None when ``name`` may be a ``what`` ("bot", "account") name, else why
    not, in one line of ASCII that states the rule. ``reserved_ok`` lets the
    server itself enter the reference bots under their own names."""
    if not isinstance(name, str):
        return f"a {what} name must be text (names are {RULE_TEXT}), not {type(name).__name__}"
    reason = _rule_breach(name)
    if reason is not None:
        return f"{what} name {quoted(name)} is refused: {reason}; names are {RULE_TEXT}"
    if not reserved_ok and is_reserved(name):
        return (f"{what} name {quoted(name)} is reserved: it is, or looks like, a name "
                "of the site or of a reference bot")
    return None


def _rule_breach(name: str) -> str | None:
    """What in ``name`` breaks NAME_RULE, the first thing found, or None."""
    if NAME_RULE.match(name):
        return None
    if not name:
        return "it is empty"
    for position, ch in enumerate(name, start=1):
        if not ch.isascii():
            return (f"character {position} is U+{ord(ch):04X}, not ASCII "
                    "(only ASCII is allowed)")
    if len(name) > MAX_NAME_CHARS:
        return f"it has {len(name)} characters, more than {MAX_NAME_CHARS}"
    if not name[0].isalnum():
        return f"it starts with {ascii(name[0])}, not a letter or digit"
    for position, ch in enumerate(name, start=1):
        if not (ch.isalnum() or ch in "_-"):
            return f"character {position} is {ascii(ch)}, not a letter, digit, '_' or '-'"
    return "it does not match the rule"  # not reached: each breach is named above
