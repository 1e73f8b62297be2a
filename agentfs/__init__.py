"""agentfs: a workspace for AI agents in one SQLite file.

Files with every POSIX detail that tools need, a key-value store and a tool-call log, all in
the AgentFS v0.4 schema, plus every version of every file, copy-on-write snapshots per
conversation thread, read tracking and search (glob, grep, BM25, vectors, hybrid), reachable
from Python, the CLI, a FUSE mount (``agentfs mount``) and an MCP server (``agentfs serve mcp``).

    >>> import agentfs
    >>> with agentfs.open("work.db") as ws:
    ...     ws.write("/notes/todo.md", "- ship it\\n", parents=True)
"""

from agentfs.core.errors import (
    AgentFSError,
    EmbedderMismatchError,
    HistoryNotFoundError,
    InvalidValueError,
    KeyNotFoundError,
    StaleReadError,
    UnsupportedError,
)
from agentfs.core.inodes import DirEntry, Stat
from agentfs.layered import LayeredWorkspace, open_layers
from agentfs.protocol import WorkspaceAPI
from agentfs.search.embedders import Embedder, HashingEmbedder
from agentfs.search.ranking import SearchHit, SearchResults
from agentfs.workspace import DEFAULT_WORKSPACE, Workspace, WorkspaceInfo, open_workspace

open = open_workspace  # agentfs.open(path) reads like the builtin it mirrors

__all__ = [
    "DEFAULT_WORKSPACE",
    "AgentFSError",
    "DirEntry",
    "Embedder",
    "EmbedderMismatchError",
    "HashingEmbedder",
    "HistoryNotFoundError",
    "InvalidValueError",
    "KeyNotFoundError",
    "LayeredWorkspace",
    "SearchHit",
    "SearchResults",
    "StaleReadError",
    "Stat",
    "UnsupportedError",
    "Workspace",
    "WorkspaceAPI",
    "WorkspaceInfo",
    "open",
    "open_layers",
    "open_workspace",
]
