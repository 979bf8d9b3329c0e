-- AlterTable
ALTER TABLE "AlertRule" ADD COLUMN     "description" TEXT;

-- AlterTable
ALTER TABLE "Board" ADD COLUMN     "nextMediumPollAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP;

-- AlterTable
ALTER TABLE "BoardReading" ADD COLUMN     "cooling" JSONB,
ADD COLUMN     "coolingAt" TIMESTAMPTZ(3),
ADD COLUMN     "sdcard" JSONB,
ADD COLUMN     "sdcardAt" TIMESTAMPTZ(3);
