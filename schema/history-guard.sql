-- ws_history_guard: keeps the history settings rows (agentfs/cow.py reads all three on every
-- transaction, and their absence would make every write fail), and, being a trigger, makes
-- Turso's engine refuse to open a live workspace: pyturso opens no file with triggers unless
-- told to. That matters because an engine that knows nothing of history would overwrite a
-- frozen inode in place and silently change versions and snapshots. `export --agentfs` is
-- the way to hand a workspace to agentfs-sdk. Migration 3 creates it; every open re-creates
-- it if something dropped it (agentfs/db.py, _readopt).
CREATE TRIGGER IF NOT EXISTS ws_history_guard BEFORE DELETE ON ws_config
BEGIN
  SELECT RAISE(ABORT, 'ws_config holds the agentfs history settings; change them, never delete them');
END;
