import { readdirSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';
import type { Role } from './config.service.js';

/**
 * Lowers a worker process's CPU priority to `nice` (WORKER_NICE) at start. The api answers people (the console, the
 * CLI, scripts); the worker's polls and jobs can wait a few milliseconds. On a host the two share, the board list's
 * p99 with polling running was 21–24 ms at equal priority (docs/benchmarks.md, the API section).
 *
 * Every thread of the process: on Linux a nice value belongs to a thread, and V8's garbage-collection threads are
 * already running when this is called (threads started later inherit the value). Lowering needs no privilege; a
 * thread already at a lower priority (the process was started with `nice`) keeps it, as raising would need one.
 * Returns the threads changed (0: not a worker, or `nice` is 0), or throws when the system refuses.
 */
export function lowerWorkerPriority(role: Role, nice: number, tasksDir = '/proc/self/task'): number {
  if (role !== 'worker' || nice === 0) {
    return 0;
  }
  let threads: number[];
  try {
    threads = readdirSync(tasksDir).map(Number);
  } catch {
    threads = [0]; // no /proc (not Linux): the process as the system defines it
  }
  let changed = 0;
  for (const tid of threads) {
    try {
      if (getPriority(tid) < nice) {
        setPriority(tid, nice);
        changed++;
      }
    } catch (err) {
      if ((err as { info?: { code?: string } }).info?.code !== 'ESRCH') {
        throw err;
      }
      // the thread ended since the directory was read
    }
  }
  return changed;
}
