import { envSchema } from '../config/config.schema.js';
import { firstCompactionDelayMs } from './polling.settings.js';

describe('thermal compaction schedule', () => {
  it('compacts a fresh fleet manager within a minute of start with the default interval', () => {
    const interval = envSchema.shape.THERMAL_COMPACT_INTERVAL_SECONDS.parse(undefined);
    expect(interval).toBe(300);
    expect(firstCompactionDelayMs(interval)).toBe(60_000);
  });

  it('never waits longer than the interval itself for the first run', () => {
    expect(firstCompactionDelayMs(2)).toBe(2000);
  });
});
