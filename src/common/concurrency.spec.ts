import { describe, expect, it } from '@jest/globals';
import { Limiter, mapLimit } from './concurrency.js';

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('concurrency', () => {
  it('mapLimit keeps at most `limit` calls in flight and returns results in input order', async () => {
    let inFlight = 0;
    let peak = 0;
    const out = await mapLimit([5, 1, 4, 2, 3, 0], 2, async (n) => {
      inFlight += 1;
      peak = Math.max(peak, inFlight);
      for (let i = 0; i < n; i++) {
        await tick();
      }
      inFlight -= 1;
      return n * 10;
    });
    expect(out).toEqual([50, 10, 40, 20, 30, 0]);
    expect(peak).toBe(2);
  });

  it('a Limiter is shared by its callers and starts waiting calls in arrival order', async () => {
    const limiter = new Limiter(1);
    const started: number[] = [];
    await Promise.all(
      [1, 2, 3].map((n) =>
        limiter.run(async () => {
          started.push(n);
          await tick();
        }),
      ),
    );
    expect(started).toEqual([1, 2, 3]);
  });

  it('a call run with `first` starts before the calls already waiting, after those running', async () => {
    const limiter = new Limiter(1);
    const started: string[] = [];
    const run = (name: string, first?: boolean) =>
      limiter.run(
        async () => {
          started.push(name);
          await tick();
        },
        { first },
      );
    await Promise.all([run('running'), run('waiting-1'), run('waiting-2'), run('handed-off', true)]);
    expect(started).toEqual(['running', 'handed-off', 'waiting-1', 'waiting-2']);
  });
});
