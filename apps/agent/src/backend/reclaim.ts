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

/**
 * How many bytes a transfer moves between two collections. The dead socket buffers between two collections are up to
 * this much, and malloc keeps what they took: every 8 MiB, a 256 MiB flash peaked at ~76-85 MB resident on Node 20
 * and ~95 MB on Node 26; every 2 MiB at ~71 MB and ~92 MB (~84 MB with Turbofan off, bin/board-agent.js). 128 minor
 * collections of about a millisecond are noise next to the seconds the 256 MiB take.
 */
export const RECLAIM_EVERY_BYTES = 2 * 1024 * 1024;
