// Pure functions over board configuration documents: the content that is versioned, its hash, the
// per-field diff, the documents sent to POST /config and the per-field reading of the board's ImportReport.
import { createHash } from 'node:crypto';
import type { TImportReport } from '@tpfleet/board-api';

/** The fields the board imports, in the order it applies them (POST /config). */
export const CONFIG_FIELDS = ['hostname', 'ntp_servers', 'firmware_sources', 'nodes'] as const;
export type ConfigField = (typeof CONFIG_FIELDS)[number];

export const NODE_ATTRIBUTES = ['name', 'module_name', 'uart_baud'] as const;
export type NodeAttribute = (typeof NODE_ATTRIBUTES)[number];

/** The envelope keys: they change on every export and carry no configuration. */
const ENVELOPE_KEYS = new Set(['exported_at', 'exported_from']);

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type ConfigContent = Record<string, JsonValue>;

export interface SourceLike {
  id: string;
  kind?: string;
  label?: string;
  location?: string;
  enabled?: boolean;
}

export interface NodeSettingsLike {
  id: number;
  name?: string;
  module_name?: string;
  uart_baud?: number;
}

/** One differing field. `from`/`to` are null where the side has nothing (added, removed, unset). */
export interface FieldChange {
  field: string;
  path: string;
  from: JsonValue;
  to: JsonValue;
}

/** The versioned content of an export: everything except `exported_at` and `exported_from`. */
export function contentOf(document: Record<string, unknown>): ConfigContent {
  const content: ConfigContent = {};
  for (const [key, value] of Object.entries(document)) {
    if (!ENVELOPE_KEYS.has(key) && value !== undefined) {
      content[key] = value as JsonValue;
    }
  }
  return content;
}

/** JSON with object keys sorted at every level, so equal content always serialises (and hashes) the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  }
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

export function contentHash(document: Record<string, unknown>): string {
  return createHash('sha256')
    .update(canonicalJson(contentOf(document)))
    .digest('hex');
}

function sourcesOf(content: ConfigContent): SourceLike[] {
  const doc = content['firmware_sources'] as { sources?: SourceLike[] } | undefined | null;
  return Array.isArray(doc?.sources) ? doc.sources : [];
}

function nodesOf(content: ConfigContent): NodeSettingsLike[] {
  const nodes = content['nodes'];
  return Array.isArray(nodes) ? (nodes as unknown as NodeSettingsLike[]) : [];
}

function normalisedSource(s: SourceLike): JsonValue {
  return {
    id: s.id,
    kind: s.kind ?? null,
    label: s.label ?? null,
    location: s.location ?? null,
    enabled: s.enabled ?? true,
  };
}

const same = (a: unknown, b: unknown) => canonicalJson(a) === canonicalJson(b);

export interface DiffScope {
  /** Only these fields (default: all, plus unknown future keys). */
  fields?: readonly string[];
  /** Per node id, only these attributes (a template that names node 2 only compares node 2's names). */
  nodeAttributes?: ReadonlyMap<number, readonly NodeAttribute[]>;
}

/**
 * Per-field differences from `a` to `b`: the hostname, each NTP server by position, each firmware source by id
 * (plus their order), each node's name, module name and baud. Not a text diff: every entry names what changed.
 */
export function diffContents(a: ConfigContent, b: ConfigContent, scope: DiffScope = {}): FieldChange[] {
  const wanted = (f: string) => !scope.fields || scope.fields.includes(f);
  const changes: FieldChange[] = [];
  if (wanted('hostname') && !same(a['hostname'] ?? null, b['hostname'] ?? null)) {
    changes.push({ field: 'hostname', path: 'hostname', from: a['hostname'] ?? null, to: b['hostname'] ?? null });
  }
  if (wanted('ntp_servers')) {
    // Absent means "none configured" (an empty list is never exported).
    const x = (a['ntp_servers'] as JsonValue[] | undefined) ?? [];
    const y = (b['ntp_servers'] as JsonValue[] | undefined) ?? [];
    for (let i = 0; i < Math.max(x.length, y.length); i++) {
      if (!same(x[i] ?? null, y[i] ?? null)) {
        changes.push({ field: 'ntp_servers', path: `ntp_servers[${i}]`, from: x[i] ?? null, to: y[i] ?? null });
      }
    }
  }
  if (wanted('firmware_sources')) {
    const x = sourcesOf(a);
    const y = sourcesOf(b);
    const byId = (list: SourceLike[]) => new Map(list.map((s) => [s.id, s]));
    const xs = byId(x);
    const ys = byId(y);
    for (const id of new Set([...xs.keys(), ...ys.keys()])) {
      const from = xs.has(id) ? normalisedSource(xs.get(id)!) : null;
      const to = ys.has(id) ? normalisedSource(ys.get(id)!) : null;
      if (!same(from, to)) {
        changes.push({ field: 'firmware_sources', path: `firmware_sources[${id}]`, from, to });
      }
    }
    const commonX = x.map((s) => s.id).filter((id) => ys.has(id));
    const commonY = y.map((s) => s.id).filter((id) => xs.has(id));
    if (!same(commonX, commonY)) {
      changes.push({ field: 'firmware_sources', path: 'firmware_sources.order', from: commonX, to: commonY });
    }
  }
  if (wanted('nodes')) {
    const xs = new Map(nodesOf(a).map((n) => [n.id, n]));
    const ys = new Map(nodesOf(b).map((n) => [n.id, n]));
    const ids = [...new Set([...xs.keys(), ...ys.keys()])].sort((p, q) => p - q);
    for (const id of ids) {
      const attributes = scope.nodeAttributes ? (scope.nodeAttributes.get(id) ?? []) : NODE_ATTRIBUTES;
      for (const attr of attributes) {
        const from = (xs.get(id)?.[attr] ?? null) as JsonValue;
        const to = (ys.get(id)?.[attr] ?? null) as JsonValue;
        if (!same(from, to)) {
          changes.push({ field: 'nodes', path: `nodes[${id}].${attr}`, from, to });
        }
      }
    }
  }
  if (!scope.fields) {
    // Keys a later format adds: compared whole, so a change is never invisible.
    const known = new Set<string>(CONFIG_FIELDS);
    for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!known.has(key) && !same(a[key] ?? null, b[key] ?? null)) {
        changes.push({ field: key, path: key, from: a[key] ?? null, to: b[key] ?? null });
      }
    }
  }
  return changes;
}

/** UTC `YYYY-MM-DDTHH:MM:SSZ`, the board's own stamp format. */
export function utcStamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

/**
 * The document POST /config gets for a restore: the version's envelope and only the chosen fields. A chosen
 * `ntp_servers` the version lacks is sent as [] (the board's default), because the export leaves the key out
 * exactly when no servers were configured; a missing hostname or node list stays out (the board skips it).
 */
export function restoreDocument(document: Record<string, unknown>, fields: readonly ConfigField[], now: Date) {
  const out: Record<string, unknown> = {
    format_version: document['format_version'],
    exported_at: utcStamp(now),
    exported_from: document['exported_from'] ?? {},
  };
  for (const field of fields) {
    if (document[field] !== undefined) {
      out[field] = document[field];
    } else if (field === 'ntp_servers') {
      out[field] = [];
    }
  }
  return out;
}

export type FieldStatus = 'applied' | 'skipped' | 'failed';

export interface FieldOutcome {
  field: ConfigField | 'other';
  status: FieldStatus;
  /** The board's own text. */
  message: string;
}

/** Which field a line of the board's ImportReport talks about (the daemon's texts). */
export function fieldOfReportLine(line: string): ConfigField | 'other' {
  if (/^hostname\b/.test(line)) {
    return 'hostname';
  }
  if (/time server/.test(line)) {
    return 'ntp_servers';
  }
  if (/firmware source/.test(line)) {
    return 'firmware_sources';
  }
  if (/^node\b|node name|node id/.test(line)) {
    return 'nodes';
  }
  return 'other';
}

export function outcomesOf(report: TImportReport): FieldOutcome[] {
  const outcomes: FieldOutcome[] = [];
  for (const status of ['applied', 'skipped', 'failed'] as const) {
    for (const message of report[status]) {
      outcomes.push({ field: fieldOfReportLine(message), status, message });
    }
  }
  const order = (f: string) => {
    const i = (CONFIG_FIELDS as readonly string[]).indexOf(f);
    return i < 0 ? CONFIG_FIELDS.length : i;
  };
  return outcomes.sort((x, y) => order(x.field) - order(y.field));
}

/**
 * The overall result for the fields that were sent: applied when every one applied; partial when some applied and
 * some failed; failed when none applied. Fields not sent are the board's "skipped" and do not count.
 */
export function overallStatus(outcomes: readonly FieldOutcome[]): 'applied' | 'partial' | 'failed' {
  const failed = outcomes.some((o) => o.status === 'failed');
  const applied = outcomes.some((o) => o.status === 'applied');
  return failed ? (applied ? 'partial' : 'failed') : 'applied';
}
