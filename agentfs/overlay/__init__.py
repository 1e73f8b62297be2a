"""A workspace over a host directory, above the core's base (``agentfs.core.base``): what the
workspace changed there::

    from agentfs.overlay import changes, patch

    found = changes(ws)          # [Change(kind='modified', path='/src/app.py', ...), ...]
    print(patch(ws, found))      # the unified diff against what the base held
"""

from agentfs.overlay.changes import Change, changes, patch

__all__ = ["Change", "changes", "patch"]
