import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
  '.map': 'application/json',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};

export interface StaticFile {
  body: Buffer;
  type: string;
}

/** The repository (or installed app) root: the nearest folder above this file whose package.json is tpfleet's. */
export function packageRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'tpfleet') {
      return dir;
    }
    if (dirname(dir) === dir) {
      throw new Error(`no tpfleet package.json above ${from}`);
    }
  }
}

/**
 * Every file under `dir`, read once into memory by its path relative to `dir` ('/'-separated). The console's build
 * is a few hundred KiB and never changes while the process runs, so there is no per-request disk access and no
 * way for a request path to reach outside the folder.
 */
export function readStaticDir(dir: string): Map<string, StaticFile> {
  const files = new Map<string, StaticFile>();
  if (!existsSync(dir)) {
    return files;
  }
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const full = join(d, name);
      if (statSync(full).isDirectory()) {
        walk(full);
      } else {
        const type = TYPES[extname(name)] ?? 'application/octet-stream';
        files.set(relative(dir, full).split(sep).join('/'), { body: readFileSync(full), type });
      }
    }
  };
  walk(dir);
  return files;
}
