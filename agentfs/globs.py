"""Glob patterns over workspace paths: ``**``, ``*``, ``?``, ``[...]`` and ``{a,b}``.

``*`` and ``?`` never cross a ``/``; ``**`` as a whole component matches any number of
components (none included), so ``/src/**/*.py`` matches ``/src/a.py`` and ``/src/x/y/a.py``. A
pattern without a leading ``/`` matches at any depth, as ``.gitignore`` patterns do with a
slash only at the end: ``*.md`` matches ``/README.md`` and ``/docs/a.md``.
"""

from __future__ import annotations

import functools
import re


@functools.lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The regular expression that matches exactly the paths ``pattern`` matches."""
    if not pattern:
        raise ValueError("an empty glob matches nothing")
    body = pattern if pattern.startswith("/") else "/**/" + pattern
    return re.compile(_translate(body) + r"\Z", re.DOTALL)


def match(pattern: str, path: str) -> bool:
    return compile_glob(pattern).match(path) is not None


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("/**/", i):
            out.append("(?:/.*)?/")
            i += 4
        elif pattern.startswith("/**", i) and i + 3 == n:
            out.append("(?:/.*)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(re.escape(c))
                i += 1
                continue
            inner = pattern[i + 1 : end]
            if inner[:1] in ("!", "^"):
                inner = "^" + inner[1:]
            out.append("[" + inner.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "{":
            end = _closing_brace(pattern, i)
            if end < 0:
                out.append(re.escape(c))
                i += 1
                continue
            options = _split_options(pattern[i + 1 : end])
            out.append("(?:" + "|".join(_translate(o) for o in options) + ")")
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _closing_brace(pattern: str, start: int) -> int:
    depth = 0
    for i in range(start, len(pattern)):
        if pattern[i] == "{":
            depth += 1
        elif pattern[i] == "}":
            depth -= 1
            if depth == 0:
                return i
    return -1


def _split_options(inner: str) -> list[str]:
    """``a,b{c,d},e`` -> ['a', 'b{c,d}', 'e']: commas at the top level only."""
    options: list[str] = []
    current: list[str] = []
    depth = 0
    for c in inner:
        if c == "," and depth == 0:
            options.append("".join(current))
            current = []
            continue
        depth += c == "{"
        depth -= c == "}"
        current.append(c)
    options.append("".join(current))
    return options
