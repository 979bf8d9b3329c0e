-- Raw thermal samples become a table partitioned by the hour of "at" (10,000 boards at 15 s write ~290 million
-- rows a day): retention drops whole partitions instead of deleting rows, and the compaction reads only the
-- partitions of its window. Hourly, because the retention is set in hours (THERMAL_RAW_RETENTION_HOURS): an hour is
-- kept at most one hour past it, where daily partitions would keep up to a day more (twice the disk at 24 hours).
-- A default partition takes what no hourly partition covers, so an insert never fails; the compaction job
-- (thermal_sample_maintain, below) creates partitions hours ahead and moves such rows into their hour.

ALTER TABLE "ThermalSample" RENAME TO "ThermalSample_unpartitioned";
ALTER TABLE "ThermalSample_unpartitioned" RENAME CONSTRAINT "ThermalSample_pkey" TO "ThermalSample_unpartitioned_pkey";
ALTER INDEX "ThermalSample_boardId_sensor_at_idx" RENAME TO "ThermalSample_unpartitioned_boardId_sensor_at_idx";
ALTER INDEX "ThermalSample_at_idx" RENAME TO "ThermalSample_unpartitioned_at_idx";

-- The primary key of a partitioned table must contain the partition column. The id sequence carries over.
CREATE TABLE "ThermalSample" (
    "id" BIGINT NOT NULL DEFAULT nextval('"ThermalSample_id_seq"'::regclass),
    "boardId" UUID NOT NULL,
    "sensor" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "temperatureC" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "ThermalSample_pkey" PRIMARY KEY ("id", "at")
) PARTITION BY RANGE ("at");
ALTER SEQUENCE "ThermalSample_id_seq" OWNED BY "ThermalSample"."id";

CREATE INDEX "ThermalSample_boardId_sensor_at_idx" ON "ThermalSample"("boardId", "sensor", "at");
CREATE INDEX "ThermalSample_at_idx" ON "ThermalSample" USING BRIN ("at");

CREATE TABLE "ThermalSample_default" PARTITION OF "ThermalSample" DEFAULT;

-- The partition of the hour (UTC) that holds the instant p_hour, named ThermalSample_pYYYYMMDDHH; true when it was
-- created. Rows of that hour already in the default partition move into it. Built beside the table and then
-- attached: ATTACH takes only a SHARE UPDATE EXCLUSIVE lock on the parent, so polls keep inserting meanwhile
-- (CREATE TABLE ... PARTITION OF would lock them out), and it refuses a default partition holding rows of the range,
-- hence the move, under a lock on the default partition so that none arrive in between.
CREATE FUNCTION "thermal_sample_partition"(p_hour timestamptz) RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
  lo timestamptz := date_trunc('hour', p_hour AT TIME ZONE 'UTC') AT TIME ZONE 'UTC';
  hi timestamptz := lo + interval '1 hour';
  part text := 'ThermalSample_p' || to_char(p_hour AT TIME ZONE 'UTC', 'YYYYMMDDHH24');
BEGIN
  IF to_regclass(quote_ident(part)) IS NOT NULL THEN
    RETURN false;
  END IF;
  LOCK TABLE "ThermalSample_default" IN ACCESS EXCLUSIVE MODE;
  EXECUTE format('CREATE TABLE %I (LIKE "ThermalSample" INCLUDING DEFAULTS)', part);
  EXECUTE format(
    'WITH moved AS (DELETE FROM "ThermalSample_default" WHERE "at" >= $1 AND "at" < $2 RETURNING *) '
    'INSERT INTO %I SELECT * FROM moved', part) USING lo, hi;
  EXECUTE format('ALTER TABLE "ThermalSample" ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)', part, lo, hi);
  RETURN true;
END
$$;

-- Partition maintenance, run by the compaction job: drops the hourly partitions that end at or before p_keep_after
-- (whole tables: no row deletes, no vacuum), deletes the default partition's rows older than that (normally none),
-- and creates the partitions of the hour of p_now and p_ahead_hours after it, plus one for each hour that has rows
-- in the default partition. Idempotent. Two workers running it at once queue on the SHARE UPDATE EXCLUSIVE lock
-- (it conflicts with itself, not with reads or inserts) and the second finds the work done. Drops come first: a
-- DROP needs an ACCESS EXCLUSIVE lock on the parent, and taking it while holding the default partition's lock
-- could deadlock with an insert that holds the parent and waits for that partition. lock_timeout bounds how long
-- the DROP may queue (and so hold back polls' inserts queued behind it) when a long read holds the table; the job
-- fails then and the next run drops.
CREATE FUNCTION "thermal_sample_maintain"(p_now timestamptz, p_ahead_hours int, p_keep_after timestamptz)
RETURNS TABLE ("created" int, "dropped" int, "deleted" bigint) LANGUAGE plpgsql AS $$
DECLARE
  part text;
  h timestamptz;
BEGIN
  created := 0;
  dropped := 0;
  LOCK TABLE "ThermalSample" IN SHARE UPDATE EXCLUSIVE MODE;
  PERFORM set_config('lock_timeout', '10s', true);
  FOR part IN
    SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = '"ThermalSample"'::regclass AND c.relname ~ '^ThermalSample_p[0-9]{10}$'
      AND make_timestamptz(substr(c.relname, 16, 4)::int, substr(c.relname, 20, 2)::int,
        substr(c.relname, 22, 2)::int, substr(c.relname, 24, 2)::int, 0, 0, 'UTC') + interval '1 hour' <= p_keep_after
    ORDER BY c.relname
  LOOP
    EXECUTE format('DROP TABLE %I', part);
    dropped := dropped + 1;
  END LOOP;
  DELETE FROM "ThermalSample_default" WHERE "at" < p_keep_after;
  GET DIAGNOSTICS deleted = ROW_COUNT;
  FOR h IN
    SELECT generate_series(p_now, p_now + make_interval(hours => p_ahead_hours), interval '1 hour')
    UNION
    SELECT DISTINCT date_trunc('hour', "at" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' FROM "ThermalSample_default"
  LOOP
    IF "thermal_sample_partition"(h) THEN
      created := created + 1;
    END IF;
  END LOOP;
  RETURN NEXT;
END
$$;

-- Existing rows: a partition for each hour they cover and the hours ahead, then one copy routed by PostgreSQL.
SELECT "thermal_sample_partition"(h) FROM (
  SELECT DISTINCT date_trunc('hour', "at" AT TIME ZONE 'UTC') AT TIME ZONE 'UTC' AS h FROM "ThermalSample_unpartitioned"
) AS hours;
SELECT * FROM "thermal_sample_maintain"(now(), 3, '-infinity');
INSERT INTO "ThermalSample" SELECT * FROM "ThermalSample_unpartitioned";
DROP TABLE "ThermalSample_unpartitioned";
