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
ALTER TABLE "ConfigPushResult" ADD CONSTRAINT "ConfigPushResult_pushId_fkey" FOREIGN KEY ("pushId") REFERENCES "ConfigPush"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "FirmwareSourcesPushResult" ADD CONSTRAINT "FirmwareSourcesPushResult_pushId_fkey" FOREIGN KEY ("pushId") REFERENCES "FirmwareSourcesPush"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "FirmwareInstall" ADD CONSTRAINT "FirmwareInstall_rolloutId_fkey" FOREIGN KEY ("rolloutId") REFERENCES "FirmwareRollout"("id") ON DELETE CASCADE ON UPDATE CASCADE;
