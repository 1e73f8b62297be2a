"""CommitWatch: another connection's commit is seen without a transaction; reads are not."""

from __future__ import annotations

from pathlib import Path

import agentfs
from agentfs.db import CommitWatch


def test_commits_change_the_mark_and_reads_do_not(tmp_path: Path) -> None:
    db = tmp_path / "w.db"
    with agentfs.open(db) as reader, agentfs.open(db) as writer:
        watch = CommitWatch(str(db))
        try:
            with reader.read_transaction():
                mark = watch.mark()
                assert mark is not None
                reader.listdir("/")
                assert not watch.changed_since(mark)  # a reader writes no header
                writer.write("/f", b"1")
                assert watch.changed_since(mark)  # seen inside the old snapshot
                assert not reader.exists("/f")  # which still reads the old state
            mark = watch.mark()
            writer.write("/f", b"22")
            writer.remove("/f")
            assert watch.changed_since(mark)
            assert not watch.changed_since(watch.mark())
        finally:
            watch.close()


def test_without_a_wal_index_everything_reads_as_changed(tmp_path: Path) -> None:
    watch = CommitWatch(str(tmp_path / "missing.db"))
    assert watch.mark() is None
    assert watch.changed_since(None) and watch.changed_since(b"\0" * 8)
    watch.close()
