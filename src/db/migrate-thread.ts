import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';

/** The compiled entry beside this module; from the TypeScript sources (jest), the one `npm test` built in dist/. */
function entryUrl(): URL {
  const beside = new URL('./migrate-thread-entry.js', import.meta.url);
  return existsSync(fileURLToPath(beside))
    ? beside
    : new URL('../../dist/src/db/migrate-thread-entry.js', import.meta.url);
}

/**
 * `migrateDeploy` on the database at `url`, run on a worker thread that ends when it is done; resolves with the
 * migrations it applied. The schema engine is 5.4 MB of WASM plus its memory and compiled code, which a module
 * keeps for the life of the process once loaded: a server that migrated itself at start (embedded mode,
 * DB_AUTO_MIGRATE) held ~15 MiB more for good, the idle api process's margin (docs/benchmarks.md). The thread's
 * isolate, and everything the engine held, is freed when it exits.
 */
export function migrateDeployOnThread(url: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(entryUrl(), { workerData: { url } });
    worker.once('message', (applied: string[]) => {
      resolve(applied);
      // The entry has closed its connections before it answers; whatever else the engine left armed must not keep
      // the thread (and its memory) alive.
      void worker.terminate();
    });
    worker.once('error', reject);
    // After an answer or an error this settles nothing.
    worker.once('exit', (code) => reject(new Error(`the migration thread stopped without an answer (exit ${code})`)));
  });
}
