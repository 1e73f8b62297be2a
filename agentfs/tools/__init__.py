"""The agent tool surface: typed tools over a workspace, policies, audit, skills and MCP."""
