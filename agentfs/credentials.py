"""Sync tokens saved for a workspace, kept outside the workspace file (docs/sync.md, "Where a
saved token lives").

A workspace file travels, and a token inside it would go along, so a saved token lives in the
user's configuration directory, one 0600 file per workspace, keyed by a digest of the remote
URL and the workspace's sync origin: it is only ever sent to the server it was saved for, and
another workspace later made at the same path does not inherit it.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import secrets
import warnings
from pathlib import Path

import platformdirs

#: The folder of the configuration directory that holds the token files.
TOKENS = "sync-tokens"


class CredentialWarning(UserWarning):
    """Something happened to a saved credential that its owner should hear of (a token moved
    out of a workspace file). Issued with ``warnings``: the library never prints."""


def config_dir() -> Path:
    """agentfs's folder in the user's configuration directory (XDG on Linux, via platformdirs:
    ``$XDG_CONFIG_HOME/agentfs``, else ``~/.config/agentfs``)."""
    return platformdirs.user_config_path("agentfs", appauthor=False)


def token_path(remote: str, origin: str) -> Path:
    """Where the token saved for the workspace that syncs with ``remote`` as ``origin`` is."""
    digest = hashlib.sha256(f"{remote}\0{origin}".encode()).hexdigest()[:32]
    return config_dir() / TOKENS / digest


def save_token(remote: str, origin: str, token: str) -> Path:
    """Save ``token`` for (``remote``, ``origin``); returns the file. The directories made
    on the way are 0700 and the file 0600 (a stricter umask still applies)."""
    path = token_path(remote, origin)
    write_private(path, json.dumps({"remote": remote, "origin": origin, "token": token}).encode())
    return path


def write_private(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` as a 0600 file (atomically: a temporary file renamed over
    it), its missing folders made 0700."""
    _private_dirs(path.parent)
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        with open(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def load_token(remote: str, origin: str) -> str | None:
    """The token saved for (``remote``, ``origin``), or None. A file that names another pair
    (a digest collision, a file copied in by hand) is not used."""
    try:
        data = json.loads(token_path(remote, origin).read_bytes())
    except FileNotFoundError:
        return None
    except ValueError:
        raise OSError(
            errno.EINVAL, "the saved sync token file is damaged", str(token_path(remote, origin))
        ) from None
    if data.get("remote") != remote or data.get("origin") != origin:
        return None
    token = data.get("token")
    return token if isinstance(token, str) else None


def forget_token(remote: str, origin: str) -> bool:
    """Delete the token saved for (``remote``, ``origin``); whether there was one."""
    try:
        token_path(remote, origin).unlink()
    except FileNotFoundError:
        return False
    return True


def moved_out(workspace: str, remote: str, origin: str, token: str) -> None:
    """Save a token found inside the workspace file ``workspace`` (stored there by an earlier
    release) and say so with a ``CredentialWarning``. Where it cannot be saved, the warning
    says that instead: the caller deletes it from the workspace file either way, since a
    token must not travel with the file, and a token can be passed again or made anew."""
    try:
        where = save_token(remote, origin, token)
    except OSError as exc:
        message = (
            f"{workspace}: the sync token saved in the workspace file was removed from it and"
            f" could not be saved in {token_path(remote, origin).parent} ({exc.strerror or exc});"
            " pass --token or set TURSO_AUTH_TOKEN"
        )
    else:
        message = f"{workspace}: the sync token saved in the workspace file was moved to {where}"
    warnings.warn(message, CredentialWarning, stacklevel=2)


def _private_dirs(path: Path) -> None:
    """Make ``path`` and its missing parents with mode 0700 (what the XDG Base Directory
    specification asks of the configuration directory), leaving existing ones as they are."""
    missing = []
    while not path.is_dir():
        missing.append(path)
        path = path.parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made by another process meanwhile
            os.mkdir(folder, 0o700)
