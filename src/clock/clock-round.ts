import type { Logger } from '@nestjs/common';
import { ThrottledLog } from '../logging/throttled-log.js';

/**
 * The guard every clock's round runs under: never two rounds at once (a round slower than the period makes the next
 * tick a no-op), none while the clock is stopped (tests and the bench stop it and run rounds themselves, or force
 * one), and a failing round logged through ThrottledLog (once, then at most once a minute while it lasts) and
 * answered with `fallback` so the clock keeps going.
 */
export class ClockRound {
  private running = false;
  private readonly failures: ThrottledLog;
  /** False stops the rounds; a forced one still runs. */
  enabled = true;

  constructor(logger: Logger, what: string, level: 'error' | 'warn' = 'error') {
    this.failures = new ThrottledLog(logger, what, level);
  }

  async run<T>(round: () => Promise<T>, fallback: T, force = false): Promise<T> {
    if (this.running || (!this.enabled && !force)) {
      return fallback;
    }
    this.running = true;
    try {
      const result = await round();
      this.failures.ok();
      return result;
    } catch (err) {
      this.failures.fail(err);
      return fallback;
    } finally {
      this.running = false;
    }
  }
}

/**
 * A clock whose ticks run through ClockRounds (`rounds`): `enabled` stops or starts them all at once, so tests and
 * the bench stop a clock the same way whatever it is, and run its rounds themselves.
 */
export abstract class RoundClock {
  protected abstract readonly rounds: readonly ClockRound[];

  get enabled(): boolean {
    return this.rounds.every((round) => round.enabled);
  }

  set enabled(on: boolean) {
    for (const round of this.rounds) {
      round.enabled = on;
    }
  }
}
