import { deliverAlertsJob, evaluateAlertsJob, remediateAlertJob } from './alerts/alerts.jobs.js';
import { nodeActionJob } from './boards/node-actions.jobs.js';
import { nodeImageJob } from './boards/node-images.jobs.js';
import { configBackupJob, configPushJob, configRestoreJob } from './config-backups/config-backups.jobs.js';
import { firmwareInstallJob, pushSourcesJob } from './firmware/firmware.jobs.js';
import {
  compactThermalJob,
  pollBatchJob,
  pollHandedOffJob,
  pollLaggingJob,
  pollSlowJob,
} from './polling/polling.jobs.js';
import type { JobDefinition } from './jobs/job-definition.js';

/**
 * Every job the fleet manager runs. A job is defined in its domain (`<domain>.jobs.ts`) and listed here, at the
 * composition root (AppModule hands it to JobsModule.forRoot, so src/jobs knows no domain); the registry checks at
 * boot that each one has exactly one `@JobHandler`, and that no handler names a job missing from this list.
 */
export const jobCatalogue: readonly JobDefinition[] = [
  pollBatchJob,
  pollLaggingJob,
  pollHandedOffJob,
  pollSlowJob,
  compactThermalJob,
  nodeActionJob,
  nodeImageJob,
  evaluateAlertsJob,
  deliverAlertsJob,
  remediateAlertJob,
  configBackupJob,
  configRestoreJob,
  configPushJob,
  firmwareInstallJob,
  pushSourcesJob,
];
