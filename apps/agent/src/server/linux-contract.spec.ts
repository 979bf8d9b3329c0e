import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

import { operationList } from '@tpfleet/board-api';

import type { BoardEvent, FixtureName } from '../../test/support/linux-board.js';
import { FakeFirmwareHost } from '../../test/support/firmware-server.js';
import {
  callLegacy,
  callPath,
  expectedLegacyVerdict,
  expectedPathVerdict,
  legacyVerdict,
  pathVerdict,
  SEQUENCE_ROWS,
} from '../../test/support/contract-table.js';
import { LinuxAgentHarness } from '../../test/support/harness.js';

/**
 * The contract table against the Linux backend: an agent whose board is a LinuxBoard over a copy of a fixture tree
 * (v2.4 and v2.5), with the controller's services and /etc/shadow accounts. Every GET row of the operation table is
 * called in both spellings and checked against its schema, so a new GET row is covered here automatically. A read
 * must not change the board: no file written, no command beyond the read-only tools.
 */
const GET_ROWS = operationList.filter((op) => op.method === 'GET' && !SEQUENCE_ROWS.includes(op.id));
/** Commands a read may run: chrony's tracking and U-Boot's environment. */
const READ_ONLY_COMMANDS = new Set(['chronyc tracking', 'fw_printenv -n nextboot']);

describe.each<FixtureName>(['v2.4', 'v2.5'])(
  'every GET row against the Linux backend on the %s fixture',
  (fixtureName) => {
    let h: LinuxAgentHarness;
    let host: FakeFirmwareHost;
    beforeAll(async () => {
      host = await FakeFirmwareHost.start([{ version: 'v2.31.0' }, { version: 'v2.29.0' }]);
      h = await LinuxAgentHarness.start(fixtureName, {
        services: { githubApiUrl: host.githubApi, updateRepo: 'excavador-turing/BMC-Firmware' },
        firmwareSources: { sources: [{ id: 'lab', kind: 'http', label: 'Lab mirror', location: host.httpSource }] },
      });
      await h.login();
    });
    afterAll(async () => {
      await h?.close();
      await host?.close();
    });

    it('answers from the fixture tree, not from a simulation', async () => {
      expect(h.backend.kind).toBe('linux');
      const usb = await h.request('GET', '/api/bmc/usb');
      expect((usb.json as Array<{ bus_type: string }>)[0]!.bus_type).toBe(
        fixtureName === 'v2.4' ? 'Single bus' : 'Usb hub',
      );
      const hostname = await h.request('GET', '/api/bmc/hostname');
      expect((hostname.json as { hostname: string }).hostname).toBe((await h.fixture.board.getHostname()).hostname);
    });

    it('covers the read operations of the table', () => {
      expect(GET_ROWS.map((op) => op.id)).toEqual(
        expect.arrayContaining(['getAbout', 'getPower', 'getFirmwareSlots', 'getAccess', 'getThermal']),
      );
    });

    it.each(GET_ROWS.map((op) => [op.id, op] as const))('%s', async (_id, op) => {
      const before = h.fixture.events.length;
      expect(pathVerdict(op, await callPath(h, op))).toEqual(expectedPathVerdict(op));
      if (op.legacy) {
        expect(legacyVerdict(op, await callLegacy(h, op))).toEqual(expectedLegacyVerdict(op));
      }
      await h.fixture.board.idle();

      const during = h.fixture.events.slice(before);
      expect(
        during.filter((e): e is Extract<BoardEvent, { kind: 'write' }> => e.kind === 'write').map((e) => e.path),
      ).toEqual([]);
      const commands = during
        .filter((e): e is Extract<BoardEvent, { kind: 'run' }> => e.kind === 'run')
        .map((e) => [e.cmd, ...e.args].join(' '));
      expect(commands.filter((c) => !READ_ONLY_COMMANDS.has(c))).toEqual([]);
      expect(h.logs.filter((l) => l['level'] === 'error')).toEqual([]);
    });

    it('backs up exactly the overlay upper dir: its files and contents, relative paths, nothing beside it', async () => {
      // A user's changes as the overlay records them, beside the fixture's own /etc/hostname.
      const upper = join(h.dir, 'mnt/overlay/upper');
      await mkdir(join(upper, 'root/.ssh'), { recursive: true });
      await writeFile(join(upper, 'root/.ssh/authorized_keys'), 'ssh-ed25519 AAAAC3Nz user@laptop\n');
      await mkdir(join(upper, 'etc/network'), { recursive: true });
      await writeFile(join(upper, 'etc/network/interfaces'), 'auto eth0\niface eth0 inet dhcp\n');

      const res = await fetch(`${h.base}/api/bmc/backup`, { headers: { Authorization: `Bearer ${h.token}` } });
      expect(res.status).toBe(200);
      expect(res.headers.get('content-disposition')).toMatch(/filename="tp2-backup-\d\d-\d\d-\d{4}\.tar\.gz"$/);
      const archive = Buffer.from(await res.arrayBuffer());

      // The names as stored (GNU tar would strip a leading / or refuse a .. on extraction, hiding either).
      const names = execFileSync('tar', ['-tzf', '-'], { input: archive, encoding: 'utf8' }).split('\n');
      const stored = names.filter((n) => n !== '');
      for (const name of stored) {
        expect(name).not.toMatch(/^\//);
        expect(name.split('/')).not.toContain('..');
      }
      const entries = stored.map((n) => n.replace(/^\.\//, '').replace(/\/$/, '')).filter((n) => n !== '' && n !== '.');
      expect(entries.sort()).toEqual((await treeOf(upper)).sort());
      expect(entries).not.toContain('rollback-version'); // beside upper in /mnt/overlay, not in it

      const out = await mkdtemp(join(tmpdir(), 'backup-'));
      try {
        execFileSync('tar', ['-xzf', '-', '-C', out], { input: archive });
        for (const file of await filesOf(upper)) {
          expect(await readFile(join(out, file), 'utf8')).toBe(await readFile(join(upper, file), 'utf8'));
        }
        expect(await readFile(join(out, 'root/.ssh/authorized_keys'), 'utf8')).toContain('user@laptop');
      } finally {
        await rm(out, { recursive: true, force: true });
      }
    });
  },
);

/** Every path under `dir` (directories and files), relative to it. */
async function treeOf(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.map((e) => relative(dir, join(e.parentPath, e.name)));
}

/** The regular files under `dir`, relative to it. */
async function filesOf(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries.filter((e) => e.isFile()).map((e) => relative(dir, join(e.parentPath, e.name)));
}
