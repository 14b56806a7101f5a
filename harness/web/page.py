"""The frame every page shares: one self-contained HTML document, its CSS
and script inline, nothing fetched. The stylesheets and scripts are files
of ``assets/`` (package data), read once."""

from __future__ import annotations

import html
from functools import cache
from importlib.resources import files
from typing import Any

from harness.proc.safe_text import printable


@cache
def asset(name: str) -> str:
    """A file of ``harness/web/assets/`` (a stylesheet, a script) as text."""
    return files("harness.web").joinpath("assets").joinpath(name).read_text(encoding="utf-8")


def esc(value: Any) -> str:
    """HTML-escaped, control and format characters made visible (the pages
    show bots' names, fault details and stderr through it)."""
    return html.escape(printable(str(value)), quote=True)


def html_page(title: str, body: str, css: str = "", script: str = "") -> str:
    """A page: the shared stylesheet (assets/base.css) and ``css``, then
    ``body``, then ``script``, all inline."""
    styles = "".join(f"\n{sheet}" for sheet in (asset("base.css"), css) if sheet)
    tail = f"<script>\n\n{script}\n</script>\n" if script else ""
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
            f"<title>{esc(title)}</title>\n<style>{styles}</style>\n</head>\n"
            f"<body>\n<main>\n{body}\n</main>\n{tail}</body>\n</html>\n")
