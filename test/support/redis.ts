// Tests that need a Redis server. Without one they are skipped, and the skip says why: the describe block's name
// carries the reason, jest counts its tests as skipped, and scripts/test.mjs lists them at the end.
import { describe } from '@jest/globals';
import { testEnv } from './env.js';

export const REDIS_SKIP_MARK = 'skipped: needs Redis';

export interface RedisRequirement {
  /** The Redis URL; only read it inside `describe`, where it is never null. */
  url: string;
  describe(name: string, fn: () => void): void;
}

export function requireRedis(): RedisRequirement {
  const reason = testEnv.redisUrl === null ? (testEnv.redisUnavailableReason ?? 'no Redis') : null;
  return {
    url: testEnv.redisUrl ?? '',
    describe(name, fn) {
      if (reason === null) {
        describe(name, fn);
      } else {
        describe.skip(`${name} [${REDIS_SKIP_MARK}: ${reason}]`, fn);
      }
    },
  };
}
