import { operationList, type Operation } from '@tpfleet/board-api';

import { handlers, PENDING_OPERATIONS } from '../handlers/registry.js';
import { AgentHarness, type Answer } from '../testing/harness.js';

/**
 * Contract tests generated from the operation table: every row is called in both spellings and its answer is checked
 * against the row's response schema (the server also validates, so drift shows up as a 500 as well). A new row is
 * covered automatically; a row without a handler fails unless it is listed as pending for issue 4.
 *
 * Sample parameters for rows that need some. `node` is given 1-based and converted per spelling.
 */
const SAMPLES: Record<string, Record<string, string | number>> = {
  postNodeToMsd: { node: 2 },
  postPower: { node1: '1', node3: '1' },
  postReset: { node: 1 },
  postUsb: { node: 3, mode: '5' },
  postUsbBoot: { node: 4 },
  postHostname: { name: 'rack-a-board-7' },
  postNtp: { servers: 'time.example.org,10.0.0.1' },
  postCooling: { device: 'system fan', speed: '3' },
};

function wireParams(op: Operation, spelling: 'path' | 'legacy'): Record<string, string> {
  const sample = SAMPLES[op.id] ?? {};
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(sample)) {
    out[key] = key === 'node' ? String(Number(value) - (spelling === 'legacy' ? 1 : 0)) : String(value);
  }
  return out;
}

async function callPath(h: AgentHarness, op: Operation): Promise<Answer> {
  const params = wireParams(op, 'path');
  if (op.method === 'GET') return h.request('GET', `/api/bmc${op.path}?${new URLSearchParams(params)}`);
  return h.request(op.method, `/api/bmc${op.path}`, Object.keys(params).length ? { body: params } : {});
}

async function callLegacy(h: AgentHarness, op: Operation): Promise<Answer> {
  const query = new URLSearchParams({ opt: op.legacy!.opt, type: op.legacy!.type, ...wireParams(op, 'legacy') });
  return h.request('GET', `/api/bmc?${query}`);
}

function expectPathAnswer(op: Operation, answer: Answer): void {
  if (op.response === null) {
    expect({ status: answer.status, text: answer.text }).toEqual({ status: op.successStatus ?? 204, text: '' });
  } else {
    expect(answer.status).toBe(op.successStatus ?? 200);
    expect(answer.headers.get('content-type')).toBe('application/json');
    const parsed = op.response.safeParse(answer.json);
    expect(parsed.error?.issues ?? []).toEqual([]);
  }
}

function expectLegacyAnswer(op: Operation, answer: Answer): void {
  expect(answer.status).toBe(200);
  const result = (answer.json as { response: [{ result: unknown }] }).response[0].result;
  if (op.response === null) expect(result).toBe('ok');
  else expect(op.response.safeParse(result).error?.issues ?? []).toEqual([]);
}

const pending = new Set<string>(PENDING_OPERATIONS);

describe('every row of the operation table', () => {
  let h: AgentHarness;
  beforeAll(async () => {
    h = await AgentHarness.start();
    await h.login();
  });
  afterAll(() => h.close());

  it.each(operationList.map((op) => [op.id, op] as const))('%s', async (_id, op) => {
    if (pending.has(op.id)) {
      const answer = await callPath(h, op);
      expect(answer.status).toBe(501);
      expect(answer.json).toEqual({ type: 'about:blank', title: 'Not Implemented', status: 501, detail: 'not implemented yet' });
      if (op.legacy) {
        const legacy = await callLegacy(h, op);
        expect(legacy.status).toBe(501);
        expect(legacy.json).toEqual({ response: [{ result: 'not implemented yet' }] });
      }
      return;
    }
    // A row that is neither implemented nor pending is a gap, not something to skip.
    expect(Object.keys(handlers)).toContain(op.id);

    expectPathAnswer(op, await callPath(h, op));
    await h.settle(); // reboot and reload take the board away briefly and forget sessions
    if (op.legacy) {
      expectLegacyAnswer(op, await callLegacy(h, op));
      await h.settle();
    }
    expect(h.logs.filter((l) => l['level'] === 'error')).toEqual([]);
  });

  it('answers JSON with keys sorted alphabetically, as the daemon does', async () => {
    const answer = await h.request('GET', '/api/bmc/about');
    const keys = Object.keys(answer.json as object);
    expect(keys).toEqual([...keys].sort());
    expect(answer.text.indexOf('"api"')).toBeLessThan(answer.text.indexOf('"version"'));
  });
});
