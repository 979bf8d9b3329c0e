-- CreateEnum
CREATE TYPE "AlertSeverity" AS ENUM ('info', 'warning', 'critical');

-- CreateEnum
CREATE TYPE "AlertStatus" AS ENUM ('pending', 'firing', 'resolved');

-- CreateEnum
CREATE TYPE "Role" AS ENUM ('viewer', 'operator', 'admin');

-- CreateEnum
CREATE TYPE "BoardState" AS ENUM ('unknown', 'online', 'degraded', 'unreachable', 'credentials_invalid', 'banned', 'decommissioned');

-- CreateEnum
CREATE TYPE "BoardDialect" AS ENUM ('agent', 'fork', 'upstream');

-- CreateEnum
CREATE TYPE "CredentialKind" AS ENUM ('password', 'token');

-- CreateTable
CREATE TABLE "AlertRule" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "severity" "AlertSeverity" NOT NULL,
    "sensor" TEXT,
    "threshold" DOUBLE PRECISION,
    "thresholdFrom" TEXT,
    "thresholdOffset" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "dwellSeconds" INTEGER NOT NULL DEFAULT 0,
    "hysteresis" DOUBLE PRECISION NOT NULL DEFAULT 0,
    "clearSeconds" INTEGER NOT NULL DEFAULT 0,
    "selector" TEXT,
    "remediation" TEXT NOT NULL DEFAULT 'none',
    "remediationNodes" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "remediationAfterSeconds" INTEGER NOT NULL DEFAULT 0,
    "builtin" BOOLEAN NOT NULL DEFAULT false,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "AlertRule_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "Alert" (
    "id" UUID NOT NULL,
    "openKey" TEXT,
    "ruleId" UUID,
    "rule" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "boardId" UUID NOT NULL,
    "sensor" TEXT NOT NULL DEFAULT '',
    "status" "AlertStatus" NOT NULL,
    "severity" "AlertSeverity" NOT NULL,
    "summary" TEXT NOT NULL,
    "detail" JSONB,
    "labels" JSONB NOT NULL DEFAULT '{}',
    "value" DOUBLE PRECISION,
    "threshold" DOUBLE PRECISION,
    "pendingSince" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "firedAt" TIMESTAMPTZ(3),
    "clearingSince" TIMESTAMPTZ(3),
    "resolvedAt" TIMESTAMPTZ(3),
    "lastEvaluatedAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "acknowledgedAt" TIMESTAMPTZ(3),
    "acknowledgedBy" TEXT,
    "ackComment" TEXT,
    "remediatedAt" TIMESTAMPTZ(3),
    "remediation" TEXT,
    "notifiedFiring" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "notifiedResolved" TEXT[] DEFAULT ARRAY[]::TEXT[],
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "Alert_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AlertSilence" (
    "id" UUID NOT NULL,
    "matchers" JSONB NOT NULL,
    "startsAt" TIMESTAMPTZ(3) NOT NULL,
    "endsAt" TIMESTAMPTZ(3) NOT NULL,
    "createdBy" TEXT NOT NULL,
    "comment" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "expiredAt" TIMESTAMPTZ(3),

    CONSTRAINT "AlertSilence_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AlertReceiver" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "type" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT true,
    "minSeverity" "AlertSeverity" NOT NULL DEFAULT 'info',
    "groupBy" TEXT[] DEFAULT ARRAY['rule']::TEXT[],
    "groupIntervalSeconds" INTEGER NOT NULL DEFAULT 60,
    "repeatIntervalSeconds" INTEGER NOT NULL DEFAULT 60,
    "secretSealed" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "AlertReceiver_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "AlertNotifyGroup" (
    "receiverId" UUID NOT NULL,
    "groupKey" TEXT NOT NULL,
    "groupLabels" JSONB NOT NULL,
    "dueAt" TIMESTAMPTZ(3) NOT NULL,
    "lastSentAt" TIMESTAMPTZ(3),
    "dirty" BOOLEAN NOT NULL DEFAULT true,

    CONSTRAINT "AlertNotifyGroup_pkey" PRIMARY KEY ("receiverId","groupKey")
);

-- CreateTable
CREATE TABLE "AlertDelivery" (
    "id" BIGSERIAL NOT NULL,
    "receiverId" UUID NOT NULL,
    "groupKey" TEXT NOT NULL,
    "at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "attempt" INTEGER NOT NULL,
    "ok" BOOLEAN NOT NULL,
    "status" INTEGER,
    "error" TEXT,
    "alertIds" TEXT[],
    "test" BOOLEAN NOT NULL DEFAULT false,

    CONSTRAINT "AlertDelivery_pkey" PRIMARY KEY ("id")
);

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

-- CreateTable
CREATE TABLE "ConfigVersion" (
    "id" UUID NOT NULL,
    "boardId" UUID NOT NULL,
    "boardName" TEXT NOT NULL,
    "seq" INTEGER NOT NULL,
    "hash" TEXT NOT NULL,
    "formatVersion" INTEGER NOT NULL,
    "firmwareVersion" TEXT,
    "document" JSONB NOT NULL,
    "source" TEXT NOT NULL,
    "capturedAt" TIMESTAMPTZ(3) NOT NULL,
    "lastSeenAt" TIMESTAMPTZ(3) NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "ConfigVersion_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ConfigBoardState" (
    "boardId" UUID NOT NULL,
    "backupIntervalSeconds" INTEGER,
    "nextBackupAt" TIMESTAMPTZ(3),
    "lastBackupAt" TIMESTAMPTZ(3),
    "lastBackupStatus" TEXT,
    "lastBackupError" TEXT,
    "templateId" UUID,
    "autoReapply" BOOLEAN NOT NULL DEFAULT false,
    "driftStatus" TEXT NOT NULL DEFAULT 'unbound',
    "driftFields" JSONB,
    "driftCheckedAt" TIMESTAMPTZ(3),
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ConfigBoardState_pkey" PRIMARY KEY ("boardId")
);

-- CreateTable
CREATE TABLE "ConfigPolicy" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "backupIntervalSeconds" INTEGER NOT NULL DEFAULT 86400,
    "keepVersions" INTEGER NOT NULL DEFAULT 30,
    "keepDays" INTEGER NOT NULL DEFAULT 90,
    "keepMonthly" BOOLEAN NOT NULL DEFAULT true,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ConfigPolicy_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ConfigRestore" (
    "id" UUID NOT NULL,
    "boardId" UUID NOT NULL,
    "versionId" UUID NOT NULL,
    "sourceBoardId" UUID NOT NULL,
    "fields" TEXT[],
    "status" TEXT NOT NULL DEFAULT 'pending',
    "report" JSONB,
    "outcome" JSONB,
    "error" TEXT,
    "preBackupVersionId" UUID,
    "actor" TEXT NOT NULL,
    "requestId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ConfigRestore_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ConfigTemplate" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "description" TEXT,
    "hostnamePattern" TEXT,
    "ntpServers" JSONB,
    "firmwareSources" JSONB,
    "nodes" JSONB,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "ConfigTemplate_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ConfigPush" (
    "id" UUID NOT NULL,
    "templateId" UUID,
    "templateName" TEXT NOT NULL,
    "template" JSONB NOT NULL,
    "selector" TEXT,
    "concurrency" INTEGER NOT NULL,
    "stopOnFailureRatio" DOUBLE PRECISION NOT NULL,
    "minFinished" INTEGER NOT NULL,
    "bind" BOOLEAN NOT NULL,
    "autoReapply" BOOLEAN NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'running',
    "origin" TEXT NOT NULL DEFAULT 'api',
    "actor" TEXT NOT NULL,
    "requestId" TEXT,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ConfigPush_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "ConfigPushResult" (
    "pushId" UUID NOT NULL,
    "boardId" UUID NOT NULL,
    "boardName" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "desired" JSONB,
    "report" JSONB,
    "outcome" JSONB,
    "error" TEXT,
    "startedAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "ConfigPushResult_pkey" PRIMARY KEY ("pushId","boardId")
);

-- CreateTable
CREATE TABLE "FirmwareSourcesDocument" (
    "id" INTEGER NOT NULL DEFAULT 1,
    "document" JSONB NOT NULL,
    "revision" INTEGER NOT NULL DEFAULT 1,
    "updatedBy" TEXT NOT NULL,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "FirmwareSourcesDocument_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "FirmwareSourcesPush" (
    "id" UUID NOT NULL,
    "revision" INTEGER NOT NULL,
    "document" JSONB NOT NULL,
    "selector" TEXT,
    "actor" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "FirmwareSourcesPush_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "FirmwareSourcesPushResult" (
    "pushId" UUID NOT NULL,
    "boardId" UUID NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "error" TEXT,
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "FirmwareSourcesPushResult_pkey" PRIMARY KEY ("pushId","boardId")
);

-- CreateTable
CREATE TABLE "FirmwareRollout" (
    "id" UUID NOT NULL,
    "name" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "selector" JSONB NOT NULL,
    "policy" JSONB NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'scheduled',
    "statusReason" TEXT,
    "currentWave" INTEGER NOT NULL DEFAULT 0,
    "wavePhase" TEXT NOT NULL DEFAULT 'installing',
    "soakUntil" TIMESTAMPTZ(3),
    "errorsAcked" INTEGER[] DEFAULT ARRAY[]::INTEGER[],
    "startAt" TIMESTAMPTZ(3),
    "actor" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,
    "startedAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),

    CONSTRAINT "FirmwareRollout_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "FirmwareInstall" (
    "id" UUID NOT NULL,
    "rolloutId" UUID,
    "boardId" UUID NOT NULL,
    "boardName" TEXT NOT NULL,
    "rack" TEXT,
    "wave" INTEGER,
    "position" INTEGER NOT NULL DEFAULT 0,
    "version" TEXT NOT NULL,
    "source" TEXT NOT NULL,
    "force" BOOLEAN NOT NULL DEFAULT false,
    "allowDowngrade" BOOLEAN NOT NULL DEFAULT false,
    "activate" BOOLEAN NOT NULL DEFAULT true,
    "status" TEXT NOT NULL DEFAULT 'pending',
    "reason" TEXT,
    "soakFailed" BOOLEAN NOT NULL DEFAULT false,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "dispatches" INTEGER NOT NULL DEFAULT 0,
    "leaseOwner" TEXT,
    "leaseUntil" TIMESTAMPTZ(3),
    "notBefore" TIMESTAMPTZ(3),
    "installSentAt" TIMESTAMPTZ(3),
    "rebootSentAt" TIMESTAMPTZ(3),
    "baselineRolledBack" INTEGER,
    "fromVersion" TEXT,
    "slots" JSONB,
    "actor" TEXT NOT NULL,
    "createdAt" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "startedAt" TIMESTAMPTZ(3),
    "finishedAt" TIMESTAMPTZ(3),
    "updatedAt" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "FirmwareInstall_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "AlertRule_name_key" ON "AlertRule"("name");

-- CreateIndex
CREATE UNIQUE INDEX "Alert_openKey_key" ON "Alert"("openKey");

-- CreateIndex
CREATE INDEX "Alert_boardId_status_idx" ON "Alert"("boardId", "status");

-- CreateIndex
CREATE INDEX "Alert_status_severity_idx" ON "Alert"("status", "severity");

-- CreateIndex
CREATE INDEX "Alert_createdAt_idx" ON "Alert"("createdAt");

-- CreateIndex
CREATE INDEX "AlertSilence_endsAt_idx" ON "AlertSilence"("endsAt");

-- CreateIndex
CREATE UNIQUE INDEX "AlertReceiver_name_key" ON "AlertReceiver"("name");

-- CreateIndex
CREATE INDEX "AlertNotifyGroup_dueAt_idx" ON "AlertNotifyGroup"("dueAt");

-- CreateIndex
CREATE INDEX "AlertDelivery_receiverId_at_idx" ON "AlertDelivery"("receiverId", "at");

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

-- CreateIndex
CREATE INDEX "ConfigVersion_boardId_capturedAt_idx" ON "ConfigVersion"("boardId", "capturedAt" DESC);

-- CreateIndex
CREATE UNIQUE INDEX "ConfigVersion_boardId_seq_key" ON "ConfigVersion"("boardId", "seq");

-- CreateIndex
CREATE INDEX "ConfigBoardState_nextBackupAt_idx" ON "ConfigBoardState"("nextBackupAt");

-- CreateIndex
CREATE INDEX "ConfigBoardState_templateId_idx" ON "ConfigBoardState"("templateId");

-- CreateIndex
CREATE INDEX "ConfigRestore_boardId_createdAt_idx" ON "ConfigRestore"("boardId", "createdAt");

-- CreateIndex
CREATE UNIQUE INDEX "ConfigTemplate_name_key" ON "ConfigTemplate"("name");

-- CreateIndex
CREATE INDEX "ConfigPushResult_pushId_status_position_idx" ON "ConfigPushResult"("pushId", "status", "position");

-- CreateIndex
CREATE INDEX "FirmwareRollout_status_idx" ON "FirmwareRollout"("status");

-- CreateIndex
CREATE INDEX "FirmwareInstall_rolloutId_status_idx" ON "FirmwareInstall"("rolloutId", "status");

-- CreateIndex
CREATE INDEX "FirmwareInstall_boardId_status_idx" ON "FirmwareInstall"("boardId", "status");

-- CreateIndex
CREATE INDEX "FirmwareInstall_status_leaseUntil_idx" ON "FirmwareInstall"("status", "leaseUntil");

-- CreateIndex
CREATE UNIQUE INDEX "FirmwareInstall_rolloutId_boardId_key" ON "FirmwareInstall"("rolloutId", "boardId");

-- AddForeignKey
ALTER TABLE "BoardReading" ADD CONSTRAINT "BoardReading_boardId_fkey" FOREIGN KEY ("boardId") REFERENCES "Board"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "BoardEvent" ADD CONSTRAINT "BoardEvent_boardId_fkey" FOREIGN KEY ("boardId") REFERENCES "Board"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NodeActionResult" ADD CONSTRAINT "NodeActionResult_actionId_fkey" FOREIGN KEY ("actionId") REFERENCES "NodeAction"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "NodeActionResult" ADD CONSTRAINT "NodeActionResult_boardId_fkey" FOREIGN KEY ("boardId") REFERENCES "Board"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "ConfigPushResult" ADD CONSTRAINT "ConfigPushResult_pushId_fkey" FOREIGN KEY ("pushId") REFERENCES "ConfigPush"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "FirmwareSourcesPushResult" ADD CONSTRAINT "FirmwareSourcesPushResult_pushId_fkey" FOREIGN KEY ("pushId") REFERENCES "FirmwareSourcesPush"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "FirmwareInstall" ADD CONSTRAINT "FirmwareInstall_rolloutId_fkey" FOREIGN KEY ("rolloutId") REFERENCES "FirmwareRollout"("id") ON DELETE CASCADE ON UPDATE CASCADE;
