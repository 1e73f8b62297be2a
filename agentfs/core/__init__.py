"""The core: paths, names, inodes and bytes over the AgentFS spec tables (``FileSystem``),
the open-file handle, and the background checkpointer. It knows nothing of history or search:
what the layers above need to hear of each change, they learn through ``core.changes``."""
