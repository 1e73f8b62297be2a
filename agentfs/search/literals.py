"""From a regular expression to an FTS5 trigram query that every matching line satisfies.

Each required literal of three or more characters becomes an AND of its trigrams, alternatives
an OR; whatever this cannot reason about is simply not required, so the query only ever gets
weaker, never wrong. Trigrams with letters the case fold may not equate as ``re`` does (``k``
and the Kelvin sign) are left out (docs/search.md, "grep").
"""

from __future__ import annotations

import re
from re import _constants as sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

#: Trigrams taken from one literal (spread over it): more narrow little further and cost a lookup.
MAX_TRIGRAMS = 12
#: An alternation with more branches than this is not worth a query.
MAX_BRANCHES = 16
#: Letters ``re.IGNORECASE`` equates with a non-ASCII character.
_UNSAFE_FOLDED = frozenset("iksIKS")

# A requirement: None (nothing known), a literal string, or ("and"|"or", [requirements]).
Requirement = Any


def trigram_query(pattern: str, flags: int) -> str | None:
    """The FTS5 query over ws_fts_trigram for the compiled form of ``pattern`` (with ``re``
    ``flags``), or None when nothing narrows it (or it does not parse: the caller's compile
    reports that)."""
    try:
        parsed = _parser.parse(pattern, flags)
    except (re.error, OverflowError, RecursionError):
        return None
    ignore_case = bool(parsed.state.flags & re.IGNORECASE)
    try:
        requirement = _sequence(list(parsed))
    except RecursionError:
        return None
    return _render(requirement, ignore_case)


def _sequence(items: list[tuple[Any, Any]]) -> Requirement:
    """What a sequence of parsed items requires: its literal runs and its parts' needs."""
    needs: list[Requirement] = []
    run: list[str] = []

    def end_run() -> None:
        if run:
            needs.append("".join(run))
            run.clear()

    for op, av in items:
        if op is sre.LITERAL:
            run.append(chr(av))
            continue
        end_run()
        if op is sre.SUBPATTERN:
            _group, add_flags, del_flags, body = av
            if (add_flags | del_flags) & (re.IGNORECASE | re.LOCALE):
                continue  # case rules change inside: require nothing of it
            needs.append(_sequence(list(body)))
        elif op is getattr(sre, "ATOMIC_GROUP", None):
            needs.append(_sequence(list(av)))
        elif op is sre.BRANCH:
            needs.append(_branch(av[1]))
        elif op in (sre.MAX_REPEAT, sre.MIN_REPEAT, getattr(sre, "POSSESSIVE_REPEAT", None)):
            low, _high, body = av
            if low >= 1:
                needs.append(_sequence(list(body)))
        # anything else (classes, ANY, anchors, lookarounds, backreferences) requires nothing
    end_run()
    return _all(needs)


def _branch(alternatives: list[Any]) -> Requirement:
    if len(alternatives) > MAX_BRANCHES:
        return None
    options = [_sequence(list(alt)) for alt in alternatives]
    if any(option is None for option in options):
        return None
    return ("or", options)


def _all(needs: list[Requirement]) -> Requirement:
    needs = [n for n in needs if n is not None]
    if not needs:
        return None
    return needs[0] if len(needs) == 1 else ("and", needs)


def _render(requirement: Requirement, ignore_case: bool) -> str | None:
    """The FTS5 expression for ``requirement``, or None when it constrains nothing."""
    if requirement is None:
        return None
    if isinstance(requirement, str):
        grams = _trigrams(requirement, ignore_case)
        return " AND ".join(f'"{g}"' for g in grams) or None
    kind, parts = requirement
    rendered = [_render(part, ignore_case) for part in parts]
    if kind == "and":
        known = [r for r in rendered if r is not None]
        return " AND ".join(f"({r})" for r in known) or None
    if any(r is None for r in rendered):
        return None  # one alternative needs nothing: the OR needs nothing
    return " OR ".join(f"({r})" for r in rendered)


def _trigrams(literal: str, ignore_case: bool) -> list[str]:
    """Distinct trigrams of ``literal`` safe to require, at most MAX_TRIGRAMS spread over it,
    each quoted for FTS5."""
    grams: list[str] = []
    for i in range(len(literal) - 2):
        gram = literal[i : i + 3]
        if ignore_case and (not gram.isascii() or _UNSAFE_FOLDED & set(gram)):
            continue
        quoted = gram.replace('"', '""')
        if quoted not in grams:
            grams.append(quoted)
    if len(grams) > MAX_TRIGRAMS:
        step = len(grams) / MAX_TRIGRAMS
        grams = [grams[int(k * step)] for k in range(MAX_TRIGRAMS)]
    return grams
