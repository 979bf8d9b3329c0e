// The embedded database of a first run: PGlite (PostgreSQL compiled to WASM, from npm) served on a loopback port by
// pglite-socket, so Prisma (adapter-pg), the migration engine and BullMQ's PostgreSQL backend all talk to it as to
// a server. A demo/first-run convenience: one session shared by every client, ~0.4-0.9 GB of memory.
import { mkdirSync } from 'node:fs';
import { PGlite } from '@electric-sql/pglite';
import { PGLiteSocketServer } from '@electric-sql/pglite-socket';
import { lockDataDir } from './data-dir-lock.js';
import { PGliteSessionQueue } from './pglite-session-queue.js';

export interface EmbeddedPostgres {
  url: string;
  stop(): Promise<void>;
}

export async function startEmbeddedPostgres(dataDir: string): Promise<EmbeddedPostgres> {
  let release = () => {};
  if (!dataDir.includes('://')) {
    mkdirSync(dataDir, { recursive: true }); // PGlite does not create parent directories
    release = lockDataDir(dataDir);
  }
  try {
    return await serve(dataDir, release);
  } catch (err) {
    release();
    throw err;
  }
}

async function serve(dataDir: string, release: () => void): Promise<EmbeddedPostgres> {
  const db = new PGlite(dataDir);
  // pglite-socket ignores per-connection startup options (BullMQ pins search_path that way) and all clients share
  // PGlite's single session: set it once, public FIRST so Prisma's unqualified migration DDL lands in public.
  await db.exec('CREATE SCHEMA IF NOT EXISTS bullmq; SET search_path TO public, bullmq');
  // Every pool of the app connects here (Prisma, a BullMQ pool per queue and worker, LISTEN): connections past the
  // limit would wait 60 s and be dropped. They cost next to nothing: all share PGlite's one session.
  const server = new PGLiteSocketServer({ db, host: '127.0.0.1', port: 0, maxConnections: 256 });
  // pglite-socket interleaves different connections' extended-protocol messages on the one session; swap in a queue
  // that keeps each exchange together (see pglite-session-queue.ts). Its queue is private API: fail loudly if it moved.
  const internals = server as unknown as { queryQueue?: unknown };
  if (!internals.queryQueue) {
    throw new Error('pglite-socket changed: no queryQueue to replace (see src/db/pglite-session-queue.ts)');
  }
  internals.queryQueue = new PGliteSessionQueue(db);
  await server.start();
  const port = Number(server.getServerConn().split(':').pop());
  let stopped = false;
  return {
    url: `postgresql://postgres:postgres@127.0.0.1:${port}/postgres`,
    async stop() {
      if (stopped) {
        return;
      }
      stopped = true;
      try {
        await server.stop();
        await db.close(); // a clean close: the next start needs no crash recovery
      } finally {
        release();
      }
    },
  };
}
