import { Agent, request } from 'node:http';
import type { Socket } from 'node:net';

import { AgentHarness } from '../../test/support/harness.js';
import { KEEP_ALIVE_TIMEOUT_MS } from './server.js';

/** GET on `agent`'s pool; resolves with the answer's status, its Keep-Alive header and the socket it came on. */
function get(url: string, agent: Agent, token: string): Promise<{ status: number; keepAlive: string; socket: Socket }> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      { agent, headers: { accept: 'application/json', authorization: `Bearer ${token}` } },
      (res) => {
        res.resume();
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, keepAlive: String(res.headers['keep-alive']), socket: req.socket! }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('keep-alive: a fleet manager polling every 15 s reuses its connection', () => {
  let h: AgentHarness;
  let token: string;
  const connections: Socket[] = [];

  beforeAll(async () => {
    h = await AgentHarness.start();
    token = await h.login();
    h.agent.server.on('connection', (s: Socket) => connections.push(s));
  });
  afterAll(() => h.close());

  it('announces how long it keeps an idle connection, longer than a poll interval', async () => {
    const agent = new Agent({ keepAlive: true });
    try {
      const res = await get(`${h.base}/api/bmc/about`, agent, token);
      expect(res.keepAlive).toBe(`timeout=${KEEP_ALIVE_TIMEOUT_MS / 1000}`);
      expect(KEEP_ALIVE_TIMEOUT_MS).toBeGreaterThan(60_000);
    } finally {
      agent.destroy();
    }
  });

  it('answers the next request on the same connection after it sat idle past Node’s 5 s default', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      const before = connections.length;
      const first = await get(`${h.base}/api/bmc/about`, agent, token);
      // Node's own default (5 s, plus its 1 s grace on newer versions) would have closed the socket by now.
      await new Promise((r) => setTimeout(r, 7_000));
      const second = await get(`${h.base}/api/bmc/about`, agent, token);
      expect([first.status, second.status]).toEqual([200, 200]);
      expect(second.socket).toBe(first.socket);
      expect(connections.length - before).toBe(1);
    } finally {
      agent.destroy();
    }
  }, 20_000);
});
