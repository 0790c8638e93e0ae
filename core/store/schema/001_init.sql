-- 001: the initial DepthLab run store.
-- Runs with their config, scalar series, per-layer series (one float32 BLOB per step),
-- matrices for heatmaps, checkpoints and events. store_meta holds the change counter that
-- viewers poll; runs.version is the counter value of the run's last change.
CREATE TABLE store_meta (
  key   TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) WITHOUT ROWID;
INSERT INTO store_meta(key, value) VALUES ('change_counter', 0);

CREATE TABLE runs (
  id          INTEGER PRIMARY KEY,
  name        TEXT NOT NULL,
  group_name  TEXT NOT NULL DEFAULT '',
  scheme      TEXT NOT NULL DEFAULT '',
  status      TEXT NOT NULL DEFAULT 'queued'
              CHECK (status IN ('queued','running','finished','stopped','diverged','crashed')),
  config_json TEXT NOT NULL DEFAULT '{}',
  device      TEXT NOT NULL DEFAULT '',
  seed        INTEGER NOT NULL DEFAULT 0,
  created_at  REAL NOT NULL,
  started_at  REAL,
  finished_at REAL,
  notes       TEXT NOT NULL DEFAULT '',
  version     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_version ON runs(version);

CREATE TABLE run_tags (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  tag    TEXT NOT NULL,
  PRIMARY KEY (run_id, tag)
) WITHOUT ROWID;

CREATE TABLE scalars (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  key    TEXT NOT NULL,
  step   INTEGER NOT NULL,
  value  REAL,
  PRIMARY KEY (run_id, key, step)
) WITHOUT ROWID;

-- values: n_layers little-endian float32s
CREATE TABLE layer_series (
  run_id   INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  metric   TEXT NOT NULL,
  step     INTEGER NOT NULL,
  n_layers INTEGER NOT NULL,
  data     BLOB NOT NULL,
  PRIMARY KEY (run_id, metric, step)
) WITHOUT ROWID;

-- data: rows*cols little-endian float32s, row-major; NaN marks a masked cell
CREATE TABLE matrices (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  kind   TEXT NOT NULL,
  step   INTEGER NOT NULL,
  n_rows INTEGER NOT NULL,
  n_cols INTEGER NOT NULL,
  data   BLOB NOT NULL,
  PRIMARY KEY (run_id, kind, step)
) WITHOUT ROWID;

CREATE TABLE checkpoints (
  id         INTEGER PRIMARY KEY,
  run_id     INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  step       INTEGER NOT NULL,
  path       TEXT NOT NULL,
  checksum   TEXT NOT NULL DEFAULT '',
  created_at REAL NOT NULL
);
CREATE INDEX checkpoints_run ON checkpoints(run_id, step);

CREATE TABLE events (
  id      INTEGER PRIMARY KEY,
  run_id  INTEGER REFERENCES runs(id) ON DELETE CASCADE,
  step    INTEGER,
  time    REAL NOT NULL,
  level   TEXT NOT NULL CHECK (level IN ('info','warning','error')),
  message TEXT NOT NULL
);
CREATE INDEX events_run ON events(run_id, id);
