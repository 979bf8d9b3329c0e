import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';

import type { TSource, TSources } from '@tpfleet/board-api';

import { writeFileAtomic } from '../backend/atomic-file.js';
import { BoardError } from '../backend/backend.js';

export const SOURCES_FILE = 'firmware-sources.json';
const RETIRED_LOCATION = 'excavador/tp2-bmc-firmware';
const CURRENT_LOCATION = 'excavador-turing/BMC-Firmware';

/** Built-in sources, in this order, when the file is missing or corrupt. */
export function defaultSources(): TSources {
  return {
    sources: [
      { id: 'fork', kind: 'github', label: 'excavador-turing (this fork)', location: CURRENT_LOCATION, enabled: true },
      { id: 'local', kind: 'local', label: 'SD card', location: '/mnt/sdcard/firmware', enabled: true },
      {
        id: 'turingpi',
        kind: 'github',
        label: 'Turing Pi (official releases)',
        location: 'turing-machines/BMC-Firmware',
        enabled: true,
      },
      {
        id: 'turingpi-http',
        kind: 'http',
        label: 'Turing Pi (firmware.turingpi.com)',
        location: 'https://firmware.turingpi.com/turing-pi2',
        enabled: true,
      },
    ],
  };
}

/**
 * Read a sources document the way serde would (shape errors give serde-like text, which the caller prefixes with
 * `` `sources` is not valid: ``), then apply the daemon's validation rules (their messages verbatim).
 */
export function parseSourcesDocument(value: unknown): TSources {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new ShapeError(`invalid type: ${typeName(value)}, expected struct Sources`);
  }
  const list = (value as Record<string, unknown>)['sources'];
  if (list === undefined) {
    throw new ShapeError('missing field `sources`');
  }
  if (!Array.isArray(list)) {
    throw new ShapeError(`invalid type: ${typeName(list)}, expected a sequence`);
  }
  const sources = list.map((item, index): TSource => {
    if (item === null || typeof item !== 'object' || Array.isArray(item)) {
      throw new ShapeError(`sources[${index}]: invalid type: ${typeName(item)}, expected struct Source`);
    }
    const record = item as Record<string, unknown>;
    const text = (key: string): string => {
      const field = record[key];
      if (field === undefined) {
        throw new ShapeError(`sources[${index}]: missing field \`${key}\``);
      }
      if (typeof field !== 'string') {
        throw new ShapeError(`sources[${index}].${key}: invalid type: ${typeName(field)}, expected a string`);
      }
      return field;
    };
    const id = text('id');
    const kind = text('kind');
    if (kind !== 'github' && kind !== 'http' && kind !== 'local') {
      throw new ShapeError(
        `sources[${index}].kind: unknown variant \`${kind}\`, expected one of \`github\`, \`http\`, \`local\``,
      );
    }
    const label = text('label');
    const location = text('location');
    const enabled = record['enabled'];
    if (enabled !== undefined && typeof enabled !== 'boolean') {
      throw new ShapeError(`sources[${index}].enabled: invalid type: ${typeName(enabled)}, expected a boolean`);
    }
    return { id, kind, label, location, enabled: enabled ?? true };
  });
  validateSources(sources);
  return { sources };
}

/** The daemon's validation rules, first failure wins (messages verbatim). */
export function validateSources(sources: readonly TSource[]): void {
  const seen = new Set<string>();
  for (const source of sources) {
    const id = source.id.trim();
    if (id === '') {
      throw new BoardError(400, 'a source has an empty id');
    }
    if (seen.has(id)) {
      throw new BoardError(400, `duplicate source id ${JSON.stringify(id)}`);
    }
    seen.add(id);
    const quoted = JSON.stringify(source.id);
    const location = source.location;
    if (location.trim() === '') {
      throw new BoardError(400, `source ${quoted} has an empty location`);
    }
    if (source.kind === 'github') {
      const parts = location.split('/');
      if (parts.length !== 2 || parts.some((p) => p.trim() === '')) {
        throw new BoardError(400, `source ${quoted} should be owner/repo, not ${JSON.stringify(location)}`);
      }
    } else if (source.kind === 'http') {
      if (!location.startsWith('http')) {
        throw new BoardError(400, `source ${quoted} should be an http(s) URL`);
      }
      if (location.endsWith('.tpu')) {
        throw new BoardError(400, `source ${quoted} should be the DIRECTORY holding version folders, not an image`);
      }
    } else if (!location.startsWith('/')) {
      throw new BoardError(400, `source ${quoted} should be an absolute path`);
    }
  }
}

/** A document that does not have the Sources shape (serde's error, in the daemon). */
export class ShapeError extends Error {}

function typeName(value: unknown): string {
  if (value === null) {
    return 'null';
  }
  if (Array.isArray(value)) {
    return 'sequence';
  }
  if (typeof value === 'object') {
    return 'map';
  }
  if (typeof value === 'string') {
    return `string ${JSON.stringify(value)}`;
  }
  if (typeof value === 'number') {
    return Number.isInteger(value) ? `integer \`${value}\`` : `floating point \`${value}\``;
  }
  return `${typeof value} \`${String(value)}\``;
}

/**
 * The firmware sources document on the overlay (`firmware-sources.json`, shared by both A/B images). A missing or
 * corrupt file reads as the defaults; the retired location is rewritten on read and saved.
 */
export class SourcesStore {
  constructor(private readonly overlayDir: string) {}

  get path(): string {
    return join(this.overlayDir, SOURCES_FILE);
  }

  async read(): Promise<TSources> {
    let raw: string;
    try {
      raw = await readFile(this.path, 'utf8');
    } catch {
      return defaultSources();
    }
    let doc: TSources;
    try {
      doc = parseSourcesDocument(JSON.parse(raw));
    } catch {
      return defaultSources();
    }
    let migrated = false;
    for (const source of doc.sources) {
      if (source.kind === 'github' && source.location === RETIRED_LOCATION) {
        source.location = CURRENT_LOCATION;
        migrated = true;
      }
    }
    if (migrated) {
      await this.store(doc).catch(() => undefined);
    } // answering matters more than saving the rewrite
    return doc;
  }

  /** Validate and store a document given as JSON text; answers the stored document (`enabled` filled in). */
  async replaceFromText(text: string | undefined): Promise<TSources> {
    await this.requireOverlay();
    if (text === undefined) {
      throw new BoardError(400, 'Missing `sources` parameter');
    }
    return this.replace(parseText(text));
  }

  /** Validate and store a parsed document (config import). Refusals are BoardErrors with the daemon's text. */
  async replace(value: unknown): Promise<TSources> {
    await this.requireOverlay();
    let doc: TSources;
    try {
      doc = parseSourcesDocument(value);
    } catch (err) {
      if (err instanceof ShapeError) {
        throw new BoardError(400, `\`sources\` is not valid: ${err.message}`);
      }
      throw err;
    }
    try {
      await this.store(doc);
    } catch (err) {
      throw new BoardError(500, `could not store the sources: ${err instanceof Error ? err.message : String(err)}`);
    }
    return doc;
  }

  private async requireOverlay(): Promise<void> {
    const info = await stat(this.overlayDir).catch(() => null);
    if (!info?.isDirectory()) {
      throw new BoardError(503, 'no overlay mounted, so sources cannot be stored');
    }
  }

  private async store(doc: TSources): Promise<void> {
    await writeFileAtomic(this.path, `${JSON.stringify(doc, null, 2)}\n`);
  }
}

function parseText(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new BoardError(400, `\`sources\` is not valid: ${err instanceof Error ? err.message : String(err)}`);
  }
}
