import type { IncomingMessage } from 'node:http';

import { BoardError } from '../backend/backend.js';
import { UPLOAD_IDLE_MS } from './upload-source.js';

/** How long the source may take to answer with its headers (the client waits for the handle meanwhile). */
export const URL_HEADERS_TIMEOUT_MS = 30_000;

/** An image the agent downloads itself (bmcd's `DataTransfer::url`): its length, a file name, and the body. */
export interface UrlSource {
  /** The last path segment of the URL (bmcd's rule), or the host name. */
  name: string;
  /** Content-Length of the answer, or the request's `length` when the source sends none. */
  size: number;
  /** The body, pulled as the writer consumes it: the socket is not read while the writer is behind. */
  body: AsyncIterable<Buffer>;
  /** Drop the connection (cancel, a refused start). */
  abort(): void;
}

/** Whether `file` names a URL rather than a file: bmcd tests the `http` prefix. */
export function isUrlSource(file: string): boolean {
  return /^https?:/i.test(file);
}

/** Redirects followed (bmcd's reqwest follows up to 10; image hosts such as GitHub releases redirect once or twice). */
const MAX_REDIRECTS = 10;

/**
 * Open the URL before the handle is answered, as bmcd does, so a bad URL, an unreachable host or a non-2xx answer is
 * refused to the caller instead of becoming a transfer Error nobody reads. node:http(s) rather than fetch: its
 * response is a classic stream that stops reading the socket while the writer is behind, and a 256 MiB download
 * through fetch peaked about 30 MB higher on the 128 MB controller (test/flash-memory.e2e-spec.ts bounds it).
 */
export async function openUrlSource(file: string, length: number | undefined): Promise<UrlSource> {
  let url = parseUrl(file);
  let res: IncomingMessage;
  for (let hop = 0; ; hop++) {
    res = await answerOf(url);
    const location = res.headers.location;
    if (res.statusCode === undefined || res.statusCode < 300 || res.statusCode >= 400 || location === undefined) {
      break;
    }
    res.destroy();
    if (hop >= MAX_REDIRECTS) {
      throw new BoardError(502, `could not download ${file}: more than ${MAX_REDIRECTS} redirects`);
    }
    url = parseUrl(new URL(location, url).href);
  }
  const status = res.statusCode ?? 0;
  if (status < 200 || status >= 300) {
    res.destroy();
    throw new BoardError(
      502,
      `could not download ${url.href}: the server answered ${status} ${res.statusMessage ?? ''}`.trim(),
    );
  }
  const announced = res.headers['content-length'];
  const size = announced !== undefined && /^\d+$/.test(announced) ? Number(announced) : length;
  if (size === undefined) {
    res.destroy();
    throw new BoardError(411, `${url.href} sends no Content-Length; pass its size as \`length\``);
  }
  if (length !== undefined && length !== size) {
    res.destroy();
    throw new BoardError(400, `${url.href} is ${size} bytes, but \`length\` says ${length}`);
  }
  // A source that goes quiet mid-download fails the transfer, as an upload that goes quiet does.
  res.setTimeout(UPLOAD_IDLE_MS, () =>
    res.destroy(new Error(`the download sent nothing for ${UPLOAD_IDLE_MS / 1000} s`)),
  );
  const segment = url.pathname
    .split('/')
    .filter((s) => s !== '')
    .at(-1);
  const name = segment !== undefined ? decoded(segment) : url.hostname || 'http_file';
  const body = res;
  return { name, size, body: body as AsyncIterable<Buffer>, abort: () => body.destroy() };
}

function parseUrl(file: string): URL {
  let url: URL;
  try {
    url = new URL(file);
  } catch {
    throw new BoardError(400, `${file} could not be parsed as a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new BoardError(400, `${file}: only http and https URLs can be downloaded`);
  }
  return url;
}

/** The answer's head; a network failure or no head within the timeout is a 502 with the reason. */
async function answerOf(url: URL): Promise<IncomingMessage> {
  const { get } = url.protocol === 'https:' ? await import('node:https') : await import('node:http');
  return new Promise((resolve, reject) => {
    const req = get(url, { timeout: URL_HEADERS_TIMEOUT_MS }, resolve);
    req.once('timeout', () => req.destroy(new Error(`no answer within ${URL_HEADERS_TIMEOUT_MS / 1000} s`)));
    req.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code !== undefined ? `${err.code} (${err.message})` : err.message;
      reject(new BoardError(502, `could not download ${url.href}: ${why}`));
    });
  });
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}
