"""``AgentFSBackend``: deepagents' ``SandboxBackendProtocol`` over a workspace.

Every method is one call of a tool of the ``DEEPAGENTS`` surface through a ``Toolset``, so
the operator's policy, the audit (each change linked to the versions it wrote), read
tracking and a snapshot before each command hold for a deepagents agent as for any other
client; each result is deepagents' dataclass, as its ``FilesystemBackend`` in virtual mode
fills it. The async twins run in place: a workspace handle belongs to the thread that opened
it, and each call is short.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any, cast

from deepagents.backends.local_shell import DEFAULT_EXECUTE_TIMEOUT
from deepagents.backends.protocol import (
    FILE_NOT_FOUND,
    INVALID_PATH,
    IS_DIRECTORY,
    PERMISSION_DENIED,
    DeleteResult,
    EditResult,
    ExecuteResponse,
    FileData,
    FileDownloadResponse,
    FileInfo,
    FileOperationError,
    FileUploadResponse,
    GlobResult,
    GrepMatch,
    GrepResult,
    LsResult,
    ReadResult,
    SandboxBackendProtocol,
    WriteResult,
)
from deepagents.backends.utils import InvalidGlobPatternError, compile_grep_include_glob

from agentfs.integrations.deepagents.surface import DEEPAGENTS
from agentfs.integrations.toolsets import Flushing, toolset_for
from agentfs.protocol import WorkspaceAPI
from agentfs.tools.errors import ToolError
from agentfs.tools.policy import Policy
from agentfs.tools.toolset import Approve, Toolset

#: Who the workspace records as acting, unless told otherwise.
ACTOR = "deepagents"
#: deepagents' file-operation error for each failure the workspace reports.
_FILE_ERRORS: dict[str, FileOperationError] = {
    "not_found": FILE_NOT_FOUND,
    "is_directory": IS_DIRECTORY,
    "denied": PERMISSION_DENIED,
    "read_only": PERMISSION_DENIED,
    "approval_denied": PERMISSION_DENIED,
    "too_large": PERMISSION_DENIED,
}


def _refused(key: str) -> bool:
    return ".." in key or "\0" in key


def _refuse_traversal(key: str) -> None:
    """deepagents' virtual mode refuses a path with ``..`` anywhere by raising; a NUL byte
    raises as the operating system's calls do."""
    if ".." in key:
        raise ValueError("Path traversal not allowed")
    if "\0" in key:
        raise ValueError("embedded null byte")


class AgentFSBackend(Flushing, SandboxBackendProtocol):
    """A workspace as deepagents' backend (see the module docstring). Leave its ``with``
    block, or call ``flush``, to publish the audit rows of the last calls at once.

    Args:
        ws: the workspace, or a ``Toolset`` whose thread, policy and audit log to share.
        thread, actor, policy, approve: the ``Toolset``'s (``toolset_for``: commands need
            no approval of the workspace's own by default; deepagents' ``interrupt_on``
            asks a person).
        timeout: seconds a command may run unless the call says otherwise.
        max_output_bytes: most bytes of a command's output returned.
    """

    def __init__(
        self,
        ws: WorkspaceAPI | Toolset,
        *,
        thread: str = "main",
        actor: str | None = ACTOR,
        policy: Policy | None = None,
        approve: Approve | None = None,
        timeout: int = DEFAULT_EXECUTE_TIMEOUT,
        max_output_bytes: int = 100_000,
    ) -> None:
        self.toolset = toolset_for(
            ws, surface=DEEPAGENTS, thread=thread, actor=actor, policy=policy, approve=approve
        )
        self.timeout = timeout
        self.max_output_bytes = max_output_bytes

    @property
    def id(self) -> str:
        """The workspace file and thread this backend works in, as a short stable name."""
        where = f"{self.toolset.ws.path}\0{self.toolset.thread}"
        return "agentfs-" + hashlib.sha256(where.encode()).hexdigest()[:12]

    def _call(self, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
        """The tool's structured result; its failure as ``ToolError`` (deepagents' message)."""
        result = self.toolset.invoke(tool, arguments)
        if result.error is not None:
            raise result.error
        return result.data

    # --- files --------------------------------------------------------------------------------

    def ls(self, path: str) -> LsResult:
        _refuse_traversal(path)
        try:
            listed = self._call("ls", {"path": path})
        except ToolError as failed:
            return LsResult(error=failed.message)
        return LsResult(entries=cast("list[FileInfo]", listed["entries"]))

    def read(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        _refuse_traversal(file_path)
        try:
            window = self._call(
                "read_file", {"file_path": file_path, "offset": offset, "limit": limit}
            )
        except ToolError as failed:
            return ReadResult(error=failed.message)
        return ReadResult(
            file_data=cast("FileData | None", window["file_data"]),
            total_lines=window["total_lines"],
            start_line=window["start_line"],
            end_line=window["end_line"],
            next_offset=window["next_offset"],
            no_lines_requested=window["no_lines_requested"],
        )

    def write(self, file_path: str, content: str) -> WriteResult:
        _refuse_traversal(file_path)
        try:
            written = self._call("write_file", {"file_path": file_path, "content": content})
        except ToolError as failed:
            return WriteResult(error=failed.message)
        return WriteResult(path=written["path"])

    def edit(
        self,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> EditResult:
        _refuse_traversal(file_path)
        arguments = {
            "file_path": file_path,
            "old_string": old_string,
            "new_string": new_string,
            "replace_all": replace_all,
        }
        try:
            edited = self._call("edit_file", arguments)
        except ToolError as failed:
            return EditResult(error=failed.message)
        return EditResult(path=edited["path"], occurrences=edited["occurrences"])

    def delete(self, file_path: str) -> DeleteResult:
        _refuse_traversal(file_path)
        try:
            deleted = self._call("delete", {"file_path": file_path})
        except ToolError as failed:
            return DeleteResult(error=failed.message)
        return DeleteResult(path=deleted["path"])

    def glob(self, pattern: str, path: str | None = None) -> GlobResult:
        try:
            if path is not None and path != "/" and _refused(path):
                compile_grep_include_glob(pattern)  # deepagents judges the pattern first
                _refuse_traversal(path)
            found = self._call("glob", {"pattern": pattern, "path": path})
        except (ToolError, InvalidGlobPatternError) as failed:
            return GlobResult(error=str(failed), matches=None)
        return GlobResult(matches=cast("list[FileInfo]", found["matches"]))

    def grep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
    ) -> GrepResult:
        arguments = {"pattern": pattern, "path": path, "glob": glob, "max_count": max_count}
        try:
            found = self._call("grep", arguments)
        except ToolError as failed:
            return GrepResult(error=failed.message, matches=[])
        return GrepResult(
            matches=cast("list[GrepMatch]", found["matches"]), truncated=found["truncated"]
        )

    def upload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        responses = []
        for path, content in files:
            encoded = base64.standard_b64encode(content).decode("ascii")
            try:
                _refuse_traversal(path)
                self._call("upload_file", {"path": path, "content_base64": encoded})
            except (ToolError, ValueError) as failed:
                responses.append(FileUploadResponse(path=path, error=_file_error(failed)))
            else:
                responses.append(FileUploadResponse(path=path))
        return responses

    def download_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        responses = []
        for path in paths:
            try:
                _refuse_traversal(path)
                data = self._call("download_file", {"path": path})["content_base64"]
            except (ToolError, ValueError) as failed:
                responses.append(FileDownloadResponse(path=path, error=_file_error(failed)))
            else:
                responses.append(
                    FileDownloadResponse(path=path, content=base64.standard_b64decode(data))
                )
        return responses

    # --- commands -----------------------------------------------------------------------------

    def execute(self, command: str, *, timeout: int | None = None) -> ExecuteResponse:
        if not command or not isinstance(command, str):
            return ExecuteResponse(output="Error: Command must be a non-empty string.", exit_code=1)
        seconds = timeout if timeout is not None else self.timeout
        if seconds <= 0:
            raise ValueError(f"timeout must be positive, got {seconds}")
        arguments = {
            "command": command,
            "timeout": seconds,
            "chosen": timeout is not None,
            "max_output_bytes": self.max_output_bytes,
        }
        try:
            ran = self._call("execute", arguments)
        except ToolError as failed:
            return ExecuteResponse(
                output=f"Error executing command ({failed.code}): {failed.message}", exit_code=1
            )
        return ExecuteResponse(
            output=ran["output"], exit_code=ran["exit_code"], truncated=ran["truncated"]
        )

    # --- the async twins: the same calls, in place ---------------------------------------------

    async def als(self, path: str) -> LsResult:
        return self.ls(path)

    async def aread(self, file_path: str, offset: int = 0, limit: int = 2000) -> ReadResult:
        return self.read(file_path, offset, limit)

    async def awrite(self, file_path: str, content: str) -> WriteResult:
        return self.write(file_path, content)

    async def aedit(
        self,
        file_path: str,
        old_string: str,
        new_string: str,
        replace_all: bool = False,
    ) -> EditResult:
        return self.edit(file_path, old_string, new_string, replace_all)

    async def adelete(self, file_path: str) -> DeleteResult:
        return self.delete(file_path)

    async def aglob(self, pattern: str, path: str | None = None) -> GlobResult:
        return self.glob(pattern, path)

    async def agrep(
        self,
        pattern: str,
        path: str | None = None,
        glob: str | None = None,
        *,
        max_count: int | None = None,
    ) -> GrepResult:
        return self.grep(pattern, path, glob, max_count=max_count)

    async def aupload_files(self, files: list[tuple[str, bytes]]) -> list[FileUploadResponse]:
        return self.upload_files(files)

    async def adownload_files(self, paths: list[str]) -> list[FileDownloadResponse]:
        return self.download_files(paths)

    async def aexecute(self, command: str, *, timeout: int | None = None) -> ExecuteResponse:
        return self.execute(command, timeout=timeout)


def _file_error(failed: ToolError | ValueError) -> FileOperationError:
    """deepagents' code for a failed upload or download."""
    if isinstance(failed, ValueError):
        return INVALID_PATH
    return _FILE_ERRORS.get(failed.code, INVALID_PATH)
