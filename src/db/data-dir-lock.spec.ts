import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataDirInUseError, LOCK_FILE, lockDataDir } from './data-dir-lock.js';
import { startEmbeddedPostgres } from './embedded-postgres.js';

// Two processes on one embedded database directory each keep their own copy, and the last to stop overwrites the
// other's writes: the second one must be refused before it opens anything.
describe('one process at a time in an embedded database directory', () => {
  let dir: string;
  let other: ChildProcess | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tpfleet-lock-'));
  });

  afterEach(() => {
    other?.kill('SIGKILL');
    other = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Another live process, written into the lock file as its holder (the file a running fleet manager leaves). */
  async function heldByAnotherProcess(): Promise<number> {
    other = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await new Promise((resolve) => other!.once('spawn', resolve));
    writeFileSync(join(dir, LOCK_FILE), `${other.pid}\n`);
    return other.pid!;
  }

  it('refuses while another live process holds it, and takes it over once that process is gone', async () => {
    const pid = await heldByAnotherProcess();
    expect(() => lockDataDir(dir)).toThrow(DataDirInUseError);
    expect(() => lockDataDir(dir)).toThrow(`in use by another process (pid ${pid})`);
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(`${pid}\n`); // the holder's file is left alone

    // Killed: no clean stop removed its file.
    const exited = new Promise((resolve) => other!.once('exit', resolve));
    other!.kill('SIGKILL');
    await exited;
    const release = lockDataDir(dir);
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
    release();
    release(); // twice is harmless
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
  });

  it('refuses a second open in the same process, and takes over a file an earlier run with its pid left', () => {
    const release = lockDataDir(dir);
    expect(() => lockDataDir(dir)).toThrow('open in this process already');
    release();
    // Our pid in a file we do not hold: an earlier process had the same pid (a container restarted).
    writeFileSync(join(dir, LOCK_FILE), `${process.pid}\n`);
    lockDataDir(dir)();
    writeFileSync(join(dir, LOCK_FILE), 'not a pid\n');
    lockDataDir(dir)();
  });

  it('the embedded database takes the directory while it runs and gives it back when it stops', async () => {
    const embedded = await startEmbeddedPostgres(dir);
    try {
      expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe(`${process.pid}\n`);
      await expect(startEmbeddedPostgres(dir)).rejects.toThrow(DataDirInUseError);
    } finally {
      await embedded.stop();
    }
    expect(existsSync(join(dir, LOCK_FILE))).toBe(false);
    const pid = await heldByAnotherProcess();
    await expect(startEmbeddedPostgres(dir)).rejects.toThrow(`pid ${pid}`);
  }, 60_000);
});
