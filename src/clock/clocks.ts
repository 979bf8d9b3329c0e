import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { setTimeout as sleep } from 'node:timers/promises';
import { ConfigService, type Role } from '../config/config.service.js';
import { ThrottledLog } from '../logging/throttled-log.js';
import { runsWorkers } from '../queue/queue.options.js';

/** How long the shutdown waits for running ticks (a tick is a few statements; a hung one must not block the stop). */
const TICK_GRACE_MS = 10_000;

/**
 * The one role rule for every clock: clocks run where the queue workers run (roles worker and all). A clock only
 * enqueues work for those workers, so an `--role api` process serves HTTP and nothing else. ClockModule applies it to
 * the `@Interval`/`@Cron` methods and Clocks.every() to the clocks whose period comes from the configuration.
 */
export function runsClocks(role: Role): boolean {
  return runsWorkers(role);
}

/**
 * Clocks whose period is only known at boot (from the configuration), registered in @nestjs/schedule's
 * SchedulerRegistry under a name, so they are listed, replaced and stopped like the decorated ones.
 */
@Injectable()
export class Clocks implements OnModuleDestroy {
  private readonly logger = new Logger(Clocks.name);
  private readonly enabled: boolean;
  /** Ticks still running, so the shutdown waits for them before the connections they use are closed. */
  private readonly running = new Set<Promise<unknown>>();

  constructor(
    private readonly registry: SchedulerRegistry,
    config: ConfigService,
  ) {
    this.enabled = runsClocks(config.role);
  }

  /**
   * Runs `tick` every `ms` under `name` (replacing a clock of that name), in the roles that run clocks. A failing tick
   * is logged (a failure that repeats, e.g. while the database is away, at most once a minute) and the clock goes on.
   * Prefer it to `@Interval`: the shutdown waits for its running ticks.
   */
  every(name: string, ms: number, tick: () => Promise<unknown>): void {
    if (!this.enabled) {
      return;
    }
    this.stop(name);
    const failures = new ThrottledLog(this.logger, `clock ${name}`);
    const handle = setInterval(() => {
      const run = tick().then(
        () => undefined,
        (err: unknown) => failures.fail(err),
      );
      this.running.add(run);
      void run.finally(() => this.running.delete(run));
    }, ms);
    handle.unref();
    this.registry.addInterval(name, handle);
  }

  stop(name: string): void {
    if (this.registry.doesExist('interval', name)) {
      this.registry.deleteInterval(name); // clears the timer too
    }
  }

  /**
   * Stops every clock, decorated ones included, and waits (a bounded time) for the ticks still running of those
   * started by every(). The queues and connections close later, in onApplicationShutdown: a tick that outlived them
   * reopened a pool (Prisma reconnects on demand, a new BullMQ queue) that nobody closed, so its connections were
   * still there after app.close(), and one terminated under a running query crashed the process.
   */
  async onModuleDestroy(): Promise<void> {
    for (const name of this.registry.getIntervals()) {
      this.registry.deleteInterval(name);
    }
    for (const name of this.registry.getCronJobs().keys()) {
      this.registry.deleteCronJob(name);
    }
    const timeout = sleep(TICK_GRACE_MS, 'timeout' as const, { ref: false });
    if ((await Promise.race([Promise.all(this.running).then(() => 'done' as const), timeout])) === 'timeout') {
      this.logger.warn(`stopping: ${this.running.size} clock ticks still running after ${TICK_GRACE_MS} ms`);
    }
  }
}
