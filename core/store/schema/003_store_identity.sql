-- 003: a unique id per database, so that files which belong to it (checkpoints) name their
-- owner, and a run's checkpoints can never be mistaken for another database's run of the same id.
CREATE TABLE store_info (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
INSERT INTO store_info(key, value) VALUES ('store_id', lower(hex(randomblob(16))));
