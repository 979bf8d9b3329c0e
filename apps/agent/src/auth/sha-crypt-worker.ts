import { parentPort } from 'node:worker_threads';

import { verifyShaCrypt } from './sha-crypt.js';

/** One SHA-crypt check per message, off the agent's event loop (started by sha-crypt-pool.ts). */
parentPort?.on('message', ({ password, hash }: { password: string; hash: string }) => {
  parentPort?.postMessage(verifyShaCrypt(password, hash));
});
