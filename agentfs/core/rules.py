"""Judging paths by a policy's deny and allow globs, whichever route reaches the file.

A deny list errs on the side of refusing: it is compared case-folded and NFKC-normalised, so
``/SECRETS/x`` matches ``/secrets/**``. An allow list is compared as written.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache
from typing import Any

from agentfs.core.globs import compile_glob


def denied_by(globs: tuple[str, ...], *candidates: str) -> str | None:
    """The first deny glob that matches any candidate path, compared case-folded and
    NFKC-normalised (a deny list errs on the side of refusing)."""
    folded = [_fold(path) for path in candidates]
    for glob in globs:
        regex = _folded_glob(glob)
        if any(regex.fullmatch(path) for path in folded):
            return glob
    return None


def allowed_by(globs: tuple[str, ...], *candidates: str) -> bool:
    """True when every candidate path matches some allow glob (an empty list allows all)."""
    if not globs:
        return True
    return all(any(compile_glob(g).fullmatch(path) for g in globs) for path in candidates)


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text).casefold()


@lru_cache(maxsize=256)
def _folded_glob(glob: str) -> Any:
    return compile_glob(_fold(glob))
