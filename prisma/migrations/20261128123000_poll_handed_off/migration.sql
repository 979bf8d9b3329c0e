-- AlterTable
ALTER TABLE "Board" ADD COLUMN     "pollHandedOff" BOOLEAN NOT NULL DEFAULT false;
