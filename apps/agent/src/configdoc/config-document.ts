import type { TConfigExport, TImportReport, TNodeSettings } from '@tpfleet/board-api';

import { type BoardBackend, BoardError, type NodeId, type NodeInfoPatch } from '../backend/backend.js';
import type { SourcesStore } from '../firmware/sources-store.js';
import { utcStamp } from '../backend/timestamps.js';
import { parseNtpServers, validateHostname } from '../validators/board-settings.js';

export const FORMAT_VERSION = 1;

export interface ConfigDeps {
  backend: BoardBackend;
  sources: SourcesStore;
  now?: () => number;
}

/** GET /config: one unreadable part never fails the export; it is left out instead. */
export async function exportConfig(deps: ConfigDeps): Promise<TConfigExport> {
  const now = deps.now ?? Date.now;
  const about = await deps.backend.about().catch(() => null);
  const exportedFrom: TConfigExport['exported_from'] = {};
  if (about?.hostname) {
    exportedFrom.hostname = about.hostname;
  }
  if (about?.board_serial) {
    exportedFrom.board_serial = about.board_serial;
  }
  if (about && about.version !== 'unknown') {
    exportedFrom.firmware = about.version.replace(/^(["'])(.*)\1$/, '$2');
  }
  const doc: TConfigExport = {
    format_version: FORMAT_VERSION,
    exported_at: utcStamp(now()),
    exported_from: exportedFrom,
  };
  const hostname = await deps.backend.getHostname().catch(() => null);
  if (hostname?.hostname) {
    doc.hostname = hostname.hostname;
  }
  const ntp = await deps.backend.getNtp().catch(() => null);
  if (ntp && ntp.servers.length > 0) {
    doc.ntp_servers = ntp.servers;
  }
  doc.firmware_sources = await deps.sources.read();
  const nodes = await deps.backend.getNodes().catch(() => null);
  if (nodes) {
    doc.nodes = nodes.map((info, index) => {
      const entry: TNodeSettings = { id: index + 1 };
      if (info.name !== null && info.name !== undefined) {
        entry.name = info.name;
      }
      if (info.module_name !== null && info.module_name !== undefined) {
        entry.module_name = info.module_name;
      }
      if (info.uart_baud !== null && info.uart_baud !== undefined) {
        entry.uart_baud = info.uart_baud;
      }
      return entry;
    });
  }
  return doc;
}

/**
 * POST /config: the document as JSON text. The envelope (`format_version`, `exported_at`,
 * `exported_from`) must be right before anything is applied; then each field is applied on its own, in the daemon's
 * order, and reported with the daemon's texts. A field of the wrong type fails that field only (the daemon's serde
 * would refuse the whole document; a partly usable export is worth applying). Unknown keys are ignored.
 */
export async function importConfig(deps: ConfigDeps, text: string | undefined): Promise<TImportReport> {
  if (text === undefined) {
    throw new BoardError(400, 'Missing `config` parameter');
  }
  const doc = parseEnvelope(text);
  const report: TImportReport = { applied: [], skipped: [], failed: [] };
  const reason = (err: unknown) => (err instanceof Error ? err.message : String(err));

  if (doc['hostname'] === undefined || doc['hostname'] === null) {
    report.skipped.push('hostname: not in the export');
  } else {
    try {
      const name = doc['hostname'];
      if (typeof name !== 'string') {
        throw new Error(`invalid type: expected a string`);
      }
      validateHostname(name);
      await deps.backend.setHostname(name);
      report.applied.push(`hostname ${name}`);
    } catch (err) {
      report.failed.push(`hostname: ${reason(err)}`);
    }
  }

  if (doc['ntp_servers'] === undefined || doc['ntp_servers'] === null) {
    report.skipped.push('time servers: not in the export, so the board keeps its own');
  } else {
    try {
      const list = doc['ntp_servers'];
      if (!Array.isArray(list) || list.some((s) => typeof s !== 'string' || s.includes(','))) {
        throw new Error('expected a list of host names or addresses');
      }
      const servers = parseNtpServers((list as string[]).join(','));
      await deps.backend.setNtp(servers);
      report.applied.push(`${servers.length} time server(s)`);
    } catch (err) {
      report.failed.push(`time servers: ${reason(err)}`);
    }
  }

  if (doc['firmware_sources'] === undefined || doc['firmware_sources'] === null) {
    report.skipped.push('firmware sources: not in the export');
  } else {
    try {
      const stored = await deps.sources.replace(doc['firmware_sources']);
      report.applied.push(`${stored.sources.length} firmware source(s)`);
    } catch (err) {
      report.failed.push(`firmware sources: ${reason(err).replace(/^`sources` is not valid: /, '')}`);
    }
  }

  if (doc['nodes'] === undefined || doc['nodes'] === null) {
    report.skipped.push('node names: not in the export');
  } else {
    try {
      const patch = nodePatch(doc['nodes']);
      if ('badIds' in patch) {
        report.failed.push(`node id(s) [${patch.badIds.join(', ')}] are not 1-4`);
      } else {
        await deps.backend.setNodeInfo(patch.patch);
        report.applied.push(`${patch.count} node name(s)`);
      }
    } catch (err) {
      report.failed.push(`node names: ${reason(err)}`);
    }
  }
  return report;
}

function parseEnvelope(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new BoardError(400, `\`config\` is not valid: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new BoardError(400, '`config` is not valid: invalid type: expected struct ConfigExport');
  }
  const doc = value as Record<string, unknown>;
  for (const key of ['format_version', 'exported_at', 'exported_from']) {
    if (doc[key] === undefined) {
      throw new BoardError(400, `\`config\` is not valid: missing field \`${key}\``);
    }
  }
  const format = doc['format_version'];
  if (typeof format !== 'number' || !Number.isInteger(format) || format < 0) {
    throw new BoardError(400, '`config` is not valid: format_version: invalid type: expected u32');
  }
  if (typeof doc['exported_at'] !== 'string') {
    throw new BoardError(400, '`config` is not valid: exported_at: invalid type: expected a string');
  }
  const origin = doc['exported_from'];
  if (origin === null || typeof origin !== 'object' || Array.isArray(origin)) {
    throw new BoardError(400, '`config` is not valid: exported_from: invalid type: expected struct ExportOrigin');
  }
  if (format !== FORMAT_VERSION) {
    throw new BoardError(400, `this export is format ${format} and this daemon reads format ${FORMAT_VERSION}`);
  }
  return doc;
}

type NodePatch = { patch: Partial<Record<NodeId, NodeInfoPatch>>; count: number } | { badIds: number[] };

function nodePatch(value: unknown): NodePatch {
  if (!Array.isArray(value)) {
    throw new Error('expected a list of node settings');
  }
  const badIds: number[] = [];
  const patch: Partial<Record<NodeId, NodeInfoPatch>> = {};
  let count = 0;
  for (const item of value) {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new Error('expected node settings objects');
    }
    const entry = item as Record<string, unknown>;
    const id = entry['id'];
    if (typeof id !== 'number' || !Number.isInteger(id)) {
      throw new Error('a node entry lacks an integer `id`');
    }
    if (id < 1 || id > 4) {
      badIds.push(id);
      continue;
    }
    const fields: NodeInfoPatch = {};
    for (const key of ['name', 'module_name'] as const) {
      const field = entry[key];
      if (field === undefined || field === null) {
        continue;
      }
      if (typeof field !== 'string') {
        throw new Error(`node ${id}: \`${key}\` should be a string`);
      }
      fields[key] = field;
    }
    const baud = entry['uart_baud'];
    if (baud !== undefined && baud !== null) {
      if (typeof baud !== 'number' || !Number.isInteger(baud) || baud < 0 || baud > 0xffffffff) {
        throw new Error(`node ${id}: \`uart_baud\` should be an unsigned 32-bit integer`);
      }
      fields.uart_baud = baud;
    }
    patch[id as NodeId] = { ...patch[id as NodeId], ...fields };
    count++;
  }
  return badIds.length > 0 ? { badIds } : { patch, count };
}
