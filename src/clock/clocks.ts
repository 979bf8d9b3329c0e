import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { ConfigService, type Role } from '../config/config.service.js';
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
 * Clocks whose period is only known at boot (from the configuration), registered in @nestjs/schedule's
 * SchedulerRegistry under a name, so they are listed, replaced and stopped like the decorated ones.
 */
@Injectable()
export class Clocks implements OnModuleDestroy {
  private readonly logger = new Logger(Clocks.name);
  private readonly enabled: boolean;

  constructor(
    private readonly registry: SchedulerRegistry,
    config: ConfigService,
  ) {
    this.enabled = runsClocks(config.role);
  }

  /**
   * Runs `tick` every `ms` under `name` (replacing a clock of that name), in the roles that run clocks. A failing tick
   * is logged and the clock keeps going.
   */
  every(name: string, ms: number, tick: () => Promise<unknown>): void {
    if (!this.enabled) {
      return;
    }
    this.stop(name);
    const handle = setInterval(() => {
      tick().catch((err: unknown) =>
        this.logger.error(`clock ${name}: ${err instanceof Error ? err.message : String(err)}`),
      );
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
   * Stops every clock, decorated ones included, before the other modules close their queues and connections
   * (@nestjs/schedule itself would only stop them in beforeApplicationShutdown, after those are gone).
   */
  onModuleDestroy(): void {
    for (const name of this.registry.getIntervals()) {
      this.registry.deleteInterval(name);
    }
    for (const name of this.registry.getCronJobs().keys()) {
      this.registry.deleteCronJob(name);
    }
  }
}
