import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { ZCatalogSchema, ZFirmwareSlotsSchema } from '@tpfleet/board-api';

import { createSimulatedBackend } from '../backend-factory.js';
import type { SimulatedBoard } from '../backend/simulated/simulated-board.js';
import { createSimulatedServices, type SimulatedServices } from '../services/board-services.js';
import { FakeFirmwareHost } from '../../test/support/firmware-server.js';

const accounts = { verify: async () => true, setPassword: async () => undefined };

describe('firmware services on a simulated board (service level)', () => {
  let dir: string;
  let board: SimulatedBoard;
  let services: SimulatedServices;
  let host: FakeFirmwareHost;

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fw-flow-'));
    host = await FakeFirmwareHost.start([
      { version: 'v2.31.0' },
      { version: 'v2.29.0' },
      { version: 'v2.32.0-rc.1', prerelease: true },
    ]);
    board = createSimulatedBackend(dir, { timeScale: 0.001, firmwareVersion: 'v2.30.0' });
    await board.start();
    services = await createSimulatedServices(board, dir, accounts, {
      githubApiUrl: host.githubApi,
      primeCatalogue: false,
      retryDelayMs: 1,
    });
    await services.firmware.sources.replace({
      sources: [
        { id: 'lab', kind: 'http', label: 'Lab mirror', location: host.httpSource },
        { id: 'gh', kind: 'github', label: 'GitHub mirror', location: 'excavador-turing/BMC-Firmware' },
        { id: 'card', kind: 'local', label: 'SD card', location: '/mnt/sdcard/firmware' },
        { id: 'off', kind: 'http', label: 'Disabled', location: 'http://127.0.0.1:1/never', enabled: false },
      ],
    });
  });

  afterEach(async () => {
    await services.stop();
    await board.stop();
    await host.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('lists candidates per enabled source with relation and trust, newest first', async () => {
    await mkdir(join(dir, 'sdcard/firmware'), { recursive: true });
    await writeFile(join(dir, 'sdcard/firmware/tp2-bmc-firmware-ota-v2.33.0.tpu'), 'x'.repeat(10));
    const catalog = await services.firmware.catalogue.get();
    expect(ZCatalogSchema.parse(catalog)).toEqual(catalog);
    expect(catalog.running).toBe('v2.30.0');
    expect(catalog.sources.map((s) => s.id)).toEqual(['lab', 'gh', 'card']);
    expect(catalog.sources[0]!.candidates).toEqual([
      { version: 'v2.32.0-rc.1', relation: 'newer', prerelease: true, trust: 'verified' },
      { version: 'v2.31.0', relation: 'newer', trust: 'verified' },
      { version: 'v2.29.0', relation: 'older', trust: 'verified' },
    ]);
    expect(catalog.sources[1]!.candidates.map((c) => [c.version, c.trust])).toEqual([
      ['v2.32.0-rc.1', 'verified'],
      ['v2.31.0', 'verified'],
      ['v2.29.0', 'verified'],
    ]);
    expect(catalog.sources[2]!.candidates).toEqual([
      {
        version: 'v2.33.0',
        relation: 'newer',
        trust: 'unverified',
        file: '/mnt/sdcard/firmware/tp2-bmc-firmware-ota-v2.33.0.tpu',
        size_bytes: 10,
      },
    ]);
    expect(catalog.refreshing).toBeUndefined();
  });

  it('reads an http source from its HTML listing when it publishes no index.json; plain http without sums is unverified', async () => {
    host.indexJson = false;
    host.releases = [{ version: 'v2.31.0', sums: false }];
    const catalog = await services.firmware.catalogue.get();
    expect(catalog.sources[0]!.candidates).toEqual([{ version: 'v2.31.0', relation: 'newer', trust: 'unverified' }]);
  });

  it.each(['../../../etc/evil', 'v2.29.0/../../x', '..', '.hidden', 'v1\\..\\x', 'v2.29.0?x=1', `v${'1'.repeat(64)}`])(
    'refuses the version %j with 400 before any source is asked or file written, even with allow_downgrade',
    async (version) => {
      const before = host.requests.length;
      await expect(
        services.firmware.installer.install({ source: 'lab', version, force: false, allowDowngrade: true }),
      ).rejects.toMatchObject({
        status: 400,
        message:
          '`version` is not a release tag: letters, digits, `.`, `_`, `+` and `-`, starting with a letter or digit, at most 64 characters',
      });
      expect(host.requests.length).toBe(before);
    },
  );

  it('still installs an older release tag with allow_downgrade', async () => {
    expect(
      await services.firmware.installer.install({
        source: 'lab',
        version: 'v2.29.0',
        force: false,
        allowDowngrade: true,
      }),
    ).toEqual({ source: 'lab', staged: 'v2.29.0' });
  });

  it('stages a verified image, promotes it at reboot, and shows the new version in slots and About', async () => {
    const result = await services.firmware.installer.install({
      source: 'lab',
      version: 'v2.31.0',
      force: false,
      allowDowngrade: false,
    });
    expect(result).toEqual({ source: 'lab', staged: 'v2.31.0' });
    const staged = await services.firmware.slots.slots();
    expect(ZFirmwareSlotsSchema.parse(staged)).toEqual(staged);
    expect(staged).toMatchObject({
      update_staged: true,
      nextboot: 'ubi0:rootfs_new',
      staged: {
        version: 'v2.31.0',
        source: 'tpi-selfupdate',
        sha256: FakeFirmwareHost.sha256(FakeFirmwareHost.image('v2.31.0')),
      },
    });
    expect(staged.promotion_history).toBeUndefined();

    await board.reboot({ fel: false });
    await services.lastBoot();
    const after = await services.firmware.slots.slots();
    expect(after).toMatchObject({
      running: { volume: 'rootfs', version: 'v2.31.0' },
      rollback: { volume: 'rootfs_prev', version: 'v2.30.0' },
      update_staged: false,
      nextboot: null,
      staged: null,
      promotion_history: { attempts: 1, promoted: 1, rolled_back: 0 },
    });
    expect(after.last_promotion?.message).toMatch(/^promoted/);
    expect((await board.about()).version).toBe('v2.31.0');
    const catalog = await services.firmware.catalogue.get();
    expect(catalog.running).toBe('v2.31.0');
  });

  it('rolls back when the promotion gate fails, and counts both outcomes', async () => {
    await services.firmware.installer.install({
      source: 'lab',
      version: 'v2.31.0',
      force: false,
      allowDowngrade: false,
    });
    await board.reboot({ fel: false });
    await services.lastBoot();
    services.slots.setGateFail(true);
    await services.firmware.installer.install({
      source: 'gh',
      version: 'v2.32.0-rc.1',
      force: false,
      allowDowngrade: false,
    });
    await board.reboot({ fel: false });
    await services.lastBoot();
    const slots = await services.firmware.slots.slots();
    expect(slots.promotion_history).toEqual({ attempts: 2, promoted: 1, rolled_back: 1 });
    expect(slots.running).toMatchObject({ volume: 'rootfs', version: 'v2.31.0' });
    expect(slots.last_promotion?.message).toBe('rolling back to the volume named rootfs by rebooting');
    expect(slots.update_staged).toBe(false);
    expect((await board.about()).version).toBe('v2.31.0');
  });

  it('never shows a reader the old image without a staged update or a rollback line while the gate decides', async () => {
    // What a fleet manager polling /firmware/slots after the reboot relies on: "old version, nothing staged, no
    // rollback line" means the board did not take the image, so the gate must never pass through that state.
    const notTaken: string[] = [];
    const watch = async (target: string, done: () => boolean): Promise<void> => {
      while (!done()) {
        const up = !board.isBooting(); // the server answers nobody while the controller reboots
        const s = await services.firmware.slots.slots();
        if (!up || board.isBooting()) {
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        const rolledBack = /rolling back/.test(s.last_promotion?.message ?? '');
        if (s.running?.version !== target && !s.update_staged && !rolledBack) {
          notTaken.push(`${s.running?.version} after "${s.last_promotion?.message}"`);
        }
      }
    };
    for (const [source, version, gateFails] of [
      ['lab', 'v2.31.0', false],
      ['gh', 'v2.32.0-rc.1', true],
    ] as const) {
      services.slots.setGateFail(gateFails);
      await services.firmware.installer.install({ source, version, force: false, allowDowngrade: false });
      let settled = false;
      const watching = watch(version, () => settled);
      await board.reboot({ fel: false });
      await services.lastBoot();
      settled = true;
      await watching;
    }
    expect(notTaken).toEqual([]);
  });

  it('refuses a corrupted image (checksum) and stages nothing', async () => {
    host.releases[0]!.corrupt = true;
    await expect(
      services.firmware.installer.install({ source: 'lab', version: 'v2.31.0', force: false, allowDowngrade: false }),
    ).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('checksum mismatch for tp2-bmc-firmware-ota-v2.31.0.tpu'),
    });
    const slots = await services.firmware.slots.slots();
    expect(slots).toMatchObject({ update_staged: false, staged: null });
  });

  it('resumes a broken transfer with Range', async () => {
    host.breakTransfers = 1;
    await services.firmware.installer.install({
      source: 'lab',
      version: 'v2.31.0',
      force: false,
      allowDowngrade: false,
    });
    const ranged = host.requests.filter((r) => r.path.endsWith('.tpu') && r.range);
    expect(ranged.length).toBe(1);
    expect((await services.firmware.slots.slots()).update_staged).toBe(true);
  });

  it('refuses a second identical install while the first runs, and runs it once', async () => {
    const request = { source: 'lab', version: 'v2.31.0', force: false, allowDowngrade: false };
    const first = services.firmware.installer.install(request);
    await expect(services.firmware.installer.install(request)).rejects.toMatchObject({ status: 409 });
    await first;
    expect(host.requests.filter((r) => r.path.endsWith('.tpu')).length).toBe(1);
  });
});
