import { lstat, mkdir, readdir, readFile, readlink, rm, rmdir, statfs, symlink, writeFile } from 'node:fs/promises';
import { posix, resolve } from 'node:path';

/** The figures of statvfs the API reports (blocks × fragment size). */
export interface FsStats {
  blocks: number;
  bfree: number;
  /** Fragment size. Node's statfs only exposes f_bsize, which equals f_frsize on every Linux filesystem we meet. */
  bsize: number;
}

/** statvfs of a path ON THE BOARD ('/', '/mnt/sdcard'); the default resolves it under the root. */
export type StatFsFn = (boardPath: string) => Promise<FsStats>;

/**
 * All file access of the Linux backend, with every board path (`/proc/...`, `/sys/...`, `/etc/...`) resolved under
 * `root`, so that the same code runs on the controller (root `/`) and against a fixture tree in a temp directory.
 * Readers never throw: a missing or unreadable file is `null`, which the record builders turn into the specified
 * nulls / `present: false` / `"unknown"`.
 */
export class RootFs {
  readonly statfs: StatFsFn;

  constructor(
    readonly root: string,
    statfsFn?: StatFsFn,
  ) {
    this.statfs =
      statfsFn ??
      (async (boardPath) => {
        const stats = await statfs(this.path(boardPath));
        return { blocks: stats.blocks, bfree: stats.bfree, bsize: stats.bsize };
      });
  }

  /** Host path of a board path. `..` cannot climb above the root because the board path is normalised first. */
  path(boardPath: string): string {
    return resolve(this.root, `.${posix.normalize(`/${boardPath}`)}`);
  }

  async text(boardPath: string): Promise<string | null> {
    try {
      return await readFile(this.path(boardPath), 'utf8');
    } catch {
      return null;
    }
  }

  async bytes(boardPath: string): Promise<Buffer | null> {
    try {
      return await readFile(this.path(boardPath));
    } catch {
      return null;
    }
  }

  /** Trimmed content; null when missing, unreadable or empty after trimming. Sysfs values end in a newline. */
  async trimmed(boardPath: string): Promise<string | null> {
    const text = await this.text(boardPath);
    const value = text?.replace(/\0+$/, '').trim();
    return value ? value : null;
  }

  /** A whole decimal integer (sysfs style); null for anything else, so "garbage" never becomes NaN. */
  async int(boardPath: string): Promise<number | null> {
    return parseIntStrict(await this.trimmed(boardPath));
  }

  async names(boardPath: string): Promise<string[]> {
    try {
      return await readdir(this.path(boardPath));
    } catch {
      return [];
    }
  }

  async exists(boardPath: string): Promise<boolean> {
    try {
      await lstat(this.path(boardPath));
      return true;
    } catch {
      return false;
    }
  }

  async isDirectory(boardPath: string): Promise<boolean> {
    try {
      return (await lstat(this.path(boardPath))).isDirectory() || (await this.isDirViaLink(boardPath));
    } catch {
      return false;
    }
  }

  /** Last path component of a symlink's target (sysfs links such as `cdev0 -> ../cooling_device0`). */
  async linkTargetName(boardPath: string): Promise<string | null> {
    try {
      return posix.basename(await readlink(this.path(boardPath)));
    } catch {
      return null;
    }
  }

  /** A symlink's whole target as written (sysfs `/sys/block/sda -> ../devices/…/1-1.2/…/block/sda`). */
  async linkTarget(boardPath: string): Promise<string | null> {
    try {
      return await readlink(this.path(boardPath));
    } catch {
      return null;
    }
  }

  /** A symlink at `boardPath` to the board path `target` (configfs links a function into a gadget configuration). */
  async symlink(target: string, boardPath: string): Promise<void> {
    await symlink(this.path(target), this.path(boardPath));
  }

  async write(boardPath: string, content: string): Promise<void> {
    await writeFile(this.path(boardPath), content);
  }

  async mkdirp(boardPath: string): Promise<void> {
    await mkdir(this.path(boardPath), { recursive: true });
  }

  async remove(boardPath: string): Promise<void> {
    await rm(this.path(boardPath), { force: true });
  }

  /** rmdir, not rm -r: configfs directories are removed empty, their attribute files go with them. */
  async rmdir(boardPath: string): Promise<void> {
    await rmdir(this.path(boardPath));
  }

  private async isDirViaLink(boardPath: string): Promise<boolean> {
    try {
      return (await readdir(this.path(boardPath))).length >= 0;
    } catch {
      return false;
    }
  }
}

export function parseIntStrict(text: string | null | undefined): number | null {
  if (text === null || text === undefined || !/^-?\d+$/.test(text.trim())) {
    return null;
  }
  const value = Number(text.trim());
  return Number.isSafeInteger(value) ? value : null;
}

export function parseNumber(text: string | null | undefined): number | null {
  if (text === null || text === undefined || !/^-?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(text.trim())) {
    return null;
  }
  const value = Number(text.trim());
  return Number.isFinite(value) ? value : null;
}

export function nonNegative(value: number | null): number | null {
  return value !== null && value >= 0 ? value : null;
}
