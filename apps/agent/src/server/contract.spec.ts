import { operationList, type Operation } from '@tpfleet/board-api';

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FakeFirmwareHost } from '../firmware/test-firmware-server.js';
import { handlers, PENDING_OPERATIONS } from '../handlers/registry.js';
import { AgentHarness, type Answer } from '../testing/harness.js';
import { makeTestPki } from '../tls/test-pki.js';

/**
 * Contract tests generated from the operation table: every row is called in both spellings and its answer is checked
 * against the row's response schema (the server also validates, so drift shows up as a 500 as well). A new row is
 * covered automatically; a row without a handler fails (nothing is pending since issue 4).
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
  // Issue 4. A firmware host on 127.0.0.1 serves the `lab` source; force=1 lets the legacy call replace the staging.
  postFirmwareInstall: { source: 'lab', version: 'v2.31.0', force: '1' },
  postFirmwareSources: { sources: '' }, // filled in once the firmware host's address is known
  postConfig: { config: JSON.stringify({ format_version: 1, exported_at: '2026-09-12T10:00:00Z', exported_from: {}, nodes: [{ id: 2, name: 'db' }] }) },
  putAccessClientCa: { pem: '' }, // a CA made by openssl in beforeAll
  postAccessPassword: { username: 'root', current_password: 'turing', new_password: 'correct-horse-battery' },
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

describe('every row of the operation table', () => {
  let h: AgentHarness;
  let host: FakeFirmwareHost;
  let pkiDir: string;
  beforeAll(async () => {
    host = await FakeFirmwareHost.start([{ version: 'v2.31.0' }, { version: 'v2.29.0' }]);
    const sources = { sources: [{ id: 'lab', kind: 'http' as const, label: 'Lab mirror', location: host.httpSource }] };
    SAMPLES['postFirmwareSources'] = { sources: JSON.stringify(sources) };
    pkiDir = await mkdtemp(join(tmpdir(), 'contract-pki-'));
    SAMPLES['putAccessClientCa'] = { pem: (await makeTestPki(pkiDir)).caCert };
    h = await AgentHarness.start({
      firmwareVersion: 'v2.30.0',
      firmwareSources: sources,
      services: { githubApiUrl: host.githubApi, updateRepo: 'excavador-turing/BMC-Firmware' },
    });
    await h.login();
  });
  afterAll(async () => {
    await h.close();
    await host.close();
    await rm(pkiDir, { recursive: true, force: true });
  });

  it('leaves no operation pending', () => {
    expect(PENDING_OPERATIONS).toEqual([]);
    expect(operationList).toHaveLength(38);
  });

  it.each(operationList.map((op) => [op.id, op] as const))('%s', async (_id, op) => {
    // A row without a handler is a gap, not something to skip.
    expect(Object.keys(handlers)).toContain(op.id);

    expectPathAnswer(op, await callPath(h, op));
    if (op.id === 'postAccessPassword') h.password = String(SAMPLES[op.id]!['new_password']);
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
