"""The ``minimatch`` patterns the server matches ``search_files`` and ``directory_tree``
exclusions with: braces, ``**``, classes, extglobs, a leading ``!`` or ``#``."""

from __future__ import annotations

import functools
import re

# --- minimatch ----------------------------------------------------------------------------------

_GLOBSTAR = None  # a ``**`` segment
_Segment = re.Pattern[str] | None


def minimatch(path: str, pattern: str) -> bool:
    """Does ``path`` (relative, ``/``-separated) match ``pattern`` as the server's ``minimatch``
    (options ``{dot: true}``) says: braces expanded, ``**`` for any number of names, ``*``
    ``?`` ``[...]`` and the extended ``@(a|b)`` ``?()`` ``*()`` ``+()`` ``!()`` within a name,
    a leading ``!`` negating, a leading ``#`` matching nothing."""
    if pattern.startswith("#"):
        return False
    negated = False
    while pattern.startswith("!"):
        negated, pattern = not negated, pattern[1:]
    if not pattern:
        return (path == "") != negated
    names = path.split("/")
    matched = any(_match_names(names, 0, segments, 0) for segments in _compiled(pattern))
    return matched != negated


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> tuple[list[_Segment], ...]:
    """``pattern``'s brace expansions, each as its compiled segments: made once per pattern,
    not once per path it is matched against (a tree search matches every entry)."""
    return tuple(_compile_pattern(expanded) for expanded in braces(pattern))


def _closing(text: str, start: int, opening: str, closing: str) -> int:
    """The index of the bracket closing the one at ``start`` (nesting, ``\\`` escapes), or -1."""
    depth, index = 0, start
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char == opening:
            depth += 1
        elif char == closing:
            depth -= 1
            if depth == 0:
                return index
        index += 1
    return -1


def _split_top(text: str, separator: str) -> list[str]:
    """``text`` split at the ``separator`` outside any brackets or escapes."""
    parts, depth, start, index = [], 0, 0, 0
    while index < len(text):
        char = text[index]
        if char == "\\":
            index += 2
            continue
        if char in "{(":
            depth += 1
        elif char in "})":
            depth -= 1
        elif char == separator and depth == 0:
            parts.append(text[start:index])
            start = index + 1
        index += 1
    parts.append(text[start:])
    return parts


_RANGE = re.compile(r"^(-?\d+|[A-Za-z])\.\.(-?\d+|[A-Za-z])(?:\.\.(-?\d+))?$")


def _sequence(inner: str) -> list[str] | None:
    """``{1..3}``, ``{a..c}``, ``{01..10..2}``: the items, or None if it is not a range."""
    match = _RANGE.match(inner)
    if match is None:
        return None
    first, last, step_text = match.groups()
    step = abs(int(step_text)) if step_text else 1
    step = step or 1
    numeric = first.lstrip("-").isdigit() and last.lstrip("-").isdigit()
    if not numeric and (first.lstrip("-").isdigit() or last.lstrip("-").isdigit()):
        return None
    a, b = (int(first), int(last)) if numeric else (ord(first), ord(last))
    values = range(a, b + 1, step) if a <= b else range(a, b - 1, -step)
    if not numeric:
        return [chr(value) for value in values]
    padded = any(len(t.lstrip("-")) > 1 and t.lstrip("-").startswith("0") for t in (first, last))
    width = max(len(first), len(last)) if padded else 0
    return [
        str(value).zfill(width) if value >= 0 else "-" + str(-value).zfill(width - 1)
        for value in values
    ]


def braces(pattern: str) -> list[str]:
    """``pattern`` with its braces expanded (``a{b,c}`` is ``ab`` and ``ac``)."""
    index = 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            index += 2
            continue
        if char == "{":
            end = _closing(pattern, index, "{", "}")
            if end == -1:
                return [pattern]
            inner = pattern[index + 1 : end]
            options = _split_top(inner, ",")
            if len(options) == 1:
                sequence = _sequence(inner)
                if sequence is None:
                    index += 1
                    continue
                options = sequence
            head, tails = pattern[:index], braces(pattern[end + 1 :])
            return [
                head + middle + tail
                for option in options
                for middle in braces(option)
                for tail in tails
            ]
        index += 1
    return [pattern]


_MAGIC = re.compile(r"[*?\[]|[@+!]\(")


def _compile_pattern(pattern: str) -> list[_Segment]:
    segments: list[_Segment] = []
    for part in pattern.split("/"):
        if part == "**":
            if not segments or segments[-1] is not _GLOBSTAR:
                segments.append(_GLOBSTAR)
            continue
        if _MAGIC.search(part) is None:  # a name as it is, its escapes undone
            segments.append(re.compile(re.escape(re.sub(r"\\(.)", r"\1", part)), re.DOTALL))
            continue
        segments.append(re.compile(_segment_regex(part), re.DOTALL))
    return segments


def _match_names(names: list[str], at: int, segments: list[_Segment], seg: int) -> bool:
    while at < len(names) and seg < len(segments):
        segment = segments[seg]
        if segment is _GLOBSTAR:
            if seg + 1 == len(segments):
                return all(name not in (".", "..") for name in names[at:])
            for start in range(at, len(names)):
                if _match_names(names, start, segments, seg + 1):
                    return True
                if names[start] in (".", ".."):
                    return False
            return False
        if segment.fullmatch(names[at]) is None:
            return False
        at, seg = at + 1, seg + 1
    if at == len(names) and seg == len(segments):
        return True
    if at == len(names):
        return False
    return at == len(names) - 1 and names[at] == ""


_POSIX_CLASSES = {
    "alnum": "a-zA-Z0-9",
    "alpha": "a-zA-Z",
    "ascii": "\\x00-\\x7f",
    "blank": " \\t",
    "cntrl": "\\x00-\\x1f\\x7f",
    "digit": "0-9",
    "graph": "\\x21-\\x7e",
    "lower": "a-z",
    "print": "\\x20-\\x7e",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "space": " \\t\\r\\n\\v\\f",
    "upper": "A-Z",
    "word": "\\w",
    "xdigit": "A-Fa-f0-9",
}


def _char_class(part: str, start: int) -> tuple[str, int] | None:
    """The regex of the ``[...]`` class at ``start`` and the index after it, or None when it
    does not close (then ``[`` is itself)."""
    index = start + 1
    negated = index < len(part) and part[index] in "!^"
    if negated:
        index += 1
    body: list[str] = []
    first = True
    while index < len(part):
        char = part[index]
        if char == "]" and not first:
            inner = "".join(body)
            return (f"[^{inner}]" if negated else f"[{inner}]"), index + 1
        first = False
        if char == "[" and part.startswith("[:", index):
            end = part.find(":]", index + 2)
            if end != -1 and part[index + 2 : end] in _POSIX_CLASSES:
                body.append(_POSIX_CLASSES[part[index + 2 : end]])
                index = end + 2
                continue
        if char == "\\" and index + 1 < len(part):
            index += 1
            char = part[index]
        if index + 2 < len(part) and part[index + 1] == "-" and part[index + 2] != "]":
            body.append(f"{re.escape(char)}-{re.escape(part[index + 2])}")
            index += 3
            continue
        body.append(re.escape(char))
        index += 1
    return None


def _segment_regex(part: str) -> str:
    """The regex of one name's pattern."""
    out: list[str] = []
    index = 0
    while index < len(part):
        char = part[index]
        if char == "\\" and index + 1 < len(part):
            out.append(re.escape(part[index + 1]))
            index += 2
            continue
        if char in "?*+@!" and part.startswith("(", index + 1):
            end = _closing(part, index + 1, "(", ")")
            if end != -1:
                inner = "|".join(
                    _segment_regex(alt) for alt in _split_top(part[index + 2 : end], "|")
                )
                if char == "!":
                    rest = _segment_regex(part[end + 1 :])
                    out.append(f"(?:(?!(?:{inner}){rest}$)[^/]*?)")
                else:
                    suffix = {"@": "", "?": "?", "*": "*", "+": "+"}[char]
                    out.append(f"(?:{inner}){suffix}")
                index = end + 1
                continue
        if char == "*":
            while index < len(part) and part[index] == "*":
                index += 1
            out.append("[^/]*?")
            continue
        if char == "?":
            out.append("[^/]")
        elif char == "[":
            parsed = _char_class(part, index)
            if parsed is not None:
                out.append(parsed[0])
                index = parsed[1]
                continue
            out.append(re.escape(char))
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)
