import { z } from 'zod';
import { defineJob } from '../jobs/job-definition.js';

export const BACKUP_REASONS = ['scheduled', 'on_demand', 'pre_restore', 'pre_push', 'pre_upgrade'] as const;

/**
 * Pull GET /config from one board and store a version when the content changed. Safe to run twice (retries, a
 * restarted worker, two workers): the store step compares with the latest version under a per-board lock.
 */
export const configBackupJob = defineJob({
  name: 'config.backup',
  queue: 'config',
  payload: z.object({ boardId: z.uuid(), reason: z.enum(BACKUP_REASONS) }),
  retry: { attempts: 3, backoff: { type: 'exponential', delayMs: 5000 } },
});

/**
 * Restore a stored version to a board. Retried only while the board is unreachable: the import itself is
 * idempotent (it sets values), and a run that finds its restore finished does nothing.
 */
export const configRestoreJob = defineJob({
  name: 'config.restore',
  queue: 'config',
  payload: z.object({ restoreId: z.uuid() }),
  retry: { attempts: 3, backoff: { type: 'exponential', delayMs: 5000 } },
});

/** One board's part of a template push; finishing it starts the next pending board (concurrency limit). */
export const configPushJob = defineJob({
  name: 'config.push-board',
  queue: 'config',
  payload: z.object({ pushId: z.uuid(), boardId: z.uuid() }),
  retry: { attempts: 3, backoff: { type: 'exponential', delayMs: 5000 } },
});
