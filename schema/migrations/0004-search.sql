-- Migration 4: search. A BM25 index over chunks of each text file, a trigram index that lets
-- grep skip files that cannot match, and the queue of chunks waiting for an embedding.
--
-- Everything is keyed by inode, never by path: a rename, a hard link or a snapshot restore
-- (which relinks a frozen inode) changes names, not content, so it costs the index nothing.
-- Only LIVE regular files are indexed (nlink > 0): a frozen inode that only history holds
-- leaves the index when its last name goes, and comes back if a restore relinks it.
--
-- How the index stays right: the triggers below put the inode of every regular file whose
-- content, size, link count or existence changes into ws_index_queue, whatever wrote it (the
-- API, a restore, a copy-up, fsck). Before the transaction commits, agentfs/search/index.py
-- drains the queue: it drops the inode's old rows and indexes what is there now. So a write and
-- its index entry commit together or not at all. A transaction that did not drain (one opened
-- on the raw connection) leaves the queue behind; every query drains it first.
--
-- Rules checked by `agentfs fsck`:
--   * ws_index_file has a row for every live regular file once the queue is empty, and none
--     for anything else;
--   * ws_chunk rows belong to a 'text' ws_index_file row, numbered seq 0..chunks-1;
--   * every ws_chunk has a row in each FTS5 table of the same rowid, and nothing else has.

-- ws_dentry_ino: the names of an inode. The index answers in inodes; this turns them into
-- paths (walking up the parents) without scanning fs_dentry.
CREATE INDEX ws_dentry_ino ON fs_dentry(ino);

-- ws_index_queue: inodes changed since the index last looked at them.
CREATE TABLE ws_index_queue (
  ino INTEGER PRIMARY KEY
);

-- ws_index_file: what the index made of each live regular file.
--   state   'text': indexed (ws_chunk rows and their FTS5 rows); 'binary': holds a NUL byte or
--           is not valid UTF-8; 'too_large': bigger than search.max_bytes (grep scans it);
--           'off': indexing was off when it changed.
--   size    its size when indexed.
--   chunks  how many ws_chunk rows it has.
CREATE TABLE ws_index_file (
  ino INTEGER PRIMARY KEY,
  state TEXT NOT NULL CHECK (state IN ('text', 'binary', 'too_large', 'off')),
  size INTEGER NOT NULL,
  chunks INTEGER NOT NULL
);
CREATE INDEX ws_index_file_state ON ws_index_file(state) WHERE state <> 'text';

-- ws_chunk: one retrieval unit, a run of whole lines of a file. Chunks overlap by a few lines.
--   id                    (ino << 20) | seq, where seq is 0, 1, ... in file order: a file's
--                         chunks are one key range, found and dropped with no second index
--                         (a file has at most 2^20 chunks; search.max_bytes keeps it far below).
--                         Shared with ws_fts_chunk.rowid and the vector tables.
--   start_line, end_line  1-based, inclusive.
--   start_byte, end_byte  where its text lies in the file's bytes (end exclusive): grep reads
--                         just the chunks the trigram table names, not whole files.
--   digest                blake2b-128 of the chunk's text: when a file is re-indexed, a chunk
--                         whose text an old chunk had (of this file, or of one the same write
--                         replaced) takes over its vector instead of being embedded again.
CREATE TABLE ws_chunk (
  id INTEGER PRIMARY KEY,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  start_byte INTEGER NOT NULL,
  end_byte INTEGER NOT NULL,
  digest BLOB NOT NULL
);

-- ws_fts_chunk: BM25 over chunk text (rowid = ws_chunk.id). Contentless: the text is the file's,
-- read back from fs_data for snippets, so it is not stored twice.
CREATE VIRTUAL TABLE ws_fts_chunk USING fts5(
  text, content = '', contentless_delete = 1,
  tokenize = 'porter unicode61 remove_diacritics 2'
);

-- ws_fts_trigram: one document per chunk (rowid = ws_chunk.id), every three-character sequence
-- of its text, case-folded. A regex's required literals become an AND of trigrams; a grep match
-- lies within one line, and every line is whole in some chunk, so chunks outside the answer
-- cannot hold a match, and grep reads only the chunks inside it. detail=none keeps the table
-- small (no positions): it narrows, and the regex confirms.
CREATE VIRTUAL TABLE ws_fts_trigram USING fts5(
  text, content = '', contentless_delete = 1, detail = 'none',
  tokenize = 'trigram case_sensitive 0'
);

-- ws_embed_queue: chunks without a vector yet (embedding is slow, so it is not done inside the
-- write); `agentfs index` drains it with the workspace's embedder. Chunks are queued only once
-- an embedder was chosen (choosing one queues every chunk).
CREATE TABLE ws_embed_queue (
  chunk_id INTEGER PRIMARY KEY
);

-- ws_vector: each embedded chunk's vector, float32 little-endian, L2-normalised; the exact
-- values scores are computed from. ws_vec (vec0, int8[dim]) holds the same vectors quantised,
-- for a fast k-NN scan whose shortlist is then rescored from here; ws_vec is made when an
-- embedder is first chosen, since its dimension is the model's (agentfs/search/vectors.py).
CREATE TABLE ws_vector (
  chunk_id INTEGER PRIMARY KEY,
  embedding BLOB NOT NULL
);

-- Settings (ws_config):
--   search.index      'on' (default) or 'off': index text files as they are written.
--   search.max_bytes  files larger than this are not indexed (default 1 MiB); grep scans them.
--   search.embedder   the model id whose vectors ws_vector holds ('' until one is chosen).
--   search.dim        their dimension (0 until then).
--   search.vectors    a counter bumped by every change to ws_vector (the triggers below): a
--                     process that holds the vectors in memory for exact k-NN by one matrix
--                     product knows from it, in one probe, whether its copy is still right.
INSERT INTO ws_config(key, value) VALUES
  ('search.index', 'on'),
  ('search.max_bytes', '1048576'),
  ('search.embedder', ''),
  ('search.dim', '0'),
  ('search.vectors', '0');

CREATE TRIGGER ws_vector_added AFTER INSERT ON ws_vector
BEGIN
  UPDATE ws_config SET value = value + 1 WHERE key = 'search.vectors';
END;

CREATE TRIGGER ws_vector_changed AFTER UPDATE ON ws_vector
BEGIN
  UPDATE ws_config SET value = value + 1 WHERE key = 'search.vectors';
END;

CREATE TRIGGER ws_vector_removed AFTER DELETE ON ws_vector
BEGIN
  UPDATE ws_config SET value = value + 1 WHERE key = 'search.vectors';
END;

CREATE TRIGGER ws_index_inode_new AFTER INSERT ON fs_inode
WHEN (new.mode & 61440) = 32768
BEGIN
  INSERT OR IGNORE INTO ws_index_queue(ino) VALUES (new.ino);
END;

CREATE TRIGGER ws_index_inode_changed AFTER UPDATE OF size, mtime, mtime_nsec, nlink ON fs_inode
WHEN (new.mode & 61440) = 32768
BEGIN
  INSERT OR IGNORE INTO ws_index_queue(ino) VALUES (new.ino);
END;

CREATE TRIGGER ws_index_inode_gone AFTER DELETE ON fs_inode
WHEN (old.mode & 61440) = 32768
BEGIN
  INSERT OR IGNORE INTO ws_index_queue(ino) VALUES (old.ino);
END;

-- The core never changes a file's type; this catches a hand edit that does.
CREATE TRIGGER ws_index_inode_retyped AFTER UPDATE OF mode ON fs_inode
WHEN (old.mode & 61440) <> (new.mode & 61440)
BEGIN
  INSERT OR IGNORE INTO ws_index_queue(ino) VALUES (new.ino);
END;
