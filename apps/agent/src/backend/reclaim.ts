import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

type Collect = (options?: { type: 'minor' | 'major'; execution?: 'sync' | 'async' }) => void;

let collect: Collect | null | undefined;

/**
 * Collect the young generation now. A transfer receives hundreds of MB as short-lived 64 KiB socket buffers; V8
 * frees their memory only when it collects the small objects that own them, which it does late (its trigger counts
 * JS heap, and the buffers live outside it), so a 256 MiB upload raised the agent's resident size by ~35 MB. Called
 * every few MiB of a transfer, a minor collection (about a millisecond on the agent's small heap) keeps the growth
 * to a few MB. Falls back to doing nothing if the runtime refuses the flag.
 */
export function reclaimTransferBuffers(): void {
  if (collect === undefined) {
    try {
      setFlagsFromString('--expose-gc');
      collect = runInNewContext('gc') as Collect;
    } catch {
      collect = null;
    }
  }
  collect?.({ type: 'minor' });
}

/** How many bytes a transfer moves between two collections. */
export const RECLAIM_EVERY_BYTES = 8 * 1024 * 1024;
