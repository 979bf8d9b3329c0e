import type { AppConfig } from '../config/config.service.js';
import type { ReachabilityPolicy } from './reachability.js';

/**
 * Boards in one poll-batch job. Each batch costs one BullMQ job and one read statement whatever its size, so larger
 * batches are cheaper per board. Its results are written as they come (WRITE_LINGER_MS), but the job lasts as long
 * as its slowest board (at worst the fast lane's budget), and its boards' targets and promises are held that long.
 * 10,000 boards at 15 s: ~6.7 jobs a second.
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
 * A board's firmware reads are claimed with one of its polls, and start this share of the poll interval after it:
 * between two polls, on the connection the poll left idle. Started together, the two requests found the board's one
 * connection busy about one time in five and opened a second (docs/benchmarks.md, issue 19).
 */
export const SLOW_READ_OFFSET_SHARE = 0.5;
/** Boards of the lagging lane are not claimed while this many lagging batches wait (they stay due, as above). */
export const MAX_WAITING_LAGGING_BATCHES = 20;
/**
 * A poll that took at least this share of the request timeout moves its board to the lagging lane (as does one that
 * got no answer): healthy boards answer in milliseconds, so a board that needs a quarter of the timeout would hold a
 * fast-lane slot for hundreds of healthy polls' worth of time. One quick, answered poll brings it back.
 */
export const LAGGING_SHARE_OF_TIMEOUT = 0.25;
/**
 * How long a claim holds a board, beyond its interval (which covers waiting in the queue behind at most
 * MAX_WAITING_BATCHES): a poll makes at most 8 requests in a row (login, detection's about and its fallback,
 * health, thermal, cooling, sdcard, a re-login), each within the request timeout. A lease that runs out lets the
 * board be claimed again; the late poll's result is then dropped at write, so expiry costs a poll, never order.
 */
export const LEASE_REQUESTS = 8;
/**
 * Results of a batch are written as they come: the first one ready waits this long for others to join it in one
 * statement, so a batch costs a few writes instead of one, and a healthy board's result never waits for the batch's
 * slowest board (which took the whole timeout, or longer, before).
 */
export const WRITE_LINGER_MS = 100;
/**
 * /cooling and /sdcard are read on every MEDIUM_POLL_EVERY-th fast poll. They change slowly (a held governor, a
 * filling card) and their rules dwell for minutes, while every extra request per poll costs the fleet
 * boards ÷ interval requests a second (10,000 boards at 15 s: +667/s per operation).
 */
export const MEDIUM_POLL_EVERY = 4;

// Thermal history: raw samples, rolled into 5-minute means (retention: THERMAL_*_RETENTION_* settings).
export const THERMAL_BUCKET_SECONDS = 300;
/**
 * Hourly partitions of the raw samples created ahead of the hour being written (by the compaction job, every
 * THERMAL_COMPACT_INTERVAL_SECONDS, at most an hour): three hours outlast two missed or failed runs at the longest
 * interval, and an empty partition costs a few pages. Should all be missed, inserts land in the default partition
 * and the next run moves them into their hour.
 */
export const THERMAL_PARTITIONS_AHEAD_HOURS = 3;

/**
 * The first compaction after start comes after a minute (or the interval, when shorter), not a whole interval: a
 * fresh fleet manager shows 5-minute means of its boards within minutes (the current bucket's mean is recomputed as
 * it fills), and a manager restarted more often than its interval still compacts.
 */
export function firstCompactionDelayMs(intervalSeconds: number): number {
  return Math.min(intervalSeconds, 60) * 1000;
}

export function reachabilityPolicy(polling: AppConfig['polling'], intervalSeconds?: number | null): ReachabilityPolicy {
  return {
    intervalSeconds: intervalSeconds ?? polling.intervalSeconds,
    unreachableAfter: polling.unreachableAfter,
    // POLL_SLOW_INTERVAL_SECONDS: how often unreachable boards are retried at most, and the firmware poll period.
    maxBackoffSeconds: Math.max(polling.slowIntervalSeconds, intervalSeconds ?? polling.intervalSeconds),
  };
}
