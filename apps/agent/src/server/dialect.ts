import type { OperationId } from '@tpfleet/board-api';

/**
 * How a (simulated) board speaks. `agent` is this project's agent. `fork` and `upstream` imitate the existing
 * daemons the fleet manager must still drive (rack only):
 * - fork (excavador-turing/bmcd 2.36.x): path form with 0-based `node`, About keyed `bmcd_version`;
 * - upstream (turing-machines/bmcd 2.3.x): legacy form only, 0-based, none of the fork's later operations.
 */
export type DialectName = 'agent' | 'fork' | 'upstream';

export interface Dialect {
  name: DialectName;
  /** Daemon version the board reports in About (default: the backend's own). */
  version?: string;
}

export const AGENT_DIALECT: Dialect = { name: 'agent' };

/** Operations upstream bmcd 2.3.x does not have: its dispatcher answers ``Invalid `type` parameter``. */
const UPSTREAM_MISSING: ReadonlySet<string> = new Set<OperationId>([
  'getHealth',
  'getThermal',
  'getNetwork',
  'getHostname',
  'postHostname',
  'getNtp',
  'postNtp',
  'getConfig',
  'postConfig',
  'getSdcardFiles',
  'getFirmwareAvailable',
  'getFirmwareCheck',
  'postFirmwareInstall',
  'getFirmwareSlots',
  'getFirmwareSources',
  'postFirmwareSources',
  'getAccess',
  'putAccessClientCa',
  'deleteAccessClientCa',
  'postAccessPassword',
]);

export function dialectHasOperation(dialect: Dialect, id: string): boolean {
  return dialect.name !== 'upstream' || !UPSTREAM_MISSING.has(id);
}

export function dialectHasPathForm(dialect: Dialect): boolean {
  return dialect.name !== 'upstream';
}

/** Numbering of `node`: the agent's path form counts 1..4; the legacy form and both old daemons count 0..3. */
export function nodeBaseFor(spelling: 'path' | 'legacy', dialect: Dialect): 0 | 1 {
  return spelling === 'path' && dialect.name === 'agent' ? 1 : 0;
}

/** Reshape an answer into the dialect's wording (only About differs). Runs after contract validation. */
export function applyDialect(dialect: Dialect, id: string, result: unknown): unknown {
  if (id !== 'getAbout' || result === null || typeof result !== 'object') {
    return result;
  }
  const { daemon_version: daemonVersion, ...rest } = result as Record<string, unknown>;
  const version = dialect.version ?? daemonVersion;
  if (dialect.name === 'agent') {
    return dialect.version ? { ...rest, daemon_version: version, build_version: version } : result;
  }
  if (dialect.name === 'fork') {
    return { ...rest, bmcd_version: version, build_version: version };
  }
  // upstream master: `bmcd_version` for the daemon, `version` for the OS; no kernel, board_serial or build_version.
  const { kernel: _kernel, board_serial: _serial, build_version: _build, ...upstream } = rest;
  return { ...upstream, bmcd_version: version };
}
