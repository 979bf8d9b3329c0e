-- AlterTable
ALTER TABLE "Board" ADD COLUMN     "pollLagging" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "pollLease" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN     "pollLeaseUntil" TIMESTAMPTZ(3);
