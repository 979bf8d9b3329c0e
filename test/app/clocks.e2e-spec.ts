// Every clock of the fleet manager is registered with @nestjs/schedule and follows one role rule
// (src/clock/clocks.ts): they run in the worker and all roles, none in the api role. The one exception is the
// process's own housekeeping (src/prisma/prisma.service.ts empties Prisma's debug-argument history), in every role.
import { afterAll, describe, expect, it } from '@jest/globals';
import { SchedulerRegistry } from '@nestjs/schedule';
import { startTestApp, type TestApp } from '../support/app.js';

const CLOCKS = ['alerts-evaluate', 'alerts-flush', 'config-backups', 'polling', 'rollout-driver'];
const HOUSEKEEPING = ['prisma-forget-debug-args'];

describe('clocks by role', () => {
  const apps: TestApp[] = [];
  afterAll(async () => {
    for (const app of apps) {
      await app.close();
    }
  });

  it('role all runs the polling, alerts, backup and rollout clocks', async () => {
    const app = await startTestApp();
    apps.push(app);
    expect(app.app.get(SchedulerRegistry).getIntervals().sort()).toEqual([...CLOCKS, ...HOUSEKEEPING].sort());
  });

  it('role api runs none of them (only the process housekeeping)', async () => {
    const app = await startTestApp({ env: { ROLE: 'api' } });
    apps.push(app);
    expect(app.app.get(SchedulerRegistry).getIntervals()).toEqual(HOUSEKEEPING);
  });
});
