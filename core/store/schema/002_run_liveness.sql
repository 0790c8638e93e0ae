-- 002: who is training a run, so a run whose process died shows as 'crashed', and a flag
-- through which a viewer asks the training process to checkpoint and stop.
ALTER TABLE runs ADD COLUMN host TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN boot_id TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN pid INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN pid_start INTEGER NOT NULL DEFAULT 0;
ALTER TABLE runs ADD COLUMN heartbeat_at REAL;
ALTER TABLE runs ADD COLUMN stop_requested INTEGER NOT NULL DEFAULT 0;
CREATE INDEX runs_status ON runs(status);
