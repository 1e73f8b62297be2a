"""Finding things in a workspace: by name (``glob``), by text (``grep``), by meaning (``search``).

One module per way of finding: ``glob`` walks the directory tables and never reads content;
``grep`` matches RE2 patterns in the chunks the trigram index names; ``ranking`` answers
``search`` with BM25, vectors or both (docs/search.md).
"""
