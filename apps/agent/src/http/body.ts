import type { IncomingMessage } from 'node:http';

import { BoardError } from '../backend/backend.js';

/** Bodies above this are refused with 413 (actix's default payload limit, which the daemon presumably keeps). */
export const MAX_BODY_BYTES = 256 * 1024;

/**
 * Read the whole request body, refusing (413) as soon as it passes the limit: a declared Content-Length over the
 * limit is refused before a byte is read, so a client cannot make the 128 MB controller buffer a large upload.
 */
export async function readBody(req: IncomingMessage, limit = MAX_BODY_BYTES): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    throw tooLarge(limit);
  }
  // A body trickled in slowly must not hold a socket forever (the server has no whole-request limit, for uploads).
  let late = false;
  const deadline = setTimeout(() => {
    late = true;
    req.destroy();
  }, BODY_DEADLINE_MS);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > limit) {
        throw tooLarge(limit);
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (late) {
      throw new BoardError(408, `the body did not arrive within ${BODY_DEADLINE_MS / 1000} s`);
    }
    throw err;
  } finally {
    clearTimeout(deadline);
  }
  return Buffer.concat(chunks);
}

/** How long an ordinary (small) body may take to arrive. */
export const BODY_DEADLINE_MS = 60_000;

function tooLarge(limit: number): BoardError {
  return new BoardError(413, `the body is larger than ${limit / 1024} KiB`);
}

/** Media type without parameters, lower-cased; undefined when the header is absent or blank. */
export function mediaType(req: IncomingMessage): string | undefined {
  const raw = req.headers['content-type'];
  if (raw === undefined) {
    return undefined;
  }
  const type = raw.split(';')[0]!.trim().toLowerCase();
  return type === '' ? undefined : type;
}

export type ParsedBody =
  | { kind: 'empty' }
  | { kind: 'form'; fields: Record<string, string> }
  | { kind: 'json'; value: Record<string, unknown> };

/**
 * Parse a POST body the way the daemon's path form does: empty is fine whatever the Content-Type says,
 * otherwise form or JSON-object only, with the daemon's refusal messages.
 */
export function parseBody(req: IncomingMessage, raw: Buffer): ParsedBody {
  if (raw.length === 0) {
    return { kind: 'empty' };
  }
  const type = mediaType(req);
  if (type === undefined) {
    throw new BoardError(400, 'a body needs a Content-Type');
  }
  if (type === 'application/x-www-form-urlencoded') {
    return { kind: 'form', fields: parseForm(raw) };
  }
  if (type === 'application/json') {
    return { kind: 'json', value: parseJsonObject(raw) };
  }
  throw new BoardError(400, `${type} is not accepted; send application/x-www-form-urlencoded or application/json`);
}

function parseForm(raw: Buffer): Record<string, string> {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new BoardError(400, 'the form body is not UTF-8');
  }
  const fields: Record<string, string> = {};
  for (const [key, value] of new URLSearchParams(text)) {
    if (!(key in fields)) {
      fields[key] = value;
    }
  }
  return fields;
}

export function parseJsonObject(raw: Buffer): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    throw new BoardError(400, `the JSON body could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new BoardError(400, 'the JSON body must be an object');
  }
  return value as Record<string, unknown>;
}

/** First value of each query key (a repeated key keeps its first value, as serde's query extractor does). */
export function queryParams(search: URLSearchParams): Record<string, string> {
  const params: Record<string, string> = {};
  for (const [key, value] of search) {
    if (!(key in params)) {
      params[key] = value;
    }
  }
  return params;
}

/**
 * Merge a POST body into the query parameters; the query wins on a clash. JSON members that are not strings become
 * their JSON text (`1` → `"1"`, `true` → `"true"`), as the daemon's merge does.
 */
export function mergeBody(query: Record<string, string>, body: ParsedBody): Record<string, string> {
  const merged: Record<string, string> = {};
  if (body.kind === 'form') {
    Object.assign(merged, body.fields);
  }
  if (body.kind === 'json') {
    for (const [key, value] of Object.entries(body.value)) {
      merged[key] = typeof value === 'string' ? value : JSON.stringify(value);
    }
  }
  return Object.assign(merged, query);
}

/**
 * `document` operations (POST /config, POST /firmware/sources): a JSON body whose document key is missing, or holds
 * something other than a string, is itself the document. The daemon treats `{"sources":[…]}` as already wrapped and
 * then fails to parse the array; that quirk is fixed here on purpose (POST /firmware/sources).
 */
export function mergeDocumentBody(
  query: Record<string, string>,
  body: ParsedBody,
  documentKey: string,
): Record<string, string> {
  if (body.kind === 'json' && typeof body.value[documentKey] !== 'string') {
    return { [documentKey]: JSON.stringify(body.value), ...query };
  }
  return mergeBody(query, body);
}
