-- CreateEnum
CREATE TYPE "Role" AS ENUM ('viewer', 'operator', 'admin');

-- CreateEnum
CREATE TYPE "BoardState" AS ENUM ('unknown', 'online', 'degraded', 'unreachable', 'credentials_invalid', 'banned', 'decommissioned');

-- CreateEnum
CREATE TYPE "BoardDialect" AS ENUM ('agent', 'fork', 'upstream');

-- CreateEnum
CREATE TYPE "CredentialKind" AS ENUM ('password', 'token');

-- CreateTable
CREATE TABLE "ApiToken" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "role" "Role" NOT NULL,
    "tokenHash" TEXT NOT NULL,
    "prefix" TEXT NOT NULL,
    "createdBy" TEXT,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "lastUsedAt" TIMESTAMP(3),
    "expiresAt" TIMESTAMP(3),
    "revokedAt" TIMESTAMP(3),

    CONSTRAINT "ApiToken_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AuditEntry" (
    "id" BIGSERIAL NOT NULL,
    "at" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "actor" TEXT NOT NULL,
    "tokenId" UUID,
    "action" TEXT NOT NULL,
    "target" TEXT NOT NULL,
    "boardId" UUID,
    "outcome" TEXT NOT NULL,
    "status" INTEGER NOT NULL,
    "requestId" TEXT NOT NULL,
    "detail" JSONB,

    CONSTRAINT "AuditEntry_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Board" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "baseUrl" TEXT NOT NULL,
    "labels" JSONB NOT NULL DEFAULT '{}',
    "rack" TEXT,
    "slot" INTEGER,
    "notes" TEXT,
    "credentialKind" "CredentialKind",
    "credentialSealed" TEXT,
    "credentialKeyId" TEXT,
    "credentialVersion" INTEGER NOT NULL DEFAULT 1,
    "pollIntervalSeconds" INTEGER,
    "dialect" "BoardDialect",
    "model" TEXT,
    "serial" TEXT,
    "daemonVersion" TEXT,
    "firmwareVersion" TEXT,
    "capabilities" JSONB,
    "factsAt" TIMESTAMPTZ(3),
    "state" "BoardState" NOT NULL DEFAULT 'unknown',
    "stateSince" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "stateReason" TEXT,
    "consecutiveFailures" INTEGER NOT NULL DEFAULT 0,
    "lastPolledAt" TIMESTAMPTZ(3),
    "lastSuccessAt" TIMESTAMPTZ(3),
    "nextPollAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "nextSlowPollAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "aboutDue" BOOLEAN NOT NULL DEFAULT true,
    "bannedUntil" TIMESTAMPTZ(3),
    "decommissionedAt" TIMESTAMPTZ(3),
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Board_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "BoardReading" (
    "boardId" UUID NOT NULL,
    "health" JSONB,
    "healthAt" TIMESTAMPTZ(3),
    "thermal" JSONB,
    "thermalAt" TIMESTAMPTZ(3),
    "firmwareCheck" JSONB,
    "firmwareAt" TIMESTAMPTZ(3),
    "slots" JSONB,
    "slotsAt" TIMESTAMPTZ(3),
    "about" JSONB,
    "aboutAt" TIMESTAMPTZ(3),
    "uptimeSeconds" DOUBLE PRECISION,

    CONSTRAINT "BoardReading_pkey" PRIMARY KEY ("boardId")
);

-- CreateTable
CREATE TABLE "ThermalSample" (
    "id" BIGSERIAL NOT NULL,
    "boardId" UUID NOT NULL,
    "sensor" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL,
    "temperatureC" DOUBLE PRECISION NOT NULL,

    CONSTRAINT "ThermalSample_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ThermalRollup" (
    "boardId" UUID NOT NULL,
    "sensor" TEXT NOT NULL,
    "bucket" TIMESTAMPTZ(3) NOT NULL,
    "mean" DOUBLE PRECISION NOT NULL,
    "min" DOUBLE PRECISION NOT NULL,
    "max" DOUBLE PRECISION NOT NULL,
    "samples" INTEGER NOT NULL,

    CONSTRAINT "ThermalRollup_pkey" PRIMARY KEY ("boardId","sensor","bucket")
);

-- CreateTable
CREATE TABLE "BoardEvent" (
    "id" BIGSERIAL NOT NULL,
    "boardId" UUID NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "kind" TEXT NOT NULL,
    "summary" TEXT NOT NULL,
    "detail" JSONB,

    CONSTRAINT "BoardEvent_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "NodeAction" (
    "id" UUID NOT NULL,
    "action" TEXT NOT NULL,
    "params" JSONB NOT NULL DEFAULT '{}',
    "selector" TEXT,
    "actor" TEXT NOT NULL,
    "requestId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "NodeAction_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "NodeActionResult" (
    "actionId" UUID NOT NULL,
    "boardId" UUID NOT NULL,
    "nodes" INTEGER[],
    "status" TEXT NOT NULL DEFAULT 'pending',
    "error" TEXT,
    "result" JSONB,
    "startedAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "NodeActionResult_pkey" PRIMARY KEY ("actionId","boardId")
);

-- CreateIndex
CREATE UNIQUE INDEX "ApiToken_tokenHash_key" ON "ApiToken"("tokenHash");

-- CreateIndex
CREATE INDEX "AuditEntry_boardId_at_idx" ON "AuditEntry"("boardId", "at");

-- CreateIndex
CREATE INDEX "AuditEntry_at_idx" ON "AuditEntry"("at");

-- CreateIndex
CREATE UNIQUE INDEX "Board_name_key" ON "Board"("name");

-- CreateIndex
CREATE UNIQUE INDEX "Board_baseUrl_key" ON "Board"("baseUrl");

-- CreateIndex
CREATE INDEX "Board_state_idx" ON "Board"("state");

-- CreateIndex
CREATE INDEX "Board_nextPollAt_idx" ON "Board"("nextPollAt");

-- CreateIndex
CREATE INDEX "Board_dialect_daemonVersion_idx" ON "Board"("dialect", "daemonVersion");

-- CreateIndex
CREATE INDEX "ThermalSample_boardId_sensor_at_idx" ON "ThermalSample"("boardId", "sensor", "at");

-- CreateIndex
CREATE INDEX "ThermalSample_at_idx" ON "ThermalSample"("at");

-- CreateIndex
CREATE INDEX "ThermalRollup_bucket_idx" ON "ThermalRollup"("bucket");

-- CreateIndex
CREATE INDEX "BoardEvent_boardId_at_id_idx" ON "BoardEvent"("boardId", "at" DESC, "id" DESC);

-- CreateIndex
CREATE INDEX "NodeActionResult_boardId_idx" ON "NodeActionResult"("boardId");

-- AddForeignKey
ALTER TABLE "BoardReading" ADD CONSTRAINT "BoardReading_boardId_fkey" FOREIGN KEY ("boardId") REFERENCES "Board"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BoardEvent" ADD CONSTRAINT "BoardEvent_boardId_fkey" FOREIGN KEY ("boardId") REFERENCES "Board"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NodeActionResult" ADD CONSTRAINT "NodeActionResult_actionId_fkey" FOREIGN KEY ("actionId") REFERENCES "NodeAction"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NodeActionResult" ADD CONSTRAINT "NodeActionResult_boardId_fkey" FOREIGN KEY ("boardId") REFERENCES "Board"("id") ON DELETE CASCADE ON UPDATE CASCADE;
