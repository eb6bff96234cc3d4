-- DR's last stable offset at the cut (model.CutPosition.DRStableEnd): under
-- exactly-once MirrorMaker 2 the records between it and dr_end belong to a
-- transaction still open (or left open by a killed task) and are not in DR
-- as a read_committed reader sees it. NULL: not read (cuts before 0020).
ALTER TABLE failover_cuts ADD COLUMN dr_stable_end INTEGER;
