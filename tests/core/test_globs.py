"""``agentfs.core.globs``: the glob language of ``read_before_write``, policies and ``glob``.

``*`` and ``?`` stay inside one path component, ``[...]`` is a character class, ``{a,b}``
alternatives (nested too), ``**`` as a whole component any number of components. A pattern with
a leading ``/`` is anchored at the root; one without matches at any depth. The examples pin
each rule; the property tests compare ``match`` with a reference written here from
``fnmatch.fnmatchcase`` applied component by component.
"""

from __future__ import annotations

import fnmatch
import re
import warnings

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from agentfs.core.globs import compile_glob, match


def matches(pattern: str, *paths: str) -> list[bool]:
    return [match(pattern, p) for p in paths]


# --- one rule at a time ---------------------------------------------------------------------------


def test_star_matches_within_one_component() -> None:
    """``*`` matches any run of characters, the empty one too, but never a ``/``."""
    assert matches("/src/*.py", "/src/a.py", "/src/.py", "/src/x/a.py", "/src/a.pyc") == [
        True,
        True,
        False,
        False,
    ]
    assert matches("/*", "/a", "/a/b") == [True, False]
    assert matches("/a*b*c", "/abc", "/aXbYc", "/a/b/c") == [True, True, False]


def test_question_mark_matches_one_character_but_not_a_slash() -> None:
    assert matches("/a?c", "/abc", "/ac", "/abbc", "/a/c") == [True, False, False, False]
    assert matches("/??", "/ab", "/é!", "/a") == [True, True, False]


def test_character_classes() -> None:
    """``[abc]`` one of the listed characters, ``[a-c]`` a range, ``[!abc]`` (or ``[^abc]``)
    any other character."""
    assert matches("/f[abc]", "/fa", "/fc", "/fd", "/f", "/fab") == [
        True,
        True,
        False,
        False,
        False,
    ]
    assert matches("/f[a-c]", "/fb", "/fd") == [True, False]
    assert matches("/f[!abc]", "/fd", "/fa", "/f") == [True, False, False]
    assert matches("/f[^abc]", "/fd", "/fa") == [True, False]
    assert matches("/v[0-9].[0-9]", "/v1.2", "/v1x2") == [True, False]


def test_an_unclosed_bracket_is_a_literal() -> None:
    assert matches("/a[b", "/a[b", "/ab") == [True, False]


def test_braces_are_alternatives() -> None:
    """``{a,b}`` matches either option; options may hold wildcards, slashes and nested braces;
    an empty option is allowed; an unclosed brace is a literal."""
    assert matches("/{src,lib}/*.py", "/src/a.py", "/lib/a.py", "/bin/a.py") == [True, True, False]
    assert matches("/*.{md,txt}", "/a.md", "/a.txt", "/a.rst") == [True, True, False]
    assert matches("/{a,{b,c}d}", "/a", "/bd", "/cd", "/d", "/b") == [
        True,
        True,
        True,
        False,
        False,
    ]
    assert matches("/x{,.bak}", "/x", "/x.bak", "/x.b") == [True, True, False]
    assert matches("/{docs/*.md,README}", "/docs/a.md", "/README", "/docs/x/a.md") == [
        True,
        True,
        False,
    ]
    assert matches("/{a,b}{c,d}", "/ac", "/bd", "/ab") == [True, True, False]
    assert matches("/a{b,c", "/a{b,c", "/ab") == [True, False]
    assert matches("/a}b", "/a}b") == [True]


def test_double_star_as_a_component_matches_zero_or_more_directories() -> None:
    """``/src/**/*.py``: /src/a.py (none between), /src/x/y/a.py (two); not /srcx/a.py.
    A trailing ``/**`` matches everything below the directory, not the directory itself (as
    git and Python's glob do)."""
    assert matches(
        "/src/**/*.py", "/src/a.py", "/src/x/a.py", "/src/x/y/a.py", "/srcx/a.py", "/a.py"
    ) == [True, True, True, False, False]
    assert matches("/a/**/b", "/a/b", "/a/x/b", "/a/x/y/b", "/ab", "/a/xb") == [
        True,
        True,
        True,
        False,
        False,
    ]
    assert matches("/src/**", "/src", "/src/a", "/src/a/b/c", "/srcx", "/other") == [
        False,
        True,
        True,
        False,
        False,
    ]
    assert matches("/**", "/a", "/a/b/c") == [True, True]
    assert matches("/**/*.md", "/a.md", "/d/e/a.md", "/a.mdx") == [True, True, False]


def test_a_leading_slash_anchors_at_the_root() -> None:
    assert matches("/a.md", "/a.md", "/docs/a.md") == [True, False]
    assert matches("/docs/*.md", "/docs/a.md", "/x/docs/a.md") == [True, False]


def test_a_pattern_without_a_leading_slash_matches_at_any_depth() -> None:
    """``*.md`` matches /README.md and /docs/a.md; ``name`` matches a whole last component
    only (not /xname); a pattern with inner slashes matches those components at any depth."""
    assert matches("*.md", "/README.md", "/docs/a.md", "/docs/deep/b.md", "/a.mdx") == [
        True,
        True,
        True,
        False,
    ]
    assert matches("a", "/a", "/x/a", "/xa", "/a/x") == [True, True, False, False]
    assert matches("src/*.py", "/src/a.py", "/x/src/a.py", "/xsrc/a.py") == [True, True, False]


@pytest.mark.parametrize("special", list(".+()$^|\\"))
def test_regular_expression_characters_in_names_are_literal(special: str) -> None:
    """A ``.`` is a dot, not any character; ``+ ( ) $ ^ |`` and a backslash are themselves."""
    name = f"/a{special}b"
    assert match(name, name)
    other = "/aXb" if special != "X" else "/aYb"
    assert not match(name, other)
    assert match(f"/*{special}*", f"/xx{special}yy")


def test_a_star_matches_any_character_of_a_name_even_a_newline() -> None:
    assert match("/a*z", "/a\nz")
    assert match("/a?z", "/a\nz")


def test_an_empty_pattern_is_refused() -> None:
    with pytest.raises(ValueError, match="empty"):
        compile_glob("")
    with pytest.raises(ValueError):
        match("", "/a")


def test_compiled_patterns_are_cached_regular_expressions() -> None:
    compiled = compile_glob("/src/**/*.py")
    assert isinstance(compiled, re.Pattern)
    assert compile_glob("/src/**/*.py") is compiled
    assert compiled.match("/src/a.py")


# --- found wrong ----------------------------------------------------------------------------------


def test_a_relative_pattern_starting_with_double_star_matches_at_the_root() -> None:
    """``**/a`` means the same as ``a``: /a and /x/a (``**`` may be zero components)."""
    assert matches("**/a", "/a", "/x/a") == [True, True]
    assert match("**/*.py", "/x.py")


def test_consecutive_double_star_components_may_all_be_empty() -> None:
    assert matches("/a/**/**/b", "/a/b", "/a/x/b", "/a/x/y/b") == [True, True, True]


def test_a_negated_class_never_matches_a_slash() -> None:
    """Like ``*`` and ``?``, a bracket expression matches one character of a name, never a
    ``/`` (fnmatch on components, POSIX FNM_PATHNAME, gitignore)."""
    assert not match("/notes[!.]*", "/notes/secret.md")
    assert not match("/a[!x]b", "/a/b")


def test_a_closing_bracket_first_in_a_class_is_a_member() -> None:
    assert matches("/[]a]", "/]", "/a", "/b") == [True, True, False]
    assert matches("/[!]a]", "/b", "/]") == [True, False]


def test_class_members_are_literal_characters() -> None:
    """``[[]`` matches '[', ``[a&&b]`` matches 'a', '&' or 'b', as in fnmatch, silently."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert matches("/[[]", "/[", "/a") == [True, False]
        assert matches("/x[a&&b]", "/x&", "/xb", "/xc") == [True, True, False]


def test_double_star_inside_a_name_is_a_plain_star() -> None:
    assert not match("/x/a**b", "/x/a/c/b")
    assert match("/x/a**b", "/x/aZb")


# --- properties against a reference ---------------------------------------------------------------


def reference(pattern: str, path: str) -> bool:
    """Component by component: ``fnmatchcase`` on each name, ``**`` any number of names (at
    least one when it ends the pattern); a pattern without a leading slash may start at any
    depth. Braces are not handled."""
    anchored = pattern.startswith("/")
    parts = pattern.lstrip("/").split("/")
    if not anchored:
        parts = ["**", *parts]
    names = path.lstrip("/").split("/")

    def fits(ps: list[str], ns: list[str]) -> bool:
        if not ps:
            return not ns
        if ps[0] == "**":
            first = 1 if len(ps) == 1 else 0  # a trailing ** names something below
            return any(fits(ps[1:], ns[i:]) for i in range(first, len(ns) + 1))
        return bool(ns) and fnmatch.fnmatchcase(ns[0], ps[0]) and fits(ps[1:], ns[1:])

    return fits(parts, names)


LETTERS = "ab.+($"
LITERAL = st.sampled_from(LETTERS)
WILDCARD = st.sampled_from(["*", "?", "[ab]", "[a-c]", "[b.]", "[$+]"])
#: A name with wildcards ('**' inside a name too: it is a plain '*').
NAME_PATTERN = st.lists(st.one_of(LITERAL, LITERAL, WILDCARD), min_size=1, max_size=4).map("".join)
NAME = st.text(alphabet=LETTERS + "c", min_size=1, max_size=4)


@st.composite
def patterns(draw: st.DrawFn) -> str:
    """Patterns of 1..4 components: names with wildcards and classes, and ``**`` components,
    two in a row and a leading relative one included."""
    anchored = draw(st.booleans())
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        if draw(st.integers(0, 3)) == 0:
            parts.append("**")
        else:
            parts.append(draw(NAME_PATTERN))
    return ("/" if anchored else "") + "/".join(parts)


def instance(draw: st.DrawFn, pattern: str) -> str:
    """A path the pattern should match, made by filling in each wildcard (so that matches are
    common), with extra leading components for a relative pattern."""
    names: list[str] = [] if pattern.startswith("/") else draw(st.lists(NAME, max_size=2))
    for part in pattern.lstrip("/").split("/"):
        if part == "**":
            names.extend(draw(st.lists(NAME, max_size=2)))
            continue
        out, i = [], 0
        while i < len(part):
            if part[i] == "[":
                end = part.index("]", i)
                members = part[i + 1 : end]
                if "-" in members:
                    members = "abc"
                out.append(draw(st.sampled_from(members)))
                i = end + 1
                continue
            if part[i] == "*":
                out.append(draw(st.text(alphabet=LETTERS, max_size=2)))
            elif part[i] == "?":
                out.append(draw(st.sampled_from(LETTERS)))
            else:
                out.append(part[i])
            i += 1
        names.append("".join(out) or "a")
    return "/" + "/".join(names or ["a"])


@st.composite
def pattern_and_path(draw: st.DrawFn) -> tuple[str, str]:
    pattern = draw(patterns())
    if draw(st.booleans()):
        path = instance(draw, pattern)
        if draw(st.booleans()):  # a near miss: one character replaced (a slash, maybe)
            i = draw(st.integers(1, len(path) - 1))
            changed = path[:i] + draw(st.sampled_from("ac/")) + path[i + 1 :]
            path = "/" + "/".join([name for name in changed.split("/") if name] or ["a"])
    else:
        path = "/" + "/".join(draw(st.lists(NAME, min_size=1, max_size=4)))
    return pattern, path


@settings(max_examples=400, deadline=None)
@given(pattern_and_path())
@example(("/src/**/*.py", "/src/a.py"))
@example(("*.md", "/README.md"))
@example(("a", "/xa"))
def test_match_agrees_with_fnmatch_per_component(case: tuple[str, str]) -> None:
    """For patterns of names, classes and whole-component ``**``, ``match`` is exactly the
    component-wise fnmatch reference."""
    pattern, path = case
    assert match(pattern, path) == reference(pattern, path), compile_glob(pattern).pattern


@settings(max_examples=200, deadline=None)
@given(
    st.data(),
    patterns().filter(lambda p: p.startswith("/")),
    st.lists(NAME_PATTERN, min_size=1, max_size=3),
)
def test_a_brace_group_matches_what_one_of_its_expansions_matches(
    data: st.DataObject, pattern: str, options: list[str]
) -> None:
    """``{x,y,...}`` put in place of one component matches a path exactly when writing one
    of the options there instead does."""
    parts = pattern.split("/")
    i = data.draw(st.integers(1, len(parts) - 1))
    braced = "/".join([*parts[:i], "{" + ",".join(options) + "}", *parts[i + 1 :]])
    expansions = ["/".join([*parts[:i], option, *parts[i + 1 :]]) for option in options]
    if data.draw(st.booleans()):
        path = instance(data.draw, data.draw(st.sampled_from(expansions)))
    else:
        path = "/" + "/".join(data.draw(st.lists(NAME, min_size=1, max_size=4)))
    assert match(braced, path) == any(match(e, path) for e in expansions)
