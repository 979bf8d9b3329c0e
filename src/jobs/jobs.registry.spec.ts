import { z } from 'zod';
import { defineJob } from './job-definition.js';
import { pairHandlers } from './jobs.registry.js';

const retry = { attempts: 3, backoff: { type: 'exponential' as const, delayMs: 1000 } };
const ping = defineJob({ name: 'ping', queue: 'actions', payload: z.object({ n: z.number() }), retry });
const pong = defineJob({ name: 'pong', queue: 'actions', payload: z.object({}), retry });
const handler = async () => undefined;

describe('pairHandlers', () => {
  it('pairs each catalogued job with its one handler', () => {
    const jobs = pairHandlers(
      [ping, pong],
      [
        { jobName: 'ping', owner: 'A.ping', handler },
        { jobName: 'pong', owner: 'A.pong', handler },
      ],
    );
    expect([...jobs.keys()].sort()).toEqual(['ping', 'pong']);
  });

  it('refuses to start when a catalogued job has no handler', () => {
    expect(() => pairHandlers([ping, pong], [{ jobName: 'ping', owner: 'A.ping', handler }])).toThrow(
      'job "pong" has no handler',
    );
  });

  it('refuses two handlers for one job and a handler for an unknown job', () => {
    expect(() =>
      pairHandlers(
        [ping],
        [
          { jobName: 'ping', owner: 'A.ping', handler },
          { jobName: 'ping', owner: 'B.ping', handler },
          { jobName: 'ghost', owner: 'C.ghost', handler },
        ],
      ),
    ).toThrow(/two handlers: A.ping and B.ping[\s\S]*C.ghost handles "ghost"/);
  });
});
