"""Tool profiles: other ecosystems' tool sets (their names, parameters and result texts) as
``Surface`` objects a ``Toolset`` runs under agentfs's policy, audit and read tracking."""
