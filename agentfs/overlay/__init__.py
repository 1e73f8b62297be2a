"""A workspace over a host directory, above the core's base (``agentfs.core.base``): what the
workspace changed there, and carrying it back::

    from agentfs.overlay import apply, changes, patch

    found = changes(ws)          # [Change(kind='modified', path='/src/app.py', ...), ...]
    print(patch(ws, found))      # the unified diff against what the base held
    done = apply(ws)             # into the host, unless the host changed meanwhile
"""

from agentfs.overlay.apply import Applied, Conflict, apply
from agentfs.overlay.changes import Change, changes, patch

__all__ = ["Applied", "Change", "Conflict", "apply", "changes", "patch"]
