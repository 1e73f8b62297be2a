"""``search``: the files that best answer a query, by BM25, by vector similarity, or both.

Both rankings work on chunk texts and a file is as good as its best chunk. Scores are in 0..1:
BM25 divided by the best among the candidates, the cosine clamped at 0, and for ``hybrid`` a
weighted reciprocal-rank fusion of the two lists, which ranked best on the relevance set
(docs/search.md, "search: BM25, vectors, hybrid").
"""

from __future__ import annotations

import errno
import json
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypedDict

import apsw

from agentfs.core import paths
from agentfs.core.errors import fs_error
from agentfs.core.inodes import S_IFMT, S_IFREG
from agentfs.search.embedders import builtin
from agentfs.search.glob import walk
from agentfs.search.index import CHUNK_BITS, chunk_ino
from agentfs.search.names import first_names
from agentfs.search.vectors import check_model, chunk_texts, nearest, stored_model

if TYPE_CHECKING:
    from agentfs.core.fs import FileSystem
    from agentfs.search.api import Index
    from agentfs.search.embedders import Embedder

Mode = Literal["bm25", "vector", "hybrid"]
MODES = ("bm25", "vector", "hybrid")
#: Chunks each ranking proposes per result asked for (files repeat among chunks).
CANDIDATES_PER_RESULT = 20
MIN_CANDIDATES = 100
#: Texts whose chunks ``_hits`` fetches per query: a few queries find ``top_k`` files.
HOLDERS_SLICE = 50
#: The k of reciprocal-rank fusion: how fast a rank's weight falls (docs/search.md).
RRF_K = 10
_WORD = re.compile(r"\w+")
#: Matching chunks a BM25 query may touch before its more common words are left out.
POSTINGS = 4000
#: Words too common in English to tell chunks apart (left out of BM25 queries).
STOPWORDS = frozenset(
    """a about an and any are as at be but by can could do does for from has have how i if in
    into is it its me my no not of on or our should so some than that the their them then there
    these this those to was we what when where which while who why will with would you your
    """.split()  # noqa: SIM905 (a word list reads better as text)
)


@dataclass
class SearchHit:
    """One file that answers the query.

    Attributes:
        path: the file (one of its names, for a hard-linked file: the first by path).
        score: 0..1, see the module docstring.
        score_details: the parts of the score, {'bm25': ..., 'vector': ...} (None: not used).
        line_range: (first, last) line of the best chunk, 1-based, inclusive.
        snippet: at most ``snippet_length`` characters of that chunk around the query's words.
        content: the whole chunk, when asked for.
    """

    path: str
    score: float
    score_details: dict[str, float | None]
    line_range: tuple[int, int]
    snippet: str
    content: str | None = None


@dataclass
class SearchResults:
    """The hits, best first, with the mode used, how many chunks still wait for a vector
    (they are invisible to vector search until ``agentfs index`` embeds them), and a note
    when the mode asked for could not be used (why, and what to do)."""

    mode: str
    hits: list[SearchHit] = field(default_factory=list)
    pending: int = 0
    note: str | None = None


#: Why a hybrid or vector search was answered from BM25.
NO_VECTORS = (
    "{mode} search needs vectors and this workspace has none yet (run `agentfs index WS`"
    " with the embed extra installed, or `agentfs index WS --embedder minilm`);"
    " these results come from keywords (bm25)"
)


@dataclass(frozen=True)
class SearchOptions:
    """How a search ranks and what it returns: one model, and one set of defaults, for the
    API (``ws.search``), the CLI (``agentfs search``) and the ``workspace_search`` tool.

    Attributes:
        mode: 'bm25', 'vector' or 'hybrid'; None picks hybrid when the workspace has
            vectors, else bm25.
        top_k: at most this many files.
        min_score: drop hits scoring below this (0..1).
        path: only files at or below this path.
        glob: only files matching this glob.
        include_content: each hit's whole best chunk as ``content``.
        snippet_length: characters of each hit's snippet.
        vector_weight: hybrid: the share of the vector score (0..1).
    """

    mode: Mode | None = None
    top_k: int = 5
    min_score: float = 0.0
    path: str = "/"
    glob: str | None = None
    include_content: bool = False
    snippet_length: int = 200
    vector_weight: float = 0.6

    def __post_init__(self) -> None:
        if self.mode is not None and self.mode not in MODES:
            raise fs_error(errno.EINVAL, str(self.mode), "mode is 'bm25', 'vector' or 'hybrid'")
        if self.top_k < 1 or self.snippet_length < 1:
            raise fs_error(errno.EINVAL, self.path, "top_k and snippet_length must be >= 1")
        if not 0.0 <= self.min_score <= 1.0 or not 0.0 <= self.vector_weight <= 1.0:
            raise fs_error(
                errno.EINVAL, self.path, "min_score and vector_weight are between 0 and 1"
            )


class SearchFields(TypedDict, total=False):
    """``SearchOptions``'s fields as keyword arguments (``ws.search(query, top_k=3)``)."""

    mode: Mode | None
    top_k: int
    min_score: float
    path: str
    glob: str | None
    include_content: bool
    snippet_length: int
    vector_weight: float


#: The defaults, for interfaces that show them (the CLI's help, the tool's schema).
DEFAULTS = SearchOptions()


def search(
    index: Index, query: str, options: SearchOptions = DEFAULTS, embedder: Embedder | None = None
) -> SearchResults:
    """The ``top_k`` files at or below ``path`` (matching ``glob``) that best answer ``query``
    (``SearchOptions``). A hybrid or vector search on a workspace without vectors is
    answered from BM25, with a ``note`` saying so. ``embedder`` embeds the query (default:
    the built-in model the workspace's vectors were made with)."""
    if not isinstance(query, str) or not query.strip() or "\0" in query:
        raise fs_error(errno.EINVAL, str(query), "a search query is a non-empty string")
    index = index.indexed()  # never misses a committed write, even on a read-only handle
    fs = index.fs
    model, _dim = stored_model(fs.conn)
    mode = options.mode or ("hybrid" if model else "bm25")
    note = None
    if mode != "bm25" and not model and embedder is None:
        note, mode = NO_VECTORS.format(mode=mode), "bm25"
    if mode != "bm25":
        embedder = embedder or builtin(model)
    top_k = options.top_k
    with fs.read_transaction():
        scope = _scope(fs, options.path, options.glob)
        pending = int(fs.conn.execute("SELECT count(*) FROM ws_embed_queue").get)  # type: ignore[arg-type]
        limit = max(MIN_CANDIDATES, top_k * CANDIDATES_PER_RESULT)
        scores = _score(index, query, mode, scope, limit, options.vector_weight, embedder)
        hits = _hits(
            fs,
            scores,
            scope,
            top_k,
            options.min_score,
            query,
            options.snippet_length,
            options.include_content,
        )
    return SearchResults(mode, hits, pending, note)


class Scope:
    """Which files a query may return: all (``names`` None), or the regular files under a
    path/glob, with their paths."""

    def __init__(self, names: dict[int, str] | None) -> None:
        self.names = names
        self.inos_json = None if names is None else json.dumps(list(names))


def _scope(fs: FileSystem, path: str, glob: str | None) -> Scope:
    if paths.normalize(path) == "/" and glob is None:
        return Scope(None)
    st = fs.stat(path)
    if not st.is_dir():  # one file (a glob then has nothing below it to match)
        keep = st.type == "file" and glob is None
        return Scope({st.st_ino: paths.normalize(path)} if keep else {})
    names: dict[int, str] = {}
    for entry in sorted(walk(fs, glob or "**", path), key=lambda e: e.path):
        if entry.mode & S_IFMT == S_IFREG:
            names.setdefault(entry.ino, entry.path)
    return Scope(names)


def _score(
    index: Index,
    query: str,
    mode: str,
    scope: Scope,
    limit: int,
    weight: float,
    embedder: Embedder | None,
) -> dict[int, tuple[float, float | None, float | None]]:
    """text id -> (score, bm25 part, vector part) for the candidate chunk texts; a part is
    None when the text was not among that ranking's candidates (or the mode has no such
    part)."""
    lexical: dict[int, float] = {}
    semantic: dict[int, float] = {}
    if mode in ("bm25", "hybrid"):
        match = _fts_query(index, query)
        lexical = dict(_bm25(index.fs, match, scope, limit)) if match else {}
    if mode in ("vector", "hybrid"):
        assert embedder is not None
        semantic = _nearest(index, query, scope, limit, embedder)
    best = max(lexical.values(), default=0.0) or 1.0
    parts = {
        cid: (
            lexical[cid] / best if cid in lexical else None,
            max(0.0, semantic[cid]) if cid in semantic else None,
        )
        for cid in lexical.keys() | semantic.keys()
    }
    if mode != "hybrid":
        return {cid: ((b if mode == "bm25" else v) or 0.0, b, v) for cid, (b, v) in parts.items()}
    fused = _reciprocal_ranks(lexical, 1.0 - weight)
    for cid, share in _reciprocal_ranks(semantic, weight).items():
        fused[cid] = fused.get(cid, 0.0) + share
    return {cid: (fused[cid], b, v) for cid, (b, v) in parts.items()}


def _reciprocal_ranks(scores: dict[int, float], weight: float) -> dict[int, float]:
    """Each chunk's share of a hybrid score: ``weight * (K + 1) / (K + rank)``, rank 1 for
    the best, so a chunk ranked first by both rankings scores 1.0."""
    ranked = sorted(scores, key=lambda cid: (-scores[cid], cid))
    return {cid: weight * (RRF_K + 1) / (RRF_K + rank) for rank, cid in enumerate(ranked, 1)}


def _nearest(
    index: Index, query: str, scope: Scope, limit: int, embedder: Embedder
) -> dict[int, float]:
    """The ``limit`` chunk texts in scope nearest to ``query``'s vector, with their
    similarity."""
    conn = index.conn
    check_model(conn, embedder)
    vector = embedder.embed([query])[0]
    among = None
    if scope.names is not None:
        among = [tid for (tid,) in conn.execute(_SCOPE_TEXTS, (scope.inos_json,))]
    return dict(nearest(conn, vector, limit, among, index.search_index.vectors))


def _fts_query(index: Index, query: str) -> str:
    """The FTS5 query for ``query``: its words OR-ed, leaving out English stopwords, words no
    chunk has, and, beyond a budget of POSTINGS chunks, the most common words.

    BM25 in FTS5 costs about a microsecond per matching chunk and word, so a common word
    ("file", "data" in a code base) makes every query slow while adding almost nothing to the
    ranking (its IDF is near 0). The rarest words are kept first, each word's chunk count
    read from the FTS5 vocabulary; the first is always kept."""
    conn = index.conn
    words: dict[str, str] = {}  # stem -> the word as typed (FTS5 stems it the same way again)
    stem = index.search_index.tokenizer()
    for word in _WORD.findall(query.lower()):
        if word in STOPWORDS:
            continue
        for token in stem(word.encode(), apsw.FTS5_TOKENIZE_QUERY, None):
            words.setdefault(str(token[2]), word)  # type: ignore[misc]  # (start, end, stem)
    if not words:
        return ""
    conn.execute(
        "CREATE VIRTUAL TABLE IF NOT EXISTS temp.ws_fts_chunk_terms"
        " USING fts5vocab(main, ws_fts_chunk, row)"
    )
    counts = dict(
        conn.execute(
            f"SELECT term, doc FROM temp.ws_fts_chunk_terms WHERE term IN"
            f" ({','.join('?' * len(words))})",
            list(words),
        )
    )
    kept: list[str] = []
    total = 0
    for stem in sorted(counts, key=lambda t: counts[t]):  # type: ignore[arg-type,return-value]
        if kept and total + counts[stem] > POSTINGS:  # type: ignore[operator]
            break
        kept.append(words[str(stem)])
        total += counts[stem]  # type: ignore[operator]
    return " OR ".join(f'"{w}"' for w in kept)


#: The texts of the chunks of the inodes in a JSON list (a range of chunk ids per inode).
_SCOPE_TEXTS = (
    "SELECT DISTINCT c.text_id FROM json_each(?) j JOIN ws_chunk c"
    f" ON c.id BETWEEN j.value << {CHUNK_BITS} AND ((j.value + 1) << {CHUNK_BITS}) - 1"
)


def _bm25(fs: FileSystem, match: str, scope: Scope, limit: int) -> list[tuple[int, float]]:
    """(text id, BM25) of the ``limit`` best texts holding ``match`` (in scope)."""
    if scope.names is None:
        sql = (
            "SELECT rowid, -bm25(ws_fts_chunk) FROM ws_fts_chunk WHERE ws_fts_chunk MATCH ?"
            " ORDER BY rank LIMIT ?"
        )
        return fs.conn.execute(sql, (match, limit)).fetchall()  # type: ignore[return-value]
    sql = (
        "SELECT rowid, -bm25(ws_fts_chunk) FROM ws_fts_chunk WHERE ws_fts_chunk MATCH ?"
        f" AND rowid IN ({_SCOPE_TEXTS}) ORDER BY rank LIMIT ?"
    )
    return fs.conn.execute(sql, (match, scope.inos_json, limit)).fetchall()  # type: ignore[return-value]


def _hits(
    fs: FileSystem,
    scores: dict[int, tuple[float, float | None, float | None]],
    scope: Scope,
    top_k: int,
    min_score: float,
    query: str,
    snippet_length: int,
    include_content: bool,
) -> list[SearchHit]:
    """The best chunk of each file, best files first, as hits. The texts are taken in rank
    order (ties by text id) and each gives every chunk holding it (in chunk id order, so by
    inode), a slice of texts per query, until ``top_k`` files have their best chunk; then one
    query for the files' names and one for the chunks' text."""
    ranked = [
        t for t in sorted(scores, key=lambda t: (-scores[t][0], t)) if scores[t][0] >= min_score
    ]
    best: dict[int, tuple[int, tuple[int, int, int, int]]] = {}  # ino -> (text, chunk range)
    for start in range(0, len(ranked), HOLDERS_SLICE):
        holders: dict[int, list[tuple[int, tuple[int, int, int, int]]]] = {}
        for text_id, chunk_id, *where in fs.conn.execute(
            "SELECT text_id, id, start_line, end_line, start_byte, end_byte FROM ws_chunk"
            " WHERE text_id IN (SELECT value FROM json_each(?))",
            (json.dumps(ranked[start : start + HOLDERS_SLICE]),),
        ):
            holders.setdefault(text_id, []).append((chunk_id, tuple(where)))  # type: ignore[arg-type]
        for text_id in ranked[start : start + HOLDERS_SLICE]:
            for chunk_id, where in sorted(holders.get(text_id, ())):
                ino = chunk_ino(chunk_id)
                if scope.names is None or ino in scope.names:
                    best.setdefault(ino, (text_id, where))
        if len(best) >= top_k:
            break
    names = scope.names if scope.names is not None else first_names(fs, best)
    chosen = [(ino, *found) for ino, found in best.items() if ino in names][:top_k]
    texts = chunk_texts(fs, [(ino, where[2], where[3]) for ino, _t, where in chosen])
    return [
        SearchHit(
            path=names[ino],
            score=scores[text_id][0],
            score_details={"bm25": scores[text_id][1], "vector": scores[text_id][2]},
            line_range=(where[0], where[1]),
            snippet=snippet(text, query, snippet_length),
            content=text if include_content else None,
        )
        for (ino, text_id, where), text in zip(chosen, texts, strict=True)
    ]


def snippet(text: str, query: str, length: int) -> str:
    """About ``length`` characters of ``text``: the line with most of the query's words
    (compared by their first five letters, a cheap stand-in for the stemmer), then the lines
    after and before it in turn."""
    stems = {w[:5] for w in _WORD.findall(query.lower()) if len(w) > 2}
    lines = text.rstrip("\n").split("\n")
    if not lines:
        return ""
    counts = [sum(line.lower().count(s) for s in stems) for line in lines]
    best = max(range(len(lines)), key=lambda i: (counts[i], -i))
    lo, hi = best, best + 1
    size = len(lines[best])
    while size < length and hi < len(lines):  # what follows the best line first
        size += len(lines[hi]) + 1
        hi += 1
    while size < length and lo > 0:  # then what leads up to it, if room is left
        lo -= 1
        size += len(lines[lo]) + 1
    return "\n".join(lines[lo:hi])[:length]
