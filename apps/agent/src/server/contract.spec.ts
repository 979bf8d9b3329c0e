import { operationList } from '@tpfleet/board-api';

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FakeFirmwareHost } from '../../test/support/firmware-server.js';
import { handlers, PENDING_OPERATIONS } from '../handlers/registry.js';
import {
  callLegacy,
  callPath,
  expectedLegacyVerdict,
  expectedPathVerdict,
  legacyVerdict,
  pathVerdict,
  SAMPLES,
  SEQUENCE_ROWS,
} from '../../test/support/contract-table.js';
import { AgentHarness } from '../../test/support/harness.js';
import { makeTestPki } from '../../test/support/pki.js';

/**
 * Contract tests generated from the operation table: every row is called in both spellings and its answer is checked
 * against the row's response schema (the server also validates, so drift shows up as a 500 as well). A new row is
 * covered automatically; a row without a handler fails (nothing is pending since issue 4). The same table runs
 * against the Linux backend on fixture trees for every GET row (linux-contract.spec.ts).
 */
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
    expect(operationList.filter((op) => !op.extension)).toHaveLength(38);
  });

  it('leaves to the client sequences only rows that need a running transfer', () => {
    for (const id of SEQUENCE_ROWS) {
      expect(Object.keys(handlers)).toContain(id);
    }
  });

  const TABLE_ROWS = operationList.filter((op) => !SEQUENCE_ROWS.includes(op.id));
  it.each(TABLE_ROWS.map((op) => [op.id, op] as const))('%s', async (_id, op) => {
    // A row without a handler is a gap, not something to skip.
    expect(Object.keys(handlers)).toContain(op.id);

    expect(pathVerdict(op, await callPath(h, op))).toEqual(expectedPathVerdict(op));
    if (op.id === 'postAccessPassword') {
      h.password = String(SAMPLES[op.id]!['new_password']);
    }
    await h.settle(); // reboot and reload take the board away briefly and forget sessions
    if (op.legacy) {
      expect(legacyVerdict(op, await callLegacy(h, op))).toEqual(expectedLegacyVerdict(op));
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
