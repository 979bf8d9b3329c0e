import { appendFile, copyFile, mkdir, open, readFile, stat, unlink } from 'node:fs/promises';
import { basename, join } from 'node:path';

import type { TFirmwareSlots, TSlot } from '@tpfleet/board-api';
import { sameVersion } from '@tpfleet/board-api/version';

import { writeFileAtomic } from '../atomic-file.js';
import { BoardError } from '../backend.js';
import {
  type FirmwareSlotsDriver,
  formatNote,
  lastPromotion,
  type Nextboot,
  parseNote,
  promotionHistory,
  ROOTFS_VOLUME_BYTES,
  type StagedNote,
  stagedImage,
  tagFromImageName,
} from '../firmware-slots.js';
import { busyboxDate } from '../timestamps.js';

/** What the simulated firmware needs from the simulated board. */
export interface SimulatedFirmwareHost {
  about(): Promise<{ version: string }>;
  setFirmwareVersion(version: string): void;
  reboot(options: { fel: boolean }): Promise<void>;
}

export interface Volume {
  id: number;
  name: string;
  size_bytes: number;
  /** os-release VERSION of the image in the volume (what the image reports once booted). */
  version: string | null;
}

/** A volume U-Boot booted tentatively, waiting for the promotion gate's verdict. */
export interface BootingImage {
  name: string;
  ubi: Ubi;
  booted: Volume;
  previous: Volume | null;
  /** The version the board ran before this boot (what a rollback goes back to). */
  wasVersion: string;
}

export interface Ubi {
  volumes: Volume[];
  /** Volume id with the attached block device (the running slot). */
  attached: number;
}

export interface SimulatedSlotsOptions {
  /** The board's state directory; the slots live in `firmware/`, the overlay files in `overlay/`. */
  stateDir: string;
  host: SimulatedFirmwareHost;
  now?: () => number;
}

/** Which promotion-gate check a fault makes fail. */
export type GateFault = 'metrics' | null;

/**
 * A/B slots of a simulated board, as files under its state directory: `firmware/ubi.json` (the UBI volumes and which
 * one is attached), `firmware/nextboot` (U-Boot's variable; absent = not defined) and, on `overlay/`, the staged note,
 * `postupdate.log` and `rollback-version`. `boot()` is what the board runs at a reboot: with `nextboot` armed it boots
 * the staged slot once and runs the promotion gate (S99postupdate), which promotes (ubirename) or rolls back (reboot
 * into `rootfs`). A fault makes the gate fail.
 */
export class SimulatedSlots implements FirmwareSlotsDriver {
  readonly maxImageBytes = ROOTFS_VOLUME_BYTES;
  readonly overlayDir: string;
  private readonly dir: string;
  private readonly now: () => number;
  private gateFault: GateFault = null;

  constructor(private readonly options: SimulatedSlotsOptions) {
    this.dir = join(options.stateDir, 'firmware');
    this.overlayDir = join(options.stateDir, 'overlay');
    this.now = options.now ?? Date.now;
  }

  /** Rack fault switch: the next promotion gates fail their metrics check. */
  setGateFail(fail: boolean): void {
    this.gateFault = fail ? 'metrics' : null;
  }

  async start(): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    await mkdir(this.overlayDir, { recursive: true });
    if (!(await this.readUbi())) {
      const version = (await this.options.host.about()).version;
      await this.writeUbi({
        volumes: [
          { id: 0, name: 'rootfs', size_bytes: ROOTFS_VOLUME_BYTES, version },
          { id: 1, name: 'rootfs_prev', size_bytes: ROOTFS_VOLUME_BYTES, version: null },
        ],
        attached: 0,
      });
    }
  }

  async slots(): Promise<TFirmwareSlots> {
    const ubi = await this.ubi();
    const runningVolume = ubi.volumes.find((v) => v.id === ubi.attached) ?? null;
    const slot = (v: Volume, version: string | null): TSlot => ({
      volume: v.name,
      volume_id: v.id,
      size_bytes: v.size_bytes,
      version,
    });
    const running = runningVolume ? slot(runningVolume, (await this.options.host.about()).version) : null;
    let rollbackVolume = ubi.volumes.find((v) => v.name === 'rootfs_prev' && v !== runningVolume) ?? null;
    if (!rollbackVolume && runningVolume) {
      const others = ubi.volumes.filter((v) => v !== runningVolume && v.name !== 'rootfs_new');
      rollbackVolume = others.length === 1 ? others[0]! : null;
    }
    const rollback = rollbackVolume ? slot(rollbackVolume, await this.overlayText('rollback-version', true)) : null;
    const next = await this.nextboot();
    const log = await this.overlayText('postupdate.log');
    const slots: TFirmwareSlots = {
      present: true,
      running,
      rollback,
      update_staged: next.update_staged,
      nextboot: next.nextboot,
      last_promotion: log === null ? null : lastPromotion(log),
      staged: stagedImage(await this.overlayText('staged-firmware')),
    };
    if (log !== null) {
      slots.promotion_history = promotionHistory(log);
    }
    return slots;
  }

  async nextboot(): Promise<Nextboot> {
    const value = await readFile(join(this.dir, 'nextboot'), 'utf8').catch(() => null);
    if (value === null) {
      return { update_staged: false, nextboot: null };
    }
    return value.trim() ? { update_staged: true, nextboot: value.trim() } : { update_staged: false, nextboot: null };
  }

  async setNextboot(value: string | null): Promise<void> {
    if (value === null) {
      await unlink(join(this.dir, 'nextboot')).catch(() => undefined);
    } else {
      await writeFileAtomic(join(this.dir, 'nextboot'), `${value}\n`);
    }
  }

  /** osupdate: the inactive slot becomes `rootfs_new` holding the image; nextboot is armed for one boot. */
  async writeImage(file: string): Promise<void> {
    const size = (await stat(file)).size;
    if (size > this.maxImageBytes) {
      throw new BoardError(400, `osupdate: ${basename(file)} does not fit the rootfs volume`);
    }
    const ubi = await this.ubi();
    const target =
      ubi.volumes.find((v) => v.name === 'rootfs_new') ??
      ubi.volumes.find((v) => v.name === 'rootfs_prev' && v.id !== ubi.attached) ??
      ubi.volumes.find((v) => v.id !== ubi.attached);
    if (!target) {
      throw new BoardError(500, 'osupdate: no inactive rootfs volume');
    }
    target.name = 'rootfs_new';
    target.size_bytes = size;
    target.version = await imageVersion(file);
    // Keep the bytes beside the slot: the image is what the board will boot.
    await copyFile(file, join(this.dir, `volume-${target.id}.img`));
    await this.writeUbi(ubi);
    await this.setNextboot('ubi0:rootfs_new');
  }

  async writeStagedNote(note: StagedNote): Promise<void> {
    await writeFileAtomic(join(this.overlayDir, 'staged-firmware'), formatNote(note));
  }

  async clearStagedNote(): Promise<void> {
    await unlink(join(this.overlayDir, 'staged-firmware')).catch(() => undefined);
  }

  async stagingDirs(): Promise<string[]> {
    return [join(this.options.stateDir, 'sdcard'), this.overlayDir, join(this.options.stateDir, 'tmp')];
  }

  /**
   * A controller reboot: with `nextboot` armed, U-Boot boots that volume once (the variable is one-shot) and
   * S99postupdate decides. Resolves when the verdict is written; a rollback reboots the board once more.
   */
  async boot(): Promise<'promoted' | 'rolled-back' | 'no-update'> {
    const booting = await this.bootImage();
    return booting ? this.runGate(booting) : 'no-update';
  }

  /**
   * What U-Boot and the kernel do before the daemon can answer: boot the armed volume once. From then on the board
   * runs that image (its os-release is in the image) while the gate is still deciding. Null: nothing was armed.
   */
  async bootImage(): Promise<BootingImage | null> {
    const next = await this.nextboot();
    if (!next.update_staged || !next.nextboot) {
      return null;
    }
    await this.setNextboot(null);
    const ubi = await this.ubi();
    const name = next.nextboot.replace(/^ubi\d+:/, '');
    const booted = ubi.volumes.find((v) => v.name === name);
    if (!booted || booted.name === 'rootfs') {
      return null;
    }
    const previous = ubi.volumes.find((v) => v.name === 'rootfs') ?? null;
    const wasVersion = (await this.options.host.about()).version;
    ubi.attached = booted.id;
    await this.writeUbi(ubi);
    this.options.host.setFirmwareVersion(booted.version ?? 'unknown');
    return { name, ubi, booted, previous, wasVersion };
  }

  /** S99postupdate on a tentatively booted image: check it, then promote it or roll back (one more reboot). */
  async runGate({ name, ubi, booted, previous, wasVersion }: BootingImage): Promise<'promoted' | 'rolled-back'> {
    const noteText = await this.overlayText('staged-firmware');
    const note = noteText === null ? null : parseNote(noteText);

    await this.log('tentative boot; checking this image before making it permanent');
    await this.log('bmcd answered after 3s');
    await this.log('switch ports present: node1 node2 node3 node4');
    let failed = false;
    const reports = booted.version ?? 'unknown';
    const staged = note?.get('VERSION');
    if (!note) {
      await this.log('no staged note; version check skipped');
    } else if (!staged) {
      await this.log(`staged build '${note.get('FILE') ?? ''}' carries no version; version check skipped`);
    } else if (!sameVersion(staged, reports)) {
      await this.log(`FAILED: staged ${staged} but this image reports ${reports}`);
      failed = true;
    } else {
      await this.log(`version matches the staged note: ${reports}`);
    }
    if (!failed) {
      if (this.gateFault === 'metrics') {
        await this.log('FAILED: /metrics did not answer with bmcd_build_info');
        failed = true;
      } else {
        await this.log('metrics answer, with bmcd_build_info');
      }
    }
    await this.clearStagedNote();

    if (failed && previous) {
      // The rollback line first: whoever then finds the board back on the old image also finds why.
      await this.log('rolling back to the volume named rootfs by rebooting');
      ubi.attached = previous.id;
      await this.writeUbi(ubi);
      this.options.host.setFirmwareVersion(wasVersion);
      void this.options.host.reboot({ fel: false });
      return 'rolled-back';
    }
    if (failed) {
      await this.log('no rootfs volume to fall back to; promoting anyway');
    }
    for (const v of ubi.volumes) {
      if (v.name === 'rootfs_prev') {
        v.name = `rootfs_old_${v.id}`;
      }
    }
    ubi.volumes = ubi.volumes.filter((v) => !v.name.startsWith('rootfs_old_'));
    if (previous) {
      previous.name = 'rootfs_prev';
    }
    booted.name = 'rootfs';
    await this.writeUbi(ubi);
    const replaces = note?.get('REPLACES');
    if (replaces) {
      await writeFileAtomic(join(this.overlayDir, 'rollback-version'), `${replaces}\n`);
    }
    await this.log(`promoted: ${name} is now rootfs; the previous image is rootfs_prev`);
    return 'promoted';
  }

  private async log(message: string): Promise<void> {
    await appendFile(join(this.overlayDir, 'postupdate.log'), `${busyboxDate(this.now())} postupdate: ${message}\n`);
  }

  private async overlayText(name: string, trimmed = false): Promise<string | null> {
    const text = await readFile(join(this.overlayDir, name), 'utf8').catch(() => null);
    if (!trimmed || text === null) {
      return text;
    }
    return text.trim() === '' ? null : text.trim();
  }

  private async ubi(): Promise<Ubi> {
    const ubi = await this.readUbi();
    if (!ubi) {
      throw new BoardError(500, 'the simulated UBI device has not been created (start() not run)');
    }
    return ubi;
  }

  private async readUbi(): Promise<Ubi | null> {
    try {
      return JSON.parse(await readFile(join(this.dir, 'ubi.json'), 'utf8')) as Ubi;
    } catch {
      return null;
    }
  }

  private async writeUbi(ubi: Ubi): Promise<void> {
    await writeFileAtomic(join(this.dir, 'ubi.json'), `${JSON.stringify(ubi, null, 2)}\n`);
  }
}

/**
 * The version a simulated image reports once booted: a `VERSION=` line in its first 4 KiB (tests write one to
 * make the gate's release check fail), else the tag in its file name.
 */
async function imageVersion(file: string): Promise<string | null> {
  const handle = await open(file, 'r');
  let head: string;
  try {
    const { buffer, bytesRead } = await handle.read(Buffer.alloc(4096), 0, 4096, 0);
    head = buffer.subarray(0, bytesRead).toString('latin1');
  } finally {
    await handle.close();
  }
  const declared = /^VERSION="?([^"\n]+)"?$/m.exec(head);
  return declared ? declared[1]!.trim() : tagFromImageName(basename(file));
}
