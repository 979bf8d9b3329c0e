import type { AppConfig } from '../config/config.service.js';
import type { ReachabilityPolicy } from './reachability.js';

/**
 * Boards in one poll-batch job. Each batch costs one BullMQ job, one read and one write statement whatever its size,
 * so larger batches are cheaper per board; but a batch is written when its slowest board answers (at worst one
 * POLL_TIMEOUT_MS late), which bounds how large it should get. 10,000 boards at 15 s: ~6.7 jobs a second.
 */
export const POLL_BATCH_SIZE = 100;
/** At most this many boards are claimed per scheduler tick (one tick a second). */
export const MAX_CLAIM_PER_TICK = 5000;
/**
 * Skip claiming while this many poll-batch jobs wait: boards stay due and are claimed once workers catch up.
 * 100 batches of POLL_BATCH_SIZE = 10,000 boards queued at most (the bound it had with batches of 50 and 200 jobs).
 */
export const MAX_WAITING_BATCHES = 100;
export const TICK_MS = 1000;
/**
 * Firmware reads are not claimed while this many slow-lane batches wait: the boards stay due for them and are
 * claimed once the lane catches up (a lane slower than its boards' schedule must not grow a queue without end).
 */
export const MAX_WAITING_SLOW_BATCHES = 20;
/**
 * /cooling and /sdcard are read on every MEDIUM_POLL_EVERY-th fast poll. They change slowly (a held governor, a
 * filling card) and their rules dwell for minutes, while every extra request per poll costs the fleet
 * boards ÷ interval requests a second (10,000 boards at 15 s: +667/s per operation).
 */
export const MEDIUM_POLL_EVERY = 4;

// Thermal history: raw samples, rolled into 5-minute means (retention: THERMAL_*_RETENTION_* settings).
export const THERMAL_BUCKET_SECONDS = 300;
export const THERMAL_COMPACT_EVERY_MS = 5 * 60 * 1000;

export function reachabilityPolicy(polling: AppConfig['polling'], intervalSeconds?: number | null): ReachabilityPolicy {
  return {
    intervalSeconds: intervalSeconds ?? polling.intervalSeconds,
    unreachableAfter: polling.unreachableAfter,
    // POLL_SLOW_INTERVAL_SECONDS: how often unreachable boards are retried at most, and the firmware poll period.
    maxBackoffSeconds: Math.max(polling.slowIntervalSeconds, intervalSeconds ?? polling.intervalSeconds),
  };
}
