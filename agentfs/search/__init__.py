"""Finding things in a workspace: by name (``glob``), and later by text and by meaning.

One module per way of finding: ``glob`` walks the directory tables and never reads content.
"""
