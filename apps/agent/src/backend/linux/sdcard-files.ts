import type { TSdCardEntry } from '@tpfleet/board-api';
import { readdir, realpath, stat } from 'node:fs/promises';
import { posix, relative, sep } from 'node:path';
import { BoardError } from '../backend.js';
import type { RootFs } from './root-fs.js';

export const SDCARD = '/mnt/sdcard';
const MIN_IMAGE_BYTES = 16 * 1024 * 1024;
const IMAGE_SUFFIXES = ['.img', '.raw', '.bin', '.img.xz', '.raw.xz', '.img.gz'];
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * One directory level of the card. The status codes are this project's choice (the
 * daemon's are unknown): not mounted 503, no such directory 404, outside the card or not a directory 400, I/O 500.
 */
export async function listSdcard(fs: RootFs, subPath: string): Promise<TSdCardEntry[]> {
  let cardRoot: string;
  try {
    cardRoot = await realpath(fs.path(SDCARD));
  } catch {
    throw new BoardError(503, 'the microSD card is not mounted');
  }
  const relativeRequest = subPath.replace(/^\/+/, '');
  let target: string;
  try {
    target = await realpath(posix.join(cardRoot, relativeRequest));
  } catch {
    throw new BoardError(404, 'no such directory on the microSD card');
  }
  const rel = relative(cardRoot, target);
  if (rel.startsWith('..') || rel.startsWith(sep) || posix.isAbsolute(rel)) {
    throw new BoardError(400, 'path is outside the microSD card');
  }
  let dirents;
  try {
    if (!(await stat(target)).isDirectory()) {
      throw new BoardError(400, 'not a directory');
    }
    dirents = await readdir(target, {
      withFileTypes: true,
      encoding: 'buffer',
    });
  } catch (error) {
    if (error instanceof BoardError) {
      throw error;
    }
    throw new BoardError(500, `reading the microSD card: ${(error as Error).message}`);
  }

  const entries: TSdCardEntry[] = [];
  for (const dirent of dirents) {
    let name: string;
    try {
      name = utf8.decode(dirent.name);
    } catch {
      continue; // names that are not UTF-8 are skipped
    }
    if (name === 'lost+found') {
      continue;
    }
    let info;
    try {
      info = await stat(posix.join(target, name));
    } catch {
      continue; // a dangling symlink or an entry removed meanwhile
    }
    const directory = info.isDirectory();
    const size = directory ? 0 : info.size;
    const entry: TSdCardEntry = {
      path: rel === '' ? name : posix.join(rel.split(sep).join('/'), name),
      name,
      directory,
      size,
      modified: Number.isFinite(info.mtimeMs) ? Math.floor(info.mtimeMs / 1000) : null,
      flashable: false,
    };
    const reason = verdict(name, directory, size);
    if (reason === null) {
      entry.flashable = true;
    } else {
      entry.reason = reason;
    }
    entries.push(entry);
  }
  return entries.sort((a, b) => {
    if (a.directory !== b.directory) {
      return a.directory ? -1 : 1;
    }
    const x = a.name.toLowerCase();
    const y = b.name.toLowerCase();
    return x < y ? -1 : x > y ? 1 : 0;
  });
}

/** Null when flashable, else the reason; decided from the name and size only (files are never opened). */
export function verdict(name: string, directory: boolean, size: number): string | null {
  if (directory) {
    return 'a directory';
  }
  const lower = name.toLowerCase();
  if (IMAGE_SUFFIXES.some((suffix) => lower.endsWith(suffix))) {
    return size < MIN_IMAGE_BYTES
      ? `only ${size} bytes — too small to be an OS image, most likely a truncated download`
      : null;
  }
  if (lower.endsWith('.tpu')) {
    return 'BMC firmware, not a node image — use the firmware page';
  }
  return 'not an OS image';
}
