-- 004: the time a run spent stopped (or crashed) before it was resumed, so its duration is
-- the time it trained (finished - started - paused), not the span since it first started.
ALTER TABLE runs ADD COLUMN paused_seconds REAL NOT NULL DEFAULT 0;
