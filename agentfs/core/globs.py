"""Glob patterns over workspace paths: ``**``, ``*``, ``?``, ``[...]`` and ``{a,b}``.

``*``, ``?`` and classes never cross a ``/``; ``**`` as a whole component matches any number
of components (none included), so ``/src/**/*.py`` matches ``/src/a.py`` and
``/src/x/y/a.py``; at the end (``/src/**``) it matches everything below, not ``/src`` itself;
inside a name it is a plain ``*``. A pattern without a leading ``/``
matches at any depth, as ``.gitignore`` patterns do with a slash only at the end: ``*.md``
matches ``/README.md`` and ``/docs/a.md``. Classes follow fnmatch: ``[!a]`` or ``[^a]``
negates, a ``]`` right after the ``[`` is literal, an unclosed ``[`` is a literal bracket.
"""

from __future__ import annotations

import functools
import re

_REPEATED_GLOBSTAR = re.compile(r"/\*\*(?:/\*\*)+(?=/|$)")


#: Brace alternatives one pattern may expand to (``{a,b}{c,d}`` is 4).
MAX_EXPANSIONS = 1024


@functools.lru_cache(maxsize=256)
def compile_glob(pattern: str) -> re.Pattern[str]:
    """The regular expression that matches exactly the paths ``pattern`` matches. Braces
    expand first, as in a shell (``/{**}/a`` is ``/**/a``); each expansion then reads alone."""
    if not pattern:
        raise ValueError("an empty glob matches nothing")
    expansions = _expand_braces(pattern)
    return re.compile("(?:" + "|".join(_one(p) for p in expansions) + r")\Z", re.DOTALL)


def _one(pattern: str) -> str:
    """The regex of one brace-free pattern, anchored at the root."""
    if pattern.startswith("/"):
        body = pattern
    elif pattern == "**" or pattern.startswith("**/"):
        body = "/" + pattern
    else:
        body = "/**/" + pattern
    body = _REPEATED_GLOBSTAR.sub("/**", body)  # consecutive ** components mean one
    return _translate(body)


def _expand_braces(pattern: str) -> list[str]:
    """Every pattern ``{a,b}`` alternatives stand for, outermost first; an unclosed ``{`` is
    a literal brace."""
    start = pattern.find("{")
    while start >= 0 and _closing_brace(pattern, start) < 0:
        start = pattern.find("{", start + 1)
    if start < 0:
        return [pattern]
    end = _closing_brace(pattern, start)
    head, tail = pattern[:start], pattern[end + 1 :]
    out: list[str] = []
    for option in _split_options(pattern[start + 1 : end]):
        out.extend(_expand_braces(head + option + tail))
        if len(out) > MAX_EXPANSIONS:
            raise ValueError(f"{pattern!r} expands to over {MAX_EXPANSIONS} alternatives")
    return out


def match(pattern: str, path: str) -> bool:
    return compile_glob(pattern).match(path) is not None


def _whole_component(pattern: str, i: int) -> bool:
    """Is the ``**`` at ``i`` a whole path component?"""
    end = i + 2
    return (i == 0 or pattern[i - 1] == "/") and (end == len(pattern) or pattern[end] == "/")


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("/**", i) and _whole_component(pattern, i + 1):
            if i + 3 == n:
                out.append("/.+")  # "/a/**": everything below /a (not /a itself, as in git)
                i += 3
            else:
                out.append("/(?:.*/)?")  # "/**/": one slash, or any components between
                i += 4
        elif pattern.startswith("**", i):  # inside a name, ** is *
            out.append("[^/]*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            i = _char_class(pattern, i, out)
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def _char_class(pattern: str, i: int, out: list[str]) -> int:
    """Translate the class at ``pattern[i] == '['`` into ``out``; return where it ends. As in
    fnmatch, ``!`` or ``^`` first negates and a ``]`` first is literal; an unclosed ``[`` is a
    literal bracket. A class never matches ``/``, negated or not."""
    j = i + 1
    negated = j < len(pattern) and pattern[j] in "!^"
    if negated:
        j += 1
    first = j
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    end = pattern.find("]", j)
    if end < 0:
        out.append(re.escape("["))
        return i + 1
    members = pattern[first:end]
    inside = "".join(
        "-"
        if ch == "-" and 0 < k < len(members) - 1 and "-" not in members[k - 1 : k + 2 : 2]
        else re.escape(ch)  # a range's dash stays; any other character is itself
        for k, ch in enumerate(members)
    )
    out.append(f"[^/{inside}]" if negated else f"(?!/)[{inside}]")
    return end + 1


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
