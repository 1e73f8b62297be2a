"""The pattern grep runs, compiled once: RE2 for matching, Python's parser for narrowing.

No pattern from a model or a user may hang the workspace, so grep matches with RE2, linear in
the text whatever the pattern (and rg's syntax), and refuses backreferences and lookaround. A
pattern that is one ASCII literal runs on Python's ``re``, which cannot backtrack on it and
starts a search faster (docs/search.md, "grep").
"""

from __future__ import annotations

import errno
import re
from collections.abc import Iterator
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import NamedTuple, Protocol

import re2

from agentfs.core.errors import fs_error
from agentfs.search.literals import trigram_query


class Span(Protocol):
    def start(self) -> int: ...
    def end(self) -> int: ...


class Matcher(Protocol):
    """A compiled pattern over bytes: RE2's ``_Regexp`` or an ``re.Pattern[bytes]``."""

    def search(self, text: bytes, pos: int = ..., endpos: int = ...) -> Span | None: ...
    def finditer(self, text: bytes) -> Iterator[Span]: ...


class GrepPattern(NamedTuple):
    """A compiled grep pattern: ``line`` matches one line (or, with ``multiline``, the whole
    text); ``whole`` is the same pattern with ``^``/``$`` at every line, for searching a whole
    text at once (None when the pattern looks beyond its line: ``\\A``, ``\\z``, ``(?-m)``);
    ``trigrams`` is the FTS5 query every matching line satisfies, or None."""

    source: str
    line: Matcher
    whole: Matcher | None
    trigrams: str | None
    multiline: bool


#: Syntax Python's parser accepts but reads unlike RE2: a POSIX class, a ``{,n}`` (a repeat to
#: Python, literal text to RE2), a scoped flag change.
_READ_DIFFERENTLY = re.compile(r"\[:|\{,|\(\?[a-zA-Z]*-")
#: What makes a match depend on more than its line: the text anchors ``\A`` and ``\z`` (an
#: escaped backslash is consumed first, so ``\\A`` is not one) and a flag group that could
#: turn ``m`` off, making ``^`` and ``$`` text anchors again.
_LOOKS_BEYOND_THE_LINE = re.compile(r"\\(?:\\|[Az])|\(\?[a-zA-Z]*-")
#: Letters ``re.IGNORECASE`` and RE2's case folding both equate with a non-ASCII character.
_UNSAFE_FOLDED = frozenset("iksIKS")


def compile_pattern(
    pattern: str, *, ignore_case: bool, fixed_strings: bool, multiline: bool
) -> GrepPattern:
    """Compile ``pattern`` (RE2 syntax, or a fixed string); a pattern RE2 cannot take is
    EINVAL, saying why."""
    source = re2.escape(pattern) if fixed_strings else pattern
    options = re2.Options()
    options.case_sensitive = not ignore_case
    options.log_errors = False
    if multiline:
        line = _re2(pattern, "(?ms)" + source, options)
        return GrepPattern(pattern, line, None, None, True)
    line = _re2(pattern, source, options)
    analysed = re.escape(pattern) if fixed_strings else pattern
    flags = re.IGNORECASE if ignore_case else 0
    trigrams = literal = None
    if fixed_strings or not _READ_DIFFERENTLY.search(pattern):
        trigrams = trigram_query(analysed, flags)
        literal = _ascii_literal(analysed, flags)
    if literal is not None:
        return GrepPattern(pattern, literal, literal, trigrams, False)
    beyond = not fixed_strings and any(
        m.group() != "\\\\" for m in _LOOKS_BEYOND_THE_LINE.finditer(pattern)
    )
    whole = None if beyond else _re2(pattern, "(?m)" + source, options)
    return GrepPattern(pattern, line, whole, trigrams, False)


def _re2(given: str, source: str, options: re2.Options) -> Matcher:
    try:
        matcher: Matcher = re2.compile(source.encode(), options)
    except re2.error as exc:
        raise fs_error(errno.EINVAL, given, _explain(exc)) from None
    return matcher


def _explain(exc: re2.error) -> str:
    """RE2's complaint, with what to do when the pattern needs what RE2 will not do."""
    raw = exc.args[0] if exc.args else b""
    problem = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
    engine = "grep matches with RE2, which runs in linear time on any pattern"
    if re.fullmatch(r"invalid escape sequence: \\[1-9]", problem):
        return f"backreferences ({problem[-2:]}) are not supported: {engine}"
    if problem.startswith("invalid perl operator: (?<") and problem[-1] in "=!":
        return f"lookbehind ({problem[-4:]}...) is not supported: {engine}"
    if problem in ("invalid perl operator: (?=", "invalid perl operator: (?!"):
        return f"lookahead ({problem[-3:]}...) is not supported: {engine}"
    if problem == "invalid escape sequence: \\Z":
        return "not a regular expression (RE2 syntax): \\Z is written \\z (end of text) or $"
    return f"not a regular expression (RE2 syntax): {problem}"


def _ascii_literal(pattern: str, flags: int) -> re.Pattern[bytes] | None:
    """A bytes ``re`` pattern for ``pattern`` when it is one ASCII literal with no newline
    (and, ignoring case, no letter that folds to a non-ASCII one): an ASCII byte sequence occurs
    in UTF-8 exactly where the characters do, and a literal cannot make ``re`` backtrack."""
    try:
        parsed = _parser.parse(pattern, flags)
    except (re.error, OverflowError, RecursionError):
        return None
    if not parsed or any(op is not sre.LITERAL for op, _av in parsed):
        return None
    literal = "".join(chr(av) for _op, av in parsed)
    ignore_case = bool(parsed.state.flags & re.IGNORECASE)  # the flag, or (?i) in the pattern
    if not literal.isascii() or "\n" in literal or (ignore_case and set(literal) & _UNSAFE_FOLDED):
        return None
    return re.compile(re.escape(literal.encode()), re.IGNORECASE if ignore_case else 0)
