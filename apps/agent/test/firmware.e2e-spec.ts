import { operationList } from '@tpfleet/board-api';

import { FakeFirmwareHost } from './support/firmware-server.js';
import { Rack } from '../src/rack/rack.js';
import { createSimulatedBackend } from '../src/backend-factory.js';
import { AgentHarness } from './support/harness.js';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The firmware flow end to end over HTTP: a simulated board, an http firmware source served on 127.0.0.1
 * (`<version>/tp2-bmc-firmware-ota-<v>.tpu` + SHA256SUMS), catalogue → install → reboot → promotion or rollback.
 */
describe('firmware flow over HTTP on a simulated board', () => {
  let host: FakeFirmwareHost;
  let h: AgentHarness;

  beforeEach(async () => {
    host = await FakeFirmwareHost.start([
      { version: 'v2.31.0' },
      { version: 'v2.30.0' },
      { version: 'v2.29.0' },
      { version: 'v2.32.0' },
    ]);
    h = await AgentHarness.start({
      firmwareVersion: 'v2.30.0',
      firmwareSources: { sources: [{ id: 'lab', kind: 'http', label: 'Lab mirror', location: host.httpSource }] },
      services: { githubApiUrl: host.githubApi },
    });
    await h.login();
  });
  afterEach(async () => {
    await h.close();
    await host.close();
  });

  const install = (params: Record<string, string>) => h.request('POST', '/api/bmc/firmware/install', { body: params });
  const slots = async () => (await h.request('GET', '/api/bmc/firmware/slots')).json as Record<string, unknown>;

  it('shows candidates with relation and trust, stages one, and promotes it at reboot', async () => {
    const catalog = await h.request('GET', '/api/bmc/firmware/available');
    expect(catalog.status).toBe(200);
    expect(catalog.json).toMatchObject({
      running: 'v2.30.0',
      sources: [
        {
          id: 'lab',
          kind: 'http',
          candidates: [
            { version: 'v2.32.0', relation: 'newer', trust: 'verified' },
            { version: 'v2.31.0', relation: 'newer', trust: 'verified' },
            { version: 'v2.30.0', relation: 'current', trust: 'verified' },
            { version: 'v2.29.0', relation: 'older', trust: 'verified' },
          ],
        },
      ],
    });

    const staged = await install({ source: 'lab', version: 'v2.31.0' });
    expect({ status: staged.status, json: staged.json }).toEqual({
      status: 200,
      json: { source: 'lab', staged: 'v2.31.0' },
    });
    expect(await slots()).toMatchObject({
      update_staged: true,
      nextboot: 'ubi0:rootfs_new',
      staged: { version: 'v2.31.0', source: 'tpi-selfupdate' },
      running: { volume: 'rootfs', version: 'v2.30.0' },
    });

    const reboot = await h.request('POST', '/api/bmc/reboot');
    expect(reboot.status).toBe(204);
    await expect(h.request('GET', '/api/bmc/about')).rejects.toThrow(); // off the network while it boots
    await h.settle();
    expect(await slots()).toMatchObject({
      running: { volume: 'rootfs', version: 'v2.31.0' },
      rollback: { volume: 'rootfs_prev', version: 'v2.30.0' },
      update_staged: false,
      staged: null,
      promotion_history: { attempts: 1, promoted: 1, rolled_back: 0 },
    });
    expect(((await h.request('GET', '/api/bmc/about')).json as { version: string }).version).toBe('v2.31.0');
    const after = (await h.request('GET', '/api/bmc/firmware/available')).json as {
      running: string;
      sources: { candidates: { version: string; relation: string }[] }[];
    };
    expect(after.running).toBe('v2.31.0');
    expect(after.sources[0]!.candidates.find((c) => c.version === 'v2.31.0')?.relation).toBe('current');
  });

  it('fails a corrupted image on its checksum and stages nothing', async () => {
    host.releases.find((r) => r.version === 'v2.31.0')!.corrupt = true;
    const answer = await install({ source: 'lab', version: 'v2.31.0' });
    expect(answer.status).toBe(400);
    expect((answer.json as { detail: string }).detail).toMatch(
      /^tpi-selfupdate: checksum mismatch for tp2-bmc-firmware-ota-v2\.31\.0\.tpu: /,
    );
    expect(await slots()).toMatchObject({ update_staged: false, nextboot: null, staged: null });
  });

  it('rolls back when the promotion gate fails (rack fault), and promotion_history counts both', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rack-fw-'));
    const rack = new Rack({
      boards: 2,
      stateDir: dir,
      password: 'turing',
      createBackend: (_i, stateDir) =>
        createSimulatedBackend(stateDir, { timeScale: 0.01, firmwareVersion: 'v2.30.0' }),
      services: { githubApiUrl: host.githubApi },
    });
    const base = `http://127.0.0.1:${await rack.listen(0, '127.0.0.1')}`;
    const auth = { Authorization: `Basic ${Buffer.from('root:turing').toString('base64')}` };
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { ...auth, ...(body ? { 'Content-Type': 'application/json' } : {}) },
        body: body ? JSON.stringify(body) : undefined,
      });
      const text = await res.text();
      return { status: res.status, json: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
    };
    const waitUp = async () => {
      for (let i = 0; i < 200; i++) {
        const ok = await fetch(`${base}/boards/1/api/bmc/about`, { headers: auth }).then(
          (r) => r.ok,
          () => false,
        );
        if (ok) {
          return;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error('board 1 did not come back');
    };
    try {
      expect(
        (
          await call('POST', '/boards/1/api/bmc/firmware/sources', {
            sources: [{ id: 'lab', kind: 'http', label: 'Lab', location: host.httpSource }],
          })
        ).status,
      ).toBe(200);
      expect(
        (await call('POST', '/boards/1/api/bmc/firmware/install', { source: 'lab', version: 'v2.31.0' })).status,
      ).toBe(200);
      expect((await call('POST', '/boards/1/api/bmc/reboot')).status).toBe(204);
      await new Promise((r) => setTimeout(r, 50));
      await waitUp();
      expect((await call('POST', '/rack/boards/1/faults', { gateFail: true })).status).toBe(200);
      expect(
        (await call('POST', '/boards/1/api/bmc/firmware/install', { source: 'lab', version: 'v2.32.0' })).status,
      ).toBe(200);
      expect((await call('POST', '/boards/1/api/bmc/reboot')).status).toBe(204);
      // The gate fails and the board reboots once more into the old image: wait for the verdict, then for the board.
      let verdict: Record<string, unknown> | undefined;
      for (let i = 0; i < 200 && !verdict; i++) {
        await new Promise((r) => setTimeout(r, 25));
        const seen = await call('GET', '/boards/1/api/bmc/firmware/slots').catch(() => undefined);
        const history = seen?.json?.['promotion_history'] as { rolled_back?: number } | undefined;
        if (history?.rolled_back === 1) {
          verdict = seen!.json;
        }
      }
      await waitUp();
      const answer = await call('GET', '/boards/1/api/bmc/firmware/slots');
      expect(answer.json).toMatchObject({
        running: { volume: 'rootfs', version: 'v2.31.0' },
        update_staged: false,
        promotion_history: { attempts: 2, promoted: 1, rolled_back: 1 },
        last_promotion: { message: 'rolling back to the volume named rootfs by rebooting' },
      });
      expect(((await call('GET', '/boards/1/api/bmc/about')).json as { version: string }).version).toBe('v2.31.0');
    } finally {
      await rack.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('accepts the sources document bare and wrapped, in both spellings', async () => {
    const doc = { sources: [{ id: 'lab', kind: 'http', label: 'Lab', location: host.httpSource, enabled: false }] };
    const bare = await h.request('POST', '/api/bmc/firmware/sources', { body: doc });
    expect({ status: bare.status, json: bare.json }).toEqual({ status: 200, json: doc });
    const wrapped = await h.request('POST', '/api/bmc/firmware/sources', { body: { sources: JSON.stringify(doc) } });
    expect(wrapped.json).toEqual(doc);
    const legacy = await h.request(
      'GET',
      `/api/bmc?${new URLSearchParams({ opt: 'set', type: 'firmware_sources', sources: JSON.stringify(doc) })}`,
    );
    expect(legacy.json).toEqual({ response: [{ result: doc }] });
    const catalog = (await h.request('GET', '/api/bmc/firmware/available?refresh=1')).json as { sources: unknown[] };
    expect(catalog.sources).toBeDefined();
  });

  it('answers the update check per channel', async () => {
    const answer = await h.request('GET', '/api/bmc/firmware/check');
    expect(answer.json).toMatchObject({
      stable: { channel: 'stable', running: 'v2.30.0', target: 'v2.31.0', update_available: true },
      edge: { channel: 'edge', target: 'v2.32.0', update_available: true },
      error: null,
    });
  });

  it('documents all 38 operations and the daemon extensions in the OpenAPI document', async () => {
    const doc = (await h.request('GET', '/api/bmc/openapi.json')).json as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const ids = Object.values(doc.paths).flatMap((methods) => Object.values(methods).map((m) => m.operationId));
    expect(ids.sort()).toEqual(operationList.map((op) => op.id).sort());
    expect(operationList.filter((op) => !op.extension)).toHaveLength(38);
  });
});
