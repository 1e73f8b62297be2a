"""The ``Embedder`` protocol, the embedders agentfs ships, and finding one by model id.

An embedder's ``model_id`` and ``dim`` are stored with the vectors, so the next process knows
which model to load and an embedder of another model is refused (``EmbedderMismatchError``):
vectors of two models are not comparable. docs/search.md shows how to plug in another model.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from agentfs.core.errors import InvalidValueError
from agentfs.search.minilm import MODEL_ID as MINILM_ID
from agentfs.search.minilm import MiniLMEmbedder

if TYPE_CHECKING:
    import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """What the index needs of an embedding model.

    Attributes:
        model_id: a stable name of the model and its preprocessing; stored with the vectors.
        dim: the length of each vector.
    """

    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 matrix of shape (len(texts), dim), each row L2-normalised."""
        ...


_WORD = re.compile(r"[A-Za-z][a-z]+|[A-Z]+(?![a-z])|\d+")


class HashingEmbedder:
    """Feature hashing of a text's lower-cased words and word pairs into ``dim`` buckets.

    Deterministic, dependency-free and fast (thousands of texts a second), so unit tests can
    exercise embedding, storage and the k-NN scan. It knows nothing of meaning: two texts are
    close only when they share words. Never judge relevance with it.
    """

    def __init__(self, dim: int = 256) -> None:
        self.dim = dim
        self.model_id = f"hashing-bow-{dim}"

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        import numpy as np  # slow to import: only where vectors are made

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            words = [w.lower() for w in _WORD.findall(text)]
            for feature in [*words, *(f"{a} {b}" for a, b in itertools.pairwise(words))]:
                h = int.from_bytes(hashlib.blake2b(feature.encode(), digest_size=8).digest())
                out[row, h % self.dim] += 1.0 if h >> 63 else -1.0
            norm = float(np.linalg.norm(out[row]))
            if norm > 0:
                out[row] /= norm
        return out


#: Embedders agentfs can build from a stored model id, by their short names for the CLI.
BUILTIN: dict[str, Callable[[], Embedder]] = {
    "minilm": MiniLMEmbedder,
    "hashing": HashingEmbedder,
}
_BY_MODEL_ID: dict[str, Callable[[], Embedder]] = {
    MINILM_ID: MiniLMEmbedder,
    HashingEmbedder().model_id: HashingEmbedder,
}


@functools.lru_cache(maxsize=4)
def builtin(name: str) -> Embedder:
    """The built-in embedder called ``name`` ('minilm', 'hashing') or with that model id;
    one instance per process (loading MiniLM is slow and takes memory)."""
    factory = BUILTIN.get(name) or _BY_MODEL_ID.get(name)
    if factory is None:
        known = ", ".join(BUILTIN)
        raise InvalidValueError(
            f"no built-in embedder {name!r} (built in: {known}); pass an Embedder of your own"
            " to use another model"
        )
    return factory()
