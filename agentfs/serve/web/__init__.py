"""The web view of a workspace (``agentfs serve web``): server-rendered pages for a person
reviewing what an agent did, with a little JavaScript that reloads a page when the workspace
changes (docs/web.md)."""
