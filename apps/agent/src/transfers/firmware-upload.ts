import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

import { BoardError } from '../backend/backend.js';
import { type FirmwareSlotsDriver, tagFromImageName } from '../backend/firmware-slots.js';
import { utcStamp } from '../backend/timestamps.js';
import { isReleaseTag } from '../firmware/version.js';

/** Where an uploaded firmware image goes (the daemon's upload install). */
export interface FirmwareUpload {
  slots: FirmwareSlotsDriver;
  /** Host path of the microSD card (`/mnt/sdcard`); `park` writes into its `firmware/` directory. */
  sdcardDir: string;
  /** Only store the image on the card (a `local` source candidate), do not stage it. */
  park: boolean;
  now: () => number;
  /** The running version, recorded as `REPLACES` in the staged note. */
  running: () => Promise<string>;
}

/** Refusals a firmware upload gets before any byte moves (the staging check, the name, the size). */
export async function checkFirmwareUpload(
  target: FirmwareUpload,
  file: string,
  size: number,
  force: boolean,
): Promise<void> {
  if (!/^[^/\\\0]+$/.test(file) || file === '.' || file === '..') {
    throw new BoardError(400, '`file` must be a plain file name, without a directory');
  }
  if (target.park) {
    return;
  }
  if (size > target.slots.maxImageBytes) {
    throw new BoardError(
      400,
      `${file} is ${size} bytes; the rootfs volume takes at most ${target.slots.maxImageBytes}`,
    );
  }
  const staged = await target.slots.nextboot();
  if (staged.update_staged === true && !force) {
    throw new BoardError(
      409,
      'an image is already staged for the next boot; reboot to take it, or pass force=1 to replace it',
    );
  }
}

/**
 * Write an uploaded firmware image. Parked: into the card's `firmware/` directory through a `.partial` file and a
 * rename. Otherwise: into the staging directory, then `osupdate` (the slots driver) and the staged note with
 * `SOURCE=upload`. Any failure removes what was written.
 */
export async function writeFirmwareUpload(
  target: FirmwareUpload,
  file: string,
  source: AsyncIterable<Buffer>,
  options: { signal: AbortSignal; onProgress(bytes: number): void },
): Promise<void> {
  const dir = target.park
    ? join(target.sdcardDir, 'firmware')
    : join((await target.slots.stagingDirs())[0]!, 'os_upgrade');
  await mkdir(dir, { recursive: true });
  // Staged uploads keep their name (osupdate and the version check read it); parked ones appear only when complete.
  const partial = join(dir, target.park ? `${file}.partial` : file);
  let written = 0;
  const counted = async function* () {
    for await (const chunk of source) {
      written += chunk.length;
      options.onProgress(written);
      yield chunk;
    }
  };
  try {
    await pipeline(Readable.from(counted()), createWriteStream(partial), { signal: options.signal });
    if (target.park) {
      await rename(partial, join(dir, file));
      return;
    }
    const running = await target.running();
    await target.slots.setNextboot(null);
    await target.slots.clearStagedNote();
    await target.slots.writeImage(partial);
    const tag = tagFromImageName(file);
    await target.slots.writeStagedNote({
      ...(tag !== null && isReleaseTag(tag) ? { VERSION: tag } : {}),
      FILE: file,
      STAGED_AT: utcStamp(target.now()),
      SIZE_BYTES: String(written),
      SOURCE: 'upload',
      REPLACES: running,
    });
  } finally {
    await rm(partial, { force: true });
  }
}
