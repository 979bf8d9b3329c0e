import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { RootFs } from './root-fs.js';
import type { CommandResult, CommandRunner, RunOptions } from './runner.js';
import { HttpClient } from '../../firmware/http-client.js';
import { Installer } from '../../firmware/installer.js';
import { LinuxSlots } from './firmware-slots.js';
import { SourcesStore } from '../../firmware/sources-store.js';
import { FakeFirmwareHost } from '../../../test/support/firmware-server.js';

/** Records argument vectors and answers from a script, as the Linux backend's fixture tests do. */
class ScriptedRunner implements CommandRunner {
  readonly calls: { cmd: string; args: readonly string[] }[] = [];
  nextboot = '';
  osupdate: CommandResult = { code: 0, stdout: '', stderr: '' };
  async run(cmd: string, args: readonly string[], _options: RunOptions): Promise<CommandResult> {
    this.calls.push({ cmd, args });
    if (cmd === 'fw_printenv') {
      return { code: 0, stdout: `${this.nextboot}\n`, stderr: '' };
    }
    if (cmd === 'fw_setenv') {
      this.nextboot = args[1] ?? '';
      return { code: 0, stdout: '', stderr: '' };
    }
    if (cmd === '/sbin/osupdate') {
      if (this.osupdate.code === 0) {
        this.nextboot = 'ubi0:rootfs_new';
      }
      return this.osupdate;
    }
    return { code: 127, stdout: '', stderr: `${cmd}: not found` };
  }
}

describe('Linux A/B slots driver (through the backend runner)', () => {
  let root: string;
  let runner: ScriptedRunner;
  let slots: LinuxSlots;
  let host: FakeFirmwareHost;
  let http: HttpClient;
  let installer: Installer;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'linux-slots-'));
    await mkdir(join(root, 'mnt/overlay'), { recursive: true });
    await mkdir(join(root, 'proc'), { recursive: true });
    await writeFile(join(root, 'proc/mounts'), 'ubi0:rootfs / ubifs ro 0 0\n/dev/ubi0_5 /mnt/overlay ubifs rw 0 0\n');
    runner = new ScriptedRunner();
    const fs = new RootFs(root);
    slots = new LinuxSlots({ fs, runner });
    host = await FakeFirmwareHost.start([{ version: 'v2.31.0' }]);
    http = new HttpClient();
    const sources = new SourcesStore(fs.path('/mnt/overlay'));
    await sources.replace({ sources: [{ id: 'lab', kind: 'http', label: 'Lab', location: host.httpSource }] });
    installer = new Installer({
      sources,
      slots,
      http,
      readers: { http, githubApiUrl: host.githubApi, boardPath: (p) => fs.path(p) },
      running: async () => 'v2.30.0',
      now: () => Date.parse('2026-09-12T10:00:00Z'),
    });
  });
  afterEach(async () => {
    await http.close();
    await host.close();
    await rm(root, { recursive: true, force: true });
  });

  it('stages through /sbin/osupdate on the overlay (a real mount) and writes the staged note', async () => {
    expect(await installer.install({ source: 'lab', version: 'v2.31.0', force: false, allowDowngrade: false })).toEqual(
      {
        source: 'lab',
        staged: 'v2.31.0',
      },
    );
    const osupdate = runner.calls.find((c) => c.cmd === '/sbin/osupdate')!;
    expect(osupdate.args).toEqual([join(root, 'mnt/overlay/tpi-selfupdate/tp2-bmc-firmware-ota-v2.31.0.tpu')]);
    const note = await readFile(join(root, 'mnt/overlay/staged-firmware'), 'utf8');
    expect(note).toBe(
      'VERSION=v2.31.0\n' +
        `SHA256=${FakeFirmwareHost.sha256(FakeFirmwareHost.image('v2.31.0'))}\n` +
        'STAGED_AT=2026-09-12T10:00:00Z\n' +
        `SIZE_BYTES=${FakeFirmwareHost.image('v2.31.0').length}\n` +
        'SOURCE=tpi-selfupdate\nREPLACES=v2.30.0\n',
    );
    expect(await slots.nextboot()).toEqual({ update_staged: true, nextboot: 'ubi0:rootfs_new' });
  });

  it("quotes osupdate's last stderr line when it fails, and leaves no note", async () => {
    runner.osupdate = {
      code: 1,
      stdout: '',
      stderr: 'writing rootfs_new\nosupdate: ubiupdatevol failed: No space left on device\n',
    };
    await expect(
      installer.install({ source: 'lab', version: 'v2.31.0', force: false, allowDowngrade: false }),
    ).rejects.toMatchObject({
      status: 400,
      message: 'osupdate: ubiupdatevol failed: No space left on device',
    });
    await expect(readFile(join(root, 'mnt/overlay/staged-firmware'))).rejects.toThrow();
  });

  it('cancels a staging with fw_setenv nextboot (no value) when forced to replace it', async () => {
    runner.nextboot = 'ubi0:rootfs_new';
    await installer.install({ source: 'lab', version: 'v2.31.0', force: true, allowDowngrade: false });
    const setenv = runner.calls.filter((c) => c.cmd === 'fw_setenv').map((c) => c.args);
    expect(setenv).toEqual([['nextboot']]);
  });
});
