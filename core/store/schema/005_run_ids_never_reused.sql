-- 005: run ids are never reused. SQLite gives a new row max(id) + 1, so deleting the newest run
-- handed its id (and with it its checkpoint folder run-N/, and every note or figure citing
-- "run N") to the next run. The highest id ever given is kept here, raised by a trigger on every
-- insert; RunStore::insertRun takes the id after it. (A table rebuild with AUTOINCREMENT would
-- need foreign keys off, which a migration inside a transaction cannot switch.)
INSERT INTO store_meta(key, value)
  VALUES ('run_id_high_water', coalesce((SELECT max(id) FROM runs), 0));
CREATE TRIGGER runs_id_high_water AFTER INSERT ON runs BEGIN
  UPDATE store_meta SET value = max(value, NEW.id) WHERE key = 'run_id_high_water';
END;
