import { lstat, mkdir, readdir, realpath, rm, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import type { TSdCardEntry } from '@tpfleet/board-api';
import { BoardError } from '../backend.js';

/**
 * The simulated microSD card: a real directory standing in for `/mnt/sdcard`, with a simulated capacity. Listing
 * follows the daemon word for word; the statuses of the confinement refusals are ours (the daemon's are unknown):
 * outside 400, missing 404, not a directory 400, card not mounted 503.
 */

const MIB = 1024 * 1024;
const MIN_IMAGE_BYTES = 16 * MIB;
const IMAGE_SUFFIXES = ['.img', '.raw', '.bin', '.img.xz', '.raw.xz', '.img.gz'];
/** Filesystem block: statvfs counts whole blocks, so a 1-byte file uses 4 KiB. */
const BLOCK = 4096;
const utf8 = new TextDecoder('utf-8', { fatal: true });

export const SD_OUTSIDE = 'path is outside the microSD card';
export const SD_NO_SUCH_DIRECTORY = 'no such directory on the microSD card';
export const SD_NOT_A_DIRECTORY = 'not a directory';
export const SD_NOT_MOUNTED = 'the microSD card is not mounted';

/** Flashable verdict from the name and size only; files are never opened. */
export function verdict(name: string, directory: boolean, size: number): { flashable: boolean; reason?: string } {
  if (directory) {
    return { flashable: false, reason: 'a directory' };
  }
  const lower = name.toLowerCase();
  if (IMAGE_SUFFIXES.some((s) => lower.endsWith(s))) {
    return size < MIN_IMAGE_BYTES
      ? {
          flashable: false,
          reason: `only ${size} bytes — too small to be an OS image, most likely a truncated download`,
        }
      : { flashable: true };
  }
  if (lower.endsWith('.tpu')) {
    return {
      flashable: false,
      reason: 'BMC firmware, not a node image — use the firmware page',
    };
  }
  return { flashable: false, reason: 'not an OS image' };
}

export async function listSdcard(root: string, subPath: string): Promise<TSdCardEntry[]> {
  let rootReal: string;
  try {
    rootReal = await realpath(root);
  } catch {
    throw new BoardError(503, SD_NOT_MOUNTED);
  }
  const sub = subPath.replace(/^\/+/, '');
  let target: string;
  try {
    target = await realpath(join(rootReal, sub));
  } catch (e) {
    // A path that does not exist is always "no such directory", never "outside" (it leaks nothing either way).
    if (isErrno(e, 'ENOENT') || isErrno(e, 'ENOTDIR')) {
      throw new BoardError(404, SD_NO_SUCH_DIRECTORY);
    }
    throw new BoardError(500, `reading the microSD card: ${message(e)}`);
  }
  const rel = relative(rootReal, target);
  if (rel.startsWith('..') || isAbsolute(rel)) {
    throw new BoardError(400, SD_OUTSIDE);
  }
  const st = await stat(target).catch((e: unknown) => {
    throw new BoardError(500, `reading the microSD card: ${message(e)}`);
  });
  if (!st.isDirectory()) {
    throw new BoardError(400, SD_NOT_A_DIRECTORY);
  }
  const relPrefix = rel === '' ? '' : `${rel.split(sep).join('/')}/`;
  let names: Buffer[];
  try {
    names = await readdir(target, { encoding: 'buffer' });
  } catch (e) {
    throw new BoardError(500, `reading the microSD card: ${message(e)}`);
  }
  const entries: TSdCardEntry[] = [];
  for (const raw of names) {
    let name: string;
    try {
      name = utf8.decode(raw);
    } catch {
      continue; // not UTF-8: skipped, as the daemon does
    }
    if (name === 'lost+found') {
      continue;
    }
    // Follow symlinks like the daemon's metadata call; a dangling link is skipped rather than failing the listing.
    const est = await stat(join(target, name)).catch(() => undefined);
    if (!est) {
      continue;
    }
    const directory = est.isDirectory();
    const size = directory ? 0 : est.size;
    entries.push({
      path: `${relPrefix}${name}`,
      name,
      directory,
      size,
      modified: Math.floor(est.mtimeMs / 1000),
      ...verdict(name, directory, size),
    });
  }
  entries.sort((a, b) => {
    if (a.directory !== b.directory) {
      return a.directory ? -1 : 1;
    }
    const x = a.name.toLowerCase();
    const y = b.name.toLowerCase();
    return x < y ? -1 : x > y ? 1 : a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
  });
  return entries;
}

/** Bytes in use, as statvfs would count them: whole blocks per file and per directory. Symlinks are not followed. */
export async function usedBytes(root: string): Promise<number> {
  let total = 0;
  const stack = [root];
  while (stack.length > 0) {
    const dir = stack.pop()!;
    let names: string[];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    total += BLOCK;
    for (const name of names) {
      const p = join(dir, name);
      const st = await lstat(p).catch(() => undefined);
      if (!st) {
        continue;
      }
      if (st.isDirectory()) {
        stack.push(p);
      } else {
        total += Math.ceil(st.size / BLOCK) * BLOCK;
      }
    }
  }
  return total;
}

/** What mkfs leaves: an empty root with `lost+found`. */
export async function emptyCard(root: string): Promise<void> {
  const names = await readdir(root);
  await Promise.all(names.map((n) => rm(join(root, n), { recursive: true, force: true })));
  await mkdir(join(root, 'lost+found'), { recursive: true });
}

function isErrno(e: unknown, code: string): boolean {
  return typeof e === 'object' && e !== null && (e as { code?: unknown }).code === code;
}
function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
