"""The error model: every failure is an OSError of the right class and errno that names its path.

The cases live in failure_cases.py (test_atomicity runs the same list).
"""

from __future__ import annotations

import errno

import pytest
from failure_cases import ALL_CASES, Case, populate

import agentfs

#: What ``OSError(code, ...)`` turns into, as for ``os`` functions.
CLASSES = {
    errno.ENOENT: FileNotFoundError,
    errno.EEXIST: FileExistsError,
    errno.EISDIR: IsADirectoryError,
    errno.ENOTDIR: NotADirectoryError,
    errno.EPERM: PermissionError,
}


@pytest.fixture
def populated(ws: agentfs.Workspace) -> agentfs.Workspace:
    return populate(ws)


@pytest.mark.parametrize("case", ALL_CASES.values(), ids=ALL_CASES.keys())
def test_failure_is_the_oserror_subclass_for_its_errno(
    populated: agentfs.Workspace, case: Case
) -> None:
    with pytest.raises(OSError) as info:
        case.call(populated)
    assert (info.value.errno, type(info.value)) == (case.errno, CLASSES.get(case.errno, OSError))


@pytest.mark.parametrize(
    "case",
    [pytest.param(c, id=name) for name, c in ALL_CASES.items()],
)
def test_failure_names_the_path_in_filename_and_message(
    populated: agentfs.Workspace, case: Case
) -> None:
    with pytest.raises(OSError) as info:
        case.call(populated)
    filename = info.value.filename
    if case.truncated:
        assert filename.endswith("...") and case.named.startswith(filename.removesuffix("..."))
    else:
        assert filename == case.named
    assert repr(filename) in str(info.value)


def test_read_text_of_a_non_utf8_file_raises_unicode_error(ws: agentfs.Workspace) -> None:
    ws.write("/bin", b"\xff\xfe")
    with pytest.raises(UnicodeDecodeError):
        ws.read_text("/bin")


def test_non_filesystem_errors_share_one_base() -> None:
    assert issubclass(agentfs.InvalidValueError, agentfs.AgentFSError)
    assert issubclass(agentfs.InvalidValueError, ValueError)
    assert not issubclass(agentfs.AgentFSError, OSError)


def test_rename_reports_a_non_directory_destination_parent_before_a_missing_source(
    populated: agentfs.Workspace,
) -> None:
    with pytest.raises(NotADirectoryError):  # what rename(2) says: it resolves both parents first
        populated.rename("/missing", "/file/x")


@pytest.mark.parametrize(
    ("dst", "error"),
    [("/file", FileExistsError), ("/missing/x", FileNotFoundError)],
)
def test_link_of_a_directory_reports_a_bad_destination_first(
    populated: agentfs.Workspace, dst: str, error: type[OSError]
) -> None:
    with pytest.raises(error):  # what link(2) says: the new name is checked before EPERM
        populated.link("/dir", dst)
