import { describe, expect, it } from '@jest/globals';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Debug } from '@prisma/client/runtime/client';
import { forgetDebugHistory } from './debug-history.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;

describe('forgetDebugHistory', () => {
  it("releases what the Prisma runtime's debug calls were given (query plans), logging on or not", async () => {
    const logged = (() => {
      const plan = { rows: Array.from({ length: 1000 }, (_, i) => ({ param: i })) };
      Debug('prisma:client:test')('query plan created', plan);
      return new WeakRef(plan);
    })();
    gc();
    expect(logged.deref()).toBeDefined(); // held by the runtime's history

    // A WeakRef's target stays alive until the job that dereferenced it ends.
    await new Promise((r) => setImmediate(r));
    forgetDebugHistory();
    gc();
    expect(logged.deref()).toBeUndefined();
  });
});
