"""``python -m agentfs.cli``: the same as the ``agentfs`` console script (how a background
mount re-runs itself without depending on the script being on PATH)."""

from agentfs.cli import main

main()
