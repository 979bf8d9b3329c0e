-- The BRIN index on "ThermalSample"."at" summarises a block range only when something asks (VACUUM, or
-- brin_summarize_new_values): an insert-only partition is vacuumed rarely, so the ranges written since were
-- unsummarised, matched every query, and the compaction's window read the whole hour (bench/thermal.bench.ts:
-- "Rows Removed by Index Recheck" was three quarters of the partition). autosummarize has autovacuum summarise each
-- range once the next one is being filled. A partitioned index takes no ALTER INDEX ... SET: it is rebuilt with the
-- option, which every partition's index inherits, and so do the partitions attached later (ATTACH copies it).
DROP INDEX "ThermalSample_at_idx";
CREATE INDEX "ThermalSample_at_idx" ON "ThermalSample" USING BRIN ("at") WITH (autosummarize = on);
