import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { SchedulerRegistry } from '@nestjs/schedule';
import { ConfigService, type Role } from '../config/config.service.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import { runsWorkers } from '../queue/queue.options.js';

/**
 * The one role rule for every clock: clocks run where the queue workers run (roles worker and all). A clock only
 * enqueues work for those workers, so an `--role api` process serves HTTP and nothing else. ClockModule applies it to
 * the `@Interval`/`@Cron` methods and Clocks.every() to the clocks whose period comes from the configuration.
 */
export function runsClocks(role: Role): boolean {
  return runsWorkers(role);
}

/**
 * How long a stop waits for the ticks already running: a tick is a claim and an enqueue (milliseconds), and the whole
 * stop must end within 10 s (src/jobs/queue-settings.ts gives running jobs 4 s of that).
 */
export const CLOCK_DRAIN_MS = 3000;

/**
 * Clocks whose period is only known at boot (from the configuration), registered in @nestjs/schedule's
 * SchedulerRegistry under a name, so they are listed, replaced and stopped like the decorated ones.
 */
@Injectable()
export class Clocks implements OnModuleDestroy {
  private readonly logger = new Logger(Clocks.name);
  private readonly enabled: boolean;
  /** Ticks running now (settled promises): a stop waits for them before the queues and the database close. */
  private readonly running = new Set<Promise<void>>();

  constructor(
    private readonly registry: SchedulerRegistry,
    config: ConfigService,
  ) {
    this.enabled = runsClocks(config.role);
  }

  /**
   * Runs `tick` every `ms` under `name` (replacing a clock of that name), in the roles that run clocks; with
   * `everyRole`, in every process (housekeeping of the process itself, such as src/prisma/prisma.service.ts's, never
   * work for the fleet). A failing tick is logged (one that repeats, e.g. while the database is away, at most once a
   * minute) and the clock keeps going.
   */
  every(name: string, ms: number, tick: () => Promise<unknown>, options: { everyRole?: boolean } = {}): void {
    if (!this.enabled && !options.everyRole) {
      return;
    }
    this.stop(name);
    const failures = new ThrottledLog(this.logger, `clock ${name}`);
    const handle = setInterval(() => {
      this.track(tick).then(
        () => failures.ok(),
        (err: unknown) => failures.fail(err),
      );
    }, ms);
    handle.unref();
    this.registry.addInterval(name, handle);
  }

  /**
   * Runs one tick so that a stop waits for it. Clocks.every() ticks are tracked already; an `@Interval` method wraps
   * its work in it. Without this a tick running at SIGTERM met the queues and the pool closing under it and logged
   * an ERROR (`polling tick failed: Connection is closed.`).
   */
  track<T>(tick: () => Promise<T>): Promise<T> {
    const run = tick();
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.running.add(settled);
    void settled.then(() => this.running.delete(settled));
    return run;
  }

  stop(name: string): void {
    if (this.registry.doesExist('interval', name)) {
      this.registry.deleteInterval(name); // clears the timer too
    }
  }

  /**
   * Stops every clock, decorated ones included, and waits (at most CLOCK_DRAIN_MS) for the ticks already running.
   * The queues and the database pool close after every module's onModuleDestroy (in onApplicationShutdown, see
   * src/jobs/jobs.service.ts and src/prisma/prisma.service.ts), so a tick finishes against open connections.
   * (@nestjs/schedule itself would only stop the clocks in beforeApplicationShutdown.)
   */
  async onModuleDestroy(): Promise<void> {
    for (const name of this.registry.getIntervals()) {
      this.registry.deleteInterval(name);
    }
    for (const name of this.registry.getCronJobs().keys()) {
      this.registry.deleteCronJob(name);
    }
    if (this.running.size === 0) {
      return;
    }
    const drained = Promise.all(this.running).then(() => 'drained' as const);
    if ((await Promise.race([drained, sleep(CLOCK_DRAIN_MS, 'timeout' as const, { ref: false })])) === 'timeout') {
      this.logger.warn(`stopping: ${this.running.size} clock ticks still running after ${CLOCK_DRAIN_MS} ms`);
    }
  }
}
