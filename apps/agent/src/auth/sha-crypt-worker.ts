import { parentPort } from 'node:worker_threads';

import { verifyShaCrypt } from './sha-crypt.js';
import { verifyYescrypt } from './yescrypt.js';

/** One crypt check per message (`$y$` yescrypt, `$5$`/`$6$` SHA-crypt), off the agent's event loop (sha-crypt-pool.ts). */
parentPort?.on('message', ({ password, hash }: { password: string; hash: string }) => {
  parentPort?.postMessage(hash.startsWith('$y$') ? verifyYescrypt(password, hash) : verifyShaCrypt(password, hash));
});
