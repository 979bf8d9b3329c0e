import { mkdir, unlink } from 'node:fs/promises';
import { dirname } from 'node:path';

import type { TFirmwareSlots } from '@tpfleet/board-api';

import { writeFileAtomic } from '../atomic-file.js';
import { BoardError } from '../backend.js';
import type { RootFs } from './root-fs.js';
import { type CommandRunner, lastLine } from './runner.js';
import { readFirmwareSlots, readNextboot, writeNextboot } from './slots.js';
import {
  type FirmwareSlotsDriver,
  formatNote,
  type Nextboot,
  ROOTFS_VOLUME_BYTES,
  type StagedNote,
} from '../firmware-slots.js';

const STAGED_NOTE = '/mnt/overlay/staged-firmware';
const OSUPDATE = '/sbin/osupdate';
const OSUPDATE_TIMEOUT_MS = 15 * 60_000;

export interface LinuxSlotsOptions {
  fs: RootFs;
  /** The Linux backend's command runner (argument vectors, no shell, hard timeouts). */
  runner: CommandRunner;
  /** Put before fw_printenv/fw_setenv's arguments (tests: `['-c', fw_env.config]`). */
  fwEnvArgs?: readonly string[];
}

/**
 * The controller's A/B slots: UBI volume names from sysfs, U-Boot's `nextboot` through
 * fw_printenv/fw_setenv, the image written by `/sbin/osupdate <image>` (which also arms `nextboot`), the staged note
 * and the promotion log on `/mnt/overlay`. The promotion gate itself is the image's S99postupdate, not ours.
 */
export class LinuxSlots implements FirmwareSlotsDriver {
  readonly maxImageBytes = ROOTFS_VOLUME_BYTES;

  constructor(private readonly options: LinuxSlotsOptions) {}

  slots(): Promise<TFirmwareSlots> {
    return readFirmwareSlots(this.options.fs, this.options.runner, this.options.fwEnvArgs ?? []);
  }

  nextboot(): Promise<Nextboot> {
    return readNextboot(this.options.runner, this.options.fwEnvArgs ?? []);
  }

  setNextboot(value: string | null): Promise<void> {
    return writeNextboot(this.options.runner, this.options.fwEnvArgs ?? [], value);
  }

  async writeImage(file: string): Promise<void> {
    const result = await this.options.runner
      .run(OSUPDATE, [file], { timeoutMs: OSUPDATE_TIMEOUT_MS })
      .catch((err: unknown) => {
        throw new BoardError(500, `cannot run the updater: ${err instanceof Error ? err.message : String(err)}`);
      });
    if (result.code !== 0) {
      throw new BoardError(400, lastLine(result));
    }
  }

  async writeStagedNote(note: StagedNote): Promise<void> {
    const path = this.options.fs.path(STAGED_NOTE);
    await mkdir(dirname(path), { recursive: true });
    await writeFileAtomic(path, formatNote(note));
  }

  async clearStagedNote(): Promise<void> {
    await unlink(this.options.fs.path(STAGED_NOTE)).catch(() => undefined);
  }

  /** The first real mounts of `/mnt/sdcard`, `/mnt/overlay`, then `/tmp`. */
  async stagingDirs(): Promise<string[]> {
    const mounts = (await this.options.fs.text('/proc/mounts')) ?? '';
    const mounted = new Set(mounts.split('\n').map((line) => line.split(' ')[1]));
    const dirs = ['/mnt/sdcard', '/mnt/overlay'].filter((d) => mounted.has(d));
    return [...dirs, '/tmp'].map((d) => this.options.fs.path(d));
  }
}
