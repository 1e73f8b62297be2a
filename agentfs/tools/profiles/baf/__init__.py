"""The ``baf`` profile: baf's workspace tools (``list_directory``, ``read_file``, ``write_file``,
``create_file``, ``delete_file``), each run by a ``Toolset`` under the policy entry of the
agentfs tool doing the same job (``ls``, ``read_file``, ``write_file``, ``create_file``,
``delete_file``).

Every tool takes ``workspace``, the name of the workspace to act on; it may be left out when
there is only one. Through a ``Workspaces`` the name chooses the workspace; a plain
``Toolset(ws, profile="baf")`` is one workspace named ``workspace`` (baf's default name).

Paths: relative to the workspace's root (``notes/todo.md``; ``.`` is the root). An absolute
path, or a ``..`` that would climb above the root, is refused (``invalid_path``): baf rejects
both as an attempt to leave the workspace.

Gaps: baf's documentation gives each operation's contract but not every word of its results;
where it says nothing, this profile does what agentfs's own tools do:

- ``list_directory`` (``path`` defaults to ``.``) gives one entry a line, ``[DIR] name`` or
  ``[FILE] name``, in name order; a symlink is listed as what it points to (a dangling one as
  a file); an empty directory says so; at most 1,000 entries (fewer if the policy's
  ``max_results`` says so), then a line saying more exist.
- ``read_file`` returns the file's text. Past the workspace's ``max_read_bytes`` (200,000 by
  default; the policy's ``max_read_bytes`` when smaller) the text is cut on a character
  boundary and a marker line says how much of the file is shown; ``truncated`` is true. A
  binary file (a NUL byte in its first 8 KiB, or not UTF-8) is described, not dumped. It is
  a tracked read (read-before-write relies on it).
- ``write_file`` creates or replaces the file and makes missing parent directories; a
  directory at the path is ``is_directory``. ``create_file`` (``content`` defaults to empty)
  refuses an existing path (``exists``) and makes missing parents. Both confirm with the
  bytes written; the policy's ``max_write_bytes`` and read-before-write rules hold.
- ``delete_file`` deletes a file or a symlink; a directory is ``is_directory`` and a missing
  path ``not_found`` (baf exposes no deletion of directories). The file's versions stay in
  the workspace's history.
- A workspace that is not writable refuses the three changing tools (``read_only``); when no
  workspace is writable they are not offered at all, as baf registers them only then.
- Errors are ``ToolError``s with agentfs's codes (``not_found``, ``denied``, ...); an unknown
  ``workspace`` is ``invalid_argument``, naming the workspaces there are.

The modules: ``tools`` has the tools, ``space`` one workspace's settings (``Space``) and the
toolset that runs them on it, ``spaces`` the set of named workspaces (``Workspaces``), its
system-prompt block and the spaces file ``agentfs serve mcp --profile baf --spaces FILE``
reads.
"""

from agentfs.tools.profiles.baf.space import Space
from agentfs.tools.profiles.baf.spaces import SpaceSetting, SpacesFile, Workspaces
from agentfs.tools.profiles.baf.tools import SURFACE

__all__ = ["SURFACE", "Space", "SpaceSetting", "SpacesFile", "Workspaces"]
