import { deliverAlertsJob, evaluateAlertsJob, remediateAlertJob } from '../alerts/alerts.jobs.js';
import { nodeActionJob } from '../boards/node-actions.jobs.js';
import { configBackupJob, configPushJob, configRestoreJob } from '../config-backups/config-backups.jobs.js';
import { firmwareInstallJob, pushSourcesJob } from '../firmware/firmware.jobs.js';
import { compactThermalJob, pollBatchJob, pollSlowJob } from '../polling/polling.jobs.js';
import type { JobDefinition } from './job-definition.js';

/**
 * Every job the fleet manager runs. A job is defined in its domain (`<domain>.jobs.ts`) and listed here; the
 * registry checks at boot that each one has exactly one `@JobHandler`, and that no handler names a job missing
 * from this list.
 */
export const jobCatalogue: readonly JobDefinition[] = [
  pollBatchJob,
  pollSlowJob,
  compactThermalJob,
  nodeActionJob,
  evaluateAlertsJob,
  deliverAlertsJob,
  remediateAlertJob,
  configBackupJob,
  configRestoreJob,
  configPushJob,
  firmwareInstallJob,
  pushSourcesJob,
];
