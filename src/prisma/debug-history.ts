import { clearLogs } from '@prisma/debug';
import { Debug } from '@prisma/client/runtime/client';

/**
 * How many debug calls Prisma keeps the arguments of, for crash reports (MAX_ARGS_HISTORY in @prisma/debug), whether
 * logging is on or not.
 */
const DEBUG_HISTORY_LENGTH = 100;

/** A namespace nobody enables (DEBUG): its calls only take places in the history, they print nothing. */
const filler = Debug('tpfleet:forget');

/**
 * Forgets the arguments Prisma's debug history holds. There are two copies of that history: @prisma/debug's, which
 * adapter-pg fills with every statement's parameters and which `clearLogs` empties; and the one bundled inside
 * @prisma/client's runtime, which exports no way to empty it. The runtime logs every query plan it compiles ("query
 * plan created"), and createMany's plans are not cached and grow with their rows: after registering 10,000 boards
 * in bulks of 1,000 an idle api process held ~70 MiB of them (heap snapshot: 868,000 objects reachable from that
 * array). The runtime's copy keeps only its last DEBUG_HISTORY_LENGTH calls, so as many empty calls push them out.
 */
export function forgetDebugHistory(): void {
  clearLogs();
  for (let i = 0; i < DEBUG_HISTORY_LENGTH; i++) {
    filler('');
  }
}
