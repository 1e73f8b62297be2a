"""Who may call the MCP server over HTTP, and with what rights: bearer tokens (docs/mcp.md,
"Over HTTP").

A token comes from ``AGENTFS_TOKEN``, from a token file, or (on loopback with neither) is made
once per workspace into a 0600 file of the user's configuration directory; never from the
command line, where every local user can read it (``ps``). A token file holds one token, or a
TOML list of clients, each with its token and what it is bound to: a thread (which wins over
the client's own choice and the server's ``--thread``), an actor and a policy, so one server
gives two agents different rights. A token file others can read is refused.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import os
import secrets
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path

from agentfs import credentials
from agentfs.tools.policy import Policy

#: Where a server's token comes from when no token file is given.
TOKEN_ENV = "AGENTFS_TOKEN"
#: The folder of the configuration directory that holds generated server tokens.
SERVE_TOKENS = "serve-tokens"
#: The shortest token accepted: a guessable token is no token.
MIN_TOKEN = 16


@dataclass(frozen=True)
class Client:
    """One token and what it is bound to (None: the server's own setting).

    Attributes:
        name: what the server calls the client (the token file's ``name``, else "client").
        token: the bearer token.
        thread: the thread every session of this token works in.
        actor: who acts, recorded with versions and the audit log.
        policy: the policy its calls are judged by, instead of the server's.
    """

    name: str
    token: str
    thread: str | None = None
    actor: str | None = None
    policy: Policy | None = None


class Clients:
    """The tokens a server accepts."""

    def __init__(self, clients: list[Client]) -> None:
        if not clients:
            raise ValueError("no token: a server over HTTP needs at least one")
        for client in clients:
            if len(client.token) < MIN_TOKEN or not client.token.isprintable():
                raise ValueError(
                    f"the token of {client.name} is shorter than {MIN_TOKEN} characters"
                    " or not printable"
                )
        if len({c.token for c in clients}) != len(clients):
            raise ValueError("two clients have the same token")
        self.clients = clients

    def find(self, presented: str) -> Client | None:
        """The client whose token is ``presented``; every token is compared, in constant
        time, so the time taken says nothing of which one came close."""
        found = None
        given = presented.encode()
        for client in self.clients:
            if hmac.compare_digest(client.token.encode(), given):
                found = client
        return found

    @classmethod
    def load(cls, path: Path) -> Clients:
        """The token file at ``path``: one token on its own, or a TOML list of clients::

        [[client]]
        name = "reviewer"
        token = "..."
        thread = "review"        # optional: bound, whatever the client asks
        actor = "reviewer-bot"   # optional
        policy = "read-only.toml"  # optional, relative to the token file
        """
        text = _private_text(path)
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            return cls([Client("client", text.strip())])  # a single token
        entries = data.get("client")
        if not isinstance(entries, list) or set(data) != {"client"}:
            raise ValueError(f"{path}: a token file holds one token, or [[client]] tables only")
        return cls([_client(path, i, entry) for i, entry in enumerate(entries)])

    @classmethod
    def of_token(cls, token: str) -> Clients:
        return cls([Client("client", token)])


def _client(path: Path, index: int, entry: object) -> Client:
    where = f"{path}: client {index + 1}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} is not a table")
    unknown = set(entry) - {"name", "token", "thread", "actor", "policy"}
    if unknown:
        raise ValueError(f"{where}: unknown keys {', '.join(sorted(unknown))}")
    for key, value in entry.items():
        if not isinstance(value, str):
            raise ValueError(f"{where}: {key} must be a string")
    if "token" not in entry:
        raise ValueError(f"{where} has no token")
    policy = None
    if "policy" in entry:
        policy = Policy.load(path.parent / entry["policy"])
    return Client(
        entry.get("name", f"client {index + 1}"),
        entry["token"],
        entry.get("thread"),
        entry.get("actor"),
        policy,
    )


def _private_text(path: Path) -> str:
    """The text of a token file that only its owner can read (0600 or stricter)."""
    info = path.stat()
    if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise ValueError(
            f"{path}: a token file others can read or write is refused (chmod 600 {path})"
        )
    return path.read_text(encoding="utf-8")


def generated_token(workspace: Path) -> tuple[str, Path]:
    """The token made for serving ``workspace`` on loopback, and its file: made on first
    use (0600, in a 0700 folder of the user's configuration directory), then the same one
    each time, so a client set up once keeps working."""
    key = hashlib.sha256(os.fsencode(workspace.resolve())).hexdigest()[:32]
    path = credentials.config_dir() / SERVE_TOKENS / key
    try:
        return _private_text(path).strip(), path
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(32)
    credentials.write_private(path, (token + "\n").encode())
    return token, path


def clients_for(host: str, token_file: Path | None, workspace: Path) -> tuple[Clients, Path | None]:
    """The clients a server bound to ``host`` accepts: the token file's, else
    ``AGENTFS_TOKEN``'s, else (on loopback only) the token generated for ``workspace``, whose
    file is returned too so that it can be shown."""
    if token_file is not None:
        return Clients.load(token_file), None
    token = os.environ.get(TOKEN_ENV)
    if token:
        return Clients.of_token(token), None
    if not is_loopback(host):
        raise ValueError(
            f"a server on {host} needs a token: set {TOKEN_ENV} or give --token-file"
            " (only a loopback server makes its own)"
        )
    token, path = generated_token(workspace)
    return Clients.of_token(token), path


def is_loopback(host: str) -> bool:
    """Is ``host`` (a name or an address, IPv6 with or without brackets) this machine only?"""
    name = host.strip("[]").lower()
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False
