import { randomBytes } from 'node:crypto';
import { open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/**
 * Replace `path` with `data` so that a reader (or a crash) sees either the old file or the new one, never a torn
 * one: write a temp file in the same directory (rename is only atomic within one filesystem), fsync it, rename it
 * over the target, then fsync the directory so the rename itself survives a power cut. The temp file is removed when
 * anything fails. This is what bmcd does with `bmcd.bin.new` + rename.
 */
export async function writeFileAtomic(path: string, data: string | Uint8Array, mode = 0o644): Promise<void> {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  let renamed = false;
  try {
    const handle = await open(tmp, 'wx', mode);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(tmp, path);
    renamed = true;
    await syncDirectory(dir);
  } finally {
    if (!renamed) {
      await unlink(tmp).catch(() => undefined);
    }
  }
}

/** Best effort: some filesystems (and Windows) refuse to open or fsync a directory. */
async function syncDirectory(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // The rename is done; a directory that cannot be synced only weakens durability, not atomicity.
  }
}

/** Name pattern of the temp files writeFileAtomic leaves behind only if the process dies mid-write. */
export function isAtomicTempName(name: string): boolean {
  return name.startsWith('.') && name.endsWith('.tmp');
}
