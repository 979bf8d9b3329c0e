import { setFlagsFromString } from 'node:v8';
import type { Role } from './config.service.js';

/**
 * How far V8 lets the old generation grow past what the last full GC kept, per role, in percent (V8's
 * `--heap-growing-percent`; unset, V8 picks 1.1× to 4× from its GC and mutator speeds and, on a machine with memory to
 * spare, lands near the top). The worker's live heap at 2,000 boards is ~80 MiB, but with V8's own factor garbage
 * piled up to ~260 MiB between full GCs, and an api process that registered boards sat at its peak while idle
 * (docs/benchmarks.md, issue 19). With 1.5× the old generation stays near one and a half times what is live, for a
 * few more full GCs (concurrent marking; measured in the poll bench's CPU per poll).
 */
export const HEAP_GROWING_PERCENT: Record<Role, number> = { api: 50, worker: 50, all: 50 };

const FLAG = '--heap-growing-percent';

/**
 * Sets the role's heap growth, unless the operator set the flag (node option or NODE_OPTIONS), whose value wins.
 * It can be set at run time: V8 reads it at each full GC when it recomputes the heap's limit, unlike the heap's
 * maximum and the young generation's size, which are fixed when the process starts. Returns the value in force, or
 * null when it is the operator's.
 */
export function setHeapGrowth(
  role: Role,
  execArgv: readonly string[] = process.execArgv,
  nodeOptions: string = process.env.NODE_OPTIONS ?? '',
): number | null {
  const given = [...execArgv, ...nodeOptions.split(/\s+/)].some((a) => a.replaceAll('_', '-').startsWith(FLAG));
  if (given) {
    return null;
  }
  const percent = HEAP_GROWING_PERCENT[role];
  setFlagsFromString(`${FLAG}=${percent}`);
  return percent;
}
