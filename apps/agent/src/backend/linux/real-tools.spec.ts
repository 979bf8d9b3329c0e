import { spawn, spawnSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { BoardError } from '../backend.js';
import { LinuxBoard } from './linux-board.js';
import { CommandRunError, ExecFileRunner } from './runner.js';
import { copyFixtureTree } from '../../../test/support/linux-board.js';

/**
 * The backend against the real Debian tools where this machine has them (packages u-boot-tools, chrony). Each block
 * skips, with the reason in its name, when a binary is absent.
 */

const has = (binary: string) => spawnSync('sh', ['-c', `command -v ${binary}`]).status === 0;
const runner = new ExecFileRunner();

describe('ExecFileRunner (no shell, timeouts, stdin)', () => {
  const node = process.execPath;

  it('returns exit code, stdout and stderr; arguments are never re-parsed by a shell', async () => {
    const result = await runner.run(
      node,
      [
        '-e',
        'process.stdout.write(process.argv[1]); process.stderr.write("err"); process.exit(3)',
        '$(echo hi); rm -rf /',
      ],
      { timeoutMs: 10_000 },
    );
    expect(result).toEqual({
      code: 3,
      stdout: '$(echo hi); rm -rf /',
      stderr: 'err',
    });
  });

  it('feeds input to stdin', async () => {
    const result = await runner.run(node, ['-e', 'process.stdin.pipe(process.stdout)'], {
      timeoutMs: 10_000,
      input: 'abc',
    });
    expect(result.stdout).toBe('abc');
  });

  it('rejects a missing binary (spawn) and a hung one (timeout)', async () => {
    await expect(runner.run('/nonexistent/tool', [], { timeoutMs: 1000 })).rejects.toMatchObject({ reason: 'spawn' });
    await expect(
      runner.run(node, ['-e', 'setTimeout(() => {}, 10000)'], {
        timeoutMs: 200,
      }),
    ).rejects.toBeInstanceOf(CommandRunError);
  });
});

async function boardOn(root: string, extra: Partial<ConstructorParameters<typeof LinuxBoard>[0]> = {}) {
  const board = new LinuxBoard({
    root,
    runner,
    // Never the real gpioset here: on a machine with GPIO chips it would drive the host's lines.
    gpio: { set: async () => undefined, read: async () => null },
    statfs: async () => ({ blocks: 1, bfree: 1, bsize: 4096 }),
    log: () => undefined,
    holdCheckMs: 0,
    ...extra,
  });
  return board;
}

const fwTools = has('fw_printenv') && has('fw_setenv') && has('mkenvimage');
(fwTools ? describe : describe.skip)(
  `U-Boot environment with fw_printenv/fw_setenv on a file-backed env${fwTools ? '' : ' (skipped: install u-boot-tools)'}`,
  () => {
    let dir: string;
    let config: string;
    beforeEach(async () => {
      dir = await mkdtemp(join(tmpdir(), 'ubootenv-'));
      await writeFile(join(dir, 'env.txt'), 'bootdelay=1\nbootcmd=run ubiboot\n');
      const made = spawnSync('mkenvimage', ['-s', '0x10000', '-o', join(dir, 'env.bin'), join(dir, 'env.txt')]);
      expect(made.status).toBe(0);
      config = join(dir, 'fw_env.config');
      await writeFile(config, `${join(dir, 'env.bin')} 0x0000 0x10000\n`);
    });
    afterEach(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it('nextboot: unset → false; fw_setenv stages it → true with the raw value; deleting it → false', async () => {
      const board = await boardOn(dir, { fwEnvArgs: ['-c', config] });
      expect(await board.getNextboot()).toEqual({
        update_staged: false,
        nextboot: null,
      });
      await board.setNextboot('ubi0:rootfs_new');
      expect(await board.getNextboot()).toEqual({
        update_staged: true,
        nextboot: 'ubi0:rootfs_new',
      });
      const printed = spawnSync('fw_printenv', ['-c', config], {
        encoding: 'utf8',
      });
      expect(printed.stdout).toContain('nextboot=ubi0:rootfs_new');
      expect(printed.stdout).toContain('bootcmd=run ubiboot');
      await board.setNextboot(null);
      expect(await board.getNextboot()).toEqual({
        update_staged: false,
        nextboot: null,
      });
    });

    it('a broken configuration reads as unknown (null) and a write is refused with the tool’s message', async () => {
      const board = await boardOn(dir, {
        fwEnvArgs: ['-c', join(dir, 'missing.config')],
      });
      expect(await board.getNextboot()).toEqual({
        update_staged: null,
        nextboot: null,
      });
      await expect(board.setNextboot('x')).rejects.toBeInstanceOf(BoardError);
    });
  },
);

/** Start chronyd with its own config and command socket, never touching the clock (-x). Null when it cannot run. */
async function startChronyd(dir: string): Promise<{ socket: string; stop: () => Promise<void> } | null> {
  if (!has('chronyd') || !has('chronyc')) {
    return null;
  }
  // chronyd refuses a socket directory that others can write or read.
  await chmod(dir, 0o700);
  const socket = join(dir, 'chronyd.sock');
  const sourcedir = join(dir, 'root/mnt/overlay/chrony.d');
  await mkdir(sourcedir, { recursive: true });
  await writeFile(
    join(dir, 'chrony.conf'),
    `pidfile ${join(dir, 'chronyd.pid')}\nbindcmdaddress ${socket}\ncmdport 0\nport 0\nsourcedir ${sourcedir}\n`,
  );
  const asUser = userInfo().uid === 0 ? ['-u', 'root'] : ['-U'];
  const child = spawn('chronyd', ['-x', '-d', '-f', join(dir, 'chrony.conf'), ...asUser], { stdio: 'ignore' });
  const stop = async () => {
    if (child.exitCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
  };
  for (let i = 0; i < 50; i++) {
    if (child.exitCode !== null) {
      return null;
    }
    if (await stat(socket).catch(() => null)) {
      return { socket, stop };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await stop();
  return null;
}

const chronyDir = await mkdtemp(join(tmpdir(), 'chronyd-'));
const chrony = await startChronyd(chronyDir);
afterAll(async () => {
  await chrony?.stop();
  await rm(chronyDir, { recursive: true, force: true });
});

(chrony ? describe : describe.skip)(
  `chrony: chronyc against a private chronyd -x${chrony ? '' : ' (skipped: chronyd/chronyc absent or chronyd cannot run here)'}`,
  () => {
    it('tracking of an unsynchronised daemon, then POST /ntp reloads the sources chronyd now uses', async () => {
      const root = join(chronyDir, 'root');
      await copyFixtureTree('v2.4', root);
      const board = await boardOn(root, {
        chronycArgs: ['-h', chrony!.socket],
      });
      await board.start();
      expect((await board.health()).clock).toMatchObject({
        synchronised: false,
        source: null,
        stratum: 0,
        offset_seconds: 0,
        measured_by: 'chronyc tracking',
      });
      await board.setNtp(['192.0.2.1', '192.0.2.2']);
      const sources = spawnSync('chronyc', ['-h', chrony!.socket, '-n', 'sources'], { encoding: 'utf8' });
      expect(sources.stdout).toContain('192.0.2.1');
      expect(sources.stdout).toContain('192.0.2.2');
      expect(await readFile(join(root, 'mnt/overlay/chrony.d/bmcd.sources'), 'utf8')).toContain(
        'server 192.0.2.1 iburst prefer',
      );
      await board.setNtp([]);
      const after = spawnSync('chronyc', ['-h', chrony!.socket, '-n', 'sources'], { encoding: 'utf8' });
      expect(after.stdout).not.toContain('192.0.2.1');
      await board.stop();
    });

    it('a chronyc that cannot reach the daemon: the refusal quotes its stderr', async () => {
      const root = join(chronyDir, 'root2');
      await copyFixtureTree('v2.4', root);
      const board = await boardOn(root, {
        chronycArgs: ['-h', join(chronyDir, 'nowhere.sock')],
      });
      await board.start();
      await expect(board.setNtp(['192.0.2.3'])).rejects.toEqual(
        new BoardError(
          500,
          'the servers were saved, but chrony did not reload them: Could not open connection to daemon',
        ),
      );
      expect((await board.getNtp()).clock.measured_by).toBeNull();
      await board.stop();
    });
  },
);
