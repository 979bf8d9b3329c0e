-- The poll schedule and lease move out of "Board" into a narrow table of their own (prisma/schema/boards.prisma says
-- why): every claim moves "nextPollAt", and its index on the wide board row made every poll's update a non-HOT one.

-- CreateTable
CREATE TABLE "BoardSchedule" (
    "boardId" UUID NOT NULL,
    "nextPollAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "nextSlowPollAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "nextMediumPollAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "aboutDue" BOOLEAN NOT NULL DEFAULT true,
    "pollLease" INTEGER NOT NULL DEFAULT 0,
    "pollLeaseUntil" TIMESTAMPTZ(3),
    "pollLagging" BOOLEAN NOT NULL DEFAULT false,
    "pollHandedOff" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "BoardSchedule_pkey" PRIMARY KEY ("boardId")
);

-- Every board keeps its schedule and lease as they were.
INSERT INTO "BoardSchedule" ("boardId", "nextPollAt", "nextSlowPollAt", "nextMediumPollAt", "aboutDue", "pollLease",
    "pollLeaseUntil", "pollLagging", "pollHandedOff")
SELECT "id", "nextPollAt", "nextSlowPollAt", "nextMediumPollAt", "aboutDue", "pollLease", "pollLeaseUntil",
    "pollLagging", "pollHandedOff"
FROM "Board";

-- CreateIndex
CREATE INDEX "BoardSchedule_nextPollAt_idx" ON "BoardSchedule"("nextPollAt");

-- AddForeignKey
ALTER TABLE "BoardSchedule" ADD CONSTRAINT "BoardSchedule_boardId_fkey" FOREIGN KEY ("boardId") REFERENCES "Board"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- DropIndex
DROP INDEX "Board_nextPollAt_idx";

-- AlterTable
ALTER TABLE "Board" DROP COLUMN "aboutDue",
DROP COLUMN "nextMediumPollAt",
DROP COLUMN "nextPollAt",
DROP COLUMN "nextSlowPollAt",
DROP COLUMN "pollHandedOff",
DROP COLUMN "pollLagging",
DROP COLUMN "pollLease",
DROP COLUMN "pollLeaseUntil";

-- Room on each page for a row's next version, so an update that changes no indexed column (a poll's, now) is written
-- on the same page without new index entries (HOT). New pages only: a table written before keeps its packed pages
-- until they are rewritten. The schedule's rows are rewritten by every claim and every poll's end.
ALTER TABLE "Board" SET (fillfactor = 70);
ALTER TABLE "BoardSchedule" SET (fillfactor = 50);
