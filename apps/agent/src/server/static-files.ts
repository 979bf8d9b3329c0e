import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, resolve, sep } from 'node:path';

import { sendText } from '../http/reply.js';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The web interface from `root`, without authentication (as on the board). An unknown path gets `index.html`
 * (single-page app); the caller never sends API paths here, so a mistyped API path is a 404, not the SPA.
 */
export async function serveStatic(
  req: IncomingMessage,
  res: ServerResponse,
  root: string,
  pathname: string,
): Promise<void> {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    sendText(res, 405, 'static files are read with GET or HEAD', { Allow: 'GET, HEAD' });
    return;
  }
  const base = resolve(root);
  let relative: string;
  try {
    relative = decodeURIComponent(pathname);
  } catch {
    relative = '/';
  }
  const candidate = resolve(join(base, relative));
  const inside = candidate === base || candidate.startsWith(base + sep);
  const file = (inside && (await fileAt(candidate))) || (inside && (await fileAt(join(candidate, 'index.html'))));
  const chosen = file || (await fileAt(join(base, 'index.html')));
  if (!chosen) {
    sendText(res, 404, 'not found');
    return;
  }
  res.writeHead(200, {
    'Content-Type': TYPES[extname(chosen.path).toLowerCase()] ?? 'application/octet-stream',
    'Content-Length': String(chosen.size),
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(chosen.path)
    .on('error', () => res.destroy())
    .pipe(res);
}

async function fileAt(path: string): Promise<{ path: string; size: number } | undefined> {
  try {
    const info = await stat(path);
    return info.isFile() ? { path, size: info.size } : undefined;
  } catch {
    return undefined;
  }
}
