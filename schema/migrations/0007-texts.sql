-- Migration 7: the search index by chunk text. The BM25 and trigram tables and the vectors hold
-- one row per distinct chunk text (ws_text), and ws_chunk maps each file's chunks to those
-- texts. A chunk whose text is already indexed (an unchanged part of an edited file, a copy, a
-- vendored duplicate, a file restored from a snapshot) costs a ws_chunk row and a digest lookup
-- instead of two FTS5 tokenisations: FTS5's trigram tokenizer was 65 % of a drain's time.
-- docs/search.md ("Indexed by text") has the reasoning and the measurements.
--
-- Converting in place is impossible for the FTS5 tables: they are contentless (their text
-- cannot be read back) and their rowids must change from chunk ids to text ids, so their rows
-- are dropped and every live file is queued again (the first query re-indexes it, as after
-- migration 4). Vectors are the expensive part (a transformer embeds tens of chunks a second),
-- so they are kept: parked by the digest of their text in ws_vector_parked, from where the
-- re-index takes each back when it meets the text again.
--
-- Rules checked by `agentfs fsck` (besides migration 4's, with "chunk" read as "text" for the
-- FTS5 tables, ws_vector and ws_embed_queue):
--   * each ws_chunk row names a ws_text row, and each ws_text row is named by a ws_chunk row
--     (the last file holding a text takes its rows with it when it is re-indexed or deleted);
--   * ws_vector_parked holds vectors of the model's dimension.

-- ws_text: one distinct chunk text. Its id is the rowid of its ws_fts_chunk and ws_fts_trigram
-- rows and the key of its vector, so each is made once whatever the number of files holding it.
--   digest  blake2b-128 of the text (UTF-8): how a new chunk finds an indexed text.
CREATE TABLE ws_text (
  id INTEGER PRIMARY KEY,
  digest BLOB NOT NULL UNIQUE
);

-- ws_vector_parked: vectors whose text left the index while its files were waiting to be
-- indexed again (this migration; `agentfs index --rebuild`), by the digest of the text; a new
-- text of that digest takes its vector instead of being embedded again. Emptied when the index
-- queue is.
CREATE TABLE ws_vector_parked (
  digest BLOB PRIMARY KEY,
  embedding BLOB NOT NULL
) WITHOUT ROWID;

INSERT OR IGNORE INTO ws_vector_parked(digest, embedding)
  SELECT c.digest, v.embedding FROM ws_vector v JOIN ws_chunk c ON c.id = v.chunk_id;
DELETE FROM ws_vector;
DELETE FROM ws_embed_queue;
-- ws_vec's rowids become text ids: remade empty by the migration's code when a model is chosen
DROP TABLE IF EXISTS ws_vec;
ALTER TABLE ws_vector RENAME COLUMN chunk_id TO text_id;
ALTER TABLE ws_embed_queue RENAME COLUMN chunk_id TO text_id;

-- ws_chunk: a run of whole lines of a file, as migration 4 has it, but its text is a ws_text
-- row (text_id) rather than FTS5 rows of its own; ws_chunk_text finds every chunk holding a
-- text (a query's answer is texts; its results are files).
DROP TABLE ws_chunk;
CREATE TABLE ws_chunk (
  id INTEGER PRIMARY KEY,
  text_id INTEGER NOT NULL,
  start_line INTEGER NOT NULL,
  end_line INTEGER NOT NULL,
  start_byte INTEGER NOT NULL,
  end_byte INTEGER NOT NULL
);
CREATE INDEX ws_chunk_text ON ws_chunk(text_id);

INSERT INTO ws_fts_chunk(ws_fts_chunk) VALUES ('delete-all');
INSERT INTO ws_fts_trigram(ws_fts_trigram) VALUES ('delete-all');
DELETE FROM ws_index_file;
