-- AlterTable
ALTER TABLE "Board" ADD COLUMN     "tlsFingerprint" TEXT;
