// One process at a time in the embedded database's directory. PGlite takes no lock of its own: two processes on one
// directory (two `npm run demo`, or `npm run db:migrate` beside a running manager) each work on their own copy in
// memory, and the one that stops last overwrites what the other wrote. A pid file, as PostgreSQL's postmaster.pid:
// created exclusively and whole, removed on a clean stop; one left behind by a process that is gone is taken over.
// Written here rather than taken from a lock library: those hold a lock by refreshing a file on a timer, while the
// pid check needs no timer in a process that runs for months.
import { linkSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'tpfleet.pid';

/** Another live process holds the directory. */
export class DataDirInUseError extends Error {}

/** Lock files this process holds: its own pid in a file is then not a left-over. */
const heldHere = new Set<string>();

/** Takes the directory (which must exist) for this process; returns the release, which is safe to call twice. */
export function lockDataDir(dir: string): () => void {
  const path = join(dir, LOCK_FILE);
  if (heldHere.has(path)) {
    throw new DataDirInUseError(`the embedded database in ${dir} is open in this process already`);
  }
  for (let attempt = 0; attempt < 2; attempt++) {
    // Written whole, then linked into place (which fails if the file exists): a process reading the file never sees
    // it empty or half-written and takes that for a left-over.
    const temp = `${path}.${process.pid}`;
    writeFileSync(temp, `${process.pid}\n`, { mode: 0o600 });
    try {
      linkSync(temp, path);
      heldHere.add(path);
      let released = false;
      return () => {
        if (!released) {
          released = true;
          heldHere.delete(path);
          rmSync(path, { force: true });
        }
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') {
        throw err;
      }
    } finally {
      rmSync(temp, { force: true });
    }
    const holder = holderOf(path);
    if (holder !== null && isAlive(holder)) {
      throw new DataDirInUseError(
        `the embedded database in ${dir} is in use by another process (pid ${holder}): stop it first, or give this ` +
          `one a directory of its own (PGLITE_DIR) or a PostgreSQL server (DATABASE_URL). If no such process runs, ` +
          `remove ${path}`,
      );
    }
    rmSync(path, { force: true }); // left by a process that is gone (killed, or the machine restarted)
  }
  throw new DataDirInUseError(`another process took ${path} at the same moment: try again`);
}

function holderOf(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null; // removed meanwhile (its holder stopped): take it on the next attempt
  }
}

/**
 * Whether a process of that pid runs. Our own pid, in a file this process does not hold, was left by an earlier run
 * that had the same pid (a container's entry point often has the same small pid on every start).
 */
function isAlive(pid: number): boolean {
  if (pid === process.pid) {
    return false;
  }
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // it runs, as another user
  }
}
