"""The screenshots of docs/web.md: a thread's work on a small project, shown by ``agentfs serve
web`` in Debian's chromium (through Playwright), each page saved as a PNG.

    .venv/bin/python examples/web_screenshots.py [OUT_DIR]    # default: docs/web
"""

from __future__ import annotations

import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from playwright.sync_api import sync_playwright

import agentfs
from agentfs.tools.toolset import Toolset

AGENTFS = Path(sys.executable).parent / "agentfs"
PAGES = {
    "home.png": "/",
    "file.png": "/file/src/stats.py",
    "diff.png": "/diff/src/stats.py?a=1&b=3",
    "calls.png": "/calls",
    "snapshot.png": "/snapshot/turn-2",
}


def thread_of_work(path: Path) -> None:
    """What an agent did over two turns: a module written, then fixed and tested."""
    with agentfs.open(path) as ws:
        tools = Toolset(ws, thread="fix-median", actor="coder")
        tools.call(
            "write_file",
            {
                "path": "/src/stats.py",
                "content": '"""Small statistics."""\n\n\ndef mean(xs):\n'
                "    return sum(xs) / len(xs)\n\n\ndef median(xs):\n    xs = sorted(xs)\n"
                "    return xs[len(xs) // 2]\n",
            },
        )
        tools.call("write_file", {"path": "/README.md", "content": "# stats\n\nMean and median.\n"})
        ws.snapshots.create("turn-1", thread="fix-median", label="first draft")
        tools.call("read_file", {"path": "/src/stats.py"})
        tools.call(
            "edit_file",
            {
                "path": "/src/stats.py",
                "old_string": "    xs = sorted(xs)\n    return xs[len(xs) // 2]\n",
                "new_string": "    xs = sorted(xs)\n    mid = len(xs) // 2\n    if len(xs) % 2:\n"
                "        return xs[mid]\n    return (xs[mid - 1] + xs[mid]) / 2\n",
            },
        )
        tools.call(
            "edit_file",
            {
                "path": "/src/stats.py",
                "old_string": "def mean(xs):\n",
                "new_string": "def mean(xs):\n    if not xs:\n        raise ValueError('empty')\n",
            },
        )
        tools.call(
            "write_file",
            {
                "path": "/tests/test_stats.py",
                "content": "from stats import median\n\n\ndef test_even():\n"
                "    assert median([1, 2, 3, 4]) == 2.5\n",
            },
        )
        tools.call("read_file", {"path": "/src/missing.py"})
        ws.snapshots.create("turn-2", thread="fix-median", label="median of an even list")
        tools.flush()


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else Path(__file__).resolve().parents[1] / "docs" / "web"
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as where:
        ws = Path(where) / "project.db"
        thread_of_work(ws)
        proc = subprocess.Popen(
            [str(AGENTFS), "serve", "web", str(ws), "--port", "0"],
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stderr is not None
        url = next(line.split()[1] for line in proc.stderr if line.startswith("open "))
        base = url.split("/?token=")[0]
        try:
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(
                    executable_path="/usr/bin/chromium", args=["--no-sandbox"]
                )
                page = browser.new_page(viewport={"width": 1200, "height": 760})
                page.goto(url)
                for name, path in PAGES.items():
                    page.goto(base + path)
                    page.wait_for_selector("#live.on")
                    page.screenshot(path=str(out / name))
                    print(out / name)
                browser.close()
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
