// The built fleet manager writes one JSON object per line (LOG_FORMAT's default), with the request id on the lines of
// a request and the job id on the lines of a job, and Nest's route dump only at debug level (src/logging/logging.module.ts).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TEST_ADMIN_TOKEN, TEST_SECRET_KEY } from '../support/app.js';
import { createTestDatabase, testQueuePrefix, type TestDatabase } from '../support/database.js';
import { startFleetProcess, type FleetProcess } from '../support/fleet-process.js';

type Line = Record<string, unknown>;

/** Complete lines of the output the process handle keeps (its last 20,000 characters: the first may be cut). */
function lines(fleet: FleetProcess): string[] {
  const output = fleet.output();
  const all = output.split('\n').filter((l) => l.trim() !== '');
  return output.length >= 20_000 ? all.slice(1) : all;
}

async function waitFor<T>(fleet: FleetProcess, what: string, fn: () => T | undefined, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = fn();
    if (value !== undefined) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}; the output:\n${fleet.output().slice(-4000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('logs of the built fleet manager', () => {
  let db: TestDatabase;
  let fleet: FleetProcess;

  beforeAll(async () => {
    db = await createTestDatabase();
    fleet = await startFleetProcess('all', {
      DATABASE_URL: db.url,
      QUEUE_PREFIX: testQueuePrefix(),
      BOOTSTRAP_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      SECRET_KEY: TEST_SECRET_KEY,
      LOG_LEVEL: 'debug',
      // The alerts clock then queues an evaluation job every second: a job that logs.
      POLL_INTERVAL_SECONDS: '1',
    });
  }, 90_000);

  afterAll(async () => {
    await fleet?.stop();
    await db?.drop();
  });

  it('writes JSON lines: a request id on the request, a job id on the job, no route dump', async () => {
    const res = await fetch(`${fleet.url}/api/v1/boards?limit=1`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'x-request-id': 'logs-e2e-0001' },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('logs-e2e-0001');

    const parsed = (): Line[] => lines(fleet).map((l) => JSON.parse(l) as Line);
    const request = await waitFor(fleet, 'the request line', () =>
      parsed().find((l) => l.requestId === 'logs-e2e-0001'),
    );
    expect(request).toMatchObject({
      context: 'Http',
      msg: expect.stringMatching(/^GET \/api\/v1\/boards\?limit=1 200 in \d+ ms$/),
    });
    expect(JSON.stringify(request)).not.toContain(TEST_ADMIN_TOKEN);

    const job = await waitFor(fleet, 'a job line', () => parsed().find((l) => typeof l.jobId === 'string'));
    expect(job).toMatchObject({ context: 'JobsWorker', requestId: expect.any(String) });

    // Every line is JSON (or JSON.parse threw above); Nest's module and route narration is debug (20), never info.
    const narration = parsed().filter((l) =>
      ['RoutesResolver', 'RouterExplorer', 'InstanceLoader'].includes(String(l.context)),
    );
    expect(narration.filter((l) => l.level !== 20)).toEqual([]);
  }, 60_000);
});
