"""No module of agentfs imports itself through others, type-only imports aside: the layers
contract (``lint-imports``) keeps imports pointing down between packages, this test keeps
them acyclic inside each one."""

from __future__ import annotations

import grimp


def test_no_import_cycle() -> None:
    graph = grimp.build_graph("agentfs", exclude_type_checking_imports=True)
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if module != imported and graph.chain_exists(imported, module):
                cycles.append(graph.find_shortest_chain(imported, module))
    assert cycles == []
