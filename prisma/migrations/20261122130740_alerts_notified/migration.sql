/*
  Warnings:

  - You are about to drop the column `resolvedNotifiedAt` on the `Alert` table. All the data in the column will be lost.

*/
-- AlterTable
ALTER TABLE "Alert" DROP COLUMN "resolvedNotifiedAt",
ADD COLUMN     "notifiedFiring" TEXT[] DEFAULT ARRAY[]::TEXT[],
ADD COLUMN     "notifiedResolved" TEXT[] DEFAULT ARRAY[]::TEXT[];
