-- The label selector's GIN index writes new entries straight into the index, not into a pending list. With the
-- default (fastupdate on), every row version the index must cover (a registration, a label change, a poll's update
-- that could not stay HOT) went to an unsorted pending list, which every selector query scans in full until a vacuum
-- merges it: 10,000 boards registered left 34,000 entries there, and a board page of one rack spent 2 ms (15 ms cold)
-- in that scan alone (docs/benchmarks.md, the API section). The index is read on every board list and written
-- rarely, so merging each entry when it is written is the cheaper side.
ALTER INDEX "Board_labels_idx" SET (fastupdate = off);
-- Turning it off leaves the entries already pending where they are until the next vacuum: merge them now.
SELECT gin_clean_pending_list('"Board_labels_idx"'::regclass);
