import type { Logger } from '@nestjs/common';

/**
 * Logs a failure that repeats while its cause lasts (a clock tick every second while the database is down) the
 * first time, then at most once per `everyMs` with how often it happened meanwhile; `ok()` logs the recovery. Without
 * it an outage filled the log with the same line many times a second.
 */
export class ThrottledLog {
  private suppressed = 0;
  private lastAt = 0;
  private failing = false;

  constructor(
    private readonly logger: Logger,
    private readonly what: string,
    private readonly level: 'error' | 'warn' = 'error',
    private readonly everyMs = 60_000,
  ) {}

  fail(err: unknown): void {
    const message =
      typeof err === 'object' && err !== null && typeof (err as Error).message === 'string'
        ? (err as Error).message
        : String(err);
    const now = Date.now();
    if (this.failing && now - this.lastAt < this.everyMs) {
      this.suppressed++;
      return;
    }
    const repeats = this.suppressed ? ` (failed ${this.suppressed} more times since the last report)` : '';
    this.logger[this.level](`${this.what} failed: ${message}${repeats}`);
    this.failing = true;
    this.lastAt = now;
    this.suppressed = 0;
  }

  ok(): void {
    if (this.failing) {
      this.logger.log(`${this.what} works again`);
      this.failing = false;
      this.suppressed = 0;
    }
  }
}
