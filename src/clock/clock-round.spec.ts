import { describe, expect, it } from '@jest/globals';
import { Logger } from '@nestjs/common';
import { ClockRound, RoundClock } from './clock-round.js';

describe('a clock round', () => {
  const logger = new Logger('test');
  logger.error = () => {};
  logger.log = () => {};

  it('never runs two rounds at once: a tick during a slow round is a no-op', async () => {
    const round = new ClockRound(logger, 'test');
    let release!: () => void;
    const slow = round.run(() => new Promise<number>((r) => (release = () => r(1))), 0);
    expect(await round.run(async () => 2, 0)).toBe(0);
    release();
    expect(await slow).toBe(1);
    expect(await round.run(async () => 3, 0)).toBe(3);
  });

  it('skips rounds while stopped, except a forced one', async () => {
    const round = new ClockRound(logger, 'test');
    round.enabled = false;
    expect(await round.run(async () => 1, 0)).toBe(0);
    expect(await round.run(async () => 1, 0, true)).toBe(1);
  });

  it('answers a failed round with the fallback, logs it, and runs the next one', async () => {
    const errors: string[] = [];
    const recording = new Logger('test');
    recording.error = (m: string) => void errors.push(m);
    recording.log = () => {};
    const round = new ClockRound(recording, 'x');
    expect(
      await round.run(async () => {
        throw new Error('database away');
      }, -1),
    ).toBe(-1);
    expect(errors).toEqual(['x failed: database away']);
    expect(await round.run(async () => 5, -1)).toBe(5);
  });

  it('stops and starts every round of a clock through its one enabled flag', async () => {
    class TwoRounds extends RoundClock {
      readonly a = new ClockRound(logger, 'a');
      readonly b = new ClockRound(logger, 'b');
      protected readonly rounds = [this.a, this.b];
    }
    const clock = new TwoRounds();
    clock.enabled = false;
    expect(clock.enabled).toBe(false);
    expect([await clock.a.run(async () => 1, 0), await clock.b.run(async () => 1, 0)]).toEqual([0, 0]);
    clock.enabled = true;
    expect([await clock.a.run(async () => 1, 0), await clock.b.run(async () => 1, 0)]).toEqual([1, 1]);
  });
});
