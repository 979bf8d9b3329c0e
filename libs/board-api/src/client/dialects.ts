import { z } from 'zod';
import { operationList, operations, type OperationId } from '../operations.js';
import { compareVersions } from '../version.js';
import { ZAboutForkSchema, ZAboutSchema, ZAboutUpstreamSchema, type TAbout } from '../schemas/board.js';
import { ZCoolingDeviceSchema, type TCoolingDevice } from '../schemas/cooling.js';

/**
 * Which daemon a board runs:
 * - `agent`: this project's agent (path form, `node` 1–4, About with `daemon_version`);
 * - `fork`: the existing excavador-turing/bmcd fork (path form from 2.16.0, `node` 0–3, About with `bmcd_version`);
 * - `upstream`: turing-machines/bmcd 2.3.x (legacy `?opt=&type=` only, `node` 0–3).
 */
export type Dialect = 'agent' | 'fork' | 'upstream';
export const DIALECTS: readonly Dialect[] = ['agent', 'fork', 'upstream'];

/** Which spelling requests use. */
export type WireForm = 'path' | 'legacy';

/** The fork's path form arrived in 2.16.0. */
export const FORK_PATH_FORM_SINCE = '2.16.0';

/**
 * The operations upstream bmcd answers in the legacy form: no health, thermal, firmware,
 * hostname, ntp, config, access, sdcard files or network read.
 */
export const UPSTREAM_OPERATIONS: ReadonlySet<OperationId> = new Set<OperationId>([
  'getNodes',
  'getPower',
  'postPower',
  'postReset',
  'getUsb',
  'postUsb',
  'postUsbBoot',
  'postUsbBootClear',
  'postNodeToMsd',
  'getAbout',
  'getInfo',
  'postReboot',
  'postReload',
  'getSdcard',
  'postSdcardFormat',
  'getCooling',
  'postCooling',
  'postNetworkReset',
  // The daemon extensions are upstream's own.
  'getUsbNode1',
  'postUsbNode1',
  'getUart',
  'postUart',
  'getOther',
  'getBackup',
  'postFlash',
  'getFlash',
  'postFirmwareUpload',
  'getFirmwareUpload',
  'postUpload',
  'getUploadCancel',
]);

/**
 * Orders two daemon versions as About reports them (quotes stripped, a `+build` suffix ignored): negative, zero or
 * positive, or null when either is not version-shaped. The ordering is ../version.ts's, on `semver`.
 */
export function compareDaemonVersions(a: string, b: string): number | null {
  const unquote = (text: string) => text.trim().replace(/^"|"$/g, '');
  return compareVersions(unquote(a), unquote(b), { build: true });
}

function atLeast(version: string | undefined, since: string): boolean {
  if (version === undefined) {
    return true; // unknown version: assume the newest, and let the board answer
  }
  const c = compareDaemonVersions(version, since);
  return c === null ? true : c >= 0;
}

/** The wire form a board of this dialect and version understands. */
export function wireForm(dialect: Dialect, daemonVersion?: string): WireForm {
  if (dialect === 'upstream') {
    return 'legacy';
  }
  if (dialect === 'fork' && !atLeast(daemonVersion, FORK_PATH_FORM_SINCE)) {
    return 'legacy';
  }
  return 'path';
}

/**
 * When the fork first offered an operation. The table's `since` is the first *documented* release (2.26.0 for most);
 * the fork had those operations before, and the path form reaches them from 2.16.0 (health 2.4, update check 2.7,
 * sources 2.8, ntp/hostname 2.13, config 2.14). So 2.26.0 rows count from 2.16.0; later rows (sdcard
 * files 2.34.0, access 2.36.0) keep their own release.
 */
function forkSince(id: OperationId): string {
  const since: string = operations[id].since;
  return since === '2.26.0' ? FORK_PATH_FORM_SINCE : since;
}

const CAPABILITY_CACHE_MAX = 1000;
const capabilityCache = new Map<string, ReadonlySet<OperationId>>();

/**
 * The capability matrix: the operation ids a board of this dialect and daemon version offers.
 * agent: all 38. fork: by release (a fork older than 2.16.0 is treated like upstream). upstream: the legacy set.
 */
export function capabilities(dialect: Dialect, daemonVersion?: string): ReadonlySet<OperationId> {
  // Asked on every poll of every board: computed once per (dialect, version). Read-only sets, so sharing is safe.
  const key = `${dialect}|${daemonVersion ?? ''}`;
  let offered = capabilityCache.get(key);
  if (offered === undefined) {
    offered = computeCapabilities(dialect, daemonVersion);
    if (capabilityCache.size >= CAPABILITY_CACHE_MAX) {
      capabilityCache.clear(); // versions seen in a fleet are few; this only bounds a pathological input
    }
    capabilityCache.set(key, offered);
  }
  return offered;
}

function computeCapabilities(dialect: Dialect, daemonVersion?: string): ReadonlySet<OperationId> {
  if (dialect === 'agent') {
    return new Set(operationList.map((op) => op.id));
  }
  if (wireForm(dialect, daemonVersion) === 'legacy') {
    return UPSTREAM_OPERATIONS;
  }
  return new Set(operationList.filter((op) => atLeast(daemonVersion, forkSince(op.id))).map((op) => op.id));
}

/**
 * The spelling one operation uses on a board: the board's wire form, except that a daemon extension's path form is
 * the agent's own, so the fork and upstream get its legacy spelling (the daemon's own paths work everywhere).
 */
export function wireFormOf(id: OperationId, dialect: Dialect, daemonVersion?: string): WireForm {
  const op = operations[id] as { extension?: true; daemonPath?: true; legacy: unknown };
  if (op.extension && !op.daemonPath && dialect !== 'agent' && op.legacy !== null) {
    return 'legacy';
  }
  return wireForm(dialect, daemonVersion);
}

/** The `node` parameter on the wire for a 1-based node number. */
export function wireNode(dialect: Dialect, form: WireForm, node: number): number {
  return dialect === 'agent' && form === 'path' ? node : node - 1;
}

/** A parse outcome (zod's safeParse result, with the error's own type erased). */
export type Parsed<T> = { success: true; data: T } | { success: false; error: z.ZodError };

/** About in one shape (the agent's), plus the daemon's own record. */
export interface NormalisedAbout {
  about: TAbout;
  raw: Record<string, unknown>;
}

/**
 * Reads an About of any dialect into the agent's shape: `daemon_version` from `bmcd_version` (fork, upstream
 * master) or from `version` (upstream v2.3.4, where `build_version` is the OS version).
 */
export function normaliseAbout(dialect: Dialect, raw: unknown): Parsed<TAbout> {
  if (dialect === 'agent') {
    return ZAboutSchema.safeParse(raw);
  }
  if (dialect === 'fork') {
    const parsed = ZAboutForkSchema.safeParse(raw);
    if (!parsed.success) {
      return { success: false, error: parsed.error };
    }
    const { bmcd_version, ...rest } = parsed.data;
    return { success: true, data: { ...rest, daemon_version: bmcd_version } };
  }
  const parsed = ZAboutUpstreamSchema.safeParse(raw);
  if (!parsed.success) {
    return { success: false, error: parsed.error };
  }
  const a = parsed.data;
  const master = a.bmcd_version !== undefined;
  const daemon = a.bmcd_version ?? a.version;
  return {
    success: true,
    data: {
      api: a.api,
      daemon_version: daemon,
      build_version: daemon,
      version: master ? a.version : (a.build_version ?? 'unknown'),
      board_model: a.board_model ?? '',
      board_revision: a.board_revision ?? '',
      board_serial: a.board_serial ?? null,
      buildroot: a.buildroot ?? 'unknown',
      buildtime: a.buildtime ?? '',
      hostname: a.hostname ?? '',
      kernel: a.kernel ?? 'unknown',
    },
  };
}

/** Cooling devices before fork 2.21 (and upstream) lack `zone` and `overridden`. */
const ZCoolingDeviceLenientSchema = ZCoolingDeviceSchema.extend({
  zone: z.string().nullable().optional(),
  overridden: z.boolean().optional(),
});
const ZCoolingDeviceLenientListSchema = z.array(ZCoolingDeviceLenientSchema);
export function normaliseCooling(raw: unknown): Parsed<TCoolingDevice[]> {
  const parsed = ZCoolingDeviceLenientListSchema.safeParse(raw);
  if (!parsed.success) {
    return { success: false, error: parsed.error };
  }
  return {
    success: true,
    data: parsed.data.map((d) => ({ ...d, zone: d.zone ?? null, overridden: d.overridden ?? false })),
  };
}

/** Parameters that are presence flags on the fork and upstream (`force=0` counts as set there). */
export const FLAG_PARAMS: ReadonlySet<string> = new Set([
  'force',
  'allow_downgrade',
  'refresh',
  'fel',
  'skip_crc',
  'park',
  'alternative_port',
]);
