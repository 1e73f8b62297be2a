"""The ``mcp-filesystem`` profile: the tools of the reference MCP filesystem server (npm
``@modelcontextprotocol/server-filesystem``, 2026.8.31) over a workspace, by their names, with
their parameters (camelCase where the server has it), defaults and result texts, run by a
``Toolset`` under the policy entry of the agentfs tool doing the same job.

The workspace root ``/`` plays the server's one allowed directory: each tool answers what the
server started with ``/`` as its allowed directory answers for the same tree. A relative path
is resolved against ``/``; ``..`` stops at ``/``, as it does on a host at its root, so no path
is outside. Every absolute path the server would show (a search hit, the diff's file name, a
path in an error, the allowed directories) is shown as the workspace path: where the server
started on host directory ``D`` writes ``D/src/a.py`` this profile writes ``/src/a.py``, and
``D`` itself is ``/``. Errors carry the server's texts, Node's ``fs`` messages included
(``ENOENT: no such file or directory, open '/a.txt'``); each is a ``ToolError`` whose code is
agentfs's for the same failure.

Where the workspace cannot be the host, or the server's answer depends on its host:

- ``~`` and ``~/...`` name the root and what is below it (the server expands them to the
  user's home directory).
- Entries are listed in name order (the server lists them in the order the host's directory
  gives, which has no meaning); ``list_directory_with_sizes`` sorts names as ICU's root
  collation does for ordinary names (punctuation, then digits, then letters, lower case before
  upper case), as the server's ``localeCompare``, and a directory's size is the workspace's.
- ``get_file_info`` shows times in UTC (the server's Node shows them in its time zone: the same
  text when that zone is UTC); ``created`` is the time the file's status last changed, as a
  workspace keeps no birth time.
- ``read_media_file`` returns the server's content block as its structured result, and that
  block as JSON as its text (a tool here returns text, not an image or audio block).
- Unknown arguments are refused (``invalid_argument``), as every agentfs tool refuses them;
  the server drops them. A call the server's input schema refuses is refused too, with agentfs's
  message for it.
- A path the policy denies is refused with the policy's message, and listings and searches
  leave it out.
"""

from agentfs.tools.profiles.mcp_filesystem.tools import SURFACE

__all__ = ["SURFACE"]
