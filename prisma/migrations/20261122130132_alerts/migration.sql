-- CreateEnum
CREATE TYPE "AlertSeverity" AS ENUM ('info', 'warning', 'critical');

-- CreateEnum
CREATE TYPE "AlertStatus" AS ENUM ('pending', 'firing', 'resolved');

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
    "resolvedNotifiedAt" TIMESTAMPTZ(3),
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
