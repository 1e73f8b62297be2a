"""``trigram_query``: the FTS5 query a regex's matches must satisfy, checked on a real table.

The property: whenever ``re.search(pattern, text, flags)`` matches, the text indexed in an FTS5
table made exactly like ``ws_fts_trigram`` (its CREATE statement is read from a fresh
workspace) satisfies ``trigram_query(pattern, flags)``. Otherwise grep, which only reads the
files that query returns, would miss a match. Patterns come from a small grammar with the
characters where case folding is tricky: ASCII letters, accented letters, and the non-ASCII
letters ``re.IGNORECASE`` equates with ASCII ones (Kelvin sign, long s, dotted capital I,
dotless i, micro sign). Texts are made to match more often than chance by drawing a string the
pattern matches and swapping letters for their case-equivalents.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest
import re2
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import agentfs
from agentfs.search.literals import trigram_query
from agentfs.search.pattern import compile_pattern

#: Letters and the characters ``re.IGNORECASE`` (Unicode) treats as the same letter.
EQUIVALENT = {
    "a": "aA",
    "b": "bB",
    "c": "cC",
    "e": "eE",
    "k": "kK\u212a",
    "s": "sS\u017f",
    "i": "iI\u0130\u0131",
    "\u00e9": "\u00e9\u00c9",
    "\u00b5": "\u00b5\u039c\u03bc",
}
CHARS = sorted({c for group in EQUIVALENT.values() for c in group} | set(" .-\"'\n"))
CLASSES = ("[ab]", "[a-c]", "[^a]", r"\w", r"\d", r"\s", ".", "[kK]", "[sS]", "[\u00e9e]")
QUANTIFIERS = ("", "", "", "?", "*", "+", "{2}", "{1,3}", "{0,2}", "+?", "*?", "++")
#: Groups hold quantifiers of their own: only bounded ones outside, so ``re`` never backtracks
#: exponentially.
GROUP_QUANTIFIERS = ("", "", "?", "{2}", "{0,2}", "{1,2}")


def literal(char: str) -> str:
    return re.escape(char)


@st.composite
def sequences(draw: st.DrawFn, depth: int = 0) -> str:
    """A concatenation of atoms, each maybe quantified."""
    pieces = []
    for _ in range(draw(st.integers(0 if depth else 1, 4))):
        kinds = ["literal"] * 4 + ["class"] + (["group"] * 2 if depth < 2 else [])
        kind = draw(st.sampled_from(kinds))
        if kind == "literal":
            atom = "".join(literal(c) for c in draw(st.text(st.sampled_from(CHARS), min_size=1)))
            if len(atom) > 1 and draw(st.booleans()):
                atom = f"(?:{atom})"  # quantify the whole run, not its last character
        elif kind == "class":
            atom = draw(st.sampled_from(CLASSES))
        else:
            opener = draw(st.sampled_from(["(", "(?:", "(?i:", "(?-i:", "(?>"]))
            branches = draw(st.lists(sequences(depth + 1), min_size=1, max_size=3))
            atom = opener + "|".join(branches) + ")"
            pieces.append(atom + draw(st.sampled_from(GROUP_QUANTIFIERS)))
            continue
        pieces.append(atom + draw(st.sampled_from(QUANTIFIERS)))
    return "".join(pieces)


@st.composite
def patterns(draw: st.DrawFn) -> tuple[str, int]:
    body = "|".join(draw(st.lists(sequences(), min_size=1, max_size=2)))
    prefix = draw(st.sampled_from(["", "", "(?i)"]))
    flags = draw(
        st.sampled_from([0, re.IGNORECASE, re.MULTILINE | re.DOTALL, re.IGNORECASE | re.DOTALL])
    )
    pattern = prefix + body
    try:
        re.compile(pattern, flags)
    except re.error:
        assume(False)
    return pattern, flags


@st.composite
def cases(draw: st.DrawFn) -> tuple[str, int, str]:
    """A pattern, its flags, and a text that usually contains a match."""
    pattern, flags = draw(patterns())
    compiled = re.compile(pattern, flags)
    try:
        core = draw(st.from_regex(compiled))
    except Exception:  # a construct from_regex cannot generate from
        core = ""
    # swap letters for case-equivalents: matches only under IGNORECASE, except when unchanged
    swapped = "".join(
        draw(st.sampled_from(EQUIVALENT.get(c.lower(), c))) if draw(st.booleans()) else c
        for c in core
    )
    core = draw(st.sampled_from([core, swapped]))
    before = draw(st.text(st.sampled_from(CHARS), max_size=4))
    after = draw(st.text(st.sampled_from(CHARS), max_size=4))
    return pattern, flags, before + core + after


@pytest.fixture(scope="module")
def trigram_table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[apsw.Connection]:
    """An in-memory table created by the very statement that made ws_fts_trigram."""
    with agentfs.open(Path(tmp_path_factory.mktemp("literals")) / "ws.db") as ws:
        sql = ws.conn.execute("SELECT sql FROM sqlite_master WHERE name = 'ws_fts_trigram'").get
    assert isinstance(sql, str) and "trigram" in sql
    conn = apsw.Connection(":memory:")
    conn.execute(sql)
    yield conn
    conn.close()


def satisfies(conn: apsw.Connection, query: str, text: str) -> bool:
    conn.execute("INSERT INTO ws_fts_trigram(ws_fts_trigram) VALUES ('delete-all')")
    conn.execute("INSERT INTO ws_fts_trigram(rowid, text) VALUES (1, ?)", (text,))
    rows = conn.execute(
        "SELECT rowid FROM ws_fts_trigram WHERE ws_fts_trigram MATCH ?", (query,)
    ).fetchall()
    return rows == [(1,)]


def check(conn: apsw.Connection, pattern: str, flags: int, text: str) -> None:
    query = trigram_query(pattern, flags)
    for extra in (0, re.IGNORECASE):
        if re.search(pattern, text, flags | extra):
            narrowing = trigram_query(pattern, flags | extra)
            if narrowing is not None:
                assert satisfies(conn, narrowing, text), (pattern, flags | extra, narrowing, text)
    if query is not None and re.search(pattern, text, flags):
        assert satisfies(conn, query, text)


@settings(
    max_examples=250,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(case=cases())
@example(case=("kelvin", re.IGNORECASE, "\u212aelvin"))
@example(case=("(?i)stop", 0, "\u017ftop"))
@example(case=("istanbul", re.IGNORECASE, "\u0130stanbul"))
@example(case=("(?i)istanbul", 0, "\u0131stanbul"))
@example(case=("\u00b5s-x", re.IGNORECASE, "\u039cS-X"))
@example(case=("caf\u00e9", re.IGNORECASE, "CAF\u00c9"))
@example(case=('say "hi"', 0, 'they say "hi" twice'))
def test_a_match_always_satisfies_the_trigram_query(
    trigram_table: apsw.Connection, case: tuple[str, int, str]
) -> None:
    pattern, flags, text = case
    check(trigram_table, pattern, flags, text)


# --- which patterns narrow, and how much ---------------------------------------------------------


@pytest.mark.parametrize(
    "pattern",
    [
        "a.b",
        r"\w+",
        "x?yz",
        "ab",
        "[abc]+",
        "(abc)?",
        "(abc)*",
        "abc|x",
        "abc|[xyz]{3}",
        "(?i:abcdef)",
        r"\d{4}-\d{2}",
        "(",  # not a regex at all: grep's compile reports it
    ],
)
def test_patterns_without_a_required_trigram_give_none(pattern: str) -> None:
    assert trigram_query(pattern, 0) is None


def test_case_insensitive_letters_with_non_ascii_equivalents_are_not_required() -> None:
    """k, s and i (either case) have non-ASCII equals under re.IGNORECASE; a trigram
    holding one is left out, so a pattern made only of them needs nothing."""
    assert trigram_query("kiss", re.IGNORECASE) is None
    assert trigram_query("(?i)sik", 0) is None
    assert trigram_query("kiss", 0) is not None  # case-sensitive: exact letters


@pytest.mark.parametrize(
    ("pattern", "flags", "matching", "not_matching"),
    [
        ("hello", 0, ["say hello", "HELLO"], ["help", "hell o"]),
        ("foo(qux|baz)+", 0, ["fooqux", "a foo and bazooka"], ["foo", "qux baz"]),
        (r"error: \d+ in (parser|lexer)", 0, ["error: 1 in lexer"], ["error: 1 in tokenizer"]),
        ("x?yzzy", 0, ["yzzy"], ["xyz zy"]),
        ("(?:abc){2,}", 0, ["abcabc"], ["ab"]),
        ("café", 0, ["un café"], ["cafe"]),
        ("caféine", re.IGNORECASE, ["CAFÉINE", "caféine"], ["coffee"]),
        ('a"b"c', 0, ['x a"b"c'], ["abc"]),
        ("a++bcd", 0, ["aabcd"], ["abce"]),
    ],
)
def test_narrowing_patterns_select_the_right_texts(
    trigram_table: apsw.Connection,
    pattern: str,
    flags: int,
    matching: list[str],
    not_matching: list[str],
) -> None:
    query = trigram_query(pattern, flags)
    assert query is not None
    for text in matching:
        assert satisfies(trigram_table, query, text), text
    for text in not_matching:
        assert not satisfies(trigram_table, query, text), text


def test_too_many_branches_give_up_rather_than_grow() -> None:
    many = "|".join(f"{chr(97 + i % 26)}{i:02d}word" for i in range(40))
    assert trigram_query(f"({many})", 0) is None
    few = "|".join(f"{chr(97 + i)}{i:02d}word" for i in range(3))
    assert trigram_query(f"({few})", 0) is not None


def test_a_long_literal_needs_at_most_a_dozen_trigrams() -> None:
    query = trigram_query("abcdefghijklmnopqrstuvwxyz0123456789", 0)
    assert query is not None
    assert 1 <= query.count('"') // 2 <= 12


# --- RE2 syntax: what grep really compiles --------------------------------------------------------

#: RE2 atoms and a text each matches; several mean something else to Python's parser, which the
#: narrowing uses (``[[:alpha:]]`` is a class and a literal ``]`` to it).
RE2_ATOMS = {
    "[[:alpha:]]": "q",
    "[^[:space:]]": "]",
    r"\pL": "\u00e9",
    r"\PL": "-",
    r"\Qa.b\E": "a.b",
    "x{,2}": "x{,2}",
    r"\x{e9}": "\u00e9",
    "(?U)": "",
    r"\C": "z",
}


@st.composite
def re2_cases(draw: st.DrawFn) -> tuple[str, bool, str]:
    pattern, text = [], []
    for _ in range(draw(st.integers(1, 5))):
        if draw(st.booleans()):
            atom = draw(st.sampled_from(sorted(RE2_ATOMS)))
            pattern.append(atom)
            text.append(RE2_ATOMS[atom])
        else:
            word = draw(st.text(st.sampled_from("abc]:[ line"), min_size=1, max_size=5))
            pattern.append(re.escape(word))
            text.append(word)
    noise = st.text(st.sampled_from("ab]: l"), max_size=3)
    return "".join(pattern), draw(st.booleans()), draw(noise) + "".join(text) + draw(noise)


@settings(max_examples=300, deadline=None)
@given(case=re2_cases())
def test_an_re2_match_always_satisfies_greps_trigram_query(
    trigram_table: apsw.Connection, case: tuple[str, bool, str]
) -> None:
    """What grep compiles (RE2, with the narrowing from Python's parser where it reads the
    pattern alike): every line RE2 matches satisfies the trigram query."""
    pattern, ignore_case, text = case
    compiled = compile_pattern(
        pattern, ignore_case=ignore_case, fixed_strings=False, multiline=False
    )
    options = re2.Options()
    options.case_sensitive = not ignore_case
    assert re2.compile(pattern, options).search(text), (pattern, text)  # built to match
    if compiled.trigrams is not None:
        assert satisfies(trigram_table, compiled.trigrams, text), (pattern, compiled.trigrams)
