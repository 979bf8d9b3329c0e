import { z } from 'zod';
import { defineJob } from '../jobs/job-definition.js';

/**
 * One board's install (alone or in a rollout). Not retried by BullMQ: the state lives in FirmwareInstall, and a run
 * that died is re-dispatched by the rollout clock once its lease lapses (a new job id each time).
 */
export const firmwareInstallJob = defineJob({
  name: 'firmware.install',
  queue: 'firmware',
  payload: z.object({ installId: z.uuid() }),
  retry: { attempts: 1, backoff: { type: 'fixed', delayMs: 1000 } },
  keepCompleted: 5000,
});

/** Pushes the fleet sources document to one board (POST /firmware/sources replaces the whole document: idempotent). */
export const pushSourcesJob = defineJob({
  name: 'firmware.push-sources',
  queue: 'config',
  payload: z.object({ pushId: z.uuid(), boardId: z.uuid() }),
  retry: { attempts: 3, backoff: { type: 'exponential', delayMs: 2000 } },
});
