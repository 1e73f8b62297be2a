"""Adapters that put a workspace behind agent frameworks, each an optional extra
(docs/integrations.md). Every call goes through a ``Toolset``: the policy, approval, audit
linked to versions, read tracking and snapshots an MCP client gets."""
