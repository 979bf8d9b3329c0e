import { parentPort, workerData } from 'node:worker_threads';
import { migrateDeploy, pgMigrationFactory } from './schema-engine.js';

/** The worker thread of migrate-thread.ts: one `migrateDeploy`, its applied migrations posted back, then it ends. */
const { url } = workerData as { url: string };
parentPort?.postMessage(await migrateDeploy(pgMigrationFactory(url)));
