"""The server's ways of writing sizes, names and times: JavaScript's ``toFixed``, string
length and ``localeCompare``, and ``Date.prototype.toString``."""

from __future__ import annotations

import math
import unicodedata
from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from typing import Any


def format_size(size: int) -> str:
    """A size as the server writes it: bytes below 1 KiB, else KB, MB, GB or TB with two
    decimals (rounded half up, as JavaScript's ``toFixed``)."""
    units = ["B", "KB", "MB", "GB", "TB"]
    if size <= 0:
        return "0 B"
    power = math.floor(math.log(size) / math.log(1024))
    if power <= 0:
        return f"{size} B"
    power = min(power, len(units) - 1)
    value = Decimal(size / 1024**power).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    return f"{value} {units[power]}"


def js_length(text: str) -> int:
    """``text.length`` in JavaScript: UTF-16 code units."""
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


#: Punctuation and symbols in the order ICU's root collation puts them (before digits).
_SYMBOLS = "_-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"


def collation_key(name: str) -> tuple[Any, ...]:
    """An approximation of ICU's root collation (``localeCompare``): white space, then
    punctuation and symbols, then digits, then letters without regard to case or accents;
    ties go to the unaccented, then to the lower case."""
    primary: list[tuple[int, Any]] = []
    accents: list[str] = []
    cases: list[int] = []
    for char in name:
        decomposed = unicodedata.normalize("NFD", char)
        base, marks = decomposed[0], decomposed[1:]
        if base.isspace():
            primary.append((0, ord(base)))
        elif base in _SYMBOLS:
            primary.append((1, _SYMBOLS.index(base)))
        elif base.isdigit():
            primary.append((3, unicodedata.digit(base, ord(base))))
        elif base.isalpha():
            primary.append((4, base.casefold()))
        else:
            primary.append((2, ord(base)))
        accents.append(marks)
        cases.append(0 if base == base.lower() else 1)
    return (primary, accents, cases, name)


def js_date(ns: int) -> str:
    """A time as JavaScript's ``Date.prototype.toString`` writes it, in UTC."""
    moment = datetime.fromtimestamp(ns // 1_000_000_000, UTC)
    return moment.strftime("%a %b %d %Y %H:%M:%S") + " GMT+0000 (Coordinated Universal Time)"
