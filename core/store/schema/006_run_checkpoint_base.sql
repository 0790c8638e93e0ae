-- 006: the folder a run keeps its checkpoints under (absolute; its files are
-- <base>/<database id>/run-<id>/), so `resume` from any directory, without --checkpoint-dir,
-- goes on writing where the run was started rather than into the default data folder. '' for
-- runs from before: they keep the default, or the base their recorded checkpoints name.
ALTER TABLE runs ADD COLUMN checkpoint_base TEXT NOT NULL DEFAULT '';
