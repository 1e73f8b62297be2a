"""Serving a workspace over HTTP: the agent tools over MCP's Streamable HTTP transport for
agents elsewhere (docs/mcp.md, "Over HTTP"), behind the checks every request passes first."""
